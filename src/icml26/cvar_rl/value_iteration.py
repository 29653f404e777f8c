"""Risk-averse value iteration with the redistributed augmented Bellman operator (spec §2.4).

(T V)(s, c) = max_a sum_s' P(s'|s,a) [rho(c, r) + gamma V(s', (c - r) / gamma)], on a budget grid
with linear interpolation (non-expansive, so the projected operator is still a gamma-contraction).
gamma = 1 (undiscounted) is allowed on a model whose episodes all end within H steps: the
operator is then no contraction, but V_n is final after H sweeps (see
:func:`augmented_value_iteration`).
The static CVaR is read off the start state's values:
CVaR*_alpha = max_b b - (b^+ - V(s0, b)) / alpha, within the discretisation bound of
:func:`cvar_error_bound` when clamping to the grid is exact.

Ties. Q*(s, c, .) often has several maximisers: once the budget is exhausted (c below every
return still possible) every action has the same value, and ``argmax`` alone would repeat action 0
forever. The solution therefore also carries a lexicographic secondary value: among the actions
within ``tie_tol`` of max_a Q*(s, c, a) (the set A*(s, c)), prefer the largest expected discounted
return of the remaining episode, itself played this way:

    U(s, c) = max_{a in A*(s, c)} Q_mean(s, c, a),
    Q_mean(s, c, a) = sum_s' P(s'|s,a) [r + gamma U(s', (c - r) / gamma)],

a gamma-contraction once A* is fixed, solved by value iteration on the same grid. The executed
policy is still optimal for the CVaR (it only chooses inside A*), and among such policies it has
the highest mean return; when the budget is exhausted from the start (b* at or below every
return) it is the risk-neutral optimal policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from icml26.core import check_array, check_in_interval, check_one_of, check_positive_int
from icml26.cvar_rl.baselines import MAX_ITER, risk_neutral_vi
from icml26.cvar_rl.budget import BudgetGrid, check_grid, discounted_steps, redistributed_reward
from icml26.cvar_rl.mdp import MAX_HORIZON, TabularMDP, check_mdp, next_budget
from icml26.cvar_rl.policies import AugmentedGreedyPolicy

__all__ = [
    "AugmentedSolution",
    "CVaREstimate",
    "augmented_bellman",
    "augmented_value_iteration",
    "cvar_error_bound",
    "cvar_from_values",
]


def cvar_error_bound(
    grid: BudgetGrid,
    gamma: float,
    alpha: float,
    residual: float = 0.0,
    horizon: int | None = None,
) -> float:
    """Bound on |CVaR from the grid solution - CVaR*_alpha| when clamping to the grid is exact.

    bound = G (delta / 2 + residual) / alpha     (interpolation error of V, spec §2.4, and
                                                   value iteration stopped early)
          + (1 + 2 / alpha) delta / 2            (b maximised over nodes only),

    G = gamma / (1 - gamma), or sum_{t=1}^{H-1} gamma^t when every episode ends within H =
    ``horizon`` steps. V*(s, .) is 1-Lipschitz, so linear interpolation errs by at most delta / 2
    at each of the (discounted) steps after the first, where the successors' values are read off
    the grid; the errors of a stopped iteration shrink by gamma per sweep and stop after H
    sweeps; the objective b - (b^+ - V(s0, b)) / alpha is (1 + 2 / alpha)-Lipschitz in b.

    Parameters
    ----------
    grid
        The budget grid (spacing delta).
    gamma
        Discount factor in [0, 1]; 1 needs a ``horizon``.
    alpha
        Tail level in (0, 1].
    residual
        Last sup-norm change of value iteration (0 for the exact grid fixed point).
    horizon
        The most steps an episode lasts (:meth:`TabularMDP.max_steps()
        <icml26.cvar_rl.TabularMDP.max_steps>`), or None.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If gamma, alpha, residual or horizon is out of range, or gamma = 1 without a horizon.

    Examples
    --------
    >>> round(cvar_error_bound(BudgetGrid(0.0, 20.0, 801), 0.95, 0.3), 4)
    0.8875
    >>> round(cvar_error_bound(BudgetGrid(0.0, 4.0, 81), 1.0, 0.3, horizon=4), 4)  # G = 3
    0.4417
    """
    owner = "cvar_error_bound"
    grid = check_grid(grid, owner=owner)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, owner=owner)
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    residual = check_in_interval("residual", residual, low=0.0, owner=owner)
    growth = _error_growth(gamma, horizon, owner)
    delta = grid.delta
    return growth * (delta / 2 + residual) / alpha + (1 + 2 / alpha) * delta / 2


def _error_growth(gamma: float, horizon: int | None, owner: str) -> float:
    """G = sum_{t >= 1} gamma^t over the steps an episode can take: gamma / (1 - gamma) or, with
    a horizon H, sum_{t=1}^{H-1} gamma^t (which also allows gamma = 1)."""
    if horizon is None:
        if gamma == 1.0:
            raise ValueError(
                f"{owner}: gamma = 1 needs a horizon (the most steps an episode lasts): "
                "undiscounted errors add up over every step, so without one they are unbounded."
            )
        return gamma / (1 - gamma)
    horizon = check_positive_int("horizon", horizon, owner=owner, maximum=MAX_HORIZON)
    return gamma * discounted_steps(gamma, horizon - 1)


@dataclass(frozen=True)
class CVaREstimate:
    """The static CVaR read off a grid solution, with its discretisation error bound.

    Attributes
    ----------
    value
        max over nodes b of b - (b^+ - V(s, b)) / alpha (at ``b_star``).
    b_star
        The initial budget that attains it (ties: the largest expected return, see the module).
    error_bound
        :func:`cvar_error_bound`: |value - CVaR*| <= error_bound when ``clamping_exact``.
    clamping_exact
        Whether the grid covers [min(Z_min, 0), max(Z_max, 0)] (else the bound is not proven).
    """

    value: float
    b_star: float
    error_bound: float
    clamping_exact: bool

    def __str__(self) -> str:
        proven = "" if self.clamping_exact else " (clamping not exact: bound not proven)"
        return f"{self.value:.6g} ± {self.error_bound:.3g}{proven} at b* = {self.b_star:.6g}"


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
    Q_mean
        Tie-break values Q_mean[s, k, a]: the expected discounted return of the remaining
        episode (see the module docstring), shape (S, K, A).
    gamma
        The discount factor.
    s0
        The model's start state.
    tie_tol
        Actions within ``tie_tol`` of max_a Q are tied: 2 gamma G residual, G as in
        :func:`cvar_error_bound` (two Q-values of equal actions differ by at most that), plus
        round-off.
    clamping_exact
        Whether the grid covers [min(Z_min, 0), max(Z_max, 0)] of the model.
    horizon
        The most steps an episode of the model lasts (``mdp.max_steps()``), or None; needed
        with gamma = 1, and it tightens the error bound.
    """

    V: np.ndarray
    Q: np.ndarray
    grid: BudgetGrid
    iterations: int
    residual: float
    Q_mean: np.ndarray
    gamma: float
    s0: int
    tie_tol: float
    clamping_exact: bool
    horizon: int | None = None

    def __post_init__(self) -> None:
        owner = "AugmentedSolution"
        grid = check_grid(self.grid, owner=owner)
        Q = check_array("Q", self.Q, owner=owner, ndim=3)
        if min(Q.shape) < 1 or Q.shape[1] != grid.K:
            raise ValueError(f"{owner}: Q must have shape (S, {grid.K}, A); got {Q.shape}.")
        V = check_array("V", self.V, owner=owner, shape=Q.shape[:2])
        Q_mean = check_array("Q_mean", self.Q_mean, owner=owner, shape=Q.shape)
        check_positive_int("iterations", self.iterations, minimum=0, owner=owner)
        residual = check_in_interval("residual", self.residual, low=0.0, owner=owner)
        gamma = check_in_interval("gamma", self.gamma, low=0.0, high=1.0, owner=owner)
        _error_growth(gamma, self.horizon, owner)  # gamma = 1 needs a horizon
        s0 = check_positive_int("s0", self.s0, minimum=0, maximum=Q.shape[0] - 1, owner=owner)
        tie_tol = check_in_interval("tie_tol", self.tie_tol, low=0.0, owner=owner)
        if not isinstance(self.clamping_exact, bool | np.bool_):
            raise TypeError(f"{owner}: clamping_exact must be a bool; got {self.clamping_exact!r}.")
        for name, value in (("V", V), ("Q", Q), ("Q_mean", Q_mean), ("residual", residual),
                            ("gamma", gamma), ("s0", s0), ("tie_tol", tie_tol),
                            ("clamping_exact", bool(self.clamping_exact))):  # fmt: skip
            object.__setattr__(self, name, value)

    def cvar(self, alpha: float, state: int | None = None) -> CVaREstimate:
        """CVaR*_alpha of ``state`` (default s0) with its error bound and the budget b*.

        Among nodes within tie_tol / alpha of the best objective, b* is the one whose
        tie-broken policy has the largest expected return.

        Examples
        --------
        >>> from icml26.cvar_rl.mdp import risky_chain
        >>> mdp = risky_chain()
        >>> grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, K=2001)
        >>> print(augmented_value_iteration(mdp, grid).cvar(0.5))
        0.972 ± 0.211 at b* = 2.5
        """
        owner = "AugmentedSolution.cvar"
        alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
        n_states = self.V.shape[0]
        s = self.s0 if state is None else check_positive_int("state", state, minimum=0, owner=owner)
        if s >= n_states:
            raise ValueError(f"{owner}: state must be in [0, {n_states}); got {s!r}.")
        b = self.grid.nodes
        objective = b - (np.maximum(b, 0.0) - self.V[s]) / alpha
        near_best = objective >= objective.max() - self.tie_tol / alpha
        k = int(np.argmax(np.where(near_best, _tie_broken_mean(self)[s], -np.inf)))
        bound = cvar_error_bound(self.grid, self.gamma, alpha, self.residual, self.horizon)
        return CVaREstimate(float(objective[k]), float(b[k]), bound, self.clamping_exact)

    def policy(self, b: float) -> AugmentedGreedyPolicy:
        """The augmented greedy policy from budget ``b``, ties broken by ``Q_mean``.

        Raises
        ------
        ValueError
            If ``b`` is not a finite budget, or gamma = 0 (the budget update divides by gamma).
        """
        b = check_in_interval("b", b, owner="AugmentedSolution.policy")
        if self.gamma == 0:
            raise ValueError(
                "AugmentedSolution.policy(b): the budget recursion c <- (c - r) / gamma needs "
                "gamma > 0; this solution has gamma = 0."
            )
        return AugmentedGreedyPolicy(
            self.Q, self.grid, self.gamma, b, Q_mean=self.Q_mean, tie_tol=self.tie_tol
        )


