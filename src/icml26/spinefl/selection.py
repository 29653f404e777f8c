"""Sub-model extraction rules: SpineFL's backbone + activation-guided sampling, and baselines.

SpineFL (ICML 2026, "Required Spine Optional Limbs"; only the abstract was found) splits every
prunable layer l into a mandatory backbone B_l shared by all sub-models and a dynamic portion
D_l from which each client's remaining neurons are sampled, more likely the more often they fired
in the client's history. Spec §2.2–2.4 (inferred design):

    b_l = floor(beta * n_l(r_min)),   B_l = {0, ..., b_l - 1}   (or the top b_l by G_l),
    s_j = (H_{c,l,j} + eps)^(1/T),    j in D_l,
    pick k = n_l(r_c) - b_l from D_l by successive sampling without replacement, p ∝ s_j
        (exactly: Gumbel-top-k on log s_j),
    H_{c,l,j} <- gamma H_{c,l,j} + (1 - gamma) f_{c,l,j}       for j in S_{c,l}  (§2.3),
    G_{l,j}   <- gamma G_{l,j} + (1 - gamma) sum_c n_c f_{c,l,j} / sum_c n_c   for covered j.

Baselines (§2.10), only the index rule changes: HeteroFL (prefix), Federated Dropout (uniform
random), FedRolex (rolling window), FjORD-lite (prefix + ordered-dropout widths during training),
FIARSE-lite (top-n by the L2 norm of the neuron's incoming weights).

Options of issue 50 (from a public pre-release of the authors' code): ``score_source="model"``
scores channels by the current global model's firing on a sample of the client's data (set each
round by the server through :meth:`SpineSelector.set_client_scores`) instead of the history;
``rank_normalise`` replaces the scores of a layer's dynamic portion by their ranks / |D_l|;
``backbone_rule="nested"`` gives each client its own prefix backbone floor(beta n_l(r_c)).

Deviations: the backbone rule, the EMA, the temperature and the optimistic h0 = 1 are the spec's
inferred design, not the paper's (unavailable) text. FIARSE-lite is a structured simplification
of FIARSE's parameter-level threshold; FjORD-lite has no self-distillation. Every selector also
gives a deterministic ``deploy_indices`` for per-level evaluation (the spec only defines it for
SpineFL): prefix for HeteroFL/FedRolex/Federated Dropout/FjORD-lite, top-n by magnitude for
FIARSE-lite.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from typing import final

import numpy as np

from icml26.core import check_array, check_in_interval, check_one_of, check_positive_int

__all__ = [
    "AbstractActivationGuidedSelector",
    "AbstractOrderedDropoutSelector",
    "AbstractSelector",
    "AbstractWeightGuidedSelector",
    "MagnitudeSelector",
    "OrderedDropoutSelector",
    "RandomSelector",
    "RollingSelector",
    "SpineSelector",
    "StaticSelector",
    "gumbel_topk",
]


def gumbel_topk(
    log_weights: np.ndarray,
    k: int,
    rng: np.random.Generator | None = None,
    *,
    noise: np.ndarray | None = None,
) -> np.ndarray:
    """k distinct indices drawn by successive sampling without replacement, p_j ∝ exp(log_w_j).

    Gumbel-top-k: key_j = log_w_j + g_j with g_j ~ Gumbel(0, 1) i.i.d.; the indices of the k
    largest keys, in decreasing key order (the order of the successive draws).

    Parameters
    ----------
    log_weights
        Finite log-weights or ``-inf`` (weight 0), 1-D.
    k
        How many to draw, ``0 <= k <= `` the number of finite log-weights.
    rng
        Generator for the Gumbel noise (ignored when ``noise`` is given).
    noise
        The Gumbel draws themselves, same shape as ``log_weights`` (for tests).

    Examples
    --------
    >>> gumbel_topk(np.log([1.0, 2.0, 3.0]), 2, noise=np.zeros(3)).tolist()
    [2, 1]
    """
    try:
        log_w = np.asarray(log_weights, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(
            "gumbel_topk: log_weights must be a 1-D array of finite values or -inf; "
            f"got {type(log_weights).__name__}."
        ) from None
    if log_w.ndim != 1 or np.any(np.isnan(log_w)) or np.any(log_w == np.inf):
        raise ValueError(
            "gumbel_topk: log_weights must be a 1-D array of finite values or -inf; "
            f"got shape {log_w.shape}."
        )
    k = check_positive_int("k", k, owner="gumbel_topk", minimum=0)
    n_finite = int(np.isfinite(log_w).sum())
    if k > n_finite:
        raise ValueError(
            f"gumbel_topk: k must be <= the number of nonzero weights ({n_finite}); got {k}."
        )
    if noise is None:
        if rng is None:
            raise ValueError("gumbel_topk: give rng (a numpy Generator) or noise.")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                f"gumbel_topk: rng must be a numpy Generator or None; got {type(rng).__name__}."
            )
        noise = rng.gumbel(size=log_w.shape)
    else:
        noise = check_array("noise", noise, owner="gumbel_topk", shape=log_w.shape)
    keys = log_w + noise
    order = np.argsort(-keys, kind="stable")
    return order[:k]


def _check_layer(owner: str, layer: object, name: str = "layer") -> str:
    if not isinstance(layer, str):
        raise TypeError(f"{owner}: {name} must be a layer name (str); got {type(layer).__name__}.")
    return layer


MAX_NEURONS = 2**24  # most neurons of a layer a selector indexes (checked before any arange)


def _check_request(owner: str, N: int, n: int) -> tuple[int, int]:
    N = check_positive_int("N", N, owner=owner, maximum=MAX_NEURONS)
    n = check_positive_int("n", n, owner=owner)
    if n > N:
        raise ValueError(f"{owner}: n must be <= N = {N}; got {n}.")
    return N, n


class AbstractSelector(abc.ABC):
    """A sub-model extraction rule: which n of a layer's N neurons client c trains in round t."""

    @abc.abstractmethod
    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Sorted ``int64`` array of n distinct indices in ``range(N)``."""

    @abc.abstractmethod
    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """The deterministic n-neuron sub-model this rule deploys for evaluation (sorted)."""


class AbstractActivationGuidedSelector(AbstractSelector):
    """Capability: keeps activation histories reported by clients (SpineFL)."""

    @abc.abstractmethod
    def set_min_widths(self, min_widths: Mapping[str, int]) -> None:
        """n_l(r_min) of every prunable layer (fixes the backbone sizes b_l)."""

    @abc.abstractmethod
    def update_history(
        self, client: int, layer: str, idx: np.ndarray, freq: np.ndarray, n_samples: int
    ) -> None:
        """Record client's firing frequencies ``freq`` of neurons ``idx`` in one round."""

    @abc.abstractmethod
    def commit_round(self) -> None:
        """Apply the round's reports to the global history G (call once after all updates)."""


