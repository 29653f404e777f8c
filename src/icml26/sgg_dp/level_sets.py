"""Where the privacy loss of an SGG mechanism crosses a level, for a fixed radius.

With v = Δe₁, r = ‖x‖, u = cos∠(x, e₁) and ρ = ‖x − v‖ the loss is L = h(r) − h(ρ),
h(t) = (k − T) ln t − (t/σ)^p (spec §2.3). For a radius r and a level c the event L > c is
h(ρ) < h(r) − c. Writing t = r e^τ and w = (r/σ)^p,

    g(τ) = h(r e^τ) − h(r) = (k − T) τ − w (e^{pτ} − 1),

a concave function of τ, so {h(ρ) < h(r) − c} = {g(τ_ρ) < −c} is

- k = T: ρ > t₂ with τ₂ = ln(1 + c/w)/p (closed form); every ρ when w + c <= 0;
- k < T: ρ > t₂, g strictly decreasing (one root);
- k > T: ρ < t₁ or ρ > t₂ around the maximum τ* = ln((k − T)/(wp))/p; every ρ when
  g(τ*) <= −c.

The roots come from Newton's method started on the outer side of the root: on a concave monotone
branch the iterates then approach the root monotonically and never cross it (Deviation from the
spec's 64-step bisection: the same roots to ~1e-15 in 5–10 iterations). Because ρ > t ⇔
u < u(t) = (r² + Δ² − t²)/(2rΔ), the u-boundaries are formed as x = (1 + u)/2 and 1 − x, each
without cancellation, ready for the Beta((T−1)/2, (T−1)/2) law of (1 + u)/2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LevelSet", "g_of_tau", "level_set", "u_lower", "u_upper"]

MAX_NEWTON = 200
NEWTON_RTOL = 4e-16


def g_of_tau(tau: np.ndarray, w: np.ndarray, T: int, k: float, p: float) -> np.ndarray:
    """g(τ) = h(r e^τ) − h(r) = (k − T) τ − w (e^{pτ} − 1), with w = (r/σ)^p."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (k - T) * tau - w * np.expm1(p * tau)


def _newton(tau, w, c, T, k, p):
    """Newton for g(τ) = −c from the outer side of a concave monotone branch (see module doc)."""
    tau = np.array(tau, dtype=float)
    idx = np.flatnonzero(np.isfinite(tau))
    t, w, c = tau[idx], np.broadcast_to(w, tau.shape)[idx], np.broadcast_to(c, tau.shape)[idx]
    prev = np.zeros(len(idx))  # the last nonzero step
    for _ in range(MAX_NEWTON):
        if len(idx) == 0:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            slope = (k - T) - w * p * np.exp(p * t)
            step = (g_of_tau(t, w, T, k, p) + c) / slope
        step = np.where(np.isfinite(step), step, 0.0)
        # the iterates are monotone: a step that turns back, or no longer moves t, is round-off
        new_t = t - step
        stalled = (new_t == t) | (step * prev < 0)
        t = new_t
        done = stalled | (np.abs(step) <= NEWTON_RTOL * np.maximum(1.0, np.abs(t)))
        prev = np.where(step == 0, prev, step)
        if done.any():  # write converged roots back; keep iterating on the rest
            tau[idx[done]] = t[done]
            keep = ~done
            idx, t, w, c, prev = idx[keep], t[keep], w[keep], c[keep], prev[keep]
    tau[idx] = t
    return tau


