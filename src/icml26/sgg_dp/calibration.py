"""Inverting a privacy profile: the smallest noise scale σ, or the smallest ε, meeting a target.

δ_σ(ε) is decreasing in σ for k <= T but can be non-monotone for k > T, so σ is found by a
top-down scan of a log grid (the first infeasible point from above brackets the smallest σ that
is feasible together with every larger grid point) followed by ``brentq`` in log σ. The root is
nudged up until the computed profile is feasible, so the returned value always satisfies the
target.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

__all__ = ["log_sigma_grid", "smallest_epsilon", "smallest_feasible"]

SIGMA_GRID = np.geomspace(1e-3, 1e3, 40)
XTOL = 1e-9  # in log σ / ε: far below the 1e-3 relative resolution anyone calibrates to


def _nudge_up(fn: Callable[[float], float], x: float, upper: float) -> float:
    """The first of x, x + 1e-8, x + 2e-8, x + 4e-8, ... (capped at ``upper``) with fn <= 0."""
    step = 1e-8
    while x < upper and fn(x) > 0:
        x, step = min(x + step, upper), 2 * step
    return x


def smallest_feasible(excess: Callable[[float], float], grid: np.ndarray) -> float:
    """Smallest x with ``excess(x) <= 0`` on and above the last infeasible point of ``grid``.

    ``grid`` is increasing and ``excess`` must be feasible (<= 0) at its last point. Scanning from
    the top, the first infeasible point ``lo`` and its upper neighbour ``hi`` bracket the answer,
    which ``brentq`` then locates. Returns ``grid[0]`` if every grid point is feasible.
    """
    if excess(grid[-1]) > 0:
        raise ValueError("the largest grid point is not feasible")
    i = len(grid) - 1
    while i > 0 and excess(grid[i - 1]) <= 0:
        i -= 1
    if i == 0:
        return float(grid[0])
    lo, hi = float(grid[i - 1]), float(grid[i])
    root = optimize.brentq(excess, lo, hi, xtol=XTOL)
    return _nudge_up(excess, root, hi)


def log_sigma_grid(sensitivity: float) -> np.ndarray:
    """The calibration grid ln σ for σ in [1e-3, 1e3]·Δ (40 points)."""
    return np.log(SIGMA_GRID * sensitivity)


def smallest_epsilon(delta_of_eps: Callable[[float], float], delta: float) -> float:
    """Smallest ε >= 0 with δ(ε) <= ``delta`` for a non-increasing profile ``delta_of_eps``."""

    def excess(eps: float) -> float:
        return delta_of_eps(eps) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(f"no ε <= 1e6 reaches δ = {delta:g}")
    root = optimize.brentq(excess, hi / 2 if hi > 1 else 0.0, hi, xtol=XTOL)
    return _nudge_up(excess, root, math.inf)