class AbstractWeightGuidedSelector(AbstractSelector):
    """Capability: selects by the current global weights (FIARSE-lite)."""

    @abc.abstractmethod
    def observe_weights(self, importance: Mapping[str, np.ndarray]) -> None:
        """Per-layer neuron importance of the current global model (e.g. row norms)."""


class AbstractOrderedDropoutSelector(AbstractSelector):
    """Capability marker: local training samples a nested width per step (FjORD)."""


def _prefix(N: int, n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)


@final
class StaticSelector(AbstractSelector):
    """HeteroFL: S = {0, ..., n - 1} for every client and round.

    Examples
    --------
    >>> StaticSelector().select("fc", 8, 3, t=5, c=1, rng=np.random.default_rng(0)).tolist()
    [0, 1, 2]
    """

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """The prefix of width n."""
        N, n = _check_request("StaticSelector", N, n)
        return _prefix(N, n)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """The prefix of width n."""
        N, n = _check_request("StaticSelector", N, n)
        return _prefix(N, n)


@final
class RandomSelector(AbstractSelector):
    """Federated Dropout: a uniformly random n-subset, fresh for every client and round.

    Examples
    --------
    >>> s = RandomSelector().select("fc", 8, 3, t=0, c=0, rng=np.random.default_rng(0))
    >>> len(s), bool(np.all(np.diff(s) > 0))
    (3, True)
    """

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``sorted(rng.choice(N, n, replace=False))``."""
        N, n = _check_request("RandomSelector", N, n)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                f"RandomSelector.select: rng must be a numpy Generator; got {type(rng).__name__}."
            )
        return np.sort(rng.choice(N, size=n, replace=False)).astype(np.int64)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """The prefix of width n (any fixed subset is as good for a uniform rule)."""
        N, n = _check_request("RandomSelector", N, n)
        return _prefix(N, n)


@final
class RollingSelector(AbstractSelector):
    """FedRolex: the window of n consecutive indices starting at t mod N, wrapping around.

    The same window for every client of a round; over N consecutive rounds every neuron is
    selected exactly n times.

    Examples
    --------
    >>> RollingSelector().select("fc", 5, 3, t=4, c=0, rng=np.random.default_rng(0)).tolist()
    [0, 1, 4]
    """

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``sorted((t + arange(n)) mod N)``."""
        N, n = _check_request("RollingSelector", N, n)
        t = check_positive_int("t", t, owner="RollingSelector", minimum=0)
        return np.sort((t + np.arange(n)) % N).astype(np.int64)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """The window of round 0 (the prefix)."""
        N, n = _check_request("RollingSelector", N, n)
        return _prefix(N, n)


