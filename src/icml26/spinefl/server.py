"""Server side of partial training, shared by the in-process loop and the Flower strategy (§2.8).

One round t: sample ceil(q C) participants, pick every participant's index sets with the selector
(forward order; layer l+1's input indices are layer l's outputs), slice the sub-models, and after
training count-average the returned weights (§2.7) and update the activation histories (§2.3).

Randomness: round t's selection draws from ``np.random.default_rng([seed, t])`` and client c's
local training from the integer ``client_seed(seed, t, c)``, so a distributed run (Flower) that
visits clients in any order makes the same draws as the in-process loop.

Deviations: none beyond the spec's inferred design.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import final

import numpy as np
import torch

from icml26.core import check_in_interval, check_one_of, check_positive_int
from icml26.spinefl.aggregation import aggregate_counts
from icml26.spinefl.models import (
    AbstractSliceableModel,
    check_index_sets,
    extract_submodel,
    sub_width,
    submodel_param_index,
)
from icml26.spinefl.selection import (
    AbstractActivationGuidedSelector,
    AbstractOrderedDropoutSelector,
    AbstractSelector,
    AbstractWeightGuidedSelector,
)
from icml26.spinefl.training import ClientUpdate

__all__ = ["RoundPlan", "SubmodelServer", "client_seed", "round_generator"]


def round_generator(seed: int, t: int) -> np.random.Generator:
    """The generator of round t's server-side draws (participants, index sets).

    ``seed`` and ``t`` are integers >= 0.
    """
    owner = "round_generator"
    seed = check_positive_int("seed", seed, owner=owner, minimum=0)
    return np.random.default_rng([seed, check_positive_int("t", t, owner=owner, minimum=0)])


def client_seed(seed: int, t: int, c: int) -> int:
    """The integer seed of client c's local training in round t (all three integers >= 0)."""
    owner = "client_seed"
    seed = check_positive_int("seed", seed, owner=owner, minimum=0)
    t = check_positive_int("t", t, owner=owner, minimum=0)
    c = check_positive_int("c", c, owner=owner, minimum=0)
    return int(np.random.SeedSequence([seed, t, c, 1]).generate_state(1)[0])


def check_ratios(ratios: Sequence[float], owner: str) -> tuple[float, ...]:
    """Width ratios r_c in (0, 1], one per client."""
    out = tuple(
        check_in_interval(f"ratios[{i}]", r, low=0.0, high=1.0, closed="right", owner=owner)
        for i, r in enumerate(ratios)
    )
    if not out:
        raise ValueError(f"{owner}: ratios must name at least one client; got [].")
    return out


@dataclass(frozen=True)
class RoundPlan:
    """What the server sends in round t.

    Attributes
    ----------
    t
        Round number (0-based).
    clients
        The participants, sorted.
    index_sets
        Per participant, S_{c,l}^t for every prunable layer.
    seeds
        Per participant, the seed of its local training.
    nested_widths
        Per participant, FjORD-lite's nested widths (sub-model units) or ``None``.
    """

    t: int
    clients: tuple[int, ...]
    index_sets: tuple[dict[str, np.ndarray], ...]
    seeds: tuple[int, ...]
    nested_widths: tuple[list[dict[str, int]] | None, ...]


