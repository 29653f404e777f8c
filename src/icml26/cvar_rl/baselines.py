"""Baselines: risk-neutral VI, the sparse Bäuerle–Ott augmented VI, and Chow et al.'s CVaR VI.

* Risk-neutral VI: V(s) = max_a sum_s' P (r + gamma V(s')).
* Bäuerle & Ott (2011): W(s, c) = inf_pi E[(c - Z)^+] satisfies the sparse operator
  (T W)(s, c) = min_a sum_s' P gamma W(s', (c - r) / gamma), with no per-step term. On bounded
  functions its fixed point is W = 0 (``init="zero"``); the right W = c^+ - V* is only found from
  W_0 = c^+ with W(terminal, c) = c^+ and slope-1 extrapolation above the grid (``init="cplus"``).
* Chow et al. (2015): V(s, y) = CVaR_y of the return, with y in (0, 1] on a grid and y V(s, y)
  interpolated linearly; V(s, y) = max_a (1/y) min_{sum P z = y, 0 <= z <= 1} sum_s' P(s')
  [z r + gamma z V(s', z)]. Each term is convex piecewise linear in z, so the inner minimum fills
  the segments of all successors in increasing order of slope. Its policy carries y_{t+1} = z_{s'}.
  It is approximate for the static CVaR (Hau et al., 2023).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

import numpy as np
import scipy.sparse as sp

from icml26.core import check_array, check_in_interval, check_one_of, check_positive_int
from icml26.cvar_rl.budget import BudgetGrid, check_grid
from icml26.cvar_rl.mdp import MAX_TABLE, TabularMDP, check_mdp, next_budget
from icml26.cvar_rl.policies import (
    MAX_EPISODES,
    AbstractPolicy,
    batch_floats,
    state_ids,
)

__all__ = ["ChowPolicy", "ChowSolution", "bauerle_ott_vi", "chow_cvar_vi", "risk_neutral_vi"]

MAX_ITER = 10**6  # sweeps of the grid value iterations (each costs S * A * K)
MAX_ITER_RISK_NEUTRAL = 10**8  # sweeps of risk-neutral value iteration (each costs S * A * S)


def risk_neutral_vi(
    mdp: TabularMDP, tol: float = 1e-10, max_iter: int = 100_000
) -> tuple[np.ndarray, np.ndarray]:
    """Risk-neutral value iteration from V = 0.

    Parameters
    ----------
    mdp
        The model.
    tol, max_iter
        Stop when ||V_{n+1} - V_n||_inf < tol, or after ``max_iter`` (at most 10**8) sweeps.

    Returns
    -------
    V, Q
        Optimal values (S,) and action values (S, A); zero at terminal states.

    Raises
    ------
    TypeError, ValueError
        If ``mdp`` is not a TabularMDP or ``tol``/``max_iter`` is out of range.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> V, Q = risk_neutral_vi(risky_chain())
    >>> round(float(V[0]), 6), int(Q[3].argmax())
    (2.972, 1)
    """
    owner = "risk_neutral_vi"
    mdp = check_mdp(mdp, owner=owner)
    tol = check_in_interval("tol", tol, low=0.0, closed="neither", owner=owner)
    max_iter = check_positive_int("max_iter", max_iter, owner=owner, maximum=MAX_ITER_RISK_NEUTRAL)
    expected_r = np.einsum("sat,sat->sa", mdp.P, mdp.R)
    V = np.zeros(mdp.n_states)
    for _ in range(max_iter):
        Q = expected_r + mdp.gamma * mdp.P @ V
        Q[mdp.terminal] = 0.0
        V_new = Q.max(axis=1)
        done = np.max(np.abs(V_new - V)) < tol
        V = V_new
        if done:
            break
    return V, Q


def bauerle_ott_vi(
    mdp: TabularMDP,
    grid: BudgetGrid,
    init: str = "cplus",
    tol: float = 1e-8,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Value iteration with the sparse Bäuerle–Ott operator for W(s, c) = inf E[(c - Z)^+].

    Parameters
    ----------
    mdp, grid
        The model and the budget grid.
    init
        ``"zero"``: W_0 = 0 on all states, terminal ones included (absorbing, reward 0), with
        clamping, i.e. the operator on bounded functions. ``"cplus"``: W_0 = c^+, W(terminal, c) =
        c^+ and slope-1 extrapolation above c_hi (the admissible unbounded class).
    tol, max_iter
        Stopping rule, as in :func:`augmented_value_iteration` (at most 10**6 sweeps).

    Returns
    -------
    numpy.ndarray
        W at the nodes, shape (S, K).

    Raises
    ------
    TypeError, ValueError
        If ``mdp``/``grid`` has the wrong type or a setting is out of range.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 101)
    >>> float(np.abs(bauerle_ott_vi(mdp, grid, init="zero")).max())
    0.0
    """
    owner = "bauerle_ott_vi"
    mdp, grid = check_mdp(mdp, owner=owner), check_grid(grid, owner=owner)
    check_one_of("init", init, ("zero", "cplus"), owner=owner)
    tol = check_in_interval("tol", tol, low=0.0, closed="neither", owner=owner)
    max_iter = check_positive_int("max_iter", max_iter, owner=owner, maximum=MAX_ITER)
    exact_class = init == "cplus"
    live = mdp.P > 0
    if exact_class:
        live &= ~mdp.terminal[:, None, None]
    s, a, s_next = np.nonzero(live)
    c_next = next_budget(grid.nodes[None, :], mdp.R[live][:, None], mdp.gamma)  # (M, K)
    i0, w = grid.weights(c_next)
    slope_one = np.maximum(c_next - grid.c_hi, 0.0) if exact_class else 0.0
    n_sa = mdp.n_states * mdp.n_actions
    aggregate = sp.csr_matrix(
        (mdp.P[live], (s * mdp.n_actions + a, np.arange(len(s)))), shape=(n_sa, len(s))
    )
    c_plus = np.maximum(grid.nodes, 0.0)
    W = np.tile(c_plus, (mdp.n_states, 1)) if exact_class else np.zeros((mdp.n_states, grid.K))
    rows = s_next[:, None]
    for _ in range(max_iter):
        W_next = W[rows, i0] * (1 - w) + W[rows, i0 + 1] * w + slope_one  # (M, K)
        Q = (aggregate @ (mdp.gamma * W_next)).reshape(mdp.n_states, mdp.n_actions, grid.K)
        W_new = Q.min(axis=1)
        if exact_class:
            W_new[mdp.terminal] = c_plus
        done = np.max(np.abs(W_new - W)) < tol
        W = W_new
        if done:
            break
    return W


