"""Exact privacy profile (hockey-stick divergence) of an SGG mechanism, by deterministic quadrature.

Rotate the shift to v = Δ e₁. With r = ‖x‖, u = cos∠(x, e₁) and ρ = ‖x − v‖ the privacy loss is
L(x) = h(r) − h(ρ), h(t) = (k − T) ln t − (t/σ)^p. Because x ↦ v − x maps P = law(X) to
Q = law(X + v) and L to −L,

    δ(ε) = P[L > ε] − e^ε P[L < −ε],    both under X ~ P.

Under P, r ~ f_R and independently (1 + u)/2 ~ Beta((T−1)/2, (T−1)/2) (T >= 2). For a radius r
the event h(ρ) < c is a union of at most two ρ-intervals, hence of u-intervals with
ρ > t ⇔ u < (r² + Δ² − t²)/(2rΔ); the inner integral is a Beta CDF and the outer one a
composite Gauss–Legendre rule over the radial quantile. T = 1 uses exact interval masses.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from icml26.sgg_dp.radial import log_radial_profile, radius_logit, radius_nodes

__all__ = ["hockey_stick", "privacy_loss"]

# Bisections run in τ = ln(t/r) on [-TAU_MAX, TAU_MAX]; 64 halvings reach ~1e-15 in τ.
TAU_MAX = 1e4
N_BISECT = 64
# The arcsine-type u law of T = 2 makes the radial integrand kinky: it needs more panels.
PANELS = 400
PANELS_T2 = 1000
# T = 1: asinh-spaced grid points per singular point (0 and Δ).
GRID_1D = 4001


def privacy_loss(x: np.ndarray, T: int, k: float, p: float, sigma: float, Delta: float):
    """L(x) = ln f(x) − ln f(x − Δe₁) for points ``x`` of shape ``(..., T)``."""
    x = np.asarray(x, dtype=float)
    shifted = x.copy()
    shifted[..., 0] -= Delta
    r = np.linalg.norm(x, axis=-1)
    rho = np.linalg.norm(shifted, axis=-1)
    return log_radial_profile(r, T, k, p, sigma) - log_radial_profile(rho, T, k, p, sigma)


def _u_cdf(u: np.ndarray, T: int) -> np.ndarray:
    """P(U₁ <= u) for U uniform on S^{T-1}: (1 + U₁)/2 ~ Beta((T−1)/2, (T−1)/2)."""
    a = (T - 1) / 2
    return special.betainc(a, a, np.clip((1 + u) / 2, 0.0, 1.0))


def _g(tau: np.ndarray, w: np.ndarray, T: int, k: float, p: float) -> np.ndarray:
    """h(r e^τ) − h(r) with w = (r/σ)^p, written so that no radius is formed."""
    with np.errstate(over="ignore", invalid="ignore"):  # e^{pτ} = inf is a valid bracket end
        return (k - T) * tau - w * np.expm1(p * tau)


def _bisect(fn, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Vectorised bisection for a sign change of ``fn`` with fn(lo) > 0 >= fn(hi)."""
    for _ in range(N_BISECT):
        mid = (lo + hi) / 2
        pos = fn(mid) > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
    return (lo + hi) / 2


def _level_probs(r, a, T, k, p, sigma, Delta):
    """For each radius r: (P_u[h(ρ) < h(r) − a], its complement), both to full precision."""
    w = (r / sigma) ** p

    def u_of(tau):
        # u(t) for t = r e^τ: (r² + Δ² − t²) / (2rΔ)
        return (Delta**2 - r**2 * np.expm1(2 * tau)) / (2 * r * Delta)

    ones = np.ones_like(r)
    if k == T:
        # h(t) < h(r) − a ⇔ (t/σ)^p > w + a: closed form, the whole line when w + a <= 0.
        # t₂ = r e^τ with τ = ln(1 + a/w)/p, which keeps t₂² − r² free of cancellation.
        with np.errstate(divide="ignore", invalid="ignore"):
            tau2 = np.log1p(a / w) / p
        u2 = np.where(w + a > 0, u_of(tau2), np.inf)
        return _u_cdf(u2, T), _u_cdf(-u2, T)
    if k < T:
        # h is strictly decreasing: the set is (t₂, ∞).
        tau2 = _bisect(lambda tau: _g(tau, w, T, k, p) + a, -TAU_MAX * ones, TAU_MAX * ones)
        u2 = u_of(tau2)
        return _u_cdf(u2, T), _u_cdf(-u2, T)
    # k > T: h rises to its maximum at t* = σ((k−T)/p)^{1/p}, then falls: (0, t₁) ∪ (t₂, ∞).
    tau_star = np.log(sigma / r) + np.log((k - T) / p) / p
    everything = _g(tau_star, w, T, k, p) + a <= 0
    tau1 = _bisect(lambda tau: -(_g(tau, w, T, k, p) + a), -TAU_MAX * ones, tau_star)
    tau2 = _bisect(lambda tau: _g(tau, w, T, k, p) + a, tau_star, TAU_MAX * ones)
    u1, u2 = u_of(tau1), u_of(tau2)
    below = np.where(everything, 1.0, _u_cdf(u2, T) + _u_cdf(-u1, T))
    above = np.where(everything, 0.0, np.maximum(_u_cdf(u1, T) - _u_cdf(u2, T), 0.0))
    return below, above


