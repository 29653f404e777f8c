"""Searching the SGG family for the member with the smallest MSE at a privacy target (spec §2.4),
and checking the shift-monotonicity assumption behind the worst-case pair.

Each member's calibration starts from the σ whose MSE equals the last feasible member's MSE
(neighbours on the grid have nearly the same calibrated MSE), so a bracket is usually found in
one or two profile evaluations. A grid point whose target is out of reach (no σ <= 1e3·Δ) is
skipped: it stays in the table with ``feasible=False`` and an :class:`InfeasibleMemberWarning`
names every skipped (k, p).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from icml26.core import Progress, check_in_interval, check_positive_int, progress_reporter
from icml26.sgg_dp.mechanism import SHIFT_GRID, SGGMechanism, check_mechanism
from icml26.sgg_dp.profile import log_hockey_stick
from icml26.sgg_dp.radial import radius_moment

__all__ = [
    "DEFAULT_K_OFFSETS",
    "DEFAULT_P_GRID",
    "MAX_GRID_POINTS",
    "MAX_T",
    "InfeasibleMemberWarning",
    "MemberResult",
    "best_member",
    "check_shift_monotone",
]

DEFAULT_P_GRID = (1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0)
DEFAULT_K_OFFSETS = (-1.0, -0.5, 0.0, 0.5, 1.0)  # k = T + offset, kept where k > 0
MAX_GRID_POINTS = 10_000  # a grid point costs ~0.05-1 s of calibration
MAX_T = 10**6  # one calibration at T = 1e6 takes ~0.1-1 s; the Gaussian is near-optimal there


class InfeasibleMemberWarning(UserWarning):
    """Some (k, p) of a member search cannot reach the privacy target and were skipped."""


@dataclass(frozen=True)
class MemberResult:
    """One member of a search: its shape, scale and MSE (``feasible=False``: skipped, σ = nan,
    MSE = inf, because no σ <= 1e3·Δ reaches the target)."""

    k: float
    p: float
    sigma: float
    mse: float
    feasible: bool = True


def _grid(name: str, values: object, owner: str) -> list[float]:
    """``values`` as a non-empty list of finite reals > 0, else a ValueError/TypeError naming it."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(
            f"{owner}: {name} must be a sequence of numbers > 0; got {type(values).__name__}."
        )
    if len(values) == 0 or len(values) > MAX_GRID_POINTS:
        raise ValueError(
            f"{owner}: {name} must hold 1 to {MAX_GRID_POINTS} values; got {len(values)}."
        )
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{owner}: {name} must be 1-D; got shape {values.shape}.")
        values = values.tolist()
    return [
        check_in_interval(name, v, low=0.0, high=math.inf, closed="neither", owner=owner)
        for v in values
    ]


def _calibrated(T, k, p, eps, delta, sensitivity, mse_hint):
    """The calibrated member and its row, or (None, infeasible row)."""
    m = SGGMechanism(T=T, k=k, p=p, sensitivity=sensitivity)
    # the σ with MSE = mse_hint: MSE = σ² E[(R/σ)²]
    hint = None if mse_hint is None else math.sqrt(mse_hint / radius_moment(2.0, k, p, 1.0))
    try:
        m = m.calibrate(eps, delta, sigma_hint=hint)
    except ValueError:
        return None, MemberResult(k=k, p=p, sigma=math.nan, mse=math.inf, feasible=False)
    return m, MemberResult(k=m.k, p=m.p, sigma=float(m.sigma), mse=m.mse())


def _grid_search(T, ks, ps, eps, delta, sensitivity, table, report) -> SGGMechanism | None:
    """Calibrate every (k, p), appending a row to ``table`` each; the best member or None."""
    best: SGGMechanism | None = None
    mse_hint = None
    for k in ks:
        for p in ps:
            m, row = _calibrated(T, k, p, eps, delta, sensitivity, mse_hint)
            table.append(row)
            report(len(table), k=row.k, p=row.p, mse=row.mse)
            if m is None:
                continue
            mse_hint = row.mse
            if best is None or row.mse < best.mse():
                best = m
    return best


