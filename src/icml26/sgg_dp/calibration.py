"""Inverting a privacy profile: the smallest noise scale σ, or the smallest ε, meeting a target.

Both searches work on ln δ, so targets down to 1e-300 are as well conditioned as 1e-3, and both
run on one variable x (ln σ or ε) with F(x) = √(−ln δ_target) − √(−ln δ), decreasing in x and
nearly linear (:func:`_root_scale`):

1. from a guess x₀ (for σ: an equal-MSE Gaussian, or a neighbouring member's σ) secant steps
   (first step ±``FIRST_STEP``, each at most ``MAX_GROWTH`` times the last) walk to a sign change;
2. safeguarded secant steps (Illinois regula falsi as the fallback) shrink that bracket until the
   feasible end b (F(b) <= 0) is within ``XTOL`` of the infeasible one, or F(b) > −``FTOL`` (then
   δ(b) is within a factor 1 − 2·FTOL·√(−ln δ_target) of the target); b is returned, so the
   result always satisfies the target.

This takes 4–7 profile evaluations per calibration; the spec's
procedure (a top-down scan of 40 log-spaced σ, then ``brentq``: 25–40 evaluations) is kept in
``benchmarks/bench_sgg_dp.py`` as the baseline (deviation from spec §2.4).

δ_σ can be non-monotone in σ for k > T; there, after the root, feasibility is also checked at
``CHECK_ABOVE`` times it (within the range) and the search restarts above any infeasible point,
so the result is feasible together with every checked larger σ.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["smallest_epsilon", "smallest_feasible"]

XTOL = 1e-9  # bracket width in ln σ / ε: far below the 1e-3 relative resolution anyone needs
FTOL = 1e-7  # ... or √(−ln δ) within this of √(−ln δ_target) at the feasible end (σ)
FTOL_EPS = 1e-10  # the same for ε(δ)
FIRST_STEP = 0.1
MAX_GROWTH = 4.0
MAX_EVALS = 200
LOG_ZERO = -1e4  # stands for ln 0 (δ = 0) inside root finding
# For k > T: larger σ checked after the root, as multiples of it.
CHECK_ABOVE = (4.0, 100.0)


def _finite(value: float) -> float:
    return max(value, LOG_ZERO)


def _shrink(fn, a: float, fa: float, b: float, fb: float, ftol: float = 0.0) -> float:
    """The feasible end of a bracket (fa > 0 >= fb), shrunk by safeguarded secant steps.

    Each step is the secant through the last two evaluated points (superlinear on a smooth F);
    when it leaves the bracket, the Illinois step (regula falsi, the value at an end kept twice
    halved) is taken instead, and a bisection whenever three steps did not halve the bracket
    (F may be steep, e.g. where a pure-DP member's δ drops to 0). An infeasible end within
    ``ftol`` of the target is stepped past by twice its secant distance to the root.
    """
    p, fp, q, fq = a, fa, b, fb  # the last two evaluated points
    kept = 0  # > 0: a kept that many steps in a row, < 0: b kept
    widths = [abs(b - a)]
    for _ in range(MAX_EVALS):
        if abs(b - a) <= XTOL * max(1.0, abs(b)) or fb > -ftol:
            break
        lo, hi = min(a, b), max(a, b)
        slope = (fq - fp) / (q - p) if q != p else math.nan
        if len(widths) >= 4 and widths[-1] > widths[-4] / 2:
            x = (a + b) / 2
        elif 0 < fa <= ftol and slope < 0:
            x = a + max(-2 * fa / slope, XTOL * max(1.0, abs(a))) * math.copysign(1.0, b - a)
        else:
            x = q - fq / slope if slope == slope and slope != 0 else math.nan
            if not (lo < x < hi):
                x = (a * fb - b * fa) / (fb - fa)
        if not (lo < x < hi):
            x = (a + b) / 2
        fx = fn(x)
        p, fp, q, fq = q, fq, x, fx
        if fx > 0:
            a, fa = x, fx
            kept = kept - 1 if kept < 0 else -1
            if kept <= -2:
                fb /= 2  # Illinois
        else:
            b, fb = x, fx
            kept = kept + 1 if kept > 0 else 1
            if kept >= 2:
                fa /= 2
        widths.append(abs(b - a))
    return b


def _root_above(fn: Callable[[float], float], start: float, lo: float, hi: float) -> float:
    """Smallest x in [lo, hi] with fn(x) <= 0 for a decreasing ``fn``, from a guess ``start``."""
    x0 = min(max(start, lo), hi)
    f0 = fn(x0)
    step = FIRST_STEP if f0 > 0 else -FIRST_STEP
    x1, f1 = None, None
    for _ in range(MAX_EVALS):
        x1 = min(max(x0 + step, lo), hi)
        if x1 == x0:  # at an end of the range
            if f0 > 0:
                raise ValueError("no feasible point in range")
            return x0
        f1 = fn(x1)
        if (f0 > 0) != (f1 > 0):
            break
        # secant towards the root, in the walking direction, growing by at most MAX_GROWTH
        slope = (f1 - f0) / (x1 - x0)
        guess = -f1 / slope if slope < 0 else math.copysign(math.inf, step)
        grow = min(max(abs(guess) * 1.2, abs(step)), MAX_GROWTH * abs(step))
        step = math.copysign(grow, step)
        x0, f0 = x1, f1
    if f0 > 0:
        return _shrink(fn, x0, f0, x1, f1, FTOL)
    return _shrink(fn, x1, f1, x0, f0, FTOL)


def _root_scale(log_delta: float, log_target: float) -> float:
    """√(−ln δ_target) − √(−ln δ): the sign of ln δ − ln δ_target, and nearly linear in ln σ and
    in ε (for the Gaussian, √(−2 ln δ) is asymptotically affine in ε and in 1/σ), which
    makes the secant steps converge in a few evaluations."""
    return math.sqrt(-log_target) - math.sqrt(-min(_finite(log_delta), 0.0))


def smallest_feasible(
    log_delta_of: Callable[[float], float],
    log_target: float,
    guess: float,
    lo: float,
    hi: float,
    monotone: bool,
) -> float:
    """Smallest x in [lo, hi] with ln δ(x) <= ``log_target`` (x = ln σ).

    Parameters
    ----------
    log_delta_of
        ln δ as a function of x; decreasing when ``monotone``, otherwise larger x are checked
        (module docstring).
    guess
        Where the search starts.

    Raises
    ------
    ValueError
        If no x <= hi is feasible.
    """

    def fn(x: float) -> float:
        return _root_scale(log_delta_of(x), log_target)

    x = _root_above(fn, guess, lo, hi)
    if monotone:
        return x
    while True:
        bad = [x + math.log(m) for m in CHECK_ABOVE if x + math.log(m) <= hi]
        bad = [b for b in bad if fn(b) > 0]
        if not bad:
            return x
        x = _root_above(fn, bad[-1], bad[-1], hi)


def smallest_epsilon(log_delta_of_eps: Callable[[float], float], log_delta: float) -> float:
    """Smallest ε >= 0 with ln δ(ε) <= ``log_delta`` for a non-increasing profile.

    Raises
    ------
    ValueError
        If no ε <= 1e6 reaches it.
    """

    def excess(eps: float) -> float:
        return _root_scale(log_delta_of_eps(eps), log_delta)

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(f"no ε <= 1e6 reaches δ = {math.exp(log_delta):g}")
    lo = hi / 2 if hi > 1 else 0.0
    return _shrink(excess, lo, excess(lo), hi, excess(hi), FTOL_EPS)