@dataclass(frozen=True)
class ChowSolution:
    """Result of :func:`chow_cvar_vi`: V[s, j] = CVaR_{y_j} estimate, and the inner solutions.

    Attributes
    ----------
    V
        Values (S, m) at the confidence levels ``y``.
    y
        The increasing confidence grid (m,), with y[-1] = 1.
    n_actions
        Number of actions.
    slope, cum_weight, cum_cost, owner, width, weight
        Per (s, a) row (S*A, L): the successor segments sorted by slope, their cumulative
        constraint weight and cost, their successor state, z-width and weight P(s') * width.
    iterations
        Number of sweeps.
    """

    V: np.ndarray
    y: np.ndarray
    n_actions: int
    slope: np.ndarray
    cum_weight: np.ndarray
    cum_cost: np.ndarray
    owner: np.ndarray
    width: np.ndarray
    weight: np.ndarray
    iterations: int

    def __post_init__(self) -> None:
        who = "ChowSolution"
        V = check_array("V", self.V, owner=who, ndim=2)
        y = check_array("y", self.y, owner=who, shape=(V.shape[1],))
        if y.size == 0 or y[0] <= 0 or y[-1] != 1.0 or np.any(np.diff(y) <= 0):
            raise ValueError(f"{who}: y must be increasing in (0, 1] and end at 1; got {y!r}.")
        n_actions = check_positive_int("n_actions", self.n_actions, owner=who)
        slope = check_array("slope", self.slope, owner=who, ndim=2, finite=False)
        if slope.shape[0] != V.shape[0] * n_actions or slope.shape[1] < 1 or np.isnan(slope).any():
            raise ValueError(
                f"{who}: slope must be a NaN-free (S * n_actions, L) array with S = {V.shape[0]}, "
                f"n_actions = {n_actions}; got shape {slope.shape}."
            )
        for name in ("cum_weight", "cum_cost", "width", "weight"):
            object.__setattr__(
                self, name, check_array(name, getattr(self, name), owner=who, shape=slope.shape)
            )
        owners = check_array("owner", self.owner, owner=who, shape=slope.shape)
        if np.any(owners != np.round(owners)) or owners.min() < -1 or owners.max() >= V.shape[0]:
            raise ValueError(f"{who}: owner must hold state ids in [-1, {V.shape[0]}).")
        iterations = check_positive_int("iterations", self.iterations, minimum=0, owner=who)
        for name, value in (("V", V), ("y", y), ("slope", slope), ("owner", owners.astype(int))):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "n_actions", n_actions)
        object.__setattr__(self, "iterations", iterations)

    def q_values(self, rows: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(1/y) min_z sum P g(z) for (s, a) ``rows`` (n,) at confidence levels ``y`` (n,).

        Raises
        ------
        TypeError, ValueError
            If ``rows`` are not (s, a) row ids or ``y`` not one level in (0, 1] per row.
        """
        rows, y = self._check_rows(rows, y, "ChowSolution.q_values")
        return _chow_q(self.cum_weight, self.cum_cost, self.slope, rows, y)

    def next_level(self, rows: np.ndarray, y: np.ndarray, next_states: np.ndarray) -> np.ndarray:
        """z_{s'}: the confidence level the inner minimum gives to the realised successor.

        Raises
        ------
        TypeError, ValueError
            As :meth:`q_values`, or if ``next_states`` are not one state id per row.
        """
        owner = "ChowSolution.next_level"
        rows, y = self._check_rows(rows, y, owner)
        next_states = state_ids("next_states", next_states, self.V.shape[0], owner=owner, n=y.size)
        return self._next_level(rows, y, next_states)

    def _check_rows(self, rows: object, y: object, owner: str) -> tuple[np.ndarray, np.ndarray]:
        rows = state_ids("rows", rows, self.slope.shape[0], owner=owner)
        y = batch_floats("y", y, owner=owner, n=rows.size)
        if np.any(y <= 0) or np.any(y > 1):
            raise ValueError(f"{owner}: y must hold confidence levels in (0, 1].")
        return rows, y

    def _next_level(self, rows: np.ndarray, y: np.ndarray, next_states: np.ndarray) -> np.ndarray:
        W, weight = self.cum_weight[rows], self.weight[rows]
        filled = np.clip((y[:, None] - (W - weight)) / np.maximum(weight, 1e-300), 0.0, 1.0)
        mine = self.owner[rows] == next_states[:, None]
        return (filled * self.width[rows] * mine).sum(axis=1)


def _distinct(*columns: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of equal-length 1-D ``columns``, column by column, and the inverse index.

    ``out[i][inverse]`` is ``columns[i]``. Rows are coded column by column with 1-D
    ``np.unique`` (a sort of one int or float array each), far cheaper than ``np.unique(axis=0)``.
    """
    code = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        values, inverse = np.unique(column, return_inverse=True)
        _, code = np.unique(code * values.size + inverse.reshape(-1), return_inverse=True)
        code = code.reshape(-1)
    first = np.zeros(int(code.max(initial=-1)) + 1, dtype=np.int64)
    first[code[::-1]] = np.arange(code.size - 1, -1, -1)  # a row of each code (its first)
    return [np.asarray(c)[first] for c in columns], code


def _chow_q(
    cum_weight: np.ndarray, cum_cost: np.ndarray, slope: np.ndarray, rows: np.ndarray, y: np.ndarray
) -> np.ndarray:
    """The inner minimum of Chow et al.'s operator, (1/y) min_z sum P g(z), per (row, y)."""
    W, C, slope = cum_weight[rows], cum_cost[rows], slope[rows]
    k = np.minimum((y[:, None] - 1e-15 > W).sum(axis=1), W.shape[1] - 1)
    idx = np.arange(len(rows))
    W_before = np.where(k > 0, W[idx, k - 1], 0.0)
    C_before = np.where(k > 0, C[idx, k - 1], 0.0)
    return (C_before + slope[idx, k] * (y - W_before)) / y


def chow_cvar_vi(
    mdp: TabularMDP, y_grid: Any = None, tol: float = 1e-8, max_iter: int = 10_000
) -> ChowSolution:
    """Chow et al. (2015) CVaR value iteration on a confidence grid, with y V(s, y) interpolated.

    Parameters
    ----------
    mdp
        The model.
    y_grid
        Increasing confidence levels in (0, 1] ending at 1; default 31 log-spaced from 1e-3.
    tol, max_iter
        Stopping rule on ||V_{n+1} - V_n||_inf.

    Returns
    -------
    ChowSolution

    Raises
    ------
    TypeError
        If ``mdp`` is not a TabularMDP.
    ValueError
        If ``y_grid`` is not increasing in (0, 1] with last entry 1, the segment tables would
        exceed 10**7 entries, or a setting is out of range (``max_iter`` at most 10**6).

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> sol = chow_cvar_vi(risky_chain())
    >>> round(float(sol.V[0, -1]), 6)  # y = 1: the risk-neutral value
    2.972
    """
    owner_name = "chow_cvar_vi"
    mdp = check_mdp(mdp, owner=owner_name)
    if y_grid is None:
        y = np.geomspace(1e-3, 1.0, 31)
    else:
        y = check_array("y_grid", y_grid, owner="chow_cvar_vi", ndim=1)
    if y.size == 0 or y[0] <= 0 or y[-1] != 1.0 or np.any(np.diff(y) <= 0):
        raise ValueError(
            f"chow_cvar_vi: y_grid must be increasing in (0, 1] and end at 1; got {y!r}."
        )
    tol = check_in_interval("tol", tol, low=0.0, closed="neither", owner="chow_cvar_vi")
    max_iter = check_positive_int("max_iter", max_iter, owner=owner_name, maximum=MAX_ITER)
    sa, s_next, prob, reward = mdp.transitions()
    m, n_sa = len(y), mdp.n_states * mdp.n_actions
    x = np.concatenate([[0.0], y])  # z nodes, with z V(s', z) = 0 at z = 0
    width = np.diff(x)  # (m,)
    # Slot of each transition inside its (s, a) row: rows are sorted by sa.
    first = np.searchsorted(sa, sa)
    slot = np.arange(len(sa)) - first
    L = (int(slot.max(initial=0)) + 1) * m
    if n_sa * L > MAX_TABLE:
        raise ValueError(
            f"{owner_name}: y_grid of {m} levels on this mdp needs (S * A, L) = ({n_sa}, {L}) "
            f"segment tables, more than {MAX_TABLE} entries."
        )
    cols = (slot[:, None] * m + np.arange(m)).ravel()
    rows = np.repeat(sa, m)
    owner = np.full((n_sa, L), -1)
    owner[rows, cols] = np.repeat(s_next, m)
    seg_width = np.zeros((n_sa, L))
    seg_width[rows, cols] = np.tile(width, len(sa))
    weight = np.zeros((n_sa, L))
    weight[rows, cols] = (prob[:, None] * width).ravel()
    V = np.zeros((mdp.n_states, m))
    iterations = 0
    while True:
        zV = np.concatenate([np.zeros((mdp.n_states, 1)), y * V], axis=1)  # (S, m + 1)
        g = x[None, :] * reward[:, None] + mdp.gamma * zV[s_next]  # (M, m + 1)
        slope = np.full((n_sa, L), np.inf)
        slope[rows, cols] = (np.diff(g, axis=1) / width).ravel()
        order = np.argsort(slope, axis=1, kind="stable")
        sorted_slope = np.take_along_axis(slope, order, axis=1)
        sorted_weight = np.take_along_axis(weight, order, axis=1)
        cost = np.where(np.isfinite(sorted_slope), sorted_slope, 0.0) * sorted_weight
        cum_weight, cum_cost = np.cumsum(sorted_weight, axis=1), np.cumsum(cost, axis=1)
        all_rows = np.repeat(np.arange(n_sa), m)
        Q = _chow_q(cum_weight, cum_cost, sorted_slope, all_rows, np.tile(y, n_sa))
        Q = Q.reshape(mdp.n_states, mdp.n_actions, m)
        Q[mdp.terminal] = 0.0
        V_new = Q.max(axis=1)
        residual = np.max(np.abs(V_new - V))
        V, iterations = V_new, iterations + 1
        if residual < tol or iterations >= max_iter:
            return ChowSolution(
                V,
                y,
                mdp.n_actions,
                sorted_slope,
                cum_weight,
                cum_cost,
                np.take_along_axis(owner, order, axis=1),
                np.take_along_axis(seg_width, order, axis=1),
                sorted_weight,
                iterations,
            )


@final
class ChowPolicy(AbstractPolicy):
    """Chow et al.'s greedy policy: start at y_0 = alpha, act greedily in (s, y), y <- z_{s'}.

    Levels are clamped to [y_1, 1]. The memory update needs the next state, so call
    ``observe(reward, next_state)``.

    Parameters
    ----------
    solution
        The output of :func:`chow_cvar_vi`.
    alpha
        Tail level in (0, 1].

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> pi = ChowPolicy(chow_cvar_vi(risky_chain()), alpha=1.0)
    >>> pi.reset(); pi.act(3)
    1
    """

    def __init__(self, solution: ChowSolution, alpha: float) -> None:
        if not isinstance(solution, ChowSolution):
            raise TypeError(
                f"ChowPolicy: solution must be a ChowSolution; got {type(solution).__name__}."
            )
        self.solution = solution
        self.alpha = check_in_interval(
            "alpha", alpha, low=0.0, high=1.0, closed="right", owner="ChowPolicy"
        )

    def initial_memory(self, n: int) -> np.ndarray:
        """Every episode starts at y = alpha."""
        n = check_positive_int("n", n, minimum=0, maximum=MAX_EPISODES, owner="ChowPolicy")
        return np.full(n, max(self.alpha, self.solution.y[0]))

    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """argmax_a of the inner minimum at (s, y)."""
        owner = "ChowPolicy.act_batch"
        states = state_ids("states", states, self.solution.V.shape[0], owner=owner)
        memory = self._levels(memory, states.size, owner)
        A = self.solution.n_actions
        sol = self.solution
        # Episodes share few distinct (state, level) pairs: compute each pair once.
        (states, memory), inverse = _distinct(states, memory)
        q = [_chow_q(sol.cum_weight, sol.cum_cost, sol.slope, states * A + a, memory)
             for a in range(A)]  # fmt: skip
        return np.argmax(np.stack(q, axis=1), axis=1)[inverse]

    def update_memory(self, memory, states, actions, rewards, next_states) -> np.ndarray:
        """y <- z_{s'} of the chosen action's inner minimum, clamped to [y_1, 1]."""
        owner = "ChowPolicy.update_memory"
        n_states, A = self.solution.V.shape[0], self.solution.n_actions
        states = state_ids("states", states, n_states, owner=owner)
        memory = self._levels(memory, states.size, owner)
        actions = state_ids("actions", actions, A, owner=owner, n=states.size)
        next_states = state_ids("next_states", next_states, n_states, owner=owner, n=states.size)
        (rows, memory, next_states), inverse = _distinct(states * A + actions, memory, next_states)
        z = self.solution._next_level(rows, memory, next_states)
        return np.clip(z, self.solution.y[0], 1.0)[inverse]

    @staticmethod
    def _levels(memory: object, n: int, owner: str) -> np.ndarray:
        memory = batch_floats("memory", memory, owner=owner, n=n)
        if np.any(memory <= 0) or np.any(memory > 1):
            raise ValueError(f"{owner}: memory must hold confidence levels in (0, 1].")
        return memory
