"""Baseline token compressors of spec §5, on the same driver as OmniFit.

- :class:`RandomDrop`: random scores; uniform budgets at the input, or a profile's budgets
  (RandomDrop + LAHP).
- :class:`UniformNorm`: intra-modal ``||x||`` only, uniform budgets at the input.
- :class:`FastVLike`: every token up to layer ``K``, then the tokens the last position attends
  to most in an eager attention pass of layer ``K``.
- :class:`OmniZipLite`: audio kept by energy; the video budget of each time window is
  proportional to that window's audio energy, video kept by norm inside the window.
- :class:`ScoredDrop`: the caller's own per-token scores (an oracle selector, or a saliency of
  one's own), uniform budgets or a profile's.

Deviations (see docs/omnifit.md): budgets split ``mu`` per modality by token count; FastV-like
keeps ``mu`` of each modality from layer ``K`` on (its FLOPs are therefore higher than a
cost-matched method's and are reported); OmniZip-lite drops (no merging, no spatio-temporal
video compression) and takes its windows from the modality runs of the layout (a video run
followed by an audio run is one window).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, final

from icml26.core.validation import check_one_of, check_positive_int, torch_generator
from icml26.omnifit.arts import plan_keep_indices
from icml26.omnifit.compressor import (
    MODES,
    AbstractCompressor,
    AliveSet,
    check_inputs,
    check_layer,
    check_mu,
)
from icml26.omnifit.lahp import LAHPProfile
from icml26.omnifit.tokens import AUDIO, TEXT, VIDEO, modality_counts

if TYPE_CHECKING:
    import torch

    from icml26.core.validation import Seed

__all__ = ["FastVLike", "OmniZipLite", "RandomDrop", "ScoredDrop", "UniformNorm"]


def _check_profile(profile: Any, owner: str) -> LAHPProfile | None:
    if profile is not None and not isinstance(profile, LAHPProfile):
        raise TypeError(
            f"{owner}: profile must be an LAHPProfile or None; got {type(profile).__name__}."
        )
    return profile


def _uniform_plan(scores: torch.Tensor, ids: torch.Tensor, mu: float) -> list[torch.Tensor]:
    """One plan entry (used for every layer): keep ``mu`` of each modality at the input."""
    return plan_keep_indices(scores, ids, LAHPProfile.uniform(1, 1), mu)


class _PlannedCompressor(AbstractCompressor):
    """Shared body of the scored baselines: a plan computed in ``prepare``, applied per layer."""

    owner = "compressor"

    def _start(self, H0: Any, modality_ids: Any, scores_fn: Any) -> None:
        import torch

        ids = check_inputs(H0, modality_ids, self.owner)
        B, n, _ = H0.shape
        scores = scores_fn(H0, ids)
        if self.mu == 1.0:
            self._plan = [torch.arange(n).expand(B, -1)]
        elif self.profile is None:
            self._plan = _uniform_plan(scores, ids, self.mu)
        else:
            self._plan = plan_keep_indices(scores, ids, self.profile, self.mu)
        self._alive = AliveSet(ids, torch.ones(B, n, dtype=H0.dtype))

    def before_layer(
        self, layer: int, hidden: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """Gather the tokens the plan keeps at layer ``l``."""
        layer = check_layer(layer, hidden, pos_ids, mask, getattr(self, "_alive", None), self.owner)
        target = self._plan[min(layer, len(self._plan) - 1)]
        return self._alive.shrink(target, hidden, pos_ids, mask, self.mode)


@final
class RandomDrop(_PlannedCompressor):
    """Random token dropping at retention ``mu`` (uniform, or with a profile's layer budgets).

    Parameters
    ----------
    mu
        Retention in ``(0, 1]``.
    profile
        ``None``: keep ``mu`` of each modality at the input for every layer; a
        :class:`~icml26.omnifit.LAHPProfile`: its per-layer budgets (RandomDrop + LAHP).
    mode
        ``"prune"`` (default) or ``"merge"`` (equal weights).
    seed
        Source of the random scores.

    Examples
    --------
    >>> import torch
    >>> c = RandomDrop(0.5, seed=0)
    >>> c.prepare(torch.ones(1, 4, 2), torch.tensor([1, 1, 1, 1]))
    >>> c.before_layer(0, torch.ones(1, 4, 2), torch.arange(4)[None], None)[0].shape[1]
    2
    """

    owner = "RandomDrop"

    def __init__(
        self,
        mu: float,
        profile: LAHPProfile | None = None,
        mode: Literal["merge", "prune"] = "prune",
        seed: Seed = None,
    ) -> None:
        self.mu = check_mu(mu, self.owner)
        self.profile = _check_profile(profile, self.owner)
        self.mode = check_one_of("mode", mode, MODES, owner=self.owner)
        self.generator = torch_generator(seed)

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Draw random scores for the batch and plan."""
        import torch

        def random_scores(H0: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
            return torch.rand(H0.shape[:2], generator=self.generator, dtype=torch.float64)

        self._start(H0, modality_ids, random_scores)


@final
class UniformNorm(_PlannedCompressor):
    """Intra-modal saliency: keep the ``mu`` share of each modality with the largest ``||x||``.

    Parameters
    ----------
    mu
        Retention in ``(0, 1]``.
    profile
        Optional layer budgets (``None``: uniform at the input).
    mode
        ``"prune"`` (default) or ``"merge"``.

    Examples
    --------
    >>> import torch
    >>> c = UniformNorm(0.5)
    >>> H0 = torch.tensor([[[1.0], [3.0], [2.0], [0.5]]])
    >>> c.prepare(H0, torch.tensor([1, 1, 1, 1]))
    >>> c.before_layer(0, H0, torch.arange(4)[None], None)[3].tolist()
    [[1, 2]]
    """

    owner = "UniformNorm"

    def __init__(
        self,
        mu: float,
        profile: LAHPProfile | None = None,
        mode: Literal["merge", "prune"] = "prune",
    ) -> None:
        self.mu = check_mu(mu, self.owner)
        self.profile = _check_profile(profile, self.owner)
        self.mode = check_one_of("mode", mode, MODES, owner=self.owner)

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Score by the norm of ``H0`` and plan."""

        def norms(H0: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
            return H0.norm(dim=-1)

        self._start(H0, modality_ids, norms)


@final
class ScoredDrop(_PlannedCompressor):
    """Keep the tokens with the largest caller-given scores (an oracle, or one's own saliency).

    Parameters
    ----------
    mu
        Retention in ``(0, 1]``.
    scores
        ``(B, n)`` finite scores of the batch this compressor will compress (one compressor per
        batch); text tokens are always kept whatever their score.
    profile
        Optional layer budgets (``None``: uniform at the input).
    mode
        ``"prune"`` (default) or ``"merge"``.

    Examples
    --------
    >>> import torch
    >>> c = ScoredDrop(0.5, torch.tensor([[0.0, 5.0, 1.0, 4.0]]))
    >>> H0 = torch.ones(1, 4, 2)
    >>> c.prepare(H0, torch.tensor([1, 1, 1, 1]))
    >>> c.before_layer(0, H0, torch.arange(4)[None], None)[3].tolist()
    [[1, 3]]
    """

    owner = "ScoredDrop"

    def __init__(
        self,
        mu: float,
        scores: torch.Tensor,
        profile: LAHPProfile | None = None,
        mode: Literal["merge", "prune"] = "prune",
    ) -> None:
        from icml26.core.validation import check_tensor

        self.mu = check_mu(mu, self.owner)
        self.scores = check_tensor("scores", scores, ndim=2, finite=True, owner=self.owner)
        self.profile = _check_profile(profile, self.owner)
        self.mode = check_one_of("mode", mode, MODES, owner=self.owner)

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Plan from the given scores (their shape must be ``H0``'s first two)."""
        check_inputs(H0, modality_ids, self.owner)
        if tuple(self.scores.shape) != tuple(H0.shape[:2]):
            raise ValueError(
                f"{self.owner}: scores must have shape (B, n) = {tuple(H0.shape[:2])} of H0; "
                f"got {tuple(self.scores.shape)}."
            )

        def given(H0: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
            return self.scores.double()

        self._start(H0, modality_ids, given)


@final
class OmniZipLite(_PlannedCompressor):
    """Audio-guided video budgets per time window (a pruning-only reading of OmniZip).

    Audio keeps its ``mu`` share with the largest ``||x||``; the video budget
    ``round(mu N_v)`` is split over windows in proportion to each window's audio energy
    ``sum ||a||^2`` (largest remainders, capped at the window's video count); inside a window
    video keeps its largest-norm tokens.

    Examples
    --------
    >>> import torch
    >>> c = OmniZipLite(0.5)
    >>> H0 = torch.tensor([[[1.0], [1.0], [9.0], [1.0], [1.0], [0.1], [1.0]]])
    >>> ids = torch.tensor([1, 1, 2, 1, 1, 2, 0])
    >>> c.prepare(H0, ids)
    >>> c.before_layer(0, H0, torch.arange(7)[None], None)[3].tolist()
    [[0, 1, 2, 6]]
    """

    owner = "OmniZipLite"

    def __init__(self, mu: float, mode: Literal["merge", "prune"] = "prune") -> None:
        self.mu = check_mu(mu, self.owner)
        self.profile = None
        self.mode = check_one_of("mode", mode, MODES, owner=self.owner)

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Plan from the windows' audio energy."""
        import torch

        ids = check_inputs(H0, modality_ids, self.owner)
        B, n, _ = H0.shape
        window = _windows(ids)
        norms = H0.norm(dim=-1).double()  # (B, n)
        counts = modality_counts(ids)
        plan = []
        n_windows = int(window.max()) + 1 if n else 0
        keep_audio = round(self.mu * counts["audio"]) if self.mu < 1 else counts["audio"]
        keep_video = round(self.mu * counts["video"]) if self.mu < 1 else counts["video"]
        text = torch.nonzero(ids == TEXT).flatten()
        audio = torch.nonzero(ids == AUDIO).flatten()
        video = torch.nonzero(ids == VIDEO).flatten()
        for b in range(B):
            top_audio = audio[torch.argsort(norms[b, audio], descending=True, stable=True)]
            chosen = [text, top_audio[:keep_audio]]
            energy = torch.zeros(n_windows, dtype=torch.float64)
            energy.index_add_(0, window[audio], norms[b, audio] ** 2)
            capacity = torch.bincount(window[video], minlength=n_windows)
            quota = _proportional(energy, capacity, keep_video)
            for w in range(n_windows):
                members = video[window[video] == w]
                order = torch.argsort(norms[b, members], descending=True, stable=True)
                chosen.append(members[order[: int(quota[w])]])
            plan.append(torch.sort(torch.cat(chosen)).values)
        self._plan = [torch.stack(plan)]
        self._alive = AliveSet(ids, torch.ones(B, n, dtype=H0.dtype))


def _windows(ids: torch.Tensor) -> torch.Tensor:
    """Window index of every token: a new window starts where video follows a non-video token."""
    import torch

    starts = torch.zeros_like(ids)
    if ids.numel() > 1:
        starts[1:] = ((ids[1:] == VIDEO) & (ids[:-1] != VIDEO)).long()
    window = torch.cumsum(starts, 0)
    return window - window.min() if ids.numel() else window


def _proportional(weight: torch.Tensor, capacity: torch.Tensor, total: int) -> torch.Tensor:
    """Integer shares of ``total`` proportional to ``weight``, capped by ``capacity``."""
    import torch

    quota = torch.zeros_like(capacity)
    remaining = min(total, int(capacity.sum()))
    while remaining > 0:
        room = capacity - quota
        open_ = room > 0
        w = torch.where(open_, weight.clamp_min(0), torch.zeros_like(weight))
        if float(w.sum()) <= 0:
            w = open_.double()
        ideal = w / w.sum() * remaining
        step = torch.minimum(torch.floor(ideal).long(), room)
        if int(step.sum()) == 0:  # hand out one token by largest remainder
            best = int(torch.argmax(torch.where(open_, ideal, torch.full_like(ideal, -1.0))))
            step = torch.zeros_like(quota)
            step[best] = 1
        quota += step
        remaining -= int(step.sum())
    return quota


@final
class FastVLike(AbstractCompressor):
    """FastV-style: all tokens up to layer ``K``, then the ones the last token attends to most.

    At layer ``K`` an eager attention pass of that layer (the adapter's ``attention_map``)
    ranks the multimodal tokens by the last query's attention, averaged over heads; each
    modality keeps its ``mu`` share from then on. Needs attention maps (no FlashAttention).

    Parameters
    ----------
    mu
        Retention after layer ``K``, in ``(0, 1]``.
    K
        The layer at which tokens are dropped (``>= 0``).

    Examples
    --------
    >>> c = FastVLike(0.2, K=2)
    >>> c.K
    2
    """

    def __init__(self, mu: float, K: int = 2) -> None:
        self.mu = check_mu(mu, "FastVLike")
        self.K = check_positive_int("K", K, minimum=0, maximum=10**6, owner="FastVLike")
        self.mode = "prune"
        self._alive: AliveSet | None = None

    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Remember the layout; the ranking happens at layer ``K``."""
        import torch

        if adapter is None or not hasattr(adapter, "attention_map"):
            raise TypeError("FastVLike: adapter must be a ModelAdapter with attention_map.")
        ids = check_inputs(H0, modality_ids, "FastVLike")
        self._adapter = adapter
        self._alive = AliveSet(ids, torch.ones(H0.shape[:2], dtype=H0.dtype))
        self._target: torch.Tensor | None = None

    def before_layer(
        self, layer: int, hidden: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """Keep everything before ``K``; rank by the last token's attention at ``K``."""
        layer = check_layer(layer, hidden, pos_ids, mask, self._alive, "FastVLike")
        alive = self._alive
        if layer < self.K or self.mu == 1.0:
            return hidden, pos_ids, mask, alive.index
        if self._target is None:
            attention = self._adapter.attention_map(layer, hidden, pos_ids, mask)  # (B, H, n, n)
            received = attention[:, :, -1, :].mean(dim=1).double()  # (B, n_alive)
            scores = received.new_zeros(alive.index.shape[0], alive.ids.shape[0])
            scores.scatter_(1, alive.index, received)
            self._target = _uniform_plan(scores, alive.ids, self.mu)[0]
        return alive.shrink(self._target, hidden, pos_ids, mask, self.mode)
