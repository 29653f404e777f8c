"""The radial law of a Spherical Generalized Gamma (SGG) distribution on R^T.

X = R·U with U uniform on the unit sphere S^{T-1} and R independent with the generalized-gamma
(Stacy) density f_R(r) = p r^{k-1} exp(-(r/σ)^p) / (σ^k Γ(k/p)), so that
f(x) = C ‖x‖^{k-T} exp(-(‖x‖/σ)^p).  (R/σ)^p ~ Gamma(k/p, 1), which gives exact quantiles,
moments E R^m = σ^m Γ((k+m)/p) / Γ(k/p), and a two-draw sampler.

The parametrisation (σ, k, p) is inferred from the paper's name and abstract (see docs/sgg_dp.md).
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = [
    "log_radial_profile",
    "radius_logit",
    "radius_moment",
    "radius_nodes",
    "radius_quantile",
    "sample_sgg",
]

# Radial quadrature: s in [-S_MAX, S_MAX] with q = logistic(s) covers all but ~4e-18 of the mass.
S_MAX = 40.0
GL_ORDER = 24


def log_radial_profile(t: np.ndarray, T: int, k: float, p: float, sigma: float) -> np.ndarray:
    """h(t) = (k - T) ln t - (t/σ)^p, the log-density of X along a ray, up to a constant.

    Example
    -------
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

    Example
    -------
    >>> round(float(radius_quantile(np.array(0.5), k=1.0, p=1.0, sigma=1.0)), 6)  # Exp(1) median
    0.693147
    """
    q = np.asarray(q, dtype=float)
    g = special.gammainccinv(k / p, q) if upper else special.gammaincinv(k / p, q)
    return sigma * g ** (1.0 / p)


def radius_moment(m: float, k: float, p: float, sigma: float) -> float:
    """E R^m = σ^m Γ((k+m)/p) / Γ(k/p), computed in log space.

    Example
    -------
    >>> round(radius_moment(2.0, k=3.0, p=1.0, sigma=1.0), 6)  # l2 mechanism, T=3: T(T+1)σ²
    12.0
    """
    return float(sigma**m * np.exp(special.gammaln((k + m) / p) - special.gammaln(k / p)))


def radius_logit(r: np.ndarray, k: float, p: float, sigma: float) -> np.ndarray:
    """s = logit F_R(r), computed from both regularised gamma tails (exact in either tail)."""
    z = (np.asarray(r, dtype=float) / sigma) ** p
    with np.errstate(divide="ignore"):
        return np.log(special.gammainc(k / p, z)) - np.log(special.gammaincc(k / p, z))


def radius_nodes(
    k: float, p: float, sigma: float, n_panels: int, breaks: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights for E g(R): composite Gauss–Legendre in s, q = logistic(s).

    The lower half uses ``gammaincinv`` and the upper half ``gammainccinv`` so both tails stay
    exact; nodes whose radius under- or overflows are dropped.

    Parameters
    ----------
    breaks
        Extra panel edges in s (e.g. radii where the integrand has a kink, via
        :func:`radius_logit`), so that every panel holds a smooth piece.

    Returns
    -------
    r, w
        Radii and weights; ``w.sum()`` is 1 up to the ~1e-17 tail mass outside |s| <= 40.
    """
    x, wx = np.polynomial.legendre.leggauss(GL_ORDER)
    edges = np.linspace(-S_MAX, S_MAX, n_panels + 1)
    if breaks is not None:
        inside = breaks[np.isfinite(breaks) & (np.abs(breaks) < S_MAX)]
        edges = np.unique(np.concatenate([edges, inside]))
    half = np.diff(edges)[:, None] / 2
    s = (edges[:-1, None] + half * (x[None, :] + 1)).ravel()
    ws = (half * wx[None, :]).ravel()
    q = special.expit(s)
    q_upper = special.expit(-s)
    lower = s < 0
    r = np.empty_like(s)
    r[lower] = radius_quantile(q[lower], k, p, sigma)
    r[~lower] = radius_quantile(q_upper[~lower], k, p, sigma, upper=True)
    w = ws * q * q_upper
    keep = np.isfinite(r) & (r > 0)
    return r[keep], w[keep]


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
