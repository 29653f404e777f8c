"""Searching the SGG family for the member with the smallest MSE at a privacy target, and
checking the shift-monotonicity assumption behind the worst-case pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.mechanism import SHIFT_GRID, SGGMechanism
from icml26.sgg_dp.profile import hockey_stick

__all__ = [
    "DEFAULT_K_OFFSETS",
    "DEFAULT_P_GRID",
    "MemberResult",
    "best_member",
    "check_shift_monotone",
]

DEFAULT_P_GRID = (1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0)
DEFAULT_K_OFFSETS = (-1.0, -0.5, 0.0, 0.5, 1.0)  # k = T + offset, kept where k > 0


@dataclass(frozen=True)
class MemberResult:
    """One calibrated member of a search: its shape, scale and MSE."""

    k: float
    p: float
    sigma: float
    mse: float


def _calibrated(T, k, p, eps, delta, sensitivity) -> tuple[SGGMechanism, MemberResult]:
    m = SGGMechanism(T=T, k=k, p=p, sensitivity=sensitivity).calibrate(eps, delta)
    return m, MemberResult(k=m.k, p=m.p, sigma=float(m.sigma), mse=m.mse())


def best_member(
    eps: float,
    delta: float,
    T: int,
    k_grid: Sequence[float] | None = None,
    p_grid: Sequence[float] | None = None,
    refine: bool = False,
    sensitivity: float = 1.0,
    callback: Callable[[MemberResult], None] | None = None,
) -> tuple[SGGMechanism, list[MemberResult]]:
    """Calibrate every (k, p) of a grid at (ε, δ) and return the member with the smallest MSE.

    Parameters
    ----------
    eps, delta
        Privacy target: ε >= 0, δ in (0, 1).
    T
        Dimension (integer >= 1).
    k_grid
        Shapes to try; default T + {−1, −0.5, 0, 0.5, 1} restricted to k > 0.
    p_grid
        Powers to try; default {1, 1.1, 1.2, 1.35, 1.5, 1.75, 2}.
    refine
        Polish the best grid point with Nelder–Mead on (ln k, ln p) (tens of calibrations).
    sensitivity
        ℓ2 sensitivity Δ > 0.
    callback
        Called with each row of the table as soon as it is computed (e.g. to advance a progress
        bar): ``len(k_grid) * len(p_grid)`` times, once more with ``refine``.

    Returns
    -------
    best, table
        The calibrated best member and one :class:`MemberResult` per grid point (plus the
        refined point, if any), in search order.

    Raises
    ------
    ValueError
        If a privacy parameter is out of range or a grid value is not > 0.

    Example
    -------
    >>> best, table = best_member(0.5, 1e-2, T=3, k_grid=[3.0], p_grid=[1.0, 1.35, 2.0])
    >>> best.p, len(table)
    (1.35, 3)
    """
    owner = "best_member"
    eps = check_in_interval("eps", eps, low=0.0, owner=owner)
    delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=owner)
    T = check_positive_int("T", T, owner=owner)
    ks = [T + o for o in DEFAULT_K_OFFSETS if T + o > 0] if k_grid is None else list(k_grid)
    ps = list(DEFAULT_P_GRID) if p_grid is None else list(p_grid)
    if not ks or not ps:
        raise ValueError(f"{owner}: k_grid and p_grid must be non-empty; got {ks}, {ps}.")
    for name, values in (("k_grid", ks), ("p_grid", ps)):
        for v in values:
            check_in_interval(name, v, low=0.0, closed="neither", owner=owner)

    table: list[MemberResult] = []
    best: SGGMechanism | None = None
    for k in ks:
        for p in ps:
            m, row = _calibrated(T, k, p, eps, delta, sensitivity)
            table.append(row)
            if callback is not None:
                callback(row)
            if best is None or row.mse < best.mse():
                best = m
    if refine:

        def objective(z: np.ndarray) -> float:
            try:
                return _calibrated(T, math.exp(z[0]), math.exp(z[1]), eps, delta, sensitivity)[
                    1
                ].mse
            except ValueError:  # no σ in range: treat as infeasible
                return math.inf

        start = np.log([best.k, best.p])
        res = optimize.minimize(
            objective, start, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-6}
        )
        m, row = _calibrated(T, math.exp(res.x[0]), math.exp(res.x[1]), eps, delta, sensitivity)
        table.append(row)
        if callback is not None:
            callback(row)
        if row.mse < best.mse():
            best = m
    return best, table


def check_shift_monotone(
    mechanism: SGGMechanism, eps: float, n_grid: int = 10, rtol: float = 1e-6
) -> bool:
    """Whether δ(ε; s·Δe₁) is non-decreasing in s on a grid of s in (0, 1].

    The worst case over ‖v‖ <= Δ is then the boundary shift ‖v‖ = Δ used by
    ``worst_case="boundary"``; for exotic (k, p) where this fails use ``worst_case="scan"``.

    Parameters
    ----------
    mechanism
        A calibrated :class:`SGGMechanism`.
    eps
        ε >= 0.
    n_grid
        Number of shifts s = 1/n, 2/n, ..., 1 (integer >= 2).
    rtol
        Allowed relative decrease between neighbours (quadrature error ~1e-9).

    Returns
    -------
    bool

    Example
    -------
    >>> from icml26.sgg_dp import l2_member
    >>> check_shift_monotone(l2_member(3, sigma=1.0), 0.5)
    True
    """
    owner = "check_shift_monotone"
    eps = check_in_interval("eps", eps, low=0.0, owner=owner)
    n_grid = check_positive_int("n_grid", n_grid, owner=owner, minimum=2)
    sigma = mechanism._scale("check shift monotonicity")
    m = mechanism
    shifts = np.linspace(1.0 / n_grid, 1.0, n_grid) if n_grid != 10 else SHIFT_GRID
    d = np.array([hockey_stick(eps, m.T, m.k, m.p, sigma, s * m.sensitivity) for s in shifts])
    return bool(np.all(np.diff(d) >= -rtol * np.abs(d[1:]) - 1e-15))
