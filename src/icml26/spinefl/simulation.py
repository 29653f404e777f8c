"""The cheap in-process federated loop (spec §2.8) used by the tests and the quick presets.

Each round: plan (participants, index sets), train every participant's sub-model locally,
count-average, update histories; every ``eval_every`` rounds evaluate the full-width global model
and, per width level r, the deployed sub-model (§2.9). :class:`SpineFLStrategy` runs the same
:class:`~icml26.spinefl.server.SubmodelServer` through Flower.

Deviations: the per-client "local accuracy" of §2.9 is not computed (global and per-level
accuracy on the balanced test set only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, final

import numpy as np
import torch

from icml26.core import (
    Progress,
    check_in_interval,
    check_one_of,
    check_positive_int,
    progress_reporter,
)
from icml26.spinefl.activation import ActivationRecorder
from icml26.spinefl.mechanism import client_label_sets, selection_overlap
from icml26.spinefl.models import AbstractSliceableModel
from icml26.spinefl.selection import AbstractSelector, SpineSelector
from icml26.spinefl.server import RoundPlan, SubmodelServer, check_ratios
from icml26.spinefl.training import ClientUpdate, evaluate_accuracy, local_train

__all__ = ["HeteroSimulation", "History"]

ClientData = tuple[np.ndarray, np.ndarray]


@dataclass
class History:
    """Per-evaluation metrics of one federated run.

    Attributes
    ----------
    rounds
        Rounds after which the model was evaluated (1-based).
    global_acc
        Full-width global model accuracy at those rounds.
    level_acc
        ``{ratio: [accuracy, ...]}`` of the deployed sub-model of every width level.
    train_loss
        Mean local training loss of every round.
    wall_s
        Wall time of the run (seconds).
    final_state
        The global parameters after the last round.
    mechanism
        For SpineFL selectors: ``selection_kl`` (mean KL from uniform of every draw, nats) and
        the overlap of same-width clients with disjoint vs shared labels at the end of the run
        (:mod:`icml26.spinefl.mechanism`); empty for the baselines.
    """

    rounds: list[int] = field(default_factory=list)
    global_acc: list[float] = field(default_factory=list)
    level_acc: dict[float, list[float]] = field(default_factory=dict)
    train_loss: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    final_state: dict[str, torch.Tensor] = field(default_factory=dict)
    mechanism: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owner = "History"
        for name in ("rounds", "global_acc", "train_loss"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value
            ):
                raise TypeError(f"{owner}: {name} must be a list of numbers; got {value!r}.")
        if not isinstance(self.level_acc, dict) or not all(
            isinstance(v, list) and all(isinstance(a, int | float) for a in v)
            for v in self.level_acc.values()
        ):
            raise TypeError(f"{owner}: level_acc must map ratios to lists of accuracies.")
        if any(not isinstance(r, int) or r < 1 for r in self.rounds):
            raise ValueError(f"{owner}: rounds must be 1-based round numbers; got {self.rounds!r}.")
        # an accuracy is never NaN (a diverged model still scores); a training loss may be
        accuracies = [self.global_acc, *self.level_acc.values()]
        if not all(math.isfinite(a) for values in accuracies for a in values):
            raise ValueError(f"{owner}: global_acc and level_acc must hold finite accuracies.")
        check_in_interval("wall_s", self.wall_s, low=0.0, owner=owner)
        if not isinstance(self.final_state, dict):
            raise TypeError(f"{owner}: final_state must be a dict of tensors.")

    def final_accuracy(self, last: int = 5) -> float:
        """Mean global accuracy over the last ``last`` evaluations (spec §5.3)."""
        last = check_positive_int("last", last, owner="History.final_accuracy")
        if not self.global_acc:
            raise ValueError(
                f"History.final_accuracy: no evaluation to average over the last {last}; "
                "global_acc is empty (run with test=(X, y))."
            )
        return float(np.mean(self.global_acc[-last:]))

    def final_level_accuracy(self, ratio: float, last: int = 5) -> float:
        """Mean accuracy of the width-``ratio`` sub-model over the last ``last`` evaluations."""
        owner = "History.final_level_accuracy"
        last = check_positive_int("last", last, owner=owner)
        if not isinstance(ratio, int | float) or ratio not in self.level_acc:
            raise ValueError(
                f"{owner}: ratio must be one of the evaluated levels {sorted(self.level_acc)}; "
                f"got {ratio!r}."
            )
        if not self.level_acc[ratio]:
            raise ValueError(f"{owner}: no evaluation of level ratio={ratio!r} to average.")
        return float(np.mean(self.level_acc[ratio][-last:]))


@final
class HeteroSimulation:
    """In-process heterogeneous FL: one global model, sub-models per client width (§2.8).

    Parameters
    ----------
    model_fn
        Builds the global model (e.g. ``functools.partial(SliceableMLP, [32, 256, 256, 10])``).
    selector
        The sub-model extraction rule (SpineFL or a baseline).
    clients
        ``[(X_c, y_c), ...]``: every client's training data.
    ratios
        Width ratio r_c in (0, 1] of every client.
    rounds
        R >= 1.
    participation
        q in (0, 1]: ceil(q C) clients per round.
    local_epochs, lr
        E and the SGD step size.
    seed
        Root seed (an int: every draw derives from it, see ``server.round_generator``).
    test
        ``(X_test, y_test)`` for evaluation; ``None`` skips evaluation.
    batch_size, momentum, weight_decay
        Local SGD settings (spec §5.3: 32, 0.9, 0).
    weighting
        ``"samples"`` or ``"uniform"`` aggregation weights.
    eval_every
        Evaluate after every ``eval_every`` rounds (and after the last).
    eval_levels
        Also evaluate the deployed sub-model of every width level.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done_rounds, rounds, {"train_loss": ...})`` (the core progress convention).
    masked_ce, scaler, clip
        HeteroFL's recipe: masked cross-entropy, the 1/r scaler (models with a ``rate``) and
        gradient-norm clipping (``None``: off), the same for every method.
    probe_size
        Samples of each client's data (its first ``probe_size``) the global model is run on to
        score channels for a selector with ``score_source="model"``.

    Examples
    --------
    >>> from functools import partial
    >>> from icml26.spinefl import SliceableMLP, SpineSelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 4)).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(np.int64)
    >>> sim = HeteroSimulation(
    ...     partial(SliceableMLP, [4, 16, 2]), SpineSelector(),
    ...     [(X[:40], y[:40]), (X[40:], y[40:])],
    ...     ratios=[1.0, 0.5], rounds=3, participation=1.0, local_epochs=1, lr=0.05, seed=0,
    ...     test=(X, y))
    >>> history = sim.run()
    >>> len(history.global_acc), sorted(history.level_acc)
    (3, [0.5, 1.0])
    """

    def __init__(
        self,
        model_fn: Callable[[], AbstractSliceableModel],
        selector: AbstractSelector,
        clients: Sequence[ClientData],
        ratios: Sequence[float],
        rounds: int,
        participation: float = 0.5,
        local_epochs: int = 1,
        lr: float = 0.05,
        seed: int = 0,
        *,
        test: ClientData | None = None,
        batch_size: int = 32,
        momentum: float = 0.9,
        weight_decay: float = 0.0,
        weighting: str = "samples",
        eval_every: int = 1,
        eval_levels: bool = True,
        progress: Progress = None,
        masked_ce: bool = False,
        scaler: bool = False,
        clip: float | None = None,
        probe_size: int = 64,
    ) -> None:
        owner = "HeteroSimulation"
        for name, flag in (("masked_ce", masked_ce), ("scaler", scaler)):
            if not isinstance(flag, bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {flag!r}.")
        self.masked_ce, self.scaler = masked_ce, scaler
        self.clip = (
            None
            if clip is None
            else check_in_interval("clip", clip, low=0.0, closed="neither", owner=owner)
        )
        self.probe_size = check_positive_int("probe_size", probe_size, owner=owner, maximum=10**6)
        if not callable(model_fn):
            raise TypeError(f"{owner}: model_fn must be callable; got {type(model_fn).__name__}.")
        if not isinstance(selector, AbstractSelector):
            raise TypeError(
                f"{owner}: selector must be an AbstractSelector; got {type(selector).__name__}."
            )
        self.model_fn = model_fn
        self.selector = selector
        self.clients = list(clients)
        self.ratios = check_ratios(ratios, owner)
        if len(self.ratios) != len(self.clients):
            raise ValueError(
                f"{owner}: ratios must give one width per client; got {len(self.ratios)} ratios "
                f"for {len(self.clients)} clients."
            )
        self.rounds = check_positive_int("rounds", rounds, owner=owner)
        self.participation = check_in_interval(
            "participation", participation, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.local_epochs = check_positive_int("local_epochs", local_epochs, owner=owner)
        self.lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
        self.seed = check_positive_int("seed", seed, owner=owner, minimum=0)
        self.test = test
        self.batch_size = check_positive_int("batch_size", batch_size, owner=owner)
        self.momentum = check_in_interval(
            "momentum", momentum, low=0.0, high=1.0, closed="left", owner=owner
        )
        self.weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, owner=owner)
        self.weighting = check_one_of("weighting", weighting, ("samples", "uniform"), owner=owner)
        self.eval_every = check_positive_int("eval_every", eval_every, owner=owner)
        self.eval_levels = bool(eval_levels)
        self.progress = progress

    def train_client(
        self, server: SubmodelServer, plan_index: int, plan: RoundPlan
    ) -> ClientUpdate:
        """Local training of the ``plan_index``-th participant of ``plan``."""
        c = plan.clients[plan_index]
        X, y = self.clients[c]
        return local_train(
            server.submodel(plan.index_sets[plan_index]),
            X,
            y,
            epochs=self.local_epochs,
            lr=self.lr,
            batch_size=self.batch_size,
            momentum=self.momentum,
            weight_decay=self.weight_decay,
            seed=plan.seeds[plan_index],
            nested_widths=plan.nested_widths[plan_index],
            masked_ce=self.masked_ce,
            rate=self.ratios[c] if self.scaler else 1.0,
            clip=self.clip,
        )

    def probe(self, c: int, model: AbstractSliceableModel) -> dict[str, np.ndarray]:
        """The global model's firing frequency per channel on client c's first samples."""
        X, _ = self.clients[c]
        x = torch.as_tensor(np.asarray(X[: self.probe_size]), dtype=torch.float32)
        with torch.no_grad(), ActivationRecorder(model) as recorder:
            model(x)
        return recorder.frequencies()

    def _mechanism(self, model: AbstractSliceableModel, server: SubmodelServer) -> dict:
        """Selection KL over the run and end-of-run overlap (disjoint vs shared labels)."""
        selector = self.selector
        assert isinstance(selector, SpineSelector)
        if selector.score_source == "model":
            for c in range(len(self.clients)):
                selector.set_client_scores(c, self.probe(c, model))
        labels = client_label_sets([np.asarray(y) for _, y in self.clients])
        kl = selector.selection_kl_
        draws = [v for c in sorted(kl) for v in kl[c]]
        return {
            "selection_kl": float(np.mean(draws)) if draws else float("nan"),
            "selection_kl_per_client": [float(np.mean(kl[c])) for c in sorted(kl)],
            **selection_overlap(selector, server.sizes, self.ratios, labels),
        }

    def run(self) -> History:
        """Run R rounds; returns the :class:`History` (the global model is ``final_state``)."""
        start = time.perf_counter()
        model = self.model_fn()
        server = SubmodelServer(
            model,
            self.selector,
            self.ratios,
            participation=self.participation,
            weighting=self.weighting,
            seed=self.seed,
            probe=self.probe,
        )
        history = History(level_acc={r: [] for r in server.levels} if self.eval_levels else {})
        with progress_reporter(self.progress, self.rounds, "rounds") as report:
            for t in range(self.rounds):
                plan = server.plan_round(t)
                updates = [self.train_client(server, i, plan) for i in range(len(plan.clients))]
                server.finish_round(plan, updates)
                history.train_loss.append(float(np.mean([u.loss for u in updates])))
                last = t + 1 == self.rounds
                if self.test is not None and ((t + 1) % self.eval_every == 0 or last):
                    history.rounds.append(t + 1)
                    history.global_acc.append(evaluate_accuracy(model, *self.test))
                    for level in history.level_acc:
                        sub = server.deployed_submodel(level)
                        history.level_acc[level].append(evaluate_accuracy(sub, *self.test))
                report(t + 1, train_loss=history.train_loss[-1])
        history.final_state = {k: v.detach().clone() for k, v in model.named_parameters()}
        if isinstance(self.selector, SpineSelector):
            history.mechanism = self._mechanism(model, server)
        history.wall_s = time.perf_counter() - start
        return history
