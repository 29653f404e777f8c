"""The radial law of a Spherical Generalized Gamma (SGG) distribution on R^T.

X = R·U with U uniform on the unit sphere S^{T-1} and R independent with the generalized-gamma
(Stacy) density f_R(r) = p r^{k-1} exp(-(r/σ)^p) / (σ^k Γ(k/p)), so that
f(x) = C ‖x‖^{k-T} exp(-(‖x‖/σ)^p).  (R/σ)^p ~ Gamma(k/p, 1), which gives exact quantiles,
moments E R^m = σ^m Γ((k+m)/p) / Γ(k/p), and a two-draw sampler.

The parametrisation (σ, k, p) is inferred from the paper's name and abstract (see docs/sgg_dp.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from icml26.sgg_dp.tails import log_gamma_cdf, log_gamma_cdf_of_log, log_gamma_sf

__all__ = [
    "graded_nodes",
    "log_radial_density",
    "log_radial_profile",
    "radius_at_logit",
    "radius_logit",
    "radius_moment",
    "radius_nodes",
    "radius_nodes_log",
    "radius_quantile",
    "sample_sgg",
]

# Radial quadrature in s = logit F_R(r): the PLD's fixed rule covers |s| <= S_MAX (all but
# ~4e-18 of the mass); the profile's adaptive windows reach |s| <= S_LIMIT + ε (tail mass
# e^{-745}, times e^ε for the B term).
S_MAX = 40.0
S_LIMIT = 745.0
S_SCIPY = 700.0  # scipy's inverse upper incomplete gamma while e^{-s} is a normal float
S_LOW = 30.0  # below, the lower tail is inverted in ln z (z may underflow before r does)
S_POLISH = 20.0  # beyond |s| = 20 the quantile is polished by Newton steps in ln z
NEWTON_STEPS = 8
GL_ORDER = 24
_X, _WX = np.polynomial.legendre.leggauss(GL_ORDER)
_RULE = ((_X + 1) / 2, _WX / 2)  # Gauss–Legendre on (0, 1)


def log_radial_profile(t: np.ndarray, T: int, k: float, p: float, sigma: float) -> np.ndarray:
    """h(t) = (k - T) ln t - (t/σ)^p, the log-density of X along a ray, up to a constant.

    Examples
    --------
    >>> float(log_radial_profile(np.array(2.0), T=3, k=3.0, p=2.0, sigma=2.0))
    -1.0
    """
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_t = np.log(t)
        power = (k - T) * log_t if k != T else np.zeros_like(t)
    return power - (t / sigma) ** p


def radius_quantile(q: np.ndarray, k: float, p: float, sigma: float, upper: bool = False):
    """Quantile of R: σ·[Γ⁻¹_{k/p}(q)]^{1/p}; with ``upper=True`` ``q`` is the upper-tail mass.

    Examples
    --------
    >>> round(float(radius_quantile(np.array(0.5), k=1.0, p=1.0, sigma=1.0)), 6)  # Exp(1) median
    0.693147
    """
    q = np.asarray(q, dtype=float)
    g = special.gammainccinv(k / p, q) if upper else special.gammaincinv(k / p, q)
    return sigma * g ** (1.0 / p)


def radius_moment(m: float, k: float, p: float, sigma: float) -> float:
    """E R^m = σ^m Γ((k+m)/p) / Γ(k/p), computed in log space.

    Examples
    --------
    >>> round(radius_moment(2.0, k=3.0, p=1.0, sigma=1.0), 6)  # l2 mechanism, T=3: T(T+1)σ²
    12.0
    """
    return float(sigma**m * np.exp(special.gammaln((k + m) / p) - special.gammaln(k / p)))


def log_radial_density(r: np.ndarray, k: float, p: float, sigma: float) -> np.ndarray:
    """ln f_R(r) = ln p + (k − 1) ln r − (r/σ)^p − k ln σ − ln Γ(k/p)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore"):
        return (
            math.log(p)
            + (k - 1) * np.log(r)
            - (r / sigma) ** p
            - k * math.log(sigma)
            - special.gammaln(k / p)
        )


