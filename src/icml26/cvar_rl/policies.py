"""Policies with an explicit per-episode memory, stepped one at a time or as a batch.

A policy keeps one float of memory per episode: the budget c for the augmented greedy policy
(c_{t+1} = (c_t - r_t) / gamma), the confidence level y for Chow et al.'s policy, nothing for a
Markov policy. The batch methods carry the memory explicitly so that rollouts and exact
return distributions can run many episodes at once; ``reset``/``act``/``observe`` wrap them for
one episode.
"""

from __future__ import annotations

import abc
from typing import Any, final

import numpy as np

from icml26.core import check_array, check_in_interval
from icml26.cvar_rl.budget import BudgetGrid

__all__ = ["AbstractPolicy", "AugmentedGreedyPolicy", "MarkovPolicy"]


class AbstractPolicy(abc.ABC):
    """A policy acting on (state, memory); subclasses implement the three batch methods."""

    @abc.abstractmethod
    def initial_memory(self, n: int) -> np.ndarray:
        """The memory of ``n`` fresh episodes, shape (n,)."""

    @abc.abstractmethod
    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """Actions for ``states`` (n,) with ``memory`` (n,)."""

    @abc.abstractmethod
    def update_memory(
        self,
        memory: np.ndarray,
        states: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_states: np.ndarray,
    ) -> np.ndarray:
        """The memory after the transitions (states, actions, rewards, next_states)."""

    def reset(self) -> None:
        """Start a new episode."""
        self._memory = self.initial_memory(1)
        self._last: tuple[int, int] | None = None

    def act(self, state: int) -> int:
        """The action in ``state`` for the current episode (call :meth:`reset` first)."""
        if not hasattr(self, "_memory"):
            raise RuntimeError(f"{type(self).__name__}: call reset() before act().")
        action = int(self.act_batch(np.array([state]), self._memory)[0])
        self._last = (int(state), action)
        return action

    def observe(self, reward: float, next_state: int = -1) -> None:
        """Record the reward (and next state, which Chow et al.'s policy needs) of the last act."""
        if getattr(self, "_last", None) is None:
            raise RuntimeError(f"{type(self).__name__}: call act() before observe().")
        state, action = self._last
        self._memory = self.update_memory(
            self._memory,
            np.array([state]),
            np.array([action]),
            np.array([float(reward)]),
            np.array([next_state]),
        )
        self._last = None

    @property
    def memory(self) -> float:
        """The current episode's memory (the budget c for :class:`AugmentedGreedyPolicy`)."""
        return float(self._memory[0])


@final
class MarkovPolicy(AbstractPolicy):
    """A deterministic Markov policy: ``actions[s]`` in state s, whatever the history.

    Parameters
    ----------
    actions
        One action per state, shape (S,).

    Example
    -------
    >>> pi = MarkovPolicy([1, 0]); pi.reset(); pi.act(0)
    1
    """

    def __init__(self, actions: Any) -> None:
        self.actions = check_array("actions", actions, owner="MarkovPolicy", ndim=1, dtype=np.int64)

    def initial_memory(self, n: int) -> np.ndarray:
        """No memory: zeros."""
        return np.zeros(n)

    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """``actions[states]``."""
        return self.actions[states]

    def update_memory(self, memory, states, actions, rewards, next_states) -> np.ndarray:
        """Unchanged."""
        return memory


@final
class AugmentedGreedyPolicy(AbstractPolicy):
    """Greedy in Q(s, c, a) with the budget c_0 = b, c_{t+1} = (c_t - r_t) / gamma (spec §2.2).

    Q (and Q_mean) are interpolated linearly at the exact (continuous) budget, clamped to the
    grid. Ties: among the actions within ``tie_tol`` of max_a Q, the one with the largest
    ``Q_mean`` (the expected return of the remaining episode, see
    :func:`augmented_value_iteration`); without ``Q_mean``, the lowest action index.
    :meth:`AugmentedSolution.policy` and :meth:`QLearningResult.policy` pass both.

    Parameters
    ----------
    Q
        Action values Q[s, k, a] on the grid, shape (S, K, A).
    grid
        The budget grid.
    gamma
        Discount factor of the MDP.
    b
        Initial budget, e.g. ``b_star`` from :meth:`AugmentedSolution.cvar`.
    Q_mean
        Tie-break values, shape (S, K, A); default none.
    tie_tol
        Actions within ``tie_tol`` of the best Q are tied (>= 0).

    Raises
    ------
    ValueError
        If Q or Q_mean is not a finite (S, K, A) array or a scalar is out of range.

    Example
    -------
    >>> from icml26.cvar_rl import risky_chain, BudgetGrid, augmented_value_iteration
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 2001)
    >>> pi = augmented_value_iteration(mdp, grid).policy(b=2.45)
    >>> pi.reset(); _ = pi.act(0); pi.observe(0.0); _ = pi.act(2); pi.observe(0.0); pi.act(3)
    1
    """

    def __init__(
        self,
        Q: Any,
        grid: BudgetGrid,
        gamma: float,
        b: float,
        *,
        Q_mean: Any = None,
        tie_tol: float = 0.0,
    ) -> None:
        owner = "AugmentedGreedyPolicy"
        self.Q = check_array("Q", Q, owner=owner, ndim=3)
        if self.Q.shape[1] != grid.K:
            raise ValueError(f"{owner}: Q must have shape (S, {grid.K}, A); got {self.Q.shape}.")
        self.Q_mean = None if Q_mean is None else check_array("Q_mean", Q_mean, owner=owner)
        if self.Q_mean is not None and self.Q_mean.shape != self.Q.shape:
            raise ValueError(
                f"{owner}: Q_mean must have the shape of Q {self.Q.shape}; got {self.Q_mean.shape}."
            )
        self.grid = grid
        self.gamma = check_in_interval(
            "gamma", gamma, low=0.0, high=1.0, closed="neither", owner=owner
        )
        self.b = check_in_interval("b", b, owner=owner)
        self.tie_tol = check_in_interval("tie_tol", tie_tol, low=0.0, owner=owner)

    def initial_memory(self, n: int) -> np.ndarray:
        """Every episode starts with budget b."""
        return np.full(n, self.b)

    def q_at(self, states: np.ndarray, budgets: np.ndarray, table: Any = None) -> np.ndarray:
        """Q (or another (S, K, A) ``table``) interpolated at (state, budget) pairs: (n, A)."""
        table = self.Q if table is None else table
        i0, w = self.grid.weights(budgets)
        w = w[:, None]
        return table[states, i0] * (1 - w) + table[states, i0 + 1] * w

    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """argmax_a Q(s, c, a), ties broken by Q_mean(s, c, a)."""
        q = self.q_at(states, memory)
        if self.Q_mean is None:
            return np.argmax(q, axis=1)
        tied = q >= q.max(axis=1, keepdims=True) - self.tie_tol
        return np.argmax(np.where(tied, self.q_at(states, memory, self.Q_mean), -np.inf), axis=1)

    def update_memory(self, memory, states, actions, rewards, next_states) -> np.ndarray:
        """c <- (c - r) / gamma."""
        return (memory - rewards) / self.gamma
