"""Exact privacy profile (hockey-stick divergence) of an SGG mechanism, in log space.

Rotate the shift to v = Δ e₁. With r = ‖x‖, u = cos∠(x, e₁) and ρ = ‖x − v‖ the privacy loss is
L(x) = h(r) − h(ρ), h(t) = (k − T) ln t − (t/σ)^p. Because x ↦ v − x maps P = law(X) to
Q = law(X + v) and L to −L (spec §2.3),

    δ(ε) = A − e^ε B,    A = P[L > ε],  B = P[L < −ε],    both under X ~ P.

Under P, r ~ f_R and independently (1 + u)/2 ~ Beta((T−1)/2, (T−1)/2) (T >= 2). For a radius r
the events are unions of at most two u-intervals (:mod:`level_sets`), whose probabilities are Beta
CDFs; the outer integral over s = logit F_R(r) is a composite Gauss–Legendre rule.

Log space (issue 17). ln A and ln B are log-sum-exps of ln(weight) + ln(inner probability), with
the inner probabilities from :func:`tails.log_beta_cdf`, so nothing underflows before δ ~ 1e-300
and e^ε never overflows; ln δ = ln A + ln(1 − e^{ε + ln B − ln A}). The s-window is chosen per call:
a coarse pass (step 1) over |s| <= 48, doubled while the radial tail mass beyond it could still
matter (up to |s| = 745, tail mass e^{-745}), then fine panels (width 0.2) where the log integrand
is within 46 (1e-20) of the total. Panel edges sit at the radii where an inner probability has a
kink (a level-set boundary reaches u = ±1, or two roots merge), located by bisection between
coarse points, and the two panels at a kink are graded (s − s_kink ∝ v²), which removes the
square-root behaviour of T = 2.

T = 1: L along the two half-lines u = ±1 is scanned on log-spaced grids of the distance to each
singular point (0 and Δ), its roots refined by bisection, and the masses of the intervals where
L > ε or L < −ε summed in log space (narrow intervals by Gauss–Legendre on the radial density,
wide ones from log incomplete-gamma tails).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from icml26.sgg_dp.level_sets import level_set, u_lower, u_upper
from icml26.sgg_dp.radial import (
    S_LIMIT,
    graded_nodes,
    log_radial_density,
    log_radial_profile,
    radius_at_logit,
    radius_logit,
    radius_nodes_log,
)
from icml26.sgg_dp.tails import log_beta_cdf, log_gamma_cdf_of_log, log_gamma_sf

__all__ = ["log_hockey_stick", "log_loss_survival", "privacy_loss"]


def _log_ball_masses(T, k, p, sigma, Delta, log_eta) -> float:
    """ln of an upper bound on P[ρ < η] + P[r < η] (the two balls as a whole).

    P[r < η] = F_R(η); on ρ < η the density is C e^{h(r)} with r in [Δ − η, Δ + η], so
    P[ρ < η] <= C V_T e^{H_hi} η^T (C V_T = p/(T σ^k Γ(k/p))).
    """
    eta = math.exp(log_eta)
    hs = log_radial_profile(np.array([Delta - eta, Delta, Delta + eta]), T, k, p, sigma)
    log_cv = math.log(p) - math.log(T) - k * math.log(sigma) - special.gammaln(k / p)
    near_v = log_cv + float(hs.max()) + T * log_eta
    near_0 = float(log_gamma_cdf_of_log(k / p, np.array(p * (log_eta - math.log(sigma)))))
    return float(np.logaddexp(near_v, near_0))


COARSE_STEP = 1.0
EPS_REACH = 1e4  # the windows follow e^ε B out to ε = 1e4 (beyond, δ is A to < e^{-1e4})
S_START = 48.0
S_DEEP = 1e5  # while no A is found, the coarse pass goes on out to |s| = S_DEEP
LOG_KEEP = 46.0  # window: log integrand within 46 of ln A (relative 1e-20)
WINDOW_MARGIN = 2.0  # coarse points of slack around the window
PANEL_WIDTH = 0.5  # measured: 0.2-0.8 give the same 1e-12 on the Gaussian member
CORE_KEEP = 12.0  # fine panels where the log integrand is within 12 of the top ...
TAIL_PANEL_WIDTH = 2.0  # ... wider ones on the tails (< e^-12 of the total, smooth there)
N_BISECT = 50  # T = 1: halvings of a root's bracket (relative width <= ~1e-15 of the cell)
MAX_FALSI = 100  # rounds of regula falsi on a kink's bracket, ending at FALSI_TOL relative
FALSI_TOL = 1e-15
KINK_STEP = 0.05  # logit spacing of the radii scanned for kinks
# T = 1: log-spaced grid of distances to a singular point, from 1e-300 to the far tail.
GRID_1D = 20001
D_MIN = 1e-300
NARROW = 1e-3  # relative width below which an interval's mass is integrated from the density
# k != T: the balls of radius ETA·Δ around 0 and v are bounded in closed form (_log_balls);
# radii within NEAR·Δ of Δ are integrated in d = r − Δ on a geometric ladder (ratio NEAR_RATIO)
# after a scan for kinks (NEAR_SCAN geometric points per side and NEAR_LINEAR even ones).
ETA = 1e-150
NEAR = 0.5
NEAR_RATIO = 10.0
NEAR_SCAN = 1500  # geometric, 5 per decade of |d|; plus NEAR_LINEAR evenly spaced
NEAR_LINEAR = 401


def privacy_loss(x: np.ndarray, T: int, k: float, p: float, sigma: float, Delta: float):
    """L(x) = ln f(x) − ln f(x − Δe₁) for points ``x`` of shape ``(..., T)``."""
    x = np.asarray(x, dtype=float)
    shifted = x.copy()
    shifted[..., 0] -= Delta
    r = np.linalg.norm(x, axis=-1)
    rho = np.linalg.norm(shifted, axis=-1)
    return log_radial_profile(r, T, k, p, sigma) - log_radial_profile(rho, T, k, p, sigma)


def _log1mexp(d: np.ndarray) -> np.ndarray:
    """ln(1 − e^d) for d <= 0 (−inf at d = 0), accurate on both sides of d = −ln 2."""
    d = np.asarray(d, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > -math.log(2), np.log(-np.expm1(d)), np.log1p(-np.exp(d)))


def _log_sub(big: np.ndarray, small: np.ndarray) -> np.ndarray:
    """ln(e^big − e^small), −inf where small >= big."""
    with np.errstate(invalid="ignore"):
        out = big + _log1mexp(np.minimum(small - big, 0.0))
    return np.where((small >= big) | np.isneginf(big), -np.inf, out)


# --- T >= 2: the sphere ---------------------------------------------------------------------


def _tails(x, xc, a):
    """(ln I(x), ln(1 − I(x))) of the Beta(a, a) law, given x and 1 − x."""
    return log_beta_cdf(x, xc, a), log_beta_cdf(xc, x, a)


def _log_interval(lo, lo_c, hi, hi_c, t_lo, t_hi):
    """ln(I(hi) − I(lo)) for x-values lo <= hi of the Beta(a, a) law (given with 1 − x and
    their :func:`_tails`), stably: below ½ the lower CDFs are subtracted, above ½ the upper
    ones, across ½ both tails are removed from 1."""
    (l_lo, u_lo), (l_hi, u_hi) = t_lo, t_hi
    across = _log1mexp(np.minimum(np.logaddexp(l_lo, u_hi), 0.0))
    out = np.where(
        hi <= 0.5, _log_sub(l_hi, l_lo), np.where(lo >= 0.5, _log_sub(u_lo, u_hi), across)
    )
    nonempty = np.where(lo >= 0.5, lo_c > hi_c, hi > lo)  # compare where x is resolved
    return np.where(nonempty, out, -np.inf)


def _log_level_probs(r, c, T, k, p, sigma, Delta, log_eta=None, d=None):
    """ln P_u[L > c, ρ > η | r] and ln P_u[L < c, ρ > η | r] for radii ``r`` and a level ``c``.

    ``log_eta``: ln η of the ball ρ < η around v that is left out (None: nothing). ``d``: r − Δ
    given exactly (the near zone), else formed from r. The events are ρ-intervals, and
    ρ > t ⇔ x < x(t) for x = (1 + u)/2 ~ Beta((T−1)/2, (T−1)/2).
    """
    a = (T - 1) / 2
    ls = level_set((r / sigma) ** p, c, T, k, p)

    def x_of(tau):
        return u_lower(tau, r, Delta), u_upper(tau, r, Delta, d)

    if log_eta is None:
        tau_eta = np.full(r.shape, -np.inf)
        x_e, xc_e = np.ones(r.shape), np.zeros(r.shape)
        t_e = (np.zeros(r.shape), np.full(r.shape, -np.inf))
    else:
        tau_eta = log_eta - np.log(r)
        x_e, xc_e = x_of(tau_eta)
        t_e = _tails(x_e, xc_e, a)
    x2, x2c = x_of(np.maximum(ls.tau2, tau_eta))
    t2 = _tails(x2, x2c, a)
    if ls.tau1 is None:  # {L > c} = {ρ > t₂}, {L < c} = {ρ < t₂}
        log_above = t2[0]
        log_below = t2[1] if log_eta is None else _log_interval(x2, x2c, x_e, xc_e, t2, t_e)
    else:  # {L > c} = {ρ > t₂} ∪ {ρ < t₁}, {L < c} = {t₁ < ρ < t₂}
        x1, x1c = x_of(np.maximum(ls.tau1, tau_eta))
        t1 = _tails(x1, x1c, a)
        ring = t1[1] if log_eta is None else _log_interval(x1, x1c, x_e, xc_e, t1, t_e)
        log_above = np.logaddexp(t2[0], ring)
        log_below = _log_interval(x2, x2c, x1, x1c, t2, t1)
    log_above = np.where(ls.everything, t_e[0], log_above)
    log_below = np.where(ls.everything, -np.inf, log_below)
    return log_above, log_below


def _ball_radius(level: float, T: int, k: float, p: float, sigma: float, log_eta: float) -> float:
    """ln t* with h(t*) = ``level`` on (0, η], where h is monotone (k != T); ln η if t* >= η."""

    def h_log(lt: float) -> float:
        return (k - T) * lt - math.exp(p * (lt - math.log(sigma)))

    if (h_log(log_eta) - level) * (k - T) <= 0:  # h(η) on the near side of the level
        return log_eta
    # h = (k − T) ln t − (t/σ)^p, the power term below (η/σ)^p: start at the log term's root
    lt = min((level + math.exp(p * (log_eta - math.log(sigma)))) / (k - T), log_eta)
    for _ in range(60):
        step = (h_log(lt) - level) / ((k - T) - p * math.exp(p * (lt - math.log(sigma))))
        lt = min(lt - step, log_eta)
        if abs(step) <= 1e-15 * max(1.0, abs(lt)):
            break
    return lt


def _log_balls(eps, T, k, p, sigma, Delta, log_eta) -> float:
    """ln of an upper bound on δ's parts inside the balls ρ = ‖x − v‖ < η and r = ‖x‖ < η.

    On either ball the other distance lies in [Δ − η, Δ + η], where h is within [H_lo, H_hi],
    and h is monotone on (0, η). So with C the density's constant and V_T the unit ball's volume
    (C V_T = p/(T σ^k Γ(k/p))):

    - ρ < η: (f(x) − e^ε f(x − v))₊ <= C (e^{H_hi} − e^{ε + h(ρ)})₊, nonzero where
      h(ρ) < H_hi − ε, a ρ-interval (a, b): C V_T e^{H_hi}(b^T − a^T) − e^ε (F_R(b) − F_R(a));
    - r < η: (f(x) − e^ε f(x − v))₊ <= C (e^{h(r)} − e^{ε + H_lo})₊, nonzero where
      h(r) > ε + H_lo: (F_R(b) − F_R(a)) − e^{ε + H_lo} C V_T (b^T − a^T).

    The bounds are tight to ~η|h'(Δ)| (η = 1e-150 Δ: exact in floating point); they matter
    only when the loss's unbounded part is narrower than η, i.e. δ far below 1e-300.
    """
    eta = math.exp(log_eta)
    hs = log_radial_profile(np.array([Delta - eta, Delta, Delta + eta]), T, k, p, sigma)
    h_hi, h_lo = float(hs.max()), float(hs.min())
    log_cv = math.log(p) - math.log(T) - k * math.log(sigma) - special.gammaln(k / p)
    rising = k > T  # h on (0, η)

    def log_cdf(lt: float) -> float:  # ln F_R(t) from ln t
        return float(log_gamma_cdf_of_log(k / p, np.array(p * (lt - math.log(sigma)))))

    def pieces(level: float, above: bool) -> tuple[float, float]:
        """ln of C V_T (b^T − a^T) and of F_R(b) − F_R(a) for (a, b) = {t < η: h(t) ≷ level}."""
        lt = _ball_radius(level, T, k, p, sigma, log_eta)
        if rising != above:  # the ball (0, t*)
            return log_cv + T * lt, log_cdf(lt)
        vol = log_cv + T * log_eta + float(_log1mexp(np.array(T * (lt - log_eta))))
        return vol, float(_log_sub(np.array(log_cdf(log_eta)), np.array(log_cdf(lt))))

    vol_v, mass_v = pieces(h_hi - eps, above=False)
    near_v = _log_sub(np.array(h_hi + vol_v), np.array(eps + mass_v))
    vol_0, mass_0 = pieces(eps + h_lo, above=True)
    near_0 = _log_sub(np.array(mass_0), np.array(eps + h_lo + vol_0))
    return float(np.logaddexp(near_v, near_0))


class _SphereProfile:
    """Log integrands of A and B, and their kinks, for one (ε, σ, Δ).

    For k != T the loss is unbounded at x = 0 and x = v. Then radii r = Δ + d with |d| < ``NEAR``·Δ
    form the near zone, integrated in d (given exactly, so a ball around v of any size >= η is
    resolved), and the balls of radius η around 0 and v are left to :func:`_log_balls`.
    """

    def __init__(self, eps, T, k, p, sigma, Delta):
        self.eps, self.T, self.k, self.p, self.sigma, self.Delta = eps, T, k, p, sigma, Delta
        self.singular = k != T
        eta = ETA * Delta
        if k > T:  # h must be monotone on (0, η): below its maximum t*
            eta = min(eta, sigma * ((k - T) / p) ** (1 / p) / 4)
        self.log_eta = math.log(eta) if self.singular else None
        self._coarse: list[tuple[np.ndarray, np.ndarray]] = []  # (s, ln r) seen by at_logit
        self.h_star = (
            float(self.h(np.asarray(sigma * ((k - T) / p) ** (1 / p)))) if k > T else math.nan
        )

    def h(self, t):
        return log_radial_profile(t, self.T, self.k, self.p, self.sigma)

    def log_integrands(self, r: np.ndarray, log_w: np.ndarray, d: np.ndarray | None = None):
        """ln(w·P[L > ε | r]) and ln(w·P[L < −ε | r]) at radii ``r`` with log-weights ``log_w``.

        The ball ρ < η is left out only in the near zone (``d`` given): elsewhere |r − Δ| > η.
        """
        m = self
        args = (m.T, m.k, m.p, m.sigma, m.Delta, None if d is None else m.log_eta, d)
        la, _ = _log_level_probs(r, m.eps, *args)
        _, lb = _log_level_probs(r, -m.eps, *args)
        return log_w + la, log_w + lb

    def at_logit(self, s: np.ndarray):
        """The log integrands (weights without the panel rule) at logits ``s``."""
        r = radius_at_logit(s, self.k, self.p, self.sigma)
        ok = np.isfinite(r) & (r > 0)
        self._coarse.append((s[ok], np.log(r[ok])))
        log_w = special.log_expit(s) + special.log_expit(-s)
        phi_a = np.full(s.shape, -np.inf)
        phi_b = np.full(s.shape, -np.inf)
        if ok.any():
            phi_a[ok], phi_b[ok] = self.log_integrands(r[ok], log_w[ok])
        return phi_a, phi_b

    def _axis(self, x: np.ndarray, which: np.ndarray, near: bool) -> np.ndarray:
        """The functions of ``x`` whose roots are kinks of the inner probabilities, all at once.

        P_u[L > c | r] is smooth in r except where a level-set boundary reaches u = ±1, i.e.
        where the loss on the axis equals c: h(r) − h(r + Δ) = c (u = −1) or h(r) − h(|r − Δ|)
        = c (u = +1, with |r − Δ| >= η where the ball is left out), and where the level set
        becomes everything: h(r) = h(t*) + c for k > T (t* the maximum of h), (r/σ)^p = −c for
        k = T. ``which`` = 3 j + i picks c = (ε, −ε)[j] and function i; ``x`` is r, or d = r − Δ
        when ``near`` (then |r − Δ| = |d| exactly).
        """
        m = self
        r, gap = (m.Delta + x, np.abs(x)) if near else (x, np.abs(x - m.Delta))
        c = np.where(which >= 3, -m.eps, m.eps)
        i = which % 3
        floor = 0.0 if m.log_eta is None else math.exp(m.log_eta)
        hr = m.h(r)
        other = np.where(i == 0, m.h(r + m.Delta), m.h(np.maximum(gap, floor)))
        out = hr - other - c
        if m.k > m.T:
            out = np.where(i == 2, hr - m.h_star - c, out)
        elif m.k == m.T:
            out = np.where(i == 2, (r / m.sigma) ** m.p + c, out)
        else:
            out = np.where(i == 2, np.nan, out)
        return out

    def _axis_table(self, x: np.ndarray, near: bool) -> np.ndarray:
        """All six functions of :meth:`_axis` on ``x``, shape (6, len(x)); h evaluated once."""
        m = self
        r, gap = (m.Delta + x, np.abs(x)) if near else (x, np.abs(x - m.Delta))
        floor = 0.0 if m.log_eta is None else math.exp(m.log_eta)
        hr = m.h(r)
        minus, plus = hr - m.h(r + m.Delta), hr - m.h(np.maximum(gap, floor))
        if m.k > m.T:
            third = hr - m.h_star
        elif m.k == m.T:
            third = (r / m.sigma) ** m.p
        else:
            third = np.full(x.shape, np.nan)
        rows = []
        for c in (m.eps, -m.eps):
            rows += [minus - c, plus - c, third - c if m.k != m.T else third + c]
        return np.stack(rows)

    def _roots(self, grid: np.ndarray, near: bool, geometric: bool) -> np.ndarray:
        """Sign changes of the axis functions between neighbours of ``grid``, refined.

        Refinement: the Illinois variant of regula falsi on every bracket at once, in x or (for
        a ``geometric`` grid of one sign per bracket) in ln|x|, until the brackets are ~1e-15
        relative (typically 6–10 rounds instead of 50 halvings).
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            v = self._axis_table(grid, near)
        sign = np.sign(v)
        fi, gi = np.nonzero(sign[:, :-1] * sign[:, 1:] < 0)
        lo_x, hi_x = grid[gi], grid[gi + 1]
        one_sign = lo_x * hi_x > 0
        if geometric:
            fi, gi, lo_x, hi_x = fi[one_sign], gi[one_sign], lo_x[one_sign], hi_x[one_sign]
        f_lo, f_hi = v[fi, gi], v[fi, gi + 1]
        side = np.sign(lo_x) if geometric else None

        def to_x(y):
            return side * np.exp(y) if geometric else y

        y_lo = np.log(np.abs(lo_x)) if geometric else lo_x
        y_hi = np.log(np.abs(hi_x)) if geometric else hi_x
        last = np.zeros(len(fi))
        for _ in range(MAX_FALSI):
            width = np.abs(y_hi - y_lo)
            scale = np.maximum(1.0, np.abs(y_lo)) if geometric else np.abs(y_lo) + np.abs(y_hi)
            active = width > FALSI_TOL * scale
            if not active.any():
                break
            with np.errstate(invalid="ignore", divide="ignore"):
                y = (y_lo * f_hi - y_hi * f_lo) / (f_hi - f_lo)
            y = np.where(np.isfinite(y) & ((y - y_lo) * (y - y_hi) < 0), y, (y_lo + y_hi) / 2)
            with np.errstate(invalid="ignore", divide="ignore"):
                f = self._axis(to_x(y), fi, near)
            f = np.where(np.isnan(f), 0.0, f)
            same_lo = np.sign(f) == np.sign(f_lo)
            # Illinois: halve the value kept at the end that did not move twice in a row
            f_hi = np.where(same_lo & (last == 1), f_hi / 2, f_hi)
            f_lo = np.where(~same_lo & (last == -1), f_lo / 2, f_lo)
            upd = active & same_lo
            y_lo, f_lo = np.where(upd, y, y_lo), np.where(upd, f, f_lo)
            upd_hi = active & ~same_lo
            y_hi, f_hi = np.where(upd_hi, y, y_hi), np.where(upd_hi, f, f_hi)
            last = np.where(upd, 1, np.where(upd_hi, -1, 0))
            exact = active & (f == 0)
            y_lo, y_hi = np.where(exact, y, y_lo), np.where(exact, y, y_hi)
        return to_x((y_lo + y_hi) / 2)

    def kinks(self, windows: list[tuple[float, float]]) -> np.ndarray:
        """Logits of the kinks: the axis functions scanned on the radii of a fine logit grid
        over the ``windows`` (for k = T also on radii clustered at r = Δ), then refined in r.

        The scan radii need not sit exactly at their logits: ln r is interpolated linearly
        between the coarse points already evaluated (the roots are exact all the same)."""
        m = self
        s_fine = np.concatenate(
            [np.arange(lo, hi + KINK_STEP / 2, KINK_STEP) for lo, hi in windows] + [[0.0]]
        )
        s_known = np.concatenate([c[0] for c in self._coarse] + [np.zeros(0)])
        if len(s_known) >= 2:
            lr_known = np.concatenate([c[1] for c in self._coarse])
            order = np.argsort(s_known)
            inside = (s_fine >= s_known[order[0]]) & (s_fine <= s_known[order[-1]])
            scan = np.exp(np.interp(s_fine[inside], s_known[order], lr_known[order]))
            parts = [scan, radius_at_logit(s_fine[~inside], m.k, m.p, m.sigma)]
        else:
            parts = [radius_at_logit(s_fine, m.k, m.p, m.sigma)]
        if not m.singular:
            parts += [m.Delta * (1 - np.logspace(-15.6, -0.01, 320))]
            parts += [m.Delta * (1 + np.logspace(-15.6, 2, 360))]
        r = np.unique(np.concatenate(parts))
        r = r[np.isfinite(r) & (r > 0)]
        roots = np.concatenate([self._roots(r, near=False, geometric=False), self._merge_radii()])
        return radius_logit(roots, m.k, m.p, m.sigma)

    def _merge_radii(self) -> np.ndarray:
        """k > T: the radii where the two level-set roots t₁ < t* < t₂ merge or appear.

        {ρ: h(ρ) < h(r) − c} excludes (t₁, t₂), whose width behaves like |r − t*| at c = 0
        (a kink at r = t*, where h(r) − h* only touches 0 and no sign change shows it) and
        which appears at the two radii with h(r) = h* − ε for c = −ε (possibly closer together
        than any scan); both are found from the level set at t* itself.
        """
        m = self
        if m.k <= m.T:
            return np.zeros(0)
        t_star = m.sigma * ((m.k - m.T) / m.p) ** (1 / m.p)
        ls = level_set(np.array([(m.k - m.T) / m.p]), np.array([m.eps]), m.T, m.k, m.p)
        taus = [0.0] if ls.everything[0] else [0.0, float(ls.tau1[0]), float(ls.tau2[0])]
        out = t_star * np.exp(np.array(taus))
        return out[np.isfinite(out) & (out > 0)]

    def near_kinks(self) -> np.ndarray:
        """The kinks in the near zone, as offsets d = r − Δ (without ±η)."""
        m = self
        w = NEAR * m.Delta
        ladder = np.geomspace(math.exp(m.log_eta), w, NEAR_SCAN)
        linear = np.linspace(-w, w, NEAR_LINEAR)
        grid = np.unique(np.concatenate([-ladder, ladder, linear[linear != 0]]))
        merge = self._merge_radii() - m.Delta
        merge = merge[(np.abs(merge) < w) & (merge != 0)]
        return np.concatenate([self._roots(grid, near=True, geometric=True), merge])

    def near_nodes(self):
        """Nodes d, radii and log-weights (radial density × rule) of the near zone |d| < NEAR Δ.

        Panels: a geometric ladder (ratio ``NEAR_RATIO``) in |d| on each side, with the kinks as
        graded edges. Below a tenth of the smallest kink the integrand has no feature, and one
        panel per side reaches to d = 0; the kinks at ±η count only when the ladder gets there.
        """
        m = self
        eta, w = math.exp(m.log_eta), NEAR * m.Delta
        cuts = self.near_kinks()
        cuts = np.unique(cuts[(cuts > -w) & (cuts < w)])
        floor = max(eta, 0.1 * float(np.min(np.abs(cuts)))) if len(cuts) else 0.1 * w
        if floor < 10 * eta:
            floor = eta
            cuts = np.unique(np.concatenate([cuts, [-eta, eta]]))
        n = max(2, math.ceil(math.log(w / floor) / math.log(NEAR_RATIO)) + 1)
        ladder = np.geomspace(floor, w, n)
        edges = np.concatenate([-ladder, [0.0], ladder, cuts])
        kink = np.concatenate([np.zeros(2 * n + 1, bool), np.ones(len(cuts), bool)])
        order = np.argsort(edges, kind="stable")
        edges, kink = edges[order], kink[order]
        keep = np.concatenate([[True], np.diff(edges) > 0])  # a kink on a ladder point: once
        edges, kink = edges[keep], kink[keep] | np.isin(edges[keep], cuts)
        kink[[0, -1]] = True  # the zone's ends meet the logit windows, maybe at a kink
        d, dd = graded_nodes(edges, kink)
        ok = dd > 0  # zero-width nodes carry no mass (and ln 0 would warn)
        d, dd = d[ok], dd[ok]
        r = m.Delta + d
        return d, r, log_radial_density(r, m.k, m.p, m.sigma) + np.log(dd)


