"""Policies with an explicit per-episode memory, stepped one at a time or as a batch.

A policy keeps one float of memory per episode: the budget c for the augmented greedy policy
(c_{t+1} = (c_t - r_t) / gamma), the confidence level y for Chow et al.'s policy, nothing for a
Markov policy. The batch methods carry the memory explicitly so that rollouts and exact
return distributions can run many episodes at once; ``reset``/``act``/``observe`` wrap them for
one episode, and ``policy(observation)`` is ``act`` on a gymnasium env's own observation.

Observations and states: a model built by :meth:`TabularMDP.from_gymnasium` keeps observation
``o`` as model state ``o`` and appends its extra copies after the observations (they share the
original's outgoing transitions, hence its Q-values), and :class:`TabularMDPEnv` observes model
state ids; so a policy on such a model takes the env's ``Discrete`` observation as it is.
"""

from __future__ import annotations

import abc
from typing import Any, final

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int
from icml26.cvar_rl.budget import BudgetGrid, check_grid

__all__ = ["AbstractPolicy", "AugmentedGreedyPolicy", "EpisodeNotStartedError", "MarkovPolicy"]

MAX_EPISODES = 10**7  # initial_memory: episodes run at once


class EpisodeNotStartedError(RuntimeError, ValueError):
    """``act`` before ``reset``, or ``observe`` before ``act`` (a ``ValueError`` too)."""


def check_policy(policy: object, *, owner: str) -> AbstractPolicy:
    """Return ``policy`` if it is an :class:`AbstractPolicy`, else raise ``TypeError``."""
    if not isinstance(policy, AbstractPolicy):
        raise TypeError(f"{owner}: policy must be an AbstractPolicy; got {type(policy).__name__}.")
    return policy


