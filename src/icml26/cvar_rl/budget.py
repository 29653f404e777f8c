"""The budget variable: its grid, the interpolation on it, and the redistributed reward.

With budget c_0 = b and c_{t+1} = (c_t - R_t) / gamma, the terminal shortfall telescopes into
per-step terms (spec §2.2): min(Z, b) = min(b, 0) + sum_t gamma^t rho(c_t, R_t), with the dense
reward rho(c, r) = c^+ - (c - r)^+ = min(r, c) - min(c, 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int

__all__ = ["BudgetGrid", "redistributed_reward"]

MAX_NODES = 10**7  # BudgetGrid: budget nodes K (the value tables are S * K * A)


def redistributed_reward(c: Any, r: Any) -> np.ndarray:
    """The dense reward rho(c, r) = c^+ - (c - r)^+: the reward r capped by the budget c.

    Parameters
    ----------
    c
        Budget(s), broadcastable against ``r``; +-inf allowed (rho(-inf, r) = 0,
        rho(+inf, r) = r).
    r
        Reward(s); +-inf allowed.

    Returns
    -------
    numpy.ndarray
        rho(c, r), which lies between min(r, 0) and max(r, 0).

    Raises
    ------
    TypeError, ValueError
        If ``c`` or ``r`` is not numeric, holds NaN (``None`` included), or they do not
        broadcast together.

    Examples
    --------
    >>> redistributed_reward([5.0, 0.5, -1.0], 1.0).tolist()
    [1.0, 0.5, 0.0]
    """
    owner = "redistributed_reward"
    c = check_array("c", c, owner=owner, finite=False)
    r = check_array("r", r, owner=owner, finite=False)
    for name, value in (("c", c), ("r", r)):
        if np.isnan(value).any():  # check_array reads None as NaN
            raise ValueError(f"{owner}: {name} must be numbers or +-inf, not NaN or None.")
    try:
        np.broadcast_shapes(c.shape, r.shape)
    except ValueError:
        raise ValueError(
            f"{owner}: c and r must broadcast together; got shapes {c.shape} and {r.shape}."
        ) from None
    # This form (equal to c^+ - (c - r)^+) is exact in both regimes and stays in the bounds.
    # At c = -inf both terms are -inf; the limit is c^+ - (c - r)^+ = 0 - 0 = 0.
    with np.errstate(invalid="ignore"):
        rho = np.minimum(r, c) - np.minimum(c, 0.0)
    return np.where(np.isneginf(c), 0.0, rho)


def discounted_steps(gamma: float, horizon: int | None) -> float:
    """sum_{t < horizon} gamma^t, or 1 / (1 - gamma) for an unbounded episode (horizon None).

    The caller has checked gamma in [0, 1] (below 1 without a horizon) and horizon >= 0.

    Examples
    --------
    >>> discounted_steps(0.5, None), discounted_steps(0.5, 2), discounted_steps(1.0, 3)
    (2.0, 1.5, 3.0)
    """
    if horizon is None:
        return 1 / (1 - gamma)
    return float(horizon) if gamma == 1.0 else (1 - gamma**horizon) / (1 - gamma)


def check_grid(grid: object, *, owner: str) -> BudgetGrid:
    """Return ``grid`` if it is a :class:`BudgetGrid`, else raise ``TypeError`` naming ``grid``."""
    if not isinstance(grid, BudgetGrid):
        raise TypeError(f"{owner}: grid must be a BudgetGrid; got {type(grid).__name__}.")
    return grid


@dataclass(frozen=True)
class BudgetGrid:
    """K equally spaced budget nodes c_k = c_lo + k * delta on [c_lo, c_hi].

    Budgets outside the interval are clamped to it; this is exact when the interval contains
    [min(Z_min, 0), max(Z_max, 0)] (see :meth:`from_reward_bounds`) and an approximation otherwise.

    Parameters
    ----------
    c_lo, c_hi
        Finite ends, c_lo < c_hi.
    K
        Number of nodes, at least 2 and at most ``MAX_NODES = 10**7``.

    Raises
    ------
    ValueError
        If the ends are not finite and ordered or K is out of range.

    Examples
    --------
    >>> grid = BudgetGrid(-1.0, 1.0, 5)
    >>> grid.nodes.tolist(), float(grid.interp(grid.nodes ** 2, 0.25))
    ([-1.0, -0.5, 0.0, 0.5, 1.0], 0.125)
    """

    c_lo: float
    c_hi: float
    K: int

    def __post_init__(self) -> None:
        lo = check_in_interval("c_lo", self.c_lo, owner="BudgetGrid")
        hi = check_in_interval("c_hi", self.c_hi, owner="BudgetGrid")
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(
                f"BudgetGrid: c_lo and c_hi must be finite with c_lo < c_hi; got {lo!r}, {hi!r}."
            )
        K = check_positive_int("K", self.K, minimum=2, maximum=MAX_NODES, owner="BudgetGrid")
        object.__setattr__(self, "c_lo", lo)
        object.__setattr__(self, "c_hi", hi)
        object.__setattr__(self, "K", K)

    @classmethod
    def from_reward_bounds(
        cls, r_min: float, r_max: float, gamma: float, K: int, horizon: int | None = None
    ) -> BudgetGrid:
        """The grid on [min(Z_min, 0), max(Z_max, 0)] of the returns Z: clamping is exact.

        Z_min and Z_max are r_min and r_max times the discounted number of steps: 1 / (1 - gamma)
        for an unbounded episode, sum_{t < horizon} gamma^t when every episode ends within
        ``horizon`` steps (then the grid is that much finer for the same K, and gamma may be 1).

        Parameters
        ----------
        r_min, r_max
            Bounds of the per-step reward, r_min <= r_max.
        gamma
            Discount factor, in [0, 1), or in [0, 1] with a ``horizon``.
        K
            Number of nodes, at least 2.
        horizon
            The most steps an episode can last, or None: for a model,
            :meth:`TabularMDP.max_steps() <icml26.cvar_rl.TabularMDP.max_steps>`.

        Returns
        -------
        BudgetGrid

        Raises
        ------
        ValueError
            If r_min > r_max, gamma is out of range, horizon < 1 or the interval is empty.

        Examples
        --------
        >>> BudgetGrid.from_reward_bounds(-1.0, 2.0, 0.5, 7)
        BudgetGrid(c_lo=-2.0, c_hi=4.0, K=7)
        >>> BudgetGrid.from_reward_bounds(0.0, 1.0, 1.0, 5, horizon=4)  # returns in [0, 4]
        BudgetGrid(c_lo=0.0, c_hi=4.0, K=5)
        """
        owner = "BudgetGrid"
        gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, owner=owner)
        r_max = check_in_interval("r_max", r_max, owner=owner)
        r_min = check_in_interval("r_min", r_min, high=r_max, owner=owner)
        if horizon is not None:
            horizon = check_positive_int("horizon", horizon, owner=owner, maximum=10**6)
        elif gamma == 1.0:
            raise ValueError(
                f"{owner}: gamma = 1 needs a horizon (the most steps an episode lasts, e.g. "
                "mdp.max_steps()): without one the undiscounted returns are unbounded."
            )
        steps = discounted_steps(gamma, horizon)
        return cls(min(r_min * steps, 0.0), max(r_max * steps, 0.0), K)

    @property
    def delta(self) -> float:
        """The node spacing (c_hi - c_lo) / (K - 1)."""
        return (self.c_hi - self.c_lo) / (self.K - 1)

    @property
    def nodes(self) -> np.ndarray:
        """The K budget nodes."""
        return np.linspace(self.c_lo, self.c_hi, self.K)

    def weights(self, c: Any) -> tuple[np.ndarray, np.ndarray]:
        """Linear-interpolation indices and weights of the clamped budgets ``c``.

        Returns
        -------
        i0, w
            Value at c = (1 - w) * values[i0] + w * values[i0 + 1], with 0 <= i0 <= K - 2.

        Raises
        ------
        TypeError, ValueError
            If ``c`` is not numeric or holds NaN.
        """
        c = check_array("c", c, owner="BudgetGrid", finite=False)  # +-inf: clamped to an end
        if np.isnan(c).any():
            raise ValueError("BudgetGrid: c must not hold NaN (no budget node is nearest to it).")
        x = (np.clip(c, self.c_lo, self.c_hi) - self.c_lo) / self.delta
        i0 = np.minimum(np.floor(x).astype(np.int64), self.K - 2)
        return i0, x - i0

    def nearest(self, c: Any) -> np.ndarray:
        """Index of the node nearest to each clamped budget in ``c``."""
        i0, w = self.weights(c)
        return i0 + (w >= 0.5)

    def interp(self, values: Any, c: Any) -> np.ndarray:
        """Piecewise-linear interpolation of node ``values`` (..., K) at the budgets ``c``.

        Returns an array of shape ``values.shape[:-1] + c.shape``.

        Raises
        ------
        TypeError, ValueError
            If ``values`` does not end in an axis of length K, or ``c`` holds NaN.
        """
        values = check_array("values", values, owner="BudgetGrid.interp", finite=False)
        if values.ndim == 0 or values.shape[-1] != self.K:
            raise ValueError(
                f"BudgetGrid.interp: values must have shape (..., {self.K}); got {values.shape}."
            )
        i0, w = self.weights(c)
        return values[..., i0] * (1 - w) + values[..., i0 + 1] * w
