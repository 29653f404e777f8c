"""Risk-averse value iteration with the redistributed augmented Bellman operator (spec §2.4).

(T V)(s, c) = max_a sum_s' P(s'|s,a) [rho(c, r) + gamma V(s', (c - r) / gamma)], on a budget grid
with linear interpolation (non-expansive, so the projected operator is still a gamma-contraction).
The static CVaR is read off the start state's values:
CVaR*_alpha = max_b b - (b^+ - V(s0, b)) / alpha.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from icml26.core import check_array, check_in_interval, check_one_of, check_positive_int
from icml26.cvar_rl.budget import BudgetGrid, redistributed_reward
from icml26.cvar_rl.mdp import TabularMDP

__all__ = [
    "AugmentedSolution",
    "augmented_bellman",
    "augmented_value_iteration",
    "cvar_from_values",
]


@dataclass(frozen=True)
class AugmentedSolution:
    """Result of :func:`augmented_value_iteration`.

    Attributes
    ----------
    V
        Values V[s, k] at the budget nodes, shape (S, K).
    Q
        Action values Q[s, k, a], shape (S, K, A).
    grid
        The budget grid.
    iterations
        Number of operator applications.
    residual
        Last sup-norm change ||V_{n+1} - V_n||.
    """

    V: np.ndarray
    Q: np.ndarray
    grid: BudgetGrid
    iterations: int
    residual: float


class _ProjectedOperator:
    """The augmented operator on a grid, with everything that does not depend on V precomputed."""

    def __init__(self, mdp: TabularMDP, grid: BudgetGrid, interp: str) -> None:
        check_one_of("interp", interp, ("linear", "nearest"), owner="augmented_value_iteration")
        sa, self.s_next, prob, reward = mdp.transitions()
        c = grid.nodes[None, :]  # (1, K)
        r = reward[:, None]  # (M, 1)
        self.rho = redistributed_reward(c, r)  # (M, K)
        self.i0, self.w = grid.weights((c - r) / mdp.gamma)  # (M, K) each
        if interp == "nearest":
            self.w = (self.w >= 0.5).astype(float)
        n_sa = mdp.n_states * mdp.n_actions
        # One sparse (S*A, M) matrix sums P-weighted transition rows into their (s, a).
        self.aggregate = sp.csr_matrix((prob, (sa, np.arange(len(sa)))), shape=(n_sa, len(sa)))
        self.shape = (mdp.n_states, mdp.n_actions, grid.K)
        self.gamma = mdp.gamma

    def q_values(self, V: np.ndarray) -> np.ndarray:
        rows = self.s_next[:, None]
        V_next = V[rows, self.i0] * (1 - self.w) + V[rows, self.i0 + 1] * self.w  # (M, K)
        Q = self.aggregate @ (self.rho + self.gamma * V_next)  # (S*A, K)
        return Q.reshape(self.shape).transpose(0, 2, 1)  # (S, K, A)


def _check_values(V: Any, shape: tuple[int, int], owner: str) -> np.ndarray:
    """``V`` as a finite float (S, K) array: rank and finiteness by core, (S, K) named here."""
    V = check_array("V", V, owner=owner, ndim=2)
    if V.shape != shape:
        raise ValueError(f"{owner}: V must have shape (S, K) = {shape}; got {V.shape}.")
    return V


def augmented_bellman(
    mdp: TabularMDP, grid: BudgetGrid, V: Any, *, interp: str = "linear"
) -> np.ndarray:
    """One application of the projected redistributed operator to node values ``V`` (S, K).

    Parameters
    ----------
    mdp, grid
        The model and the budget grid.
    V
        Values at the nodes, shape (S, K).
    interp
        ``"linear"`` or ``"nearest"`` interpolation of V at off-grid next budgets.

    Returns
    -------
    numpy.ndarray
        (T V)[s, k], shape (S, K); zero at terminal states.

    Raises
    ------
    ValueError
        If V is not a finite (S, K) array or interp is unknown.

    Example
    -------
    >>> from icml26.cvar_rl.mdp import risky_chain
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 11)
    >>> augmented_bellman(mdp, grid, np.zeros((6, 11))).shape
    (6, 11)
    """
    V = _check_values(V, (mdp.n_states, grid.K), "augmented_bellman")
    return _ProjectedOperator(mdp, grid, interp).q_values(V).max(axis=2)


def augmented_value_iteration(
    mdp: TabularMDP,
    grid: BudgetGrid,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    *,
    interp: str = "linear",
) -> AugmentedSolution:
    """Value iteration V_{n+1} = T V_n from V_0 = 0 on the budget grid (Algorithm A).

    Parameters
    ----------
    mdp
        The tabular model.
    grid
        The budget grid; :meth:`BudgetGrid.from_reward_bounds` makes clamping exact.
    tol
        Stop when ||V_{n+1} - V_n||_inf < tol.
    max_iter
        Maximum number of iterations.
    interp
        ``"linear"`` (default) or ``"nearest"``.

    Returns
    -------
    AugmentedSolution
        V[S, K], Q[S, K, A], the iteration count and the last residual.

    Raises
    ------
    ValueError
        If tol <= 0, max_iter < 1 or interp is unknown.

    Example
    -------
    >>> from icml26.cvar_rl.mdp import risky_chain
    >>> mdp = risky_chain()
    >>> grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, K=2001)
    >>> sol = augmented_value_iteration(mdp, grid)
    >>> cvar, b = cvar_from_values(sol.V[mdp.s0], grid, alpha=0.5)
    >>> round(cvar, 2)
    0.97
    """
    tol = check_in_interval(
        "tol", tol, low=0.0, closed="neither", owner="augmented_value_iteration"
    )
    max_iter = check_positive_int("max_iter", max_iter, owner="augmented_value_iteration")
    operator = _ProjectedOperator(mdp, grid, interp)
    V = np.zeros((mdp.n_states, grid.K))
    residual, iterations = np.inf, 0
    while iterations < max_iter and residual >= tol:
        Q = operator.q_values(V)
        V_new = Q.max(axis=2)
        residual = float(np.max(np.abs(V_new - V)))
        V, iterations = V_new, iterations + 1
    return AugmentedSolution(V, operator.q_values(V), grid, iterations, residual)


def cvar_from_values(V_s0: Any, grid: BudgetGrid, alpha: float) -> tuple[float, float]:
    """CVaR*_alpha = max over nodes b of b - (b^+ - V(s0, b)) / alpha, and the maximizing b.

    Parameters
    ----------
    V_s0
        The start state's values at the K budget nodes.
    grid
        Their budget grid.
    alpha
        Tail level in (0, 1]; alpha = 1 gives the mean.

    Returns
    -------
    cvar, b_star
        The optimal static CVaR and the initial budget (the alpha-quantile) that attains it.

    Raises
    ------
    ValueError
        If alpha is outside (0, 1] or V_s0 is not K finite values.

    Example
    -------
    >>> grid = BudgetGrid(-1.0, 1.0, 3)
    >>> cvar_from_values([0.0, 0.0, 0.0], grid, alpha=0.5)
    (0.0, 0.0)
    """
    alpha = check_in_interval(
        "alpha", alpha, low=0.0, high=1.0, closed="right", owner="cvar_from_values"
    )
    V_s0 = check_array("V_s0", V_s0, owner="cvar_from_values", shape=(grid.K,))
    b = grid.nodes
    objective = b - (np.maximum(b, 0.0) - V_s0) / alpha
    k = int(np.argmax(objective))
    return float(objective[k]), float(b[k])