def best_member(
    eps: float,
    delta: float,
    T: int,
    k_grid: Sequence[float] | None = None,
    p_grid: Sequence[float] | None = None,
    refine: bool = False,
    sensitivity: float = 1.0,
    progress: Progress = None,
) -> tuple[SGGMechanism, list[MemberResult]]:
    """Calibrate every (k, p) of a grid at (ε, δ) and return the member with the smallest MSE.

    Parameters
    ----------
    eps, delta
        Privacy target: ε >= 0, δ in (0, 1).
    T
        Dimension (integer in [1, 10⁶]: the search calibrates every grid point, ~0.1-1 s each
        at T = 10⁶).
    k_grid
        Shapes to try (a sequence of finite reals > 0); default T + {−1, −0.5, 0, 0.5, 1}
        restricted to k > 0.
    p_grid
        Powers to try (a sequence of finite reals > 0); default {1, 1.1, 1.2, 1.35, 1.5, 1.75, 2}.
        At most 10⁴ grid points in all.
    refine
        Polish the best grid point with Nelder–Mead on (ln k, ln p) (tens of calibrations).
    sensitivity
        ℓ2 sensitivity Δ > 0.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)``, called as each grid point is calibrated
        (``len(k_grid) * len(p_grid)`` times, once more with ``refine``) with the point's
        ``{"k", "p", "mse"}``.

    Returns
    -------
    best, table
        The calibrated best member and one :class:`MemberResult` per grid point (plus the
        refined point, if any), in search order; skipped points have ``feasible=False``.

    Raises
    ------
    ValueError
        If a privacy parameter, ``T`` or ``sensitivity`` is out of range, a grid is empty, too
        large or holds a value that is not > 0, or no grid point is feasible.
    TypeError
        If a grid is not a sequence of numbers, ``refine`` is not a bool or ``progress`` is not
        a bool, ``None`` or callable.

    Warns
    -----
    InfeasibleMemberWarning
        Naming the grid points skipped because no σ <= 1e3·Δ reaches the target.

    Examples
    --------
    >>> best, table = best_member(0.5, 1e-2, T=3, k_grid=[3.0], p_grid=[1.0, 1.35, 2.0])
    >>> best.p, len(table)
    (1.35, 3)
    """
    owner = "best_member"
    eps = check_in_interval("eps", eps, low=0.0, owner=owner)
    delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=owner)
    T = check_positive_int("T", T, owner=owner, maximum=MAX_T)
    sensitivity = check_in_interval("sensitivity", sensitivity, low=0.0, closed="neither",
                                    owner=owner)  # fmt: skip
    if not isinstance(refine, (bool, np.bool_)):
        raise TypeError(f"{owner}: refine must be a bool; got {type(refine).__name__}.")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(
            f"{owner}: progress must be True, False, None or a callable progress(done, total, "
            f"metrics); got {type(progress).__name__}."
        )
    if k_grid is None:
        ks = [T + o for o in DEFAULT_K_OFFSETS if T + o > 0]
    else:
        ks = _grid("k_grid", k_grid, owner)
    ps = list(DEFAULT_P_GRID) if p_grid is None else _grid("p_grid", p_grid, owner)
    if len(ks) * len(ps) > MAX_GRID_POINTS:
        raise ValueError(
            f"{owner}: k_grid × p_grid must have at most {MAX_GRID_POINTS} points; "
            f"got {len(ks)} × {len(ps)}."
        )

    table: list[MemberResult] = []
    total = len(ks) * len(ps) + int(bool(refine))
    with progress_reporter(progress, total, "calibrating SGG members") as report:
        best = _grid_search(T, ks, ps, eps, delta, sensitivity, table, report)
        skipped = [(r.k, r.p) for r in table if not r.feasible]
        if best is None:
            raise ValueError(
                f"{owner}: no grid point reaches (eps, delta) = ({eps:g}, {delta:g}) with "
                f"sigma <= 1e3·sensitivity; tried (k, p) = {skipped}."
            )
        if skipped:
            warnings.warn(
                f"{owner}: skipped {len(skipped)} grid point(s) that no sigma <= 1e3·sensitivity "
                f"brings to (eps, delta) = ({eps:g}, {delta:g}): (k, p) = {skipped}.",
                InfeasibleMemberWarning,
                stacklevel=2,
            )
        if refine:

            def objective(z: np.ndarray) -> float:
                row = _calibrated(T, math.exp(z[0]), math.exp(z[1]), eps, delta, sensitivity, None)
                return row[1].mse  # inf where infeasible

            start = np.log([best.k, best.p])
            res = optimize.minimize(
                objective, start, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-6}
            )
            k, p = math.exp(res.x[0]), math.exp(res.x[1])
            m, row = _calibrated(T, k, p, eps, delta, sensitivity, best.mse())
            table.append(row)
            report(len(table), k=row.k, p=row.p, mse=row.mse)
            if m is not None and row.mse < best.mse():
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

    Examples
    --------
    >>> from icml26.sgg_dp import l2_member
    >>> check_shift_monotone(l2_member(3, sigma=1.0), 0.5)
    True
    """
    owner = "check_shift_monotone"
    mechanism = check_mechanism("mechanism", mechanism, owner)
    eps = check_in_interval("eps", eps, low=0.0, owner=owner)
    n_grid = check_positive_int("n_grid", n_grid, owner=owner, minimum=2)
    sigma = mechanism._scale("check shift monotonicity")
    m = mechanism
    shifts = np.linspace(1.0 / n_grid, 1.0, n_grid) if n_grid != 10 else SHIFT_GRID
    d = np.exp([log_hockey_stick(eps, m.T, m.k, m.p, sigma, s * m.sensitivity) for s in shifts])
    return bool(np.all(np.diff(d) >= -rtol * np.abs(d[1:]) - 1e-15))
