"""Independent references for the privacy profile δ(ε) of an SGG mechanism (issue 17).

Neither shares code or coordinates with ``icml26.sgg_dp.profile`` (logit-radial Gauss–Legendre,
Beta CDFs of level sets):

- :func:`delta_by_nested_quad`: nested adaptive ``scipy.integrate.quad`` of (f(x) − e^ε f(x − v))₊
  in polar coordinates about 0 (for ‖x‖ < Δ/2) and about v (elsewhere), so both points where the
  loss of a k != T member is unbounded are the origins of their own coordinates;
- :func:`delta_line_mpmath`: T = 1 members by mpmath tanh-sinh quadrature in arbitrary precision
  (no underflow), along the four rays from the singular points 0 and Δ.
"""

import math
from itertools import pairwise

import mpmath as mp
import numpy as np
from scipy import integrate, optimize, special


def delta_by_nested_quad(eps, T, k, p, sigma, Delta=1.0, log_scale=0.0, tol=1e-10, t_min=1e-60):
    """δ(ε)·e^{log_scale} for T >= 2 (``log_scale`` keeps tiny values normal floats)."""
    log_c = (
        math.log(p) + special.gammaln(T / 2) - math.log(2) - (T / 2) * math.log(math.pi)
        - k * math.log(sigma) - special.gammaln(k / p) + log_scale
    )  # fmt: skip
    log_s = math.log(2) + ((T - 1) / 2) * math.log(math.pi) - special.gammaln((T - 1) / 2)

    def h(t):
        return (k - T) * np.log(t) - (t / sigma) ** p

    def shell(t, other_of, hi_th, centre_is_v):
        """∫ over the angle θ in [0, hi_th] at distance t from the centre (v or 0)."""

        def terms(th):  # ln f(x)/C and ln e^ε f(x − v)/C
            o = other_of(t, th)
            return (h(o), eps + h(t)) if centre_is_v else (h(t), eps + h(o))

        def f(th):
            if other_of(t, th) <= 0:
                return 0.0
            big, small = terms(th)
            if big <= small:
                return 0.0
            w = math.sin(th) ** (T - 2) if T > 2 else 1.0
            log_f = log_c + log_s + big + (T - 1) * math.log(t)
            return math.exp(log_f) * -math.expm1(small - big) * w

        def gap(th):
            big, small = terms(th)
            return big - small

        ths = np.linspace(0.0, hi_th, 129)
        with np.errstate(all="ignore"):
            g = np.array([gap(th) for th in ths])
        pts = [0.0]
        for i in np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0):
            pts.append(optimize.brentq(gap, ths[i], ths[i + 1], xtol=1e-15))
        pts.append(hi_th)
        return sum(
            integrate.quad(f, a, b, epsabs=0, epsrel=tol, limit=200)[0]
            for a, b in pairwise(pts)
            if b > a
        )

    def about_v(rho):  # x = v + ρ(cos θ, sin θ, ...), only where ‖x‖ >= Δ/2
        c0 = (Delta**2 / 4 - Delta**2 - rho**2) / (2 * Delta * rho)
        hi = math.acos(c0) if c0 > -1 else math.pi
        norm = lambda t, th: math.sqrt(max(Delta**2 + t**2 + 2 * Delta * t * math.cos(th), 0.0))  # noqa: E731
        return shell(rho, norm, hi, True)

    def about_0(r):  # x = r(cos φ, ...), r < Δ/2
        dist = lambda t, th: math.sqrt(t**2 + Delta**2 - 2 * t * Delta * math.cos(th))  # noqa: E731
        return shell(r, dist, math.pi, False)

    r_max = Delta + 1.5 * sigma * special.gammainccinv(k / p, 1e-30) ** (1 / p) + 50 * sigma
    edges_v = sorted(set(np.geomspace(t_min * Delta, r_max, 90)) | {0.0, Delta / 2, 1.5 * Delta})
    edges_0 = [0.0, *np.geomspace(t_min * Delta, Delta / 2, 60)]
    total = 0.0
    for fn, edges in ((about_v, edges_v), (about_0, edges_0)):
        for a, b in pairwise(edges):
            total += integrate.quad(fn, a, b, epsabs=0, epsrel=tol, limit=200)[0]
    return total


def delta_line_mpmath(eps, k, p, sigma, Delta=1.0, dps=40, depth=600):
    """δ(ε) (an mpmath number) of the T = 1 member f(x) ∝ |x|^{k−1} exp(−(|x|/σ)^p).

    Each ray x = −o, o, Δ − o, Δ + o is parametrised by its offset o, so |x| and |x − Δ| keep
    full precision however small o is; roots of L = ε are bracketed on offsets down to
    10^−depth and bisected, and tanh-sinh integrates between them.
    """
    mp.mp.dps = dps
    k, p, sigma, Delta, eps = map(mp.mpf, (k, p, sigma, Delta, eps))
    C = p / (2 * sigma**k * mp.gamma(k / p))

    def lf(d):
        return (k - 1) * mp.log(d) - (d / sigma) ** p

    far = sigma * (mp.mpf(10) + 3 * eps) ** (1 / p) * 10 + 10 * Delta
    offs = [o for o in (mp.power(10, -mp.mpf(j) / 8) for j in range(8 * depth)) if o < Delta / 2]
    tail = [Delta / 2 + (far - Delta / 2) * mp.mpf(j) / 800 for j in range(801)]
    rays = [  # |x| and |x − Δ| as functions of the offset, and the offset grid
        (lambda o: o, lambda o: o + Delta, offs + tail),  # x = −o
        (lambda o: o, lambda o: Delta - o, [*offs, Delta / 2]),  # x = o
        (lambda o: Delta - o, lambda o: o, [*offs, Delta / 2]),  # x = Δ − o
        (lambda o: Delta + o, lambda o: o, offs + tail),  # x = Δ + o
    ]
    total = mp.mpf(0)
    for d0, d1, grid in rays:

        def g(o, d0=d0, d1=d1):
            return lf(d0(o)) - lf(d1(o)) - eps

        def integrand(o, d0=d0, d1=d1):
            a, b = lf(d0(o)), eps + lf(d1(o))
            return C * (mp.exp(a) - mp.exp(b)) if a > b else mp.mpf(0)

        grid = sorted(set(grid))
        pts = [mp.mpf(0), grid[-1]]
        vals = [g(o) for o in grid]
        for a, b, va, vb in zip(grid[:-1], grid[1:], vals[:-1], vals[1:], strict=True):
            if va * vb < 0:
                for _ in range(300):
                    m = mp.sqrt(a * b) if b < Delta / 2 else (a + b) / 2
                    if g(m) * va > 0:
                        a = m
                    else:
                        b = m
                pts.append((a + b) / 2)
        pts = sorted(set(pts))
        total += mp.fsum(mp.quad(integrand, [a, b]) for a, b in pairwise(pts))
    return total


def log_gaussian_delta(eps, std, Delta=1.0):
    """ln δ(ε) of N(0, std²) noise: Balle & Wang's closed form
    Φ(Δ/2s − εs/Δ) − e^ε Φ(−Δ/2s − εs/Δ), evaluated with mpmath at 60 digits (no cancellation)."""
    mp.mp.dps = 60
    eps, std, Delta = mp.mpf(eps), mp.mpf(std), mp.mpf(Delta)
    a = mp.ncdf(Delta / (2 * std) - eps * std / Delta)
    b = mp.exp(eps) * mp.ncdf(-Delta / (2 * std) - eps * std / Delta)
    return float(mp.log(a - b))