def _windows(s: np.ndarray, keep: np.ndarray, s_max: float) -> list[tuple[float, float]]:
    """Merge the coarse points marked ``keep`` (with margins) into disjoint intervals."""
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return []
    starts = idx[np.concatenate([[True], np.diff(idx) > 1])]
    stops = idx[np.concatenate([np.diff(idx) > 1, [True]])]
    return _merge(
        [
            (max(s[a] - WINDOW_MARGIN, -s_max), min(s[b] + WINDOW_MARGIN, s_max))
            for a, b in zip(starts, stops, strict=True)
        ]
    )


def _merge(windows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of intervals, as sorted disjoint intervals."""
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(w for w in windows if np.isfinite(w[0]) and np.isfinite(w[1])):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((float(lo), float(hi)))
    return out


def _cut(windows, lo: float, hi: float) -> list[tuple[float, float]]:
    """The windows minus the interval (lo, hi)."""
    out = []
    for a, b in windows:
        if a < lo:
            out.append((a, min(b, lo)))
        if b > hi:
            out.append((max(a, hi), b))
    return [(a, b) for a, b in out if b > a]


def _log_sphere(eps, T, k, p, sigma, Delta, panel_width, survival=False) -> float:
    """ln δ(ε), or with ``survival`` an upper bound on ln P[L > ε] (A, the balls as a whole)."""
    prof = _SphereProfile(eps, T, k, p, sigma, Delta)
    # Coarse pass; widen while the radial tail beyond |s| = edge (mass ~e^{-edge}, times e^ε for B)
    # could exceed e^{-46} of ln A.
    edge, reach = S_START, S_LIMIT + min(eps, EPS_REACH)
    s = np.arange(-edge, edge + COARSE_STEP / 2, COARSE_STEP)
    phi_a, phi_b = prof.at_logit(s)
    while True:
        log_a = special.logsumexp(phi_a) + math.log(COARSE_STEP)
        if -edge + eps < log_a - LOG_KEEP:
            break
        # Beyond the reach only while nothing was found: δ < e^{-745} there, but ln δ is wanted.
        if edge >= (reach if np.isfinite(log_a) else max(reach, S_DEEP)):
            break
        new_edge = min(2 * edge, reach if np.isfinite(log_a) else max(reach, S_DEEP))
        right = np.arange(edge + COARSE_STEP, new_edge + COARSE_STEP / 2, COARSE_STEP)
        new = np.concatenate([-right[::-1], right])
        pa, pb = prof.at_logit(new)
        n = len(right)
        s = np.concatenate([new[:n], s, new[n:]])
        phi_a = np.concatenate([pa[:n], phi_a, pa[n:]])
        phi_b = np.concatenate([pb[:n], phi_b, pb[n:]])
        edge = new_edge
    # The coarse pass can miss a narrow piece of A (the ball around v for k > T) but not its
    # mirror image in B (small radii), so the window threshold looks at both terms.
    log_top = max(special.logsumexp(phi_a), eps + special.logsumexp(phi_b))
    threshold = log_top + math.log(COARSE_STEP) - LOG_KEEP if np.isfinite(log_top) else math.inf
    keep = (phi_a >= threshold) | (phi_b + eps >= threshold)
    windows = _windows(s, keep, edge)
    breaks = prof.kinks(windows)
    # A piece of A or B narrower than the coarse step lies between two kinks: a window around
    # every kink covers it. Fine panels on the core (within e^-CORE_KEEP of the top, and around
    # kinks), wide ones on the tails, which hold < e^-CORE_KEEP of the total.
    around = [(b - WINDOW_MARGIN, b + WINDOW_MARGIN) for b in breaks]
    windows = _merge(windows + around)
    core_threshold = threshold + LOG_KEEP - CORE_KEEP
    core = _windows(s, (phi_a >= core_threshold) | (phi_b + eps >= core_threshold), edge)
    core = _merge(core + around)
    tails = windows
    for lo, hi in core:
        tails = _cut(tails, lo, hi)
    parts_a, parts_b, extra = [], [], []
    if prof.singular:
        near = radius_logit(np.array([(1 - NEAR) * Delta, (1 + NEAR) * Delta]), k, p, sigma)
        s_eta = float(radius_logit(np.array(math.exp(prof.log_eta)), k, p, sigma))
        for cut in ((float(near[0]), float(near[1])), (-math.inf, s_eta)):  # r < η: the ball
            core, tails = _cut(core, *cut), _cut(tails, *cut)
        d, r, log_w = prof.near_nodes()
        a, b = prof.log_integrands(r, log_w, d)
        parts_a.append(a)
        parts_b.append(b)
        if survival:
            extra.append(_log_ball_masses(T, k, p, sigma, Delta, prof.log_eta))
        else:
            extra.append(_log_balls(eps, T, k, p, sigma, Delta, prof.log_eta))
    for part, width in ((core, panel_width), (tails, TAIL_PANEL_WIDTH)):
        if not part:
            continue
        r, log_w = radius_nodes_log(k, p, sigma, part, width, breaks, graded_ends=True)
        a, b = prof.log_integrands(r, log_w)
        parts_a.append(a)
        parts_b.append(b)
    if not parts_a:
        return -math.inf  # A = 0: δ = 0 (e.g. pure DP beyond ε₀)
    log_a = special.logsumexp(np.concatenate(parts_a))
    if survival:
        return float(special.logsumexp([log_a, *extra]))
    log_b = special.logsumexp(np.concatenate(parts_b))
    outside = float(_log_sub(np.array(log_a), np.array(eps + log_b)))
    return float(special.logsumexp([outside, *extra]))


# --- T = 1: the line -------------------------------------------------------------------------


def _line_pieces(Delta: float, t_far: float):
    """The two half-lines u = ±1 as four pieces t ↦ (r, ρ), each singular (if at all) at t = 0.

    Returns tuples (name, t_max, r(t), ρ(t)); t runs over (0, t_max].
    """
    return (
        ("minus", t_far, lambda t: t, lambda t: t + Delta),  # u = −1: ρ = r + Δ
        ("near_v_in", Delta / 2, lambda t: Delta - t, lambda t: t),  # u = +1, r < Δ, ρ small
        ("near_0", Delta / 2, lambda t: t, lambda t: Delta - t),  # u = +1, r small
        ("beyond_v", t_far, lambda t: Delta + t, lambda t: t),  # u = +1, r > Δ
    )


def _log_mass(r_a, r_b, width, k, p, sigma) -> np.ndarray:
    """ln P(r_a < R < r_b) for intervals given by their ends and their exact width."""
    a = k / p
    out = np.empty(len(r_a))
    mid = (r_a + r_b) / 2
    narrow = width <= NARROW * mid
    if narrow.any():
        x, wx = np.polynomial.legendre.leggauss(8)
        lo, w_n = np.minimum(r_a, r_b)[narrow], width[narrow]
        nodes = lo[:, None] + w_n[:, None] * (x[None, :] + 1) / 2
        log_f = log_radial_density(nodes, k, p, sigma) + np.log(wx / 2)[None, :]
        out[narrow] = special.logsumexp(log_f, axis=1) + np.log(w_n)
    wide = ~narrow
    if wide.any():
        with np.errstate(divide="ignore"):
            lza = p * np.log(np.minimum(r_a, r_b)[wide] / sigma)  # ln z: z may underflow
            lzb = p * np.log(np.maximum(r_a, r_b)[wide] / sigma)
        za, zb = np.exp(lza), np.exp(lzb)
        lower = _log_sub(log_gamma_cdf_of_log(a, lzb), log_gamma_cdf_of_log(a, lza))
        upper = _log_sub(log_gamma_sf(a, za), log_gamma_sf(a, zb))
        out[wide] = np.where(zb <= a, lower, upper)
    return out


def _log_line(eps, k, p, sigma, Delta, survival=False) -> float:
    """T = 1: ln δ from the exact intervals where L > ε and where L < −ε (``survival``:
    ln P[L > ε])."""
    # Q(k/p, z_far) < e^{-745 - ε}: beyond, neither A nor e^ε B can gain anything.
    z_far = math.e * (S_LIMIT + min(eps, EPS_REACH)) + k / p
    t_far = sigma * z_far ** (1.0 / p) + 2 * Delta
    log_parts = {True: [], False: []}  # True: L > ε (A), False: L < −ε (B)
    for _, t_max, r_of, rho_of in _line_pieces(Delta, t_far):
        t = np.exp(np.linspace(math.log(D_MIN * Delta), math.log(t_max), GRID_1D))

        def loss(t, r_of=r_of, rho_of=rho_of):
            return log_radial_profile(r_of(t), 1, k, p, sigma) - log_radial_profile(
                rho_of(t), 1, k, p, sigma
            )

        L = loss(t)
        for level, is_a in ((eps, True), (-eps, False)):
            d = np.sign(L - level)
            change = np.flatnonzero(d[:-1] * d[1:] < 0)
            lo, hi = t[change], t[change + 1]
            sign_lo = d[change]
            for _ in range(N_BISECT):
                mid = np.sqrt(lo) * np.sqrt(hi)  # geometric: lo * hi underflows near 1e-300
                same = np.sign(loss(mid) - level) == sign_lo
                lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
            cuts = np.concatenate([[0.0], np.sqrt(lo) * np.sqrt(hi), [t_max]])
            # the sign on each interval is the sign at the first grid point inside it
            first_inside = np.searchsorted(t, cuts[:-1], side="right")
            sign = d[np.minimum(first_inside, len(t) - 1)]
            want = sign > 0 if is_a else sign < 0
            ta, tb = cuts[:-1][want], cuts[1:][want]
            if len(ta):
                log_parts[is_a].append(_log_mass(r_of(ta), r_of(tb), tb - ta, k, p, sigma))
    log_a = special.logsumexp(np.concatenate(log_parts[True] or [[-np.inf]])) - math.log(2)
    log_b = special.logsumexp(np.concatenate(log_parts[False] or [[-np.inf]])) - math.log(2)
    if not np.isfinite(log_a):
        return -math.inf
    if survival:
        return float(log_a)
    return float(_log_sub(np.array(log_a), np.array(eps + log_b)))


def log_loss_survival(c: float, T: int, k: float, p: float, sigma: float, Delta: float) -> float:
    """ln P[L > c] under X ~ P, for a level c >= 0 (internal: no checks), by the profile's
    quadrature (A of :func:`log_hockey_stick` at ε = c; for k != T the balls of radius η
    around 0 and v count as a whole)."""
    if T == 1:
        return _log_line(c, k, p, sigma, Delta, survival=True)
    return _log_sphere(c, T, k, p, sigma, Delta, PANEL_WIDTH, survival=True)


def log_hockey_stick(
    eps: float,
    T: int,
    k: float,
    p: float,
    sigma: float,
    Delta: float,
    panel_width: float | None = None,
) -> float:
    """ln δ(ε), δ(ε) = ∫ (f(x) − e^ε f(x − Δe₁))₊ dx, for the SGG density f (internal: no checks).

    Parameters
    ----------
    panel_width
        Largest Gauss–Legendre panel width on the logit axis (T >= 2); default 0.2.

    Returns
    -------
    float
        ln δ(ε); −inf where δ(ε) = 0.
    """
    if T == 1:
        return _log_line(eps, k, p, sigma, Delta)
    return _log_sphere(eps, T, k, p, sigma, Delta, panel_width or PANEL_WIDTH)
