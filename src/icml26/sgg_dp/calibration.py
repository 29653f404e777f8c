"""Inverting a privacy profile: the smallest noise scale σ, or the smallest ε, meeting a target.

Both searches work on ln δ, so targets down to 1e-300 are as well conditioned as 1e-3.

σ (spec §2.4, changed). δ_σ(ε) is decreasing in σ for k <= T, so instead of the spec's top-down
scan of 40 grid points the search starts at a guess (an equal-MSE Gaussian, or a neighbour's σ),
walks by factors of 1.5 to a bracket and runs ``brentq`` in ln σ: about 8 profile evaluations
instead of 25–30. δ_σ can be non-monotone for k > T; there, after the root, feasibility is also
checked at 1.25, 2, 5, 20, 100 and 1000 times it (within the range) and the search restarts above
any infeasible point, so the result is feasible together with every checked larger σ. The root
is nudged up until the computed profile is feasible, so the returned value always satisfies
the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize

__all__ = ["smallest_epsilon", "smallest_feasible"]

XTOL = 1e-10  # in ln σ / ε: far below the 1e-3 relative resolution anyone calibrates to
STEP = math.log(1.5)  # bracket walk in ln σ
LOG_ZERO = -1e4  # stands for ln 0 (δ = 0) inside root finding
# For k > T: larger σ checked after the root, as multiples of it.
CHECK_ABOVE = (1.25, 2.0, 5.0, 20.0, 100.0, 1000.0)


def _finite(value: float) -> float:
    return max(value, LOG_ZERO)


def _nudge_up(fn: Callable[[float], float], x: float, upper: float) -> float:
    """The first of x, x + 1e-9, x + 2e-9, x + 4e-9, ... (capped at ``upper``) with fn <= 0."""
    step = 1e-9
    while x < upper and fn(x) > 0:
        x, step = min(x + step, upper), 2 * step
    return x


def _root_above(excess: Callable[[float], float], start: float, lo: float, hi: float) -> float:
    """Smallest x in [lo, hi] with excess(x) <= 0 for a decreasing ``excess``, from a guess."""
    x = min(max(start, lo), hi)
    if excess(x) > 0:
        below = x
        step = STEP
        while True:
            if below >= hi:
                raise ValueError("no feasible point in range")
            x = min(below + step, hi)
            if excess(x) <= 0:
                break
            below, step = x, 2 * step
        above = x
    else:
        above = x
        step = STEP
        while True:
            if above <= lo:
                return lo
            x = max(above - step, lo)
            if excess(x) > 0:
                break
            above, step = x, 2 * step
        below = x
    root = optimize.brentq(excess, below, above, xtol=XTOL)
    return _nudge_up(excess, root, above)


def smallest_feasible(
    excess: Callable[[float], float], guess: float, lo: float, hi: float, monotone: bool
) -> float:
    """Smallest x in [lo, hi] with ``excess(x) <= 0`` (x = ln σ, excess = ln δ_σ − ln δ).

    Parameters
    ----------
    excess
        Decreasing in x when ``monotone``; otherwise larger x are checked (module docstring).
    guess
        Where the bracket walk starts.

    Raises
    ------
    ValueError
        If no x <= hi is feasible.
    """

    def fn(x: float) -> float:
        return _finite(excess(x))

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
    """Smallest ε >= 0 with ln δ(ε) <= ``log_delta`` for a non-increasing profile."""

    def excess(eps: float) -> float:
        return _finite(log_delta_of_eps(eps)) - log_delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(f"no ε <= 1e6 reaches δ = {math.exp(log_delta):g}")
    root = optimize.brentq(excess, hi / 2 if hi > 1 else 0.0, hi, xtol=XTOL)
    return _nudge_up(excess, root, math.inf)