def u_lower(tau: np.ndarray, r: np.ndarray, Delta: float) -> np.ndarray:
    """(1 + u)/2 for the boundary ρ = t = r e^τ, clipped to [0, 1] (nan where τ is nan).

    1 + u = (Δ − r(e^τ − 1))(r + Δ + t)/(2rΔ): the factor that vanishes at u = −1 is formed
    from expm1(τ), so the value keeps its relative precision next to the pole u = −1.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        grow = r * np.expm1(tau)  # t − r
        return np.clip((Delta - grow) * (2 * r + Delta + grow) / (4 * r * Delta), 0.0, 1.0)


def u_upper(
    tau: np.ndarray, r: np.ndarray, Delta: float, d: np.ndarray | None = None
) -> np.ndarray:
    """(1 − u)/2 = (t − d)(t + d)/(4rΔ) for ρ = t = r e^τ and d = r − Δ, clipped to [0, 1].

    Two ways of forming t ∓ d: from g = t − r = r(e^τ − 1) as Δ + g and 2r + g − Δ (round-off
    ~ulp(|g| + Δ)), or from t and d directly (round-off ~ulp(t + |d|)). The second keeps a small
    sphere ρ = t ≪ Δ around v resolved (there g ≈ −Δ), the more so when ``d`` is passed exactly
    (r = Δ + d itself is rounded); each element uses the form with the smaller round-off.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        grow = r * np.expm1(tau)
        t = r * np.exp(tau)
        d = r - Delta if d is None else d
        from_grow = (Delta + grow) * (2 * r + grow - Delta)
        direct = (t - d) * (t + d)
        better = t + np.abs(d) < np.abs(grow) + Delta
        return np.clip(np.where(better, direct, from_grow) / (4 * r * Delta), 0.0, 1.0)


@dataclass(frozen=True)
class LevelSet:
    """{h(ρ) < h(r) − c} as ρ > r e^{τ₂} (and, for k > T, ρ < r e^{τ₁}), per (r, c) pair.

    ``everything`` marks pairs where every ρ qualifies; ``tau1`` is ``None`` for k <= T, and
    both τ's are ``nan`` where ``everything`` holds.
    """

    tau2: np.ndarray
    tau1: np.ndarray | None
    everything: np.ndarray


def level_set(w: np.ndarray, c: np.ndarray, T: int, k: float, p: float) -> LevelSet:
    """Roots of g(τ) = −c for radii with w = (r/σ)^p and levels c (broadcast together)."""
    w, c = np.broadcast_arrays(np.asarray(w, dtype=float), np.asarray(c, dtype=float))
    if k == T:
        everything = w + c <= 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tau2 = np.where(everything, np.nan, np.log1p(c / w) / p)
        return LevelSet(tau2, None, everything)
    if k < T:
        # Upper bounds of the root: g <= (k − T)τ and g <= −w(e^{pτ} − 1) for τ >= 0; g(0) = 0.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            start = np.where(
                c >= 0, np.minimum(c / (T - k), np.log1p(np.maximum(c, 0) / w) / p), 0.0
            )
        return LevelSet(_newton(start, w, c, T, k, p), None, np.zeros(w.shape, dtype=bool))
    # k > T: g rises to g* = g(τ*) and falls; with X = g* + c > 0 both roots exist.
    with np.errstate(divide="ignore", over="ignore"):
        tau_star = np.log((k - T) / (w * p)) / p
    # w so small that τ* overflows: h(r) = −∞ to float precision, so L < c for every ρ
    lost = ~np.isfinite(tau_star)
    tau_star = np.where(lost, 0.0, tau_star)
    excess = np.where(lost, -np.inf, g_of_tau(tau_star, w, T, k, p) + c)
    everything = ~(excess > 0) & ~lost
    gap = np.where(everything | lost, 1.0, excess)
    # Right root: g* − g(τ* + d) = (k−T)(expm1(pd)/p − d) >= (k−T) p d²/2, and >= (k−T)
    # expm1(pd)/(2p) once pd >= 2; both give upper bounds on d.
    d_quad = np.sqrt(2 * gap / ((k - T) * p))
    d_exp = np.maximum(2.0 / p, np.log1p(2 * p * gap / (k - T)) / p)
    skip = np.where(everything, np.nan, 0.0)  # no root to look for
    tau2 = _newton(skip + tau_star + np.minimum(d_quad, d_exp), w, c, T, k, p)
    # Left root: g(τ* − d) <= g* − (k − T)(d − 1/p), a lower bound at d = X/(k − T) + 1/p.
    tau1 = _newton(skip + tau_star - (gap / (k - T) + 1.0 / p), w, c, T, k, p)
    tau2, tau1 = np.where(lost, np.inf, tau2), np.where(lost, -np.inf, tau1)
    return LevelSet(tau2, tau1, everything)