@final
class SubmodelServer:
    """Global model + selector + count aggregation for heterogeneous partial training.

    Parameters
    ----------
    model
        The global model (updated in place by :meth:`finish_round`).
    selector
        The sub-model extraction rule.
    ratios
        r_c in (0, 1] for every client c = 0 .. C-1.
    participation
        q in (0, 1]: ceil(q C) clients per round.
    weighting
        ``"samples"`` or ``"uniform"`` (see :func:`aggregate_counts`).
    seed
        Root seed of every server-side draw and of the clients' seeds.
    probe
        ``probe(c, model) -> {layer: firing frequency}``: the global model's firing on a sample
        of client c's data, given to a selector with ``score_source="model"`` before it
        selects for c (``None``: no probe; such a selector then refuses to select).
    """

    def __init__(
        self,
        model: AbstractSliceableModel,
        selector: AbstractSelector,
        ratios: Sequence[float],
        *,
        participation: float = 0.5,
        weighting: str = "samples",
        seed: int = 0,
        probe: Callable[[int, AbstractSliceableModel], Mapping[str, np.ndarray]] | None = None,
    ) -> None:
        owner = "SubmodelServer"
        if probe is not None and not callable(probe):
            raise TypeError(f"{owner}: probe must be callable or None; got {probe!r}.")
        self.probe = probe
        if not isinstance(model, AbstractSliceableModel):
            raise TypeError(f"{owner}: model must be an AbstractSliceableModel.")
        if not isinstance(selector, AbstractSelector):
            raise TypeError(
                f"{owner}: selector must be an AbstractSelector; got {type(selector).__name__}."
            )
        self.model = model
        self.selector = selector
        self.ratios = check_ratios(ratios, owner)
        self.participation = check_in_interval(
            "participation", participation, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.weighting = check_one_of("weighting", weighting, ("samples", "uniform"), owner=owner)
        self.seed = check_positive_int("seed", seed, owner=owner, minimum=0)
        self.levels = tuple(sorted(set(self.ratios)))
        self.sizes = model.layer_sizes()
        if isinstance(selector, AbstractActivationGuidedSelector):
            r_min = min(self.ratios)
            selector.set_min_widths({name: sub_width(N, r_min) for name, N in self.sizes.items()})

    @property
    def n_clients(self) -> int:
        """C."""
        return len(self.ratios)

    def _observe(self) -> None:
        if isinstance(self.selector, AbstractWeightGuidedSelector):
            # FIARSE-lite importance: L2 norm of each neuron's incoming weights.
            norms = {}
            for name in self.sizes:
                weight = self.model.get_submodule(name).weight.detach()
                norms[name] = weight.flatten(1).to(torch.float64).norm(dim=1).cpu().numpy()
            self.selector.observe_weights(norms)

    def index_sets_for(self, ratio: float, t: int, c: int, rng: np.random.Generator) -> dict:
        """S_{c,l}^t for every prunable layer, in forward order, checked."""
        sets = {
            name: self.selector.select(name, N, sub_width(N, ratio), t, c, rng)
            for name, N in self.sizes.items()
        }
        checked = check_index_sets(self.model, sets, owner=type(self.selector).__name__)
        for name, N in self.sizes.items():
            if checked[name].size != sub_width(N, ratio):
                raise ValueError(
                    f"{type(self.selector).__name__}: returned {checked[name].size} indices for "
                    f"{name!r}; expected n = {sub_width(N, ratio)}."
                )
        return checked

    def nested_widths_for(self, ratio: float) -> list[dict[str, int]] | None:
        """FjORD-lite: the widths of every level <= ratio, in sub-model units (else None)."""
        if not isinstance(self.selector, AbstractOrderedDropoutSelector):
            return None
        return [
            {name: sub_width(N, level) for name, N in self.sizes.items()}
            for level in self.levels
            if level <= ratio
        ]

    def plan_round(self, t: int) -> RoundPlan:
        """Participants, their index sets, seeds and nested widths for round t (§2.8 a-b)."""
        t = check_positive_int("t", t, owner="SubmodelServer.plan_round", minimum=0)
        self._observe()
        rng = round_generator(self.seed, t)
        m = max(1, math.ceil(round(self.participation * self.n_clients, 9)))
        clients = tuple(int(c) for c in np.sort(rng.choice(self.n_clients, m, replace=False)))
        if self.probe is not None and getattr(self.selector, "score_source", None) == "model":
            for c in clients:
                self.selector.set_client_scores(c, self.probe(c, self.model))
        index_sets = tuple(self.index_sets_for(self.ratios[c], t, c, rng) for c in clients)
        return RoundPlan(
            t=t,
            clients=clients,
            index_sets=index_sets,
            seeds=tuple(client_seed(self.seed, t, c) for c in clients),
            nested_widths=tuple(self.nested_widths_for(self.ratios[c]) for c in clients),
        )

    def submodel(self, index_sets: Mapping[str, np.ndarray]) -> AbstractSliceableModel:
        """The sub-model a client with these index sets trains."""
        return extract_submodel(self.model, index_sets)

    def finish_round(self, plan: RoundPlan, updates: Sequence[ClientUpdate]) -> None:
        """Count-average the updates into the global model and update histories (§2.8 d)."""
        if len(updates) != len(plan.clients):
            raise ValueError(
                f"SubmodelServer.finish_round: expected {len(plan.clients)} updates (one per "
                f"participant); got {len(updates)}."
            )
        index = [submodel_param_index(self.model, s) for s in plan.index_sets]
        global_state = dict(self.model.named_parameters())
        new_state = aggregate_counts(
            global_state,
            [u.state for u in updates],
            index,
            [u.n_samples for u in updates],
            weighting=self.weighting,
        )
        with torch.no_grad():
            for name, param in global_state.items():
                param.copy_(new_state[name])
        if isinstance(self.selector, AbstractActivationGuidedSelector):
            for c, sets, update in zip(plan.clients, plan.index_sets, updates, strict=True):
                for name, idx in sets.items():
                    self.selector.update_history(c, name, idx, update.freq[name], update.n_samples)
            self.selector.commit_round()

    def deployed_submodel(self, ratio: float) -> AbstractSliceableModel:
        """The deterministic sub-model of width ratio ``ratio`` (``selector.deploy_indices``)."""
        ratio = check_in_interval(
            "ratio", ratio, low=0.0, high=1.0, closed="right", owner="SubmodelServer"
        )
        self._observe()
        sets = {
            name: self.selector.deploy_indices(name, N, sub_width(N, ratio))
            for name, N in self.sizes.items()
        }
        return extract_submodel(self.model, sets)
