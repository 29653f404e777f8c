"""The OmniFit compressor: LAHP budgets + ARTS scores, applied before every decoder layer.

``prepare(H0, modality_ids)`` computes the anchors, the scores (once, from ``H^(0)``) and the
nested plan; ``before_layer(l, hidden, pos_ids, mask)`` gathers the tokens alive at layer ``l``
(their hidden states, original position ids and mask rows/columns) and merges or drops the rest.
With ``mu = 1`` nothing is touched, so the compressed forward is the uncompressed one bit for bit.

Deviations (inferred; see docs/omnifit.md): the merge weight of a kept token accumulates the
weights merged into it (so later merges stay S-weighted means of everything absorbed); with
``score_once=False`` the anchors and scores are recomputed from the current hidden states of the
alive tokens before each layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, final

from icml26.core.validation import check_in_interval, check_one_of, check_positive_int, check_tensor
from icml26.omnifit.arts import (
    arts_scores,
    merge_tokens,
    modality_anchors,
    plan_keep_indices,
)
from icml26.omnifit.lahp import LAHPProfile
from icml26.omnifit.protocols import AbstractCompressor
from icml26.omnifit.tokens import (
    AUDIO,
    AUDIO_NAME,
    MAX_SEQUENCE,
    TEXT,
    VIDEO,
    VIDEO_NAME,
    check_modality_ids,
    modality_counts,
)

if TYPE_CHECKING:
    import torch

__all__ = ["AbstractCompressor", "AliveSet", "OmniFitCompressor"]

MODES = ("merge", "prune")
ANCHORS = ("per_input", "global")


def check_mu(mu: float, owner: str) -> float:
    """``mu`` in ``(0, 1]``."""
    mu = check_in_interval("mu", mu, low=0.0, high=1.0, closed="right", owner=owner)
    if mu <= 0:
        raise ValueError(f"{owner}: mu must be in (0, 1]; got {mu!r}.")
    return mu


@final
class AliveSet:
    """The tokens alive at the current layer: original indices, merge weights, codes.

    Parameters
    ----------
    modality_ids
        ``(n,)`` codes of the full sequence.
    weights
        ``(B, n)`` merge weights of every token (the ARTS scores).
    """

    def __init__(self, modality_ids: torch.Tensor, weights: torch.Tensor) -> None:
        import torch

        self.ids = modality_ids
        self.index = torch.arange(weights.shape[1]).expand(weights.shape[0], -1)  # (B, n_alive)
        self.weights = weights

    def shrink(
        self,
        target: torch.Tensor,
        hidden: torch.Tensor,
        pos_ids: torch.Tensor,
        mask: torch.Tensor | None,
        mode: str,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """Keep the original indices ``target`` ((B, n_l), a sorted subset of the alive ones)."""
        import torch

        B, n_alive = self.index.shape
        if target.shape[1] == n_alive:
            return hidden, pos_ids, mask, self.index
        n = self.ids.shape[0]
        marked = torch.zeros(B, n, dtype=torch.bool).scatter_(1, target, True)
        keep_here = marked.gather(1, self.index)  # (B, n_alive)
        order = torch.argsort((~keep_here).to(torch.int8), dim=1, stable=True)
        keep_pos, drop_pos = order[:, : target.shape[1]], order[:, target.shape[1] :]
        current_ids = self.ids[self.index]  # (B, n_alive)
        d = hidden.shape[-1]
        if mode == "merge":
            new_hidden, new_weights = merge_tokens(
                hidden,
                keep_pos,
                drop_pos,
                self.weights,
                modality_ids=current_ids,
                return_weights=True,
            )
        else:
            new_hidden = hidden.gather(1, keep_pos[..., None].expand(-1, -1, d))
            new_weights = self.weights.gather(1, keep_pos)
        if pos_ids.ndim == 3:  # (3, B, n): M-RoPE's temporal/height/width ids
            new_pos = pos_ids.gather(2, keep_pos[None].expand(pos_ids.shape[0], -1, -1))
        else:
            new_pos = pos_ids.gather(1, keep_pos)
        new_mask = None
        if mask is not None:
            rows = mask.gather(1, keep_pos[..., None].expand(-1, -1, mask.shape[2]))
            new_mask = rows.gather(2, keep_pos[:, None, :].expand(-1, keep_pos.shape[1], -1))
        self.index = self.index.gather(1, keep_pos)
        self.weights = new_weights
        return new_hidden, new_pos, new_mask, self.index


def check_inputs(H0: Any, modality_ids: Any, owner: str) -> torch.Tensor:
    """Validate ``H0`` (``(B, n, d)``, finite) and return the checked codes."""
    check_tensor("H0", H0, ndim=3, finite=True, owner=owner)
    if H0.shape[1] > MAX_SEQUENCE:
        raise ValueError(f"{owner}: H0 has more than {MAX_SEQUENCE} tokens.")
    return check_modality_ids(modality_ids, H0.shape[1], owner=owner)


def check_layer(
    layer: Any, hidden: Any, pos_ids: Any, mask: Any, alive: AliveSet | None, owner: str
) -> int:
    """Validate a ``before_layer`` call against the prepared batch: ``hidden`` ``(B, n_l, d)``,
    ``pos_ids`` ``(B, n_l)`` or ``(3, B, n_l)`` integers, ``mask`` ``None`` or ``(B, n_l, n_l)``
    bool, with ``(B, n_l)`` the tokens alive now."""
    import torch

    if alive is None:
        raise ValueError(f"{owner}: layer {layer!r} comes before prepare(H0, modality_ids).")
    layer = check_positive_int("layer", layer, minimum=0, maximum=10**6, owner=owner)
    B, n = alive.index.shape
    check_tensor("hidden", hidden, shape=(B, n, None), owner=owner)
    check_tensor("pos_ids", pos_ids, floating=False, owner=owner)
    if pos_ids.is_floating_point() or pos_ids.is_complex() or pos_ids.dtype == torch.bool:
        raise TypeError(f"{owner}: pos_ids must be an integer tensor; got {pos_ids.dtype}.")
    if tuple(pos_ids.shape) not in ((B, n), (3, B, n)):
        raise ValueError(
            f"{owner}: pos_ids must have shape ({B}, {n}) or (3, {B}, {n}) (the alive tokens' "
            f"ids); got {tuple(pos_ids.shape)}."
        )
    if mask is not None:
        check_tensor("mask", mask, shape=(B, n, n), floating=False, owner=owner)
        if mask.dtype != torch.bool:
            raise TypeError(f"{owner}: mask must be a bool tensor or None; got {mask.dtype}.")
    return layer


@final
class OmniFitCompressor(AbstractCompressor):
    """OmniFit (ARTS + LAHP): training-free, attention-free, layer-adaptive token compression.

    Parameters
    ----------
    profile
        The model's :class:`~icml26.omnifit.LAHPProfile` (its layer count must be the model's).
    mu
        Cost-equivalent retention in ``(0, 1]``.
    lam
        Cross-modal weight ``lambda >= 0``.
    M, k
        Anchors per modality and DPC-KNN neighbours, ``>= 1``.
    mode
        ``"merge"`` (default) or ``"prune"``.
    score_once
        Score once from ``H^(0)`` (default) or re-score the alive tokens before every layer.
    anchors
        ``"per_input"`` (DPC-KNN on each input) or ``"global"`` (``global_anchors``).
    cross_weight
        ``"const"`` (Eq. 8) or ``"layer_avg_pref"`` (see :func:`~icml26.omnifit.arts_scores`).
    global_anchors
        ``{"video": (M, d), "audio": (M, d)}`` from :func:`~icml26.omnifit.fit_global_anchors`.

    Examples
    --------
    >>> import torch
    >>> from icml26.omnifit import LAHPProfile
    >>> c = OmniFitCompressor(LAHPProfile.uniform(2, 4), mu=0.5, mode="prune")
    >>> H0 = torch.randn(1, 5, 4, generator=torch.Generator().manual_seed(0))
    >>> c.prepare(H0, torch.tensor([1, 1, 2, 2, 0]))
    >>> h, pos, mask, idx = c.before_layer(0, H0, torch.arange(5)[None], None)
    >>> h.shape[1], int(idx[0, -1])
    (3, 4)
    """

    def __init__(
        self,
        profile: LAHPProfile,
        mu: float,
        lam: float = 1.5,
        M: int = 32,
        k: int = 5,
        mode: Literal["merge", "prune"] = "merge",
        score_once: bool = True,
        anchors: Literal["per_input", "global"] = "per_input",
        cross_weight: Literal["const", "layer_avg_pref"] = "const",
        global_anchors: dict[str, torch.Tensor] | None = None,
    ) -> None:
        owner = "OmniFitCompressor"
        if not isinstance(profile, LAHPProfile):
            raise TypeError(
                f"{owner}: profile must be an LAHPProfile; got {type(profile).__name__}."
            )
        self.profile = profile
        self.mu = check_mu(mu, owner)
        self.lam = check_in_interval("lam", lam, low=0.0, high=1e6, owner=owner)
        self.M = check_positive_int("M", M, maximum=100_000, owner=owner)
        self.k = check_positive_int("k", k, maximum=100_000, owner=owner)
        self.mode = check_one_of("mode", mode, MODES, owner=owner)
        if not isinstance(score_once, bool):
            raise TypeError(f"{owner}: score_once must be a bool; got {type(score_once).__name__}.")
        self.score_once = score_once
        self.anchors = check_one_of("anchors", anchors, ANCHORS, owner=owner)
        self.cross_weight = check_one_of(
            "cross_weight", cross_weight, ("const", "layer_avg_pref"), owner=owner
        )
        if anchors == "global":
            if not isinstance(global_anchors, dict) or {VIDEO_NAME, AUDIO_NAME} - set(
                global_anchors
            ):
                raise ValueError(
                    f"{owner}: global_anchors must map 'video' and 'audio' to (M, d) tensors "
                    "when anchors='global'."
                )
            for name in (VIDEO_NAME, AUDIO_NAME):
                check_tensor(
                    f"global_anchors[{name!r}]",
                    global_anchors[name],
                    ndim=2,
                    finite=True,
                    owner=owner,
                )
        self.global_anchors = global_anchors
        self._alive: AliveSet | None = None
        self._plan: list[torch.Tensor] | None = None
        self._budgets: list[dict[str, int]] | None = None

    @property
    def preference(self) -> dict[str, float]:
        """Layer-averaged preferences ``rho_bar`` of the profile."""
        return {name: sum(v) / len(v) for name, v in self.profile.rho.items()}

    def scores(self, H: torch.Tensor, modality_ids: torch.Tensor) -> torch.Tensor:
        """ARTS scores of ``H`` (``(B, n, d)``) with this compressor's anchors and weights."""
        ids = check_inputs(H, modality_ids, "OmniFitCompressor")
        if self.anchors == "global":
            bank = self.global_anchors
        else:
            bank = modality_anchors(H, ids, self.M, self.k)
        return arts_scores(H, ids, bank, self.lam, self.cross_weight, self.preference)

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Compute anchors, scores and the nested plan for a batch ``H0`` (``(B, n, d)``)."""
        import torch

        ids = check_inputs(H0, modality_ids, "OmniFitCompressor")
        B, n, _ = H0.shape
        if self.mu == 1.0:
            scores = torch.ones(B, n, dtype=H0.dtype)
            self._plan = [torch.arange(n).expand(B, -1)] * self.profile.n_layers
        else:
            scores = self.scores(H0, ids)
            self._plan = plan_keep_indices(scores, ids, self.profile, self.mu)
            self._budgets = self.profile.layer_budgets(self.mu, modality_counts(ids))
        self._alive = AliveSet(ids, scores)

    @property
    def plan(self) -> list[torch.Tensor]:
        """The nested plan of the prepared batch (original indices per layer)."""
        if self._plan is None:
            raise ValueError("OmniFitCompressor: call prepare(H0, modality_ids) first.")
        return self._plan

    def before_layer(
        self, layer: int, hidden: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """Gather (and merge into) the tokens alive at layer ``l``; returns their indices too."""
        owner = "OmniFitCompressor"
        layer = check_layer(layer, hidden, pos_ids, mask, self._alive, owner)
        if layer >= self.profile.n_layers:
            raise ValueError(
                f"{owner}: layer must be < the profile's {self.profile.n_layers} layers."
            )
        alive = self._alive
        if self.mu == 1.0:
            return hidden, pos_ids, mask, alive.index
        target = self.plan[layer] if self.score_once else self._rescored_target(layer, hidden)
        return alive.shrink(target, hidden, pos_ids, mask, self.mode)

    def _rescored_target(self, layer: int, hidden: torch.Tensor) -> torch.Tensor:
        """Every-layer scoring: top tokens of each modality among the alive ones."""
        import torch

        alive = self._alive
        current_ids = alive.ids[alive.index]  # (B, n_alive)
        budget = self._budgets[layer]
        targets = []
        for b in range(hidden.shape[0]):
            s = self.scores(hidden[b : b + 1], current_ids[b])[0]
            parts = [alive.index[b][current_ids[b] == TEXT]]
            for code, name in ((VIDEO, VIDEO_NAME), (AUDIO, AUDIO_NAME)):
                members = torch.nonzero(current_ids[b] == code).flatten()
                order = torch.argsort(s[members], descending=True, stable=True)
                parts.append(alive.index[b][members[order[: budget[name]]]])
            targets.append(torch.sort(torch.cat(parts)).values)
        return torch.stack(targets)