def _tie_broken_mean(solution: AugmentedSolution) -> np.ndarray:
    """U[s, k] = max of Q_mean over the actions tied for max_a Q, shape (S, K)."""
    tied = solution.Q.max(axis=2, keepdims=True) - solution.tie_tol <= solution.Q
    return np.where(tied, solution.Q_mean, -np.inf).max(axis=2)


class _ProjectedOperator:
    """The augmented operator on a grid, with everything that does not depend on V precomputed."""

    def __init__(self, mdp: TabularMDP, grid: BudgetGrid, interp: str) -> None:
        check_one_of("interp", interp, ("linear", "nearest"), owner="augmented_value_iteration")
        sa, self.s_next, prob, reward = mdp.transitions()
        c = grid.nodes[None, :]  # (1, K)
        r = reward[:, None]  # (M, 1)
        self.rho = redistributed_reward(c, r)  # (M, K)
        self.reward = r
        self.i0, self.w = grid.weights(next_budget(c, r, mdp.gamma))  # (M, K) each
        if interp == "nearest":
            self.w = (self.w >= 0.5).astype(float)
        n_sa = mdp.n_states * mdp.n_actions
        # One sparse (S*A, M) matrix sums P-weighted transition rows into their (s, a).
        self.aggregate = sp.csr_matrix((prob, (sa, np.arange(len(sa)))), shape=(n_sa, len(sa)))
        self.shape = (mdp.n_states, mdp.n_actions, grid.K)
        self.gamma = mdp.gamma

    def backup(self, V: np.ndarray, immediate: np.ndarray) -> np.ndarray:
        """sum_s' P [immediate + gamma V(s', c')] for every (s, c_k, a), shape (S, K, A)."""
        rows = self.s_next[:, None]
        V_next = V[rows, self.i0] * (1 - self.w) + V[rows, self.i0 + 1] * self.w  # (M, K)
        Q = self.aggregate @ (immediate + self.gamma * V_next)  # (S*A, K)
        return Q.reshape(self.shape).transpose(0, 2, 1)  # (S, K, A)

    def q_values(self, V: np.ndarray) -> np.ndarray:
        """The redistributed action values: immediate reward rho(c, r)."""
        return self.backup(V, self.rho)

    def mean_values(self, U: np.ndarray) -> np.ndarray:
        """The tie-break action values: immediate reward r (the plain return)."""
        return self.backup(U, self.reward)


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
    TypeError
        If ``mdp`` is not a TabularMDP or ``grid`` not a BudgetGrid.
    ValueError
        If V is not a finite (S, K) array or interp is unknown.

    Examples
    --------
    >>> from icml26.cvar_rl.mdp import risky_chain
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 11)
    >>> augmented_bellman(mdp, grid, np.zeros((6, 11))).shape
    (6, 11)
    """
    owner = "augmented_bellman"
    mdp, grid = check_mdp(mdp, owner=owner), check_grid(grid, owner=owner)
    V = _check_values(V, (mdp.n_states, grid.K), owner)
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
        Maximum number of iterations, at most ``MAX_ITER = 10**6``.
    interp
        ``"linear"`` (default) or ``"nearest"``.

    Returns
    -------
    AugmentedSolution
        V[S, K], Q[S, K, A], the iteration count and the last residual, and the tie-break
        values Q_mean[S, K, A] (a second value iteration, see the module docstring).

    Notes
    -----
    gamma = 1 is allowed: the model then ends every episode within H = ``mdp.max_steps()``
    steps (:class:`TabularMDP` refuses it otherwise). On such a model, for any gamma, the values
    of a state with at most d steps left are final after d sweeps, so V_H is the grid fixed
    point and the iteration stops after H + 1 sweeps with residual 0; the error bound then uses
    H instead of 1 / (1 - gamma).

    Raises
    ------
    TypeError
        If ``mdp`` is not a TabularMDP or ``grid`` not a BudgetGrid.
    ValueError
        If tol <= 0, max_iter is out of range or interp is unknown.

    Examples
    --------
    >>> from icml26.cvar_rl.mdp import risky_chain
    >>> mdp = risky_chain()
    >>> grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, K=2001)
    >>> sol = augmented_value_iteration(mdp, grid)
    >>> estimate = sol.cvar(alpha=0.5)
    >>> round(estimate.value, 2), round(estimate.error_bound, 2)
    (0.97, 0.21)
    """
    owner = "augmented_value_iteration"
    mdp, grid = check_mdp(mdp, owner=owner), check_grid(grid, owner=owner)
    tol = check_in_interval("tol", tol, low=0.0, closed="neither", owner=owner)
    max_iter = check_positive_int("max_iter", max_iter, owner=owner, maximum=MAX_ITER)
    operator = _ProjectedOperator(mdp, grid, interp)
    V = np.zeros((mdp.n_states, grid.K))
    residual, iterations = np.inf, 0
    while iterations < max_iter and residual >= tol:
        Q = operator.q_values(V)
        V_new = Q.max(axis=2)
        residual = float(np.max(np.abs(V_new - V)))
        V, iterations = V_new, iterations + 1
    Q = operator.q_values(V)
    g, horizon = mdp.gamma, mdp.max_steps()
    # ||V - V_grid|| <= G residual, so equal actions' Q differ by <= twice g times it.
    growth = _error_growth(g, horizon, owner)
    tie_tol = 2 * g * growth * residual + 1e-12 * (1.0 + float(np.abs(Q).max()))
    tied = Q.max(axis=2, keepdims=True) - tie_tol <= Q  # A*(s, c_k), fixed from here on
    # Warm start at the risk-neutral values: exact where every action ties (exhausted budgets)
    # and where c >= Z_max, so only the budgets in between have to converge.
    V_rn, _ = risk_neutral_vi(mdp, tol=tol, max_iter=100 * max_iter)
    U, secondary_iterations = np.repeat(V_rn[:, None], grid.K, axis=1), 0
    for _ in range(max_iter):
        Q_mean = operator.mean_values(U)
        U_new = np.where(tied, Q_mean, -np.inf).max(axis=2)
        change = float(np.max(np.abs(U_new - U)))
        U, secondary_iterations = U_new, secondary_iterations + 1
        # Relative: U only ranks tied actions, and plain returns can be far larger than V.
        if change < tol * max(1.0, float(np.abs(U).max())):
            break
    Q_mean = operator.mean_values(U)
    r_min, r_max = mdp.reward_bounds()
    steps = discounted_steps(g, horizon)
    lo, hi = min(r_min * steps, 0.0), max(r_max * steps, 0.0)
    slack = 1e-12 * max(1.0, abs(lo), abs(hi))  # from_reward_bounds's own rounding
    exact = grid.c_lo <= lo + slack and grid.c_hi >= hi - slack
    return AugmentedSolution(
        V, Q, grid, iterations, residual, Q_mean, g, mdp.s0, tie_tol, bool(exact), horizon
    )


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
        The optimal static CVaR and the initial budget (the alpha-quantile) that attains it
        (the lowest such node; :meth:`AugmentedSolution.cvar` also breaks ties by the mean and
        reports the error bound).

    Raises
    ------
    ValueError
        If alpha is outside (0, 1] or V_s0 is not K finite values.

    Examples
    --------
    >>> grid = BudgetGrid(-1.0, 1.0, 3)
    >>> cvar_from_values([0.0, 0.0, 0.0], grid, alpha=0.5)
    (0.0, 0.0)
    """
    owner = "cvar_from_values"
    grid = check_grid(grid, owner=owner)
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    V_s0 = check_array("V_s0", V_s0, owner=owner, shape=(grid.K,))
    b = grid.nodes
    objective = b - (np.maximum(b, 0.0) - V_s0) / alpha
    k = int(np.argmax(objective))
    return float(objective[k]), float(b[k])