def _axis_grid(k, p, sigma, Delta):
    """Points of the e₁ axis, asinh-spaced around the two singular points 0 and Δ."""
    x_max = sigma * special.gammainccinv(k / p, 1e-18) ** (1.0 / p) + 2 * Delta
    scale = 1e-6 * min(sigma, Delta)
    offsets = scale * np.sinh(np.linspace(-1, 1, GRID_1D) * np.arcsinh(x_max / scale))
    return np.unique(np.concatenate([offsets, Delta + offsets]))


def _axis_roots(level, T, k, p, sigma, Delta):
    """Points x of the axis where L(x e₁) − level changes sign (grid scan, then bisection)."""

    def fn(x):
        return privacy_loss(x[..., None] * np.eye(T)[0], T, k, p, sigma, Delta) - level

    grid = _axis_grid(k, p, sigma, Delta)
    with np.errstate(invalid="ignore"):
        d = fn(grid)
    change = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
    sign = np.where(d[change] > 0, 1.0, -1.0)  # orient each bracket so that fn(lo) > 0
    return _bisect(lambda x: sign * fn(x), grid[change], grid[change + 1])


def _kink_radii(eps, T, k, p, sigma, Delta):
    """Radii where the inner probabilities of the sphere integrand are not smooth.

    A level set {h(ρ) < h(r) ∓ ε} enters or leaves the range ρ ∈ [|r − Δ|, r + Δ] exactly when
    u = ±1 is a boundary, i.e. at the axis points where L = ±ε; for k > T the two roots t₁, t₂
    also merge where h(r) = h(t*) − ε.
    """
    radii = [np.abs(_axis_roots(level, T, k, p, sigma, Delta)) for level in (eps, -eps)]
    if k > T:
        w_star = (k - T) / p
        t_star = sigma * w_star ** (1.0 / p)

        def drop(tau):  # h(t* e^τ) − h(t*) + ε
            return _g(tau, w_star, T, k, p) + eps

        zero = np.zeros(1)
        left = _bisect(lambda tau: -drop(tau), -TAU_MAX + zero, zero)
        right = _bisect(drop, zero, TAU_MAX + zero)
        radii.append(t_star * np.exp(np.concatenate([left, right])))
    return np.concatenate(radii)


def _hockey_stick_sphere(eps, T, k, p, sigma, Delta, n_panels):
    breaks = radius_logit(_kink_radii(eps, T, k, p, sigma, Delta), k, p, sigma)
    r, w = radius_nodes(k, p, sigma, n_panels, breaks)
    p1, _ = _level_probs(r, eps, T, k, p, sigma, Delta)  # P[L > ε | r]
    _, p2 = _level_probs(r, -eps, T, k, p, sigma, Delta)  # P[L < −ε | r]
    return float(np.sum(w * p1) - np.exp(eps) * np.sum(w * p2))


def _interval_mass(a: np.ndarray, b: np.ndarray, k: float, p: float, sigma: float) -> np.ndarray:
    """P(a < X < b) for the 1-D law f(x) ∝ |x|^{k−1} exp(−(|x|/σ)^p), without cancellation."""
    shape = k / p
    with np.errstate(over="ignore"):
        qa = special.gammaincc(shape, (np.abs(a) / sigma) ** p)  # P(|X| > |a|)
        qb = special.gammaincc(shape, (np.abs(b) / sigma) ** p)
        pa = special.gammainc(shape, (np.abs(a) / sigma) ** p)
        pb = special.gammainc(shape, (np.abs(b) / sigma) ** p)
    left = (qb - qa) / 2  # both ends <= 0
    right = (qa - qb) / 2  # both ends >= 0
    across = (pa + pb) / 2
    return np.where(b <= 0, left, np.where(a >= 0, right, across))


def _hockey_stick_line(eps, k, p, sigma, Delta):
    """T = 1: sum the masses of the exact intervals where L > ε and where L < −ε."""
    cuts = [_axis_grid(k, p, sigma, Delta)]
    cuts += [_axis_roots(level, 1, k, p, sigma, Delta) for level in (eps, -eps)]
    points = np.unique(np.concatenate(cuts))
    a = np.concatenate([[-np.inf], points])
    b = np.concatenate([points, [np.inf]])
    mid = np.where(np.isinf(a), b - 1.0, np.where(np.isinf(b), a + 1.0, (a + b) / 2))
    mass = _interval_mass(a, b, k, p, sigma)
    loss = privacy_loss(mid[:, None], 1, k, p, sigma, Delta)
    return float(np.sum(mass[loss > eps]) - np.exp(eps) * np.sum(mass[loss < -eps]))


def hockey_stick(
    eps: float, T: int, k: float, p: float, sigma: float, Delta: float, n_panels: int | None = None
) -> float:
    """δ(ε) = ∫ (f(x) − e^ε f(x − Δe₁))₊ dx for the SGG density f (no input checks: internal).

    Parameters
    ----------
    n_panels
        Gauss–Legendre panels of the radial rule (T >= 2); default 400, or 3000 for T = 2.
    """
    if T == 1:
        return _hockey_stick_line(eps, k, p, sigma, Delta)
    panels = n_panels or (PANELS_T2 if T == 2 else PANELS)
    return _hockey_stick_sphere(eps, T, k, p, sigma, Delta, panels)