def radius_logit(r: np.ndarray, k: float, p: float, sigma: float) -> np.ndarray:
    """s = logit F_R(r) = ln P(k/p, z) − ln Q(k/p, z), z = (r/σ)^p, exact in either tail."""
    z = (np.asarray(r, dtype=float) / sigma) ** p
    return log_gamma_cdf(k / p, z) - log_gamma_sf(k / p, z)


def _newton_until_converged(step, lz: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Newton iterates lz − step(lz, target) for at most ``NEWTON_STEPS`` rounds.

    ``step`` returns (the Newton step, the residual ln F(z) − target before it). An element stops
    after the step taken at a residual below 1e-14 relative to max(1, |target|) (the residual is
    the node's logit error); Newton's next residual is then at the round-off of ln F itself.
    """
    lz = lz.copy()
    idx = np.arange(len(lz))
    for _ in range(NEWTON_STEPS):
        if len(idx) == 0:
            break
        d, residual = step(lz[idx], target[idx])
        d = np.where(np.isfinite(d), d, 0.0)
        lz[idx] -= d
        idx = idx[np.abs(residual) > 1e-14 * np.maximum(1.0, np.abs(target[idx]))]
    return lz


def radius_at_logit(s: np.ndarray, k: float, p: float, sigma: float) -> np.ndarray:
    """The radius r with logit F_R(r) = s, formed as r = σ exp((ln z)/p), z = (r/σ)^p.

    scipy's inverse incomplete gamma gives z for ``-S_LOW <= s <= S_SCIPY``; in the far upper
    tail Newton's method on ln z solves ln Q(a, z) = ln expit(−s), and in the lower tail
    (s < −``S_LOW``, where z may underflow long before r does) ln P(a, z) = ln expit(s), both
    from their asymptotic starts. Radii that under- or overflow come back as 0 or inf.
    """
    s = np.asarray(s, dtype=float)
    a = k / p
    log_z = np.empty_like(s)
    mid = (s >= -S_LOW) & (s <= S_SCIPY)
    lower = s < 0
    with np.errstate(divide="ignore"):
        log_z[mid & lower] = np.log(special.gammaincinv(a, special.expit(s[mid & lower])))
        log_z[mid & ~lower] = np.log(special.gammainccinv(a, special.expit(-s[mid & ~lower])))
    # Upper tail: from the asymptotic start beyond S_SCIPY, and always a Newton polish (scipy's
    # inverse is good to ~1e-12 in mass, which the steep integrands of the far tail magnify).
    up = s > S_POLISH
    if up.any():
        target = special.log_expit(-s[up])  # ln Q ≈ −z + (a − 1) ln z − ln Γ(a)
        lz = np.where(s[up] > S_SCIPY, np.log(-target + a * np.log(-target)), log_z[up])

        def step_up(lz, target):
            z = np.exp(lz)
            log_q = log_gamma_sf(a, z)
            slope = -np.exp(a * lz - z - special.gammaln(a) - log_q)  # d ln Q / d ln z
            return (log_q - target) / slope, log_q - target

        log_z[up] = _newton_until_converged(step_up, lz, target)
    low = s < -S_POLISH
    if low.any():
        target = special.log_expit(s[low])  # ln P ≈ a ln z − ln Γ(a + 1)
        lz = np.where(s[low] < -S_LOW, (target + special.gammaln(a + 1)) / a, log_z[low])

        def step_low(lz, target):
            log_pz = log_gamma_cdf_of_log(a, lz)
            with np.errstate(over="ignore", invalid="ignore"):
                slope = np.exp(a * lz - np.exp(lz) - special.gammaln(a) - log_pz)
                return np.where(slope > 0, (log_pz - target) / slope, 0.0), log_pz - target

        log_z[low] = _newton_until_converged(step_low, lz, target)
    with np.errstate(over="ignore"):
        return sigma * np.exp(log_z / p)


def graded_nodes(edges: np.ndarray, kink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes s and weights ds on the panels between sorted ``edges``.

    A panel whose left edge is a kink uses s = a + (b − a) v², v in [0, 1] (ds = 2(b − a) v dv),
    which turns a square-root kink at a into a smooth integrand; likewise at a right-edge kink.
    Panels with kinks at both edges are split in half first.
    """
    both = kink[:-1] & kink[1:]
    if both.any():
        mids = (edges[:-1][both] + edges[1:][both]) / 2
        order = np.argsort(np.concatenate([edges, mids]), kind="stable")
        edges = np.concatenate([edges, mids])[order]
        kink = np.concatenate([kink, np.zeros(len(mids), dtype=bool)])[order]
    v, wv = _RULE  # on (0, 1)
    a, b = edges[:-1, None], edges[1:, None]
    width = b - a
    left, right = kink[:-1, None], kink[1:, None]
    s = np.where(left, a + width * v**2, np.where(right, b - width * v**2, a + width * v))
    ds = np.where(left | right, 2 * width * v, width) * wv
    return s.ravel(), ds.ravel()


def radius_nodes_log(
    k: float,
    p: float,
    sigma: float,
    intervals: list[tuple[float, float]],
    panel_width: float,
    breaks: np.ndarray | None = None,
    graded_ends: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and log-weights for E g(R) = ∫ g(r(s)) q(1 − q) ds, q = logistic(s), on windows.

    Parameters
    ----------
    intervals
        Disjoint windows [s_lo, s_hi] of the logit axis outside which the integrand is negligible.
    panel_width
        Largest panel width in s (24-point Gauss–Legendre per panel).
    breaks
        Logits of kinks of the integrand: extra panel edges, with graded panels next to them.
    graded_ends
        Grade the panels at the windows' ends too (a window cut where the integrand may have a
        kink; grading a smooth integrand costs nothing in accuracy).

    Returns
    -------
    r, log_w
        Radii and ln(weight); nodes whose radius under- or overflows are dropped.
    """
    s_parts, ds_parts = [], []
    inside = np.asarray([] if breaks is None else breaks, dtype=float)
    for lo, hi in intervals:
        n = max(1, math.ceil((hi - lo) / panel_width))
        grid = np.linspace(lo, hi, n + 1)
        cut = np.unique(inside[(inside > lo) & (inside < hi)])
        if len(cut):  # coinciding kinks count once
            cut = cut[np.concatenate([[True], np.diff(cut) > 1e-12])]
        if len(cut):
            # a grid edge close to a kink would leave a wide ungraded panel next to it
            gap = np.min(np.abs(grid[:, None] - cut[None, :]), axis=1)
            ends = (grid == lo) | (grid == hi)
            grid = grid[ends | (gap >= 0.5 * (hi - lo) / n)]
        e = np.concatenate([grid, cut])
        ends = graded_ends & ((grid == lo) | (grid == hi))
        flag = np.concatenate([ends, np.ones(len(cut), bool)])
        order = np.argsort(e, kind="stable")
        s_i, ds_i = graded_nodes(e[order], flag[order])
        s_parts.append(s_i)
        ds_parts.append(ds_i)
    s, ds = np.concatenate(s_parts), np.concatenate(ds_parts)
    r = radius_at_logit(s, k, p, sigma)
    log_w = special.log_expit(s) + special.log_expit(-s) + np.log(ds)
    keep = np.isfinite(r) & (r > 0) & (ds > 0)
    return r[keep], log_w[keep]


def radius_nodes(k: float, p: float, sigma: float, n_panels: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the fixed rule on |s| <= ``S_MAX`` (n_panels uniform panels).

    Returns
    -------
    r, w
        Radii and weights; ``w.sum()`` is 1 up to the ~1e-17 tail mass outside |s| <= 40.
    """
    r, log_w = radius_nodes_log(k, p, sigma, [(-S_MAX, S_MAX)], 2 * S_MAX / n_panels)
    return r, np.exp(log_w)


def sample_sgg(
    size: int, T: int, k: float, p: float, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    """Draw ``size`` points of SGG(T, k, p, σ): R = σ G^{1/p}, G ~ Gamma(k/p), times U = Z/‖Z‖.

    Returns
    -------
    numpy.ndarray
        Shape ``(size, T)``.
    """
    radius = sigma * rng.gamma(k / p, 1.0, size=size) ** (1.0 / p)  # (size,)
    z = rng.standard_normal((size, T))
    direction = z / np.linalg.norm(z, axis=1, keepdims=True)  # (size, T), uniform on S^{T-1}
    return radius[:, None] * direction