def state_ids(
    name: str, value: object, size: int, *, owner: str, n: int | None = None
) -> np.ndarray:
    """``value`` as a 1-D int64 array of ids in ``range(size)`` (of length ``n`` if given)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.ndim == 1:
        ids = value  # the rollouts' own state arrays: no conversion on the hot path
    else:
        ids = check_array(name, value, owner=owner, ndim=1, finite=True)
        if np.any(ids != np.round(ids)):
            raise ValueError(f"{owner}: {name} must hold integer ids in range(0, {size}).")
    if ids.size and (ids.min() < 0 or ids.max() >= size):
        raise ValueError(f"{owner}: {name} must hold integer ids in range(0, {size}).")
    if n is not None and ids.shape != (n,):
        raise ValueError(f"{owner}: {name} must have shape ({n},); got {ids.shape}.")
    return ids.astype(np.int64, copy=False)


def batch_floats(
    name: str, value: object, *, owner: str, n: int | None = None, allow_nan: bool = False
) -> np.ndarray:
    """``value`` as a 1-D float array (of length ``n`` if given); +-inf is a valid budget."""
    values = check_array(name, value, owner=owner, ndim=1, finite=False)
    if not allow_nan and np.isnan(values).any():
        raise ValueError(f"{owner}: {name} must not hold NaN.")
    if n is not None and values.shape != (n,):
        raise ValueError(f"{owner}: {name} must have shape ({n},); got {values.shape}.")
    return values


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
        """The action in ``state`` for the current episode (call :meth:`reset` first).

        Raises
        ------
        EpisodeNotStartedError
            If no episode was started with :meth:`reset`.
        TypeError, ValueError
            If ``state`` is not a state of the policy.
        """
        owner = f"{type(self).__name__}.act"
        if not hasattr(self, "_memory"):
            raise EpisodeNotStartedError(f"{owner}: act(state) needs an episode: call reset().")
        state = check_positive_int("state", state, minimum=0, owner=owner)
        try:
            action = int(self.act_batch(np.array([state]), self._memory)[0])
        except (TypeError, ValueError) as err:
            raise type(err)(f"{owner}: state {state!r} is refused: {err}") from None
        self._last = (state, action)
        return action

    def observe(self, reward: float, next_state: int = -1) -> None:
        """Record the reward (and next state, which Chow et al.'s policy needs) of the last act.

        Raises
        ------
        EpisodeNotStartedError
            If :meth:`act` was not called since the last observation.
        TypeError, ValueError
            If ``reward`` is not finite or ``next_state`` is not a state (-1: unknown).
        """
        owner = f"{type(self).__name__}.observe"
        if getattr(self, "_last", None) is None:
            raise EpisodeNotStartedError(
                f"{owner}: observe(reward, next_state) needs a preceding act(state)."
            )
        reward = check_in_interval("reward", reward, owner=owner)
        next_state = check_positive_int("next_state", next_state, minimum=-1, owner=owner)
        state, action = self._last
        try:
            memory = self.update_memory(
                self._memory,
                np.array([state]),
                np.array([action]),
                np.array([reward]),
                np.array([next_state]),
            )
        except (TypeError, ValueError) as err:
            raise type(err)(f"{owner}: next_state {next_state!r} is refused: {err}") from None
        self._memory, self._last = memory, None

    def __call__(self, observation: Any) -> int:
        """The action for a gymnasium env's ``Discrete`` observation (the gymnasium agent call).

        ``policy(obs)`` is :meth:`act` on the observation: call :meth:`reset` at the start of an
        episode and ``observe(reward, next_state=obs)`` after each ``env.step`` (see
        :func:`rollout`, which does both).

        Parameters
        ----------
        observation
            An int (Python, numpy, or a 0-d integer array) naming a state of the policy.

        Returns
        -------
        int
            The action, an element of the env's ``Discrete`` action space.

        Raises
        ------
        EpisodeNotStartedError
            If no episode was started with :meth:`reset`.
        TypeError, ValueError
            If ``observation`` is not an integer state of the policy.

        Examples
        --------
        >>> import gymnasium as gym
        >>> env = gym.make("FrozenLake-v1")
        >>> pi = MarkovPolicy([2] * 16); pi.reset()
        >>> obs, info = env.reset(seed=0)
        >>> pi(obs)
        2
        """
        owner = f"{type(self).__name__}.__call__"
        if isinstance(observation, np.ndarray) and observation.ndim == 0:
            observation = observation[()]
        if isinstance(observation, bool | np.bool_) or not isinstance(
            observation, int | np.integer
        ):
            raise TypeError(
                f"{owner}: observation must be an integer state id (a Discrete observation); "
                f"got {type(observation).__name__}."
            )
        return self.act(int(observation))

    @property
    def memory(self) -> float:
        """The current episode's memory (the budget c for :class:`AugmentedGreedyPolicy`)."""
        if not hasattr(self, "_memory"):
            raise EpisodeNotStartedError(f"{type(self).__name__}: call reset() first.")
        return float(self._memory[0])


@final
class MarkovPolicy(AbstractPolicy):
    """A deterministic Markov policy: ``actions[s]`` in state s, whatever the history.

    Parameters
    ----------
    actions
        One action per state, shape (S,).

    Examples
    --------
    >>> pi = MarkovPolicy([1, 0]); pi.reset(); pi.act(0)
    1
    """

    def __init__(self, actions: Any) -> None:
        owner = "MarkovPolicy"
        chosen = check_array("actions", actions, owner=owner, ndim=1)
        if chosen.size == 0 or np.any(chosen != np.round(chosen)) or chosen.min() < 0:
            raise ValueError(
                f"{owner}: actions must hold one integer action >= 0 per state; got {chosen!r}."
            )
        self.actions = chosen.astype(np.int64)

    def initial_memory(self, n: int) -> np.ndarray:
        """No memory: zeros."""
        n = check_positive_int("n", n, minimum=0, maximum=MAX_EPISODES, owner="MarkovPolicy")
        return np.zeros(n)

    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """``actions[states]``."""
        owner = "MarkovPolicy.act_batch"
        states = state_ids("states", states, self.actions.size, owner=owner)
        batch_floats("memory", memory, owner=owner, n=states.size, allow_nan=True)
        return self.actions[states]

    def update_memory(self, memory, states, actions, rewards, next_states) -> np.ndarray:
        """Unchanged."""
        return batch_floats("memory", memory, owner="MarkovPolicy.update_memory", allow_nan=True)


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
        Discount factor of the MDP, in (0, 1] (the budget update divides by it).
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

    Examples
    --------
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
        grid = check_grid(grid, owner=owner)
        self.Q = check_array("Q", Q, owner=owner, ndim=3)
        if min(self.Q.shape) < 1:
            raise ValueError(f"{owner}: Q must have S, A >= 1; got shape {self.Q.shape}.")
        if self.Q.shape[1] != grid.K:
            raise ValueError(f"{owner}: Q must have shape (S, {grid.K}, A); got {self.Q.shape}.")
        self.Q_mean = None if Q_mean is None else check_array("Q_mean", Q_mean, owner=owner)
        if self.Q_mean is not None and self.Q_mean.shape != self.Q.shape:
            raise ValueError(
                f"{owner}: Q_mean must have the shape of Q {self.Q.shape}; got {self.Q_mean.shape}."
            )
        self.grid = grid
        self.gamma = check_in_interval(
            "gamma", gamma, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.b = check_in_interval("b", b, owner=owner)
        self.tie_tol = check_in_interval("tie_tol", tie_tol, low=0.0, owner=owner)

    def initial_memory(self, n: int) -> np.ndarray:
        """Every episode starts with budget b."""
        owner = "AugmentedGreedyPolicy"
        return np.full(
            check_positive_int("n", n, minimum=0, maximum=MAX_EPISODES, owner=owner), self.b
        )

    def q_at(self, states: np.ndarray, budgets: np.ndarray, table: Any = None) -> np.ndarray:
        """Q (or another (S, K, A) ``table``) interpolated at (state, budget) pairs: (n, A).

        Raises
        ------
        TypeError, ValueError
            If ``states`` are not state ids, ``budgets`` not one finite budget per state, or
            ``table`` not of the shape of Q.
        """
        owner = "AugmentedGreedyPolicy.q_at"
        states = state_ids("states", states, self.Q.shape[0], owner=owner)
        budgets = batch_floats("budgets", budgets, owner=owner, n=states.size)
        if table is None:
            table = self.Q
        else:
            table = check_array("table", table, owner=owner, shape=self.Q.shape, finite=False)
        return self._q_at(states, budgets, table)

    def _q_at(self, states: np.ndarray, budgets: np.ndarray, table: np.ndarray) -> np.ndarray:
        i0, w = self.grid.weights(budgets)
        w = w[:, None]
        return table[states, i0] * (1 - w) + table[states, i0 + 1] * w

    def act_batch(self, states: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """argmax_a Q(s, c, a), ties broken by Q_mean(s, c, a)."""
        owner = "AugmentedGreedyPolicy.act_batch"
        states = state_ids("states", states, self.Q.shape[0], owner=owner)
        memory = batch_floats("memory", memory, owner=owner, n=states.size)
        q = self._q_at(states, memory, self.Q)
        if self.Q_mean is None:
            return np.argmax(q, axis=1)
        tied = q >= q.max(axis=1, keepdims=True) - self.tie_tol
        tie_break = self._q_at(states, memory, self.Q_mean)
        return np.argmax(np.where(tied, tie_break, -np.inf), axis=1)

    def update_memory(self, memory, states, actions, rewards, next_states) -> np.ndarray:
        """c <- (c - r) / gamma."""
        owner = "AugmentedGreedyPolicy.update_memory"
        memory = batch_floats("memory", memory, owner=owner, allow_nan=True)
        rewards = batch_floats("rewards", rewards, owner=owner, n=memory.size, allow_nan=True)
        return (memory - rewards) / self.gamma