@final
class OrderedDropoutSelector(AbstractOrderedDropoutSelector):
    """FjORD-lite: the prefix of width n; local training then trains nested prefixes.

    During each local step the trainer draws a width r' uniformly from the federation's levels
    <= r_c and trains only the prefix of width n_l(r') (ordered dropout, no distillation).

    Examples
    --------
    >>> OrderedDropoutSelector().select("fc", 8, 2, 0, 0, np.random.default_rng(0)).tolist()
    [0, 1]
    """

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """The prefix of width n."""
        N, n = _check_request("OrderedDropoutSelector", N, n)
        return _prefix(N, n)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """The prefix of width n."""
        N, n = _check_request("OrderedDropoutSelector", N, n)
        return _prefix(N, n)


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n largest scores (ties: lower index first), sorted ascending."""
    return np.sort(np.argsort(-scores, kind="stable")[:n]).astype(np.int64)


@final
class MagnitudeSelector(AbstractWeightGuidedSelector):
    """FIARSE-lite: the n neurons with the largest L2 norm of their incoming weights.

    The trainer calls :meth:`observe_weights` with the current global model's row norms before
    each round.

    Examples
    --------
    >>> m = MagnitudeSelector()
    >>> m.observe_weights({"fc": np.array([0.1, 3.0, 2.0, 0.5])})
    >>> m.select("fc", 4, 2, 0, 0, np.random.default_rng(0)).tolist()
    [1, 2]
    """

    def __init__(self) -> None:
        self.importance_: dict[str, np.ndarray] = {}

    def observe_weights(self, importance: Mapping[str, np.ndarray]) -> None:
        """Store each layer's neuron importance (row norms of the incoming weights)."""
        if not isinstance(importance, Mapping):
            raise TypeError(
                f"MagnitudeSelector: importance must map layer names to arrays; "
                f"got {type(importance).__name__}."
            )
        for layer, value in importance.items():
            _check_layer("MagnitudeSelector", layer, "importance keys")
            self.importance_[layer] = check_array(
                f"importance[{layer!r}]", value, owner="MagnitudeSelector", ndim=1
            )

    def _importance(self, layer: str, N: int) -> np.ndarray:
        _check_layer("MagnitudeSelector", layer)
        if layer not in self.importance_:
            raise ValueError(
                f"MagnitudeSelector: no importance observed for layer {layer!r}; "
                "call observe_weights first."
            )
        imp = self.importance_[layer]
        if imp.shape != (N,):
            raise ValueError(
                f"MagnitudeSelector: importance of layer {layer!r} has shape {imp.shape}; "
                f"expected (N,) = ({N},)."
            )
        return imp

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Top-n by importance."""
        N, n = _check_request("MagnitudeSelector", N, n)
        return _top(self._importance(layer, N), n)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """Top-n by importance."""
        N, n = _check_request("MagnitudeSelector", N, n)
        return _top(self._importance(layer, N), n)


@final
class SpineSelector(AbstractActivationGuidedSelector):
    """SpineFL: mandatory backbone + activation-guided sampling of the dynamic portion (§2.2–2.4).

    Parameters
    ----------
    beta
        Backbone fraction of the smallest sub-model, in [0, 1]: b_l = floor(beta n_l(r_min)).
    temperature
        T > 0 in s_j = (H_j + eps)^(1/T); T -> 0 is deterministic top-k, T -> inf uniform.
    eps
        Score floor > 0: every neuron keeps a nonzero probability.
    h0
        Initial history in [0, 1] (1.0: optimistic, untried neurons are likely to be tried).
    gamma
        History EMA factor in [0, 1).
    scope
        ``"client"`` (each client samples by its own history H_c) or ``"global"`` (by G).
    backbone_mode
        ``"prefix"`` (B_l = {0, ..., b_l - 1}) or ``"top_global"`` (the top b_l by G_l).
    score_source
        ``"history"`` (H_c or G, §2.3) or ``"model"`` (the global model's firing frequency on
        the client's data, given each round by :meth:`set_client_scores`).
    rank_normalise
        Replace a layer's dynamic scores by rank / |D_l| (ties averaged) before ^(1/T).
    backbone_rule
        ``"r_min"`` (b_l = floor(beta n_l(r_min)), shared by all) or ``"nested"`` (each client's
        b_l = floor(beta n_l(r_c)): nested prefixes).

    Attributes
    ----------
    global_history_
        G_l for every layer seen so far.
    client_history_
        H_{c,l} for every client seen so far.
    min_widths_
        n_l(r_min) per layer (from :meth:`set_min_widths`).
    selection_kl_
        ``{client: [KL, ...]}``: KL(p || uniform) in nats of the pick distribution over D_l of
        every :meth:`select` call that draws (0 < k < |D_l|): how far sampling is from uniform.

    Examples
    --------
    >>> sel = SpineSelector(beta=0.5)
    >>> sel.set_min_widths({"fc": 4})
    >>> s = sel.select("fc", 16, 8, t=0, c=0, rng=np.random.default_rng(0))
    >>> len(s), set(sel.backbone("fc", 16, 4).tolist()) <= set(s.tolist())
    (8, True)
    """

    def __init__(
        self,
        *,
        beta: float = 0.5,
        temperature: float = 1.0,
        eps: float = 1e-3,
        h0: float = 1.0,
        gamma: float = 0.5,
        scope: str = "client",
        backbone_mode: str = "prefix",
        score_source: str = "history",
        rank_normalise: bool = False,
        backbone_rule: str = "r_min",
    ) -> None:
        owner = "SpineSelector"
        self.beta = check_in_interval("beta", beta, low=0.0, high=1.0, owner=owner)
        self.temperature = check_in_interval(
            "temperature", temperature, low=0.0, closed="neither", owner=owner
        )
        self.eps = check_in_interval("eps", eps, low=0.0, closed="neither", owner=owner)
        self.h0 = check_in_interval("h0", h0, low=0.0, high=1.0, owner=owner)
        self.gamma = check_in_interval(
            "gamma", gamma, low=0.0, high=1.0, closed="left", owner=owner
        )
        self.scope = check_one_of("scope", scope, ("client", "global"), owner=owner)
        self.backbone_mode = check_one_of(
            "backbone_mode", backbone_mode, ("prefix", "top_global"), owner=owner
        )
        self.score_source = check_one_of(
            "score_source", score_source, ("history", "model"), owner=owner
        )
        if not isinstance(rank_normalise, bool):
            raise TypeError(f"{owner}: rank_normalise must be a bool; got {rank_normalise!r}.")
        self.rank_normalise = rank_normalise
        self.backbone_rule = check_one_of(
            "backbone_rule", backbone_rule, ("r_min", "nested"), owner=owner
        )
        self.global_history_: dict[str, np.ndarray] = {}
        self.client_history_: dict[int, dict[str, np.ndarray]] = {}
        self.client_scores_: dict[int, dict[str, np.ndarray]] = {}
        self.selection_kl_: dict[int, list[float]] = {}
        self.min_widths_: dict[str, int] = {}
        self._pending: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # --- histories ----------------------------------------------------------------------------

    def set_min_widths(self, min_widths: Mapping[str, int]) -> None:
        """Store n_l(r_min) for every layer."""
        for layer, n_min in min_widths.items():
            self.min_widths_[layer] = check_positive_int(
                f"min_widths[{layer!r}]", n_min, owner="SpineSelector"
            )

    def _global(self, layer: str, N: int) -> np.ndarray:
        G = self.global_history_.setdefault(layer, np.full(N, self.h0))
        if G.shape != (N,):
            raise ValueError(f"SpineSelector: layer {layer!r} has N = {G.size}; got N = {N}.")
        return G

    def _client(self, c: int, layer: str, N: int) -> np.ndarray:
        # A client seen for the first time inherits a copy of G (§2.3).
        H = self.client_history_.setdefault(c, {})
        if layer not in H:
            H[layer] = self._global(layer, N).copy()
        return H[layer]

    def update_history(
        self, client: int, layer: str, idx: np.ndarray, freq: np.ndarray, n_samples: int
    ) -> None:
        """H_{c,l,j} <- gamma H_{c,l,j} + (1 - gamma) f_j on the selected j (§2.3).

        The n_c-weighted report also enters the global history at :meth:`commit_round`.
        """
        owner = "SpineSelector.update_history"
        if layer not in self.global_history_:
            raise ValueError(f"{owner}: layer {layer!r} was never selected.")
        N = self.global_history_[layer].size
        idx = np.asarray(idx)
        if idx.ndim != 1 or idx.dtype.kind not in "iu" or np.any(np.diff(idx) <= 0):
            raise ValueError(f"{owner}: idx must be sorted distinct integers; got {idx!r}.")
        if idx.size and (idx[0] < 0 or idx[-1] >= N):
            raise ValueError(f"{owner}: idx must lie in range(0, {N}); got {idx.tolist()}.")
        freq = check_array("freq", freq, owner=owner, shape=(idx.size,))
        if np.any((freq < 0) | (freq > 1)):
            raise ValueError(f"{owner}: freq must lie in [0, 1]; got {freq.tolist()}.")
        n_samples = check_positive_int("n_samples", n_samples, owner=owner, minimum=0)
        H = self._client(client, layer, N)
        H[idx] = self.gamma * H[idx] + (1 - self.gamma) * freq  # §2.3 client EMA
        sums, weights = self._pending.setdefault(layer, (np.zeros(N), np.zeros(N)))
        sums[idx] += n_samples * freq
        weights[idx] += n_samples

    def commit_round(self) -> None:
        """G_{l,j} <- gamma G_{l,j} + (1 - gamma) sum n_c f / sum n_c on covered j (§2.3)."""
        for layer, (sums, weights) in self._pending.items():
            G = self.global_history_[layer]
            covered = weights > 0
            G[covered] = self.gamma * G[covered] + (1 - self.gamma) * (
                sums[covered] / weights[covered]
            )
        self._pending = {}

    # --- selection ----------------------------------------------------------------------------

    def backbone_size(self, layer: str, n_min: int | None = None) -> int:
        """b_l = floor(beta * n_l(r_min)) (§2.2)."""
        if n_min is None:
            if layer not in self.min_widths_:
                raise ValueError(
                    f"SpineSelector: no minimum width for layer {layer!r}; call "
                    "set_min_widths first (HeteroSimulation and SpineFLStrategy do)."
                )
            n_min = self.min_widths_[layer]
        n_min = check_positive_int("n_min", n_min, owner="SpineSelector")
        return math.floor(self.beta * n_min + 1e-9)

    def backbone(self, layer: str, N: int, n_min: int | None = None) -> np.ndarray:
        """B_l: the prefix of size b_l, or the top b_l neurons by G_l (sorted)."""
        N = check_positive_int("N", N, owner="SpineSelector", maximum=MAX_NEURONS)
        b = self.backbone_size(layer, n_min)
        if b > N:
            raise ValueError(f"SpineSelector: n_min must be <= N = {N}; got backbone size {b}.")
        if self.backbone_mode == "prefix":
            return np.arange(b, dtype=np.int64)
        return _top(self._global(layer, N), b)

    def set_client_scores(self, client: int, scores: Mapping[str, np.ndarray]) -> None:
        """Client ``client``'s channel scores in [0, 1] per layer (``score_source="model"``)."""
        owner = "SpineSelector.set_client_scores"
        client = check_positive_int("client", client, owner=owner, minimum=0)
        checked = {}
        for layer, freq in scores.items():
            freq = check_array(f"scores[{layer!r}]", freq, owner=owner, ndim=1)
            if np.any((freq < 0) | (freq > 1)):
                raise ValueError(f"{owner}: scores[{layer!r}] must lie in [0, 1].")
            checked[layer] = freq.astype(np.float64)
        self.client_scores_[client] = checked

    def _scores(self, c: int, layer: str, N: int) -> np.ndarray:
        """The raw per-neuron score the client samples by (history or model firing)."""
        G = self._global(layer, N)  # histories are kept (deployment) whatever the source
        if self.score_source == "model":
            scores = self.client_scores_.get(c, {}).get(layer)
            if scores is None:
                raise ValueError(
                    f"SpineSelector: score_source='model' needs set_client_scores({c}, ...) "
                    f"for layer {layer!r} before select (HeteroSimulation does it)."
                )
            if scores.shape != (N,):
                raise ValueError(f"SpineSelector: scores of {layer!r} must have N = {N} entries.")
            return scores
        return G if self.scope == "global" else self._client(c, layer, N)

    def _backbone_for(self, layer: str, N: int, n: int) -> np.ndarray:
        n_min = n if self.backbone_rule == "nested" else None
        B = self.backbone(layer, N, n_min)
        if n < B.size:
            raise ValueError(
                f"SpineSelector: n must be >= the backbone size {B.size} of {layer!r}; got {n}."
            )
        return B

    def log_probabilities(
        self, c: int, layer: str, N: int, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The dynamic portion D_l of client ``c``'s draw and log p_j (one pick, p ∝ s_j)."""
        N, n = _check_request("SpineSelector", N, n)
        B = self._backbone_for(layer, N, n)
        dynamic = np.setdiff1d(np.arange(N), B)  # D_l
        raw = self._scores(c, layer, N)[dynamic]
        if self.rank_normalise:
            from scipy.stats import rankdata

            raw = rankdata(raw) / max(raw.size, 1)
        log_scores = np.log(raw + self.eps) / self.temperature  # log s_j
        if log_scores.size:
            log_scores = log_scores - np.logaddexp.reduce(log_scores)
        return dynamic, log_scores

    def select(
        self, layer: str, N: int, n: int, t: int, c: int, rng: np.random.Generator
    ) -> np.ndarray:
        """S = B_l ∪ Gumbel-top-k of log (score_j + eps) / T over D_l, k = n - b_l (§2.4)."""
        N, n = _check_request("SpineSelector", N, n)
        B = self._backbone_for(layer, N, n)
        dynamic, log_p = self.log_probabilities(c, layer, N, n)
        k = n - B.size
        if 0 < k < dynamic.size:
            p = np.exp(log_p)
            kl = float(np.sum(p * (log_p + np.log(dynamic.size))))
            self.selection_kl_.setdefault(c, []).append(kl)
        picked = dynamic[gumbel_topk(log_p, k, rng)]
        return np.sort(np.concatenate([B, picked])).astype(np.int64)

    def deploy_indices(self, layer: str, N: int, n: int) -> np.ndarray:
        """Backbone + the top (n - b_l) dynamic neurons by G (deterministic, §2.9)."""
        N, n = _check_request("SpineSelector", N, n)
        B = self._backbone_for(layer, N, n)
        dynamic = np.setdiff1d(np.arange(N), B)
        top = dynamic[np.argsort(-self._global(layer, N)[dynamic], kind="stable")[: n - B.size]]
        return np.sort(np.concatenate([B, top])).astype(np.int64)
