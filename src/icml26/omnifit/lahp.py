"""Phase I of OmniFit: Layer-Adaptive Heterogeneity Profiling (LAHP), spec §2.2.

TRP turns the effective rank of each layer's hidden states into a non-increasing retention
profile, ``k_eff = min{k : sum_{i<=k} s_i^2 / sum_j s_j^2 > delta}``, ``Psi(l) = prod_{i<=l}
k_eff^(i) / d``, ``r~(l) = mu Psi(l) / mean_j Psi(j)``, then rescales it by ``xi`` so that the
layers' cost ``sum_l C(xi r~(l) N)`` with ``C(n) = c1 n + c2 n^2`` equals the uniform cost
``L C(mu N)``. MPP measures each layer's token-normalised attention preference for video and audio
and splits a layer's budget in proportion to ``rho_m N_m``.

Deviations (inferred; see docs/omnifit.md): k_eff is averaged over calibration samples and
rounded; clipping to ``[r_min, 1]`` re-solves ``xi`` over the unclipped layers until no new layer
clips; a modality whose share exceeds its token count is capped and the overflow goes to the
other; when both preferences are zero the split follows the token counts; ``rho`` uses the mean
over query rows (the paper's sum differs by the constant ``n``, which cancels in the split).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core.validation import check_array, check_in_interval, check_positive_int, check_tensor
from icml26.omnifit.tokens import (
    AUDIO,
    AUDIO_NAME,
    VIDEO,
    VIDEO_NAME,
    check_modality_ids,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "LAHPProfile",
    "cumulative_profile",
    "effective_rank",
    "layer_cost",
    "modality_preference",
    "retention_profile",
    "split_budget",
]

MAX_LAYERS = 4096  # a size bound checked before any per-layer array is built
MAX_TOKENS = 10**9


def effective_rank(X: torch.Tensor, delta: float = 0.9) -> int:
    """Smallest k whose top-k singular values hold more than ``delta`` of the energy.

    ``k_eff = min{k : sum_{i<=k} s_i^2 / sum_j s_j^2 > delta}`` (strict ``>``: for an isotropic
    ``d``-dimensional matrix and ``delta = 0.9`` this is ``floor(0.9 d) + 1``; ties within
    round-off count as not exceeding ``delta``).

    Parameters
    ----------
    X
        Hidden states of one sample, shape ``(tokens, d)``.
    delta
        Energy fraction in ``(0, 1)``.

    Returns
    -------
    int
        The effective rank, in ``[1, min(tokens, d)]``.

    Raises
    ------
    ValueError
        If ``X`` is not a finite non-empty 2-D tensor with non-zero energy, or ``delta`` is
        outside ``(0, 1)``.

    Examples
    --------
    >>> import torch
    >>> effective_rank(torch.eye(10, dtype=torch.float64), delta=0.9)
    10
    """
    import torch

    check_tensor("X", X, ndim=2, finite=True, owner="effective_rank")
    delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither")
    if X.numel() == 0:
        raise ValueError("effective_rank: X must have at least one row and one column.")
    s2 = torch.linalg.svdvals(X.double()) ** 2
    total = float(s2.sum())
    if not total > 0 or not math.isfinite(total):
        raise ValueError("effective_rank: X must have non-zero finite energy; got an all-zero X.")
    excess = torch.cumsum(s2, 0) - delta * total
    # round-off of a sum of equal terms can land a hair above delta; a tie is not "more than"
    above = torch.nonzero(excess > 1e-10 * total)
    return int(above[0, 0]) + 1


def cumulative_profile(k_eff: Sequence[int], d: int) -> np.ndarray:
    """Cumulative information proxy ``Psi(l) = prod_{i<=l} k_eff^(i) / d``.

    Parameters
    ----------
    k_eff
        Effective rank of each layer, integers in ``[1, d]``.
    d
        Hidden size.

    Returns
    -------
    numpy.ndarray
        ``Psi``, shape ``(L,)``, non-increasing, in ``(0, 1]``.

    Examples
    --------
    >>> cumulative_profile([4, 2], 4).tolist()
    [1.0, 0.5]
    """
    d = check_positive_int("d", d, maximum=MAX_TOKENS, owner="cumulative_profile")
    if isinstance(k_eff, str | bytes):
        raise TypeError("cumulative_profile: k_eff must be a sequence of integers; got a string.")
    k = check_array("k_eff", k_eff, ndim=1, owner="cumulative_profile")
    if k.size == 0 or k.size > MAX_LAYERS:
        raise ValueError(
            f"cumulative_profile: k_eff must hold 1..{MAX_LAYERS} layers; got {k.size}."
        )
    if np.any(k != np.round(k)) or np.any(k < 1) or np.any(k > d):
        raise ValueError(
            f"cumulative_profile: k_eff must be integers in [1, d={d}]; got {k.tolist()}."
        )
    return np.cumprod(k / d)


def layer_cost(n: np.ndarray | float, c1: float, c2: float) -> np.ndarray:
    """Per-layer cost model ``C(n) = c1 n + c2 n^2`` (linear parts + quadratic attention).

    Token counts ``n`` lie in ``[0, MAX_TOKENS]`` (10^9).

    Examples
    --------
    >>> float(layer_cost(10.0, 2.0, 0.5))
    70.0
    """
    n = check_array("n", n, owner="layer_cost")
    if np.any(n < 0) or np.any(n > MAX_TOKENS):
        raise ValueError(f"layer_cost: n must be token counts in [0, {MAX_TOKENS}].")
    c1 = check_in_interval("c1", c1, low=0.0, high=1e30, owner="layer_cost")
    c2 = check_in_interval("c2", c2, low=0.0, high=1e30, owner="layer_cost")
    return c1 * n + c2 * n**2


def _solve_xi(r_free: np.ndarray, target: float, c1: float, c2: float, N: float) -> float:
    """Positive root of ``A xi^2 + B xi - target = 0`` for the free layers."""
    A = c2 * N**2 * float(np.sum(r_free**2))
    B = c1 * N * float(np.sum(r_free))
    if A == 0.0:
        return target / B
    # the rationalised form (2 C / (B + sqrt(B^2 + 4 A C))) avoids cancellation when A is tiny
    return 2.0 * target / (B + math.sqrt(B * B + 4.0 * A * target))


def retention_profile(
    psi: Sequence[float] | np.ndarray,
    mu: float,
    c1: float,
    c2: float,
    N: int,
    r_min: float = 0.02,
) -> tuple[np.ndarray, float]:
    """Cost-equivalent per-layer retention ``r^(l) = xi r~^(l)``, clipped to ``[r_min, 1]``.

    ``r~(l) = mu Psi(l) / mean_j Psi(j)``; ``xi`` is the positive root of
    ``A xi^2 + B xi = L C(mu N)`` with ``A = c2 N^2 sum r~^2`` and ``B = c1 N sum r~`` so that
    ``sum_l C(r^(l) N) = L C(mu N)`` before rounding. Layers that clip are fixed and ``xi`` is
    re-solved over the others until no new layer clips.

    Parameters
    ----------
    psi
        ``Psi(l)`` from :func:`cumulative_profile`, positive, shape ``(L,)``.
    mu
        Target (cost-equivalent) average retention in ``(0, 1]``.
    c1, c2
        Cost-model coefficients, both ``> 0``.
    N
        Number of multimodal tokens (``<= 1e9``).
    r_min
        Lower clip in ``(0, mu]``.

    Returns
    -------
    r : numpy.ndarray
        Retention per layer, shape ``(L,)``, in ``[r_min, 1]``.
    xi : float
        The scale applied to the unclipped layers (``<= 1``; ``1`` for a flat profile).

    Examples
    --------
    >>> r, xi = retention_profile([1.0, 1.0, 1.0], 0.2, 1.0, 0.01, 100)
    >>> r.round(12).tolist(), round(xi, 12)
    ([0.2, 0.2, 0.2], 1.0)
    """
    owner = "retention_profile"
    mu = check_in_interval("mu", mu, low=0.0, high=1.0, closed="right", owner=owner)
    c1 = check_in_interval("c1", c1, low=0.0, high=1e30, closed="right", owner=owner)
    c2 = check_in_interval("c2", c2, low=0.0, high=1e30, closed="right", owner=owner)
    if c1 <= 0 or c2 <= 0:
        raise ValueError(f"{owner}: c1 and c2 must be > 0; got c1={c1!r}, c2={c2!r}.")
    N = check_positive_int("N", N, maximum=MAX_TOKENS, owner=owner)
    r_min = check_in_interval("r_min", r_min, low=0.0, high=mu, closed="right", owner=owner)
    if r_min <= 0:
        raise ValueError(f"{owner}: r_min must be in (0, mu={mu:g}]; got {r_min!r}.")
    psi = check_array("psi", psi, ndim=1, owner=owner)
    if psi.size == 0 or psi.size > MAX_LAYERS:
        raise ValueError(f"{owner}: psi must hold 1..{MAX_LAYERS} layers; got {psi.size}.")
    if np.any(psi <= 0) or np.any(psi > 1e300):
        raise ValueError(f"{owner}: psi must be positive and finite; got {psi.tolist()}.")
    L = psi.size
    if mu == 1.0:
        return np.ones(L), 1.0
    # r~(l) = mu Psi(l) / mean Psi ; mean r~ = mu exactly (up to round-off)
    r_tilde = mu * psi / psi.mean()
    c_uniform = L * float(layer_cost(mu * N, c1, c2))
    r = np.empty(L)
    clipped = np.zeros(L, dtype=bool)
    xi = 1.0
    for _ in range(L + 1):
        free = ~clipped
        target = c_uniform - float(np.sum(layer_cost(r[clipped] * N, c1, c2)))
        xi = _solve_xi(r_tilde[free], max(target, 0.0), c1, c2, N)
        r[free] = xi * r_tilde[free]
        new_clips = free & ((r > 1.0) | (r < r_min))
        if not new_clips.any():
            break
        r[new_clips] = np.clip(r[new_clips], r_min, 1.0)
        clipped |= new_clips
        if clipped.all():
            break
    return r, float(xi)


def modality_preference(
    attn_maps: torch.Tensor, modality_ids: torch.Tensor
) -> dict[str, np.ndarray]:
    """Token-normalised attention preference of each layer for video and audio (MPP).

    ``rho_m^(l) = (1/N_m) sum_{j in m} mean_i A^(l)_{ij}``: the mean over query rows of the
    attention each key of modality ``m`` receives, averaged over the modality's keys. A modality
    with no tokens gets ``rho = 0``.

    Parameters
    ----------
    attn_maps
        Non-negative attention, shape ``(L, n, n)`` (already averaged over heads and samples) or
        ``(L, B, H, n, n)`` (averaged here).
    modality_ids
        Codes of the ``n`` tokens (0 text, 1 video, 2 audio), shape ``(n,)``.

    Returns
    -------
    dict
        ``{"video": (L,), "audio": (L,)}`` arrays.

    Examples
    --------
    >>> import torch
    >>> A = torch.full((1, 3, 3), 0.25, dtype=torch.float64)
    >>> modality_preference(A, torch.tensor([0, 1, 2]))["video"].tolist()
    [0.25]
    """
    owner = "modality_preference"
    check_tensor("attn_maps", attn_maps, finite=True, owner=owner)
    if attn_maps.ndim not in (3, 5):
        raise ValueError(
            f"{owner}: attn_maps must have shape (L, n, n) or (L, B, H, n, n); "
            f"got {tuple(attn_maps.shape)}."
        )
    if attn_maps.ndim == 5:
        attn_maps = attn_maps.mean(dim=(1, 2))
    L, n_q, n_k = attn_maps.shape
    if n_q != n_k or L == 0:
        raise ValueError(f"{owner}: attn_maps must be (L>0, n, n); got {tuple(attn_maps.shape)}.")
    if bool((attn_maps < 0).any()):
        raise ValueError(f"{owner}: attn_maps must be non-negative.")
    ids = check_modality_ids(modality_ids, n_k, owner=owner)
    received = attn_maps.double().mean(dim=1)  # (L, n): mean over query rows
    out: dict[str, np.ndarray] = {}
    for name, code in ((VIDEO_NAME, VIDEO), (AUDIO_NAME, AUDIO)):
        members = ids == code
        count = int(members.sum())
        if count == 0:
            out[name] = np.zeros(L)
        else:
            out[name] = (received[:, members].sum(dim=1) / count).cpu().numpy()
    return out


def split_budget(K: int, rho: Mapping[str, float], counts: Mapping[str, int]) -> dict[str, int]:
    """Split a layer's multimodal budget ``K`` between video and audio by preference density.

    ``r_m = rho_m K / (rho_v N_v + rho_a N_a)``, ``kept_m = round(r_m N_m)``; a share above a
    modality's count is capped and the overflow given to the other; the two sum to
    ``min(K, N_v + N_a)``. With both ``rho_m N_m`` zero the split is proportional to the counts.

    Parameters
    ----------
    K
        Tokens to keep (``>= 0``).
    rho
        ``{"video": rho_v, "audio": rho_a}``, non-negative finite.
    counts
        ``{"video": N_v, "audio": N_a}``, non-negative integers.

    Returns
    -------
    dict
        ``{"video": kept_v, "audio": kept_a}``.

    Examples
    --------
    >>> split_budget(10, {"video": 1.0, "audio": 1.0}, {"video": 30, "audio": 10})
    {'video': 8, 'audio': 2}
    """
    owner = "split_budget"
    K = check_positive_int("K", K, minimum=0, maximum=MAX_TOKENS, owner=owner)
    if not isinstance(rho, Mapping) or not isinstance(counts, Mapping):
        raise TypeError(f"{owner}: rho and counts must be mappings with keys 'video', 'audio'.")
    pref, n = {}, {}
    for name in (VIDEO_NAME, AUDIO_NAME):
        if name not in rho or name not in counts:
            raise ValueError(f"{owner}: rho and counts need keys 'video' and 'audio'.")
        pref[name] = check_in_interval(
            f"rho[{name!r}]", rho[name], low=0.0, high=1e300, owner=owner
        )
        n[name] = check_positive_int(
            f"counts[{name!r}]", counts[name], minimum=0, maximum=MAX_TOKENS, owner=owner
        )
    v, a = VIDEO_NAME, AUDIO_NAME
    K = min(K, n[v] + n[a])
    density = pref[v] * n[v] + pref[a] * n[a]
    if density > 0:
        share_v = pref[v] * n[v] / density
    else:
        share_v = n[v] / (n[v] + n[a]) if n[v] + n[a] else 0.0
    # kept_v = round(r_v N_v) = round(share_v K); the rest goes to audio, caps move the overflow
    kept_v = min(n[v], round(share_v * K))
    kept_a = min(n[a], K - kept_v)
    kept_v = min(n[v], K - kept_a)
    return {v: int(kept_v), a: int(kept_a)}


@dataclass
class LAHPProfile:
    """The output of Phase I: the rank profile, the modality preferences and the cost model.

    A profile is stored per model; :meth:`retention` recomputes ``(r, xi)`` for any ``mu`` and
    token count ``N`` from ``psi``, and :meth:`layer_budgets` gives the kept video/audio counts
    per layer (non-increasing in ``l`` so that kept sets can be nested).

    Parameters
    ----------
    k_eff
        Effective rank per layer (mean over calibration samples, rounded).
    d
        Hidden size.
    rho
        ``{"video": (L,), "audio": (L,)}`` preferences from :func:`modality_preference`.
    c1, c2
        Cost-model coefficients.
    r_min
        Lower retention clip.
    delta
        Energy threshold used for ``k_eff``.
    meta
        Free-form JSON-able information (calibration size, ``mu``, ``N``, model name).

    Examples
    --------
    >>> p = LAHPProfile.uniform(n_layers=2, d=8)
    >>> p.layer_budgets(0.5, {"video": 8, "audio": 4})
    [{'video': 4, 'audio': 2}, {'video': 4, 'audio': 2}]
    """

    k_eff: list[int]
    d: int
    rho: dict[str, list[float]]
    c1: float
    c2: float
    r_min: float = 0.02
    delta: float = 0.9
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owner = "LAHPProfile"
        self.psi = cumulative_profile(self.k_eff, self.d)
        self.k_eff = [int(k) for k in self.k_eff]
        L = len(self.k_eff)
        if not isinstance(self.rho, Mapping):
            raise TypeError(f"{owner}: rho must map 'video'/'audio' to per-layer preferences.")
        rho = {}
        for name in (VIDEO_NAME, AUDIO_NAME):
            if name not in self.rho:
                raise ValueError(f"{owner}: rho needs keys 'video' and 'audio'.")
            values = check_array(f"rho[{name!r}]", self.rho[name], shape=(L,), owner=owner)
            if np.any(values < 0):
                raise ValueError(f"{owner}: rho[{name!r}] must be non-negative.")
            rho[name] = [float(x) for x in values]
        self.rho = rho
        for name in ("c1", "c2"):
            value = check_in_interval(name, getattr(self, name), low=0.0, high=1e30, owner=owner)
            if value <= 0:
                raise ValueError(f"{owner}: {name} must be > 0; got {value!r}.")
        self.r_min = check_in_interval("r_min", self.r_min, low=0.0, high=1.0, owner=owner)
        if self.r_min <= 0:
            raise ValueError(f"{owner}: r_min must be in (0, 1]; got {self.r_min!r}.")
        self.delta = check_in_interval(
            "delta", self.delta, low=0.0, high=1.0, closed="neither", owner=owner
        )

    @property
    def n_layers(self) -> int:
        """Number of decoder layers L."""
        return len(self.k_eff)

    @classmethod
    def uniform(
        cls, n_layers: int, d: int, c1: float = 1.0, c2: float = 1.0, r_min: float = 0.02
    ) -> LAHPProfile:
        """A flat profile (k_eff = d, equal preferences): each layer keeps mu of each modality."""
        L = check_positive_int("n_layers", n_layers, maximum=MAX_LAYERS, owner="LAHPProfile")
        d = check_positive_int("d", d, maximum=MAX_TOKENS, owner="LAHPProfile")
        return cls(
            [d] * L,
            d,
            {VIDEO_NAME: [1.0] * L, AUDIO_NAME: [1.0] * L},
            c1,
            c2,
            r_min,
            meta={"kind": "uniform"},
        )

    def with_flat_rank(self) -> LAHPProfile:
        """The same preferences with a flat rank profile (MPP only)."""
        return LAHPProfile(
            [self.d] * self.n_layers,
            self.d,
            self.rho,
            self.c1,
            self.c2,
            self.r_min,
            self.delta,
            {**self.meta, "kind": "mpp-only"},
        )

    def with_uniform_preference(self) -> LAHPProfile:
        """The same rank profile with equal preferences: the split follows counts (TRP only)."""
        ones = [1.0] * self.n_layers
        return LAHPProfile(
            self.k_eff,
            self.d,
            {VIDEO_NAME: ones, AUDIO_NAME: ones},
            self.c1,
            self.c2,
            self.r_min,
            self.delta,
            {**self.meta, "kind": "trp-only"},
        )

    def retention(self, mu: float, N: int) -> tuple[np.ndarray, float]:
        """``(r, xi)`` of :func:`retention_profile` for this profile's ``psi`` and cost model."""
        mu = check_in_interval("mu", mu, low=0.0, high=1.0, closed="right", owner="LAHPProfile")
        if mu <= 0:
            raise ValueError(f"LAHPProfile: mu must be in (0, 1]; got {mu!r}.")
        return retention_profile(self.psi, mu, self.c1, self.c2, N, min(self.r_min, mu))

    def layer_budgets(self, mu: float, counts: Mapping[str, int]) -> list[dict[str, int]]:
        """Kept video/audio counts per layer for retention ``mu``.

        ``K^(l) = round(r^(l) N)`` split by :func:`split_budget` with the layer's preferences,
        then made non-increasing per modality (a running minimum) so kept sets can be nested.
        With ``mu = 1`` every token is kept in every layer.
        """
        if not isinstance(counts, Mapping):
            raise TypeError("LAHPProfile: counts must map 'video'/'audio' to token counts.")
        nv, na = int(counts.get(VIDEO_NAME, 0)), int(counts.get(AUDIO_NAME, 0))
        N = nv + na
        if N == 0:
            return [{VIDEO_NAME: 0, AUDIO_NAME: 0} for _ in range(self.n_layers)]
        r, _ = self.retention(mu, N)
        budgets, previous = [], {VIDEO_NAME: nv, AUDIO_NAME: na}
        for layer in range(self.n_layers):
            K = N if mu == 1.0 else round(float(r[layer]) * N)
            rho = {name: self.rho[name][layer] for name in (VIDEO_NAME, AUDIO_NAME)}
            split = split_budget(K, rho, {VIDEO_NAME: nv, AUDIO_NAME: na})
            previous = {name: min(split[name], previous[name]) for name in split}
            budgets.append(dict(previous))
        return budgets

    def to_dict(self) -> dict[str, Any]:
        """JSON-able contents."""
        return {
            "k_eff": self.k_eff,
            "d": self.d,
            "rho": self.rho,
            "c1": self.c1,
            "c2": self.c2,
            "r_min": self.r_min,
            "delta": self.delta,
            "meta": self.meta,
        }

    def save(self, path: str | Path) -> None:
        """Write the profile as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> LAHPProfile:
        """Read a profile written by :meth:`save`."""
        data = json.loads(Path(path).read_text())
        if not isinstance(data, dict) or "k_eff" not in data:
            raise ValueError(f"LAHPProfile: {path} is not a saved profile.")
        return cls(**data)
