"""Finite MDPs as dense (S, A, S) tables, built by hand, from gymnasium, or as test problems.

A terminal state is absorbing with reward 0: its own row of ``P`` is ignored by every algorithm
(the return stops there). Gymnasium's toy-text tables may send one ``(s, a)`` to the same next
observation with two different rewards (CliffWalking's start is reached both by a step, -1, and by
falling off the cliff, -100); an (S, A, S) reward table cannot say that, so :meth:`TabularMDP.
from_gymnasium` adds a copy of that observation for each extra (reward, terminated) pair. Copies
share the original's outgoing transitions, so their values are equal; ``obs_index`` maps every
model state back to its observation.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import (
    Seed,
    check_array,
    check_in_interval,
    check_positive_int,
    numpy_generator,
)

__all__ = ["TabularMDP", "random_layered_mdp", "risky_chain"]

_ROW_TOL = 1e-8
MAX_TABLE = 10**7  # random_layered_mdp: entries S * A * S of its dense tables (80 MB each)
MAX_PATHS = 10**6  # exact references: action-annotated paths of a tree they expand
MAX_HORIZON = 10**6  # simulated steps per episode


def _as_table(name: str, value: Any) -> np.ndarray:
    """``value`` as a finite float (S, A, S) table: rank and finiteness by core, S and A here."""
    array = check_array(name, value, owner="TabularMDP", ndim=3)
    if array.shape[0] != array.shape[2] or min(array.shape) < 1:
        raise ValueError(
            f"TabularMDP: {name} must have shape (S, A, S) with S, A >= 1; got shape {array.shape}."
        )
    return array


@dataclass(frozen=True, init=False)
class TabularMDP:
    """A finite discounted MDP with transition table ``P`` and reward table ``R``.

    Parameters
    ----------
    P
        Transition probabilities P[s, a, s'], shape (S, A, S); every row sums to 1 (within 1e-8).
    R
        Rewards r(s, a, s'), shape (S, A, S).
    gamma
        Discount factor in [0, 1], 1 (undiscounted returns) only when every episode ends within
        a bounded number of steps (:meth:`max_steps` is not None).
    terminal
        Boolean mask (S,) of absorbing zero-reward states; default none.
    s0
        Start state.
    obs_index
        For models built from an environment: the observation of each model state (S,);
        default the identity.

    Raises
    ------
    ValueError
        On shape mismatches, negative probabilities, rows not summing to 1, gamma outside [0, 1],
        gamma = 1 with an episode that can go on forever (a cycle among non-terminal states),
        an out-of-range start state, or a terminal start state.

    Examples
    --------
    >>> P = np.zeros((2, 1, 2)); P[0, 0, 1] = 1.0; P[1, 0, 1] = 1.0
    >>> mdp = TabularMDP(P, np.ones((2, 1, 2)), 0.9, terminal=[False, True], s0=0)
    >>> mdp.n_states, mdp.n_actions, mdp.reward_bounds()
    (2, 1, (1.0, 1.0))
    """

    P: np.ndarray
    R: np.ndarray
    gamma: float
    terminal: np.ndarray
    s0: int
    obs_index: np.ndarray

    def __init__(
        self,
        P: Any,
        R: Any,
        gamma: float,
        terminal: Any = None,
        s0: int = 0,
        obs_index: Any = None,
    ) -> None:
        P, R = _as_table("P", P), _as_table("R", R)
        if R.shape != P.shape:
            raise ValueError(
                f"TabularMDP: R must have the shape of P {P.shape}; got shape {R.shape}."
            )
        if np.any(P < 0):
            raise ValueError(f"TabularMDP: P must be non-negative; got min {P.min()!r}.")
        row_error = np.abs(P.sum(axis=2) - 1.0)
        if np.any(row_error > _ROW_TOL):
            s, a = np.unravel_index(int(np.argmax(row_error)), row_error.shape)
            raise ValueError(
                f"TabularMDP: P[s, a, :] must sum to 1 (within 1e-8); got "
                f"{P[s, a].sum()!r} at s={s}, a={a}."
            )
        n = P.shape[0]
        gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, owner="TabularMDP")
        mask = np.zeros(n, bool) if terminal is None else np.asarray(terminal)
        if mask.shape != (n,) or mask.dtype != bool:
            raise ValueError(
                f"TabularMDP: terminal must be a boolean array of shape ({n},); got dtype "
                f"{mask.dtype} shape {mask.shape}."
            )
        s0 = check_positive_int("s0", s0, minimum=0, owner="TabularMDP")
        if s0 >= n or mask[s0]:
            raise ValueError(
                f"TabularMDP: s0 must be a non-terminal state in [0, {n}); got {s0!r}."
            )
        obs = (
            np.arange(n)
            if obs_index is None
            else check_array("obs_index", obs_index, owner="TabularMDP", shape=(n,), dtype=int)
        )
        # Own read-only copies: the caller's arrays stay writable and cannot change the model.
        for name, value in (("P", P), ("R", R), ("terminal", mask), ("obs_index", obs)):
            value = value.copy()
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "s0", s0)
        if gamma == 1.0:
            episode_horizon(self, owner="TabularMDP")

    @property
    def n_states(self) -> int:
        """Number of model states S."""
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions A."""
        return self.P.shape[1]

    def reward_bounds(self) -> tuple[float, float]:
        """(r_min, r_max) over the transitions that can happen (P > 0) from non-terminal states."""
        live = (self.P > 0) & ~self.terminal[:, None, None]
        rewards = self.R[live]
        return float(rewards.min()), float(rewards.max())

    def max_steps(self) -> int | None:
        """The most rewards an episode from any non-terminal state can collect before it reaches a
        terminal state, or None if some episode can go on forever (a cycle among live states).

        Examples
        --------
        >>> risky_chain().max_steps()
        3
        """
        depth = self.depths()
        return None if (depth < 0).any() else int(depth.max(initial=0))

    def depths(self) -> np.ndarray:
        """Per state, the most rewards an episode from it can collect before a terminal state:
        0 at terminal states, -1 where an episode can go on forever.

        Examples
        --------
        >>> risky_chain().depths().tolist()
        [3, 2, 2, 1, 0, 0]
        """
        live = self.P.sum(axis=1) > 0
        live &= ~self.terminal[:, None] & ~self.terminal[None, :]
        remaining = live.sum(axis=1)  # live successors not settled yet
        depth = np.where(self.terminal, 0, -1)
        frontier, d = ~self.terminal & (remaining == 0), 1
        while frontier.any():  # settle the states whose live successors are all settled
            depth[frontier] = d
            remaining -= live[:, frontier].sum(axis=1)
            frontier, d = (depth < 0) & (remaining == 0), d + 1
        return depth

    def transitions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The sparse transition list of non-terminal states, sorted by (s, a).

        Returns
        -------
        sa, next_state, prob, reward
            One entry per (s, a, s') with P > 0 and s non-terminal; ``sa = s * A + a``.
        """
        live = (self.P > 0) & ~self.terminal[:, None, None]
        s, a, s_next = np.nonzero(live)
        return s * self.n_actions + a, s_next, self.P[live], self.R[live]

    @classmethod
    def from_gymnasium(
        cls, env: Any, gamma: float = 0.95, *, slip: float = 0.0, **env_kwargs: Any
    ) -> TabularMDP:
        """Build the model of a gymnasium toy-text environment from its table ``unwrapped.P``.

        Parameters
        ----------
        env
            An environment id (made with ``gymnasium.make(env, **env_kwargs)``) or an environment
            with ``Discrete`` observation and action spaces and a table
            ``env.unwrapped.P[s][a] = [(prob, s', r, terminated), ...]``.
        gamma
            Discount factor in [0, 1]; 1 only if every episode ends within a bounded number of
            steps (refused, e.g., for CliffWalking and FrozenLake, whose agent can walk in
            circles).
        slip
            Probability in [0, 1] that the chosen action is replaced by a uniformly random one.
        **env_kwargs
            Passed to ``gymnasium.make`` when ``env`` is an id (e.g. ``is_slippery=True``).

        Returns
        -------
        TabularMDP
            Start state = the environment's initial observation after ``reset(seed=0)``; reward
            collisions are split into copies (see the module docstring).

        Raises
        ------
        TypeError
            If the spaces are not ``Discrete`` or the environment has no transition table.

        Examples
        --------
        >>> mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=0.95, slip=0.1)
        >>> mdp.n_actions, int(mdp.obs_index[mdp.s0])
        (4, 36)
        """
        import gymnasium as gym

        if isinstance(env, str):
            env = gym.make(env, **env_kwargs)
        spaces = (getattr(env, "observation_space", None), getattr(env, "action_space", None))
        if not all(isinstance(space, gym.spaces.Discrete) for space in spaces):
            raise TypeError(
                "TabularMDP.from_gymnasium: env must have Discrete observation and action "
                f"spaces; got {type(spaces[0]).__name__} and {type(spaces[1]).__name__}."
            )
        table = getattr(env.unwrapped, "P", None)
        if not isinstance(table, dict):
            raise TypeError(
                "TabularMDP.from_gymnasium: env.unwrapped.P must be a transition table "
                f"{{s: {{a: [(p, s', r, terminated)]}}}}; got {type(table).__name__}."
            )
        slip = check_in_interval("slip", slip, low=0.0, high=1.0, owner="TabularMDP.from_gymnasium")
        n_obs, n_act = int(spaces[0].n), int(spaces[1].n)
        start = int(env.reset(seed=0)[0])
        outcomes = [[table[s][a] for a in range(n_act)] for s in range(n_obs)]
        # An observation is terminal if it is entered and every transition into it terminates.
        entered, entered_live = np.zeros(n_obs, bool), np.zeros(n_obs, bool)
        for row in outcomes:
            for outs in row:
                for _, s_next, _, done in outs:
                    entered[int(s_next)] = True
                    entered_live[int(s_next)] |= not done
        ends = entered & ~entered_live
        ends[start] = False
        # Every model state is entered with one reward and one terminated flag.
        entering: dict[tuple[int, float, bool], int] = {}
        obs_index, reward_in, done_in = list(range(n_obs)), [0.0] * n_obs, [False] * n_obs
        canonical: dict[int, float] = {}
        transitions = []
        for s in np.flatnonzero(~ends):  # a terminal observation's own row is never used
            for a in range(n_act):
                for p, s_next, r, done in outcomes[s][a]:
                    key = (int(s_next), float(r), bool(done))
                    if key not in entering:
                        o = key[0]
                        if done == ends[o] and canonical.setdefault(o, key[1]) == key[1]:
                            entering[key] = o
                        else:
                            entering[key] = len(obs_index)
                            obs_index.append(o)
                            reward_in.append(0.0)
                            done_in.append(False)
                        reward_in[entering[key]], done_in[entering[key]] = key[1], key[2]
                    transitions.append((s, a, entering[key], float(p)))
        n = len(obs_index)
        obs = np.asarray(obs_index)
        base = np.zeros((n_obs, n_act, n))
        for s, a, m, p in transitions:
            base[s, a, m] += p
        # Slip: with probability `slip` the action is replaced by a uniformly random one.
        base = (1.0 - slip) * base + slip * base.mean(axis=1, keepdims=True)
        terminal = np.asarray(done_in)
        P = base[obs]  # copies share their observation's outgoing transitions
        P[terminal] = 0.0
        for m in np.flatnonzero(terminal):
            P[m, :, m] = 1.0
        R = np.broadcast_to(np.asarray(reward_in), P.shape).copy()
        R[terminal] = 0.0
        return cls(P, R, gamma, terminal=terminal, s0=start, obs_index=obs)


def risky_chain(gamma: float = 0.9) -> TabularMDP:
    """The 6-state RiskyChain where the static-CVaR optimum needs memory (spec §5).

    s0 moves to L (reward +4) or U (reward 0) with probability 1/2 each; L and U both lead to s1
    (reward 0). At s1 action 0 ("safe") gives +1 and action 1 ("risky") gives +3 with
    probability 0.8 or -6 with probability 0.2; both end the episode. Since L and U merge in s1,
    a Markov policy plays one action at s1 after both branches.

    Parameters
    ----------
    gamma
        Discount factor in [0, 1] (every episode ends after 3 steps, so 1 is allowed).

    Returns
    -------
    TabularMDP
        States 0=s0, 1=L, 2=U, 3=s1, 4=T1, 5=T2 (4 and 5 terminal); two actions.

    Examples
    --------
    >>> risky_chain().n_states
    6
    """
    P, R = np.zeros((6, 2, 6)), np.zeros((6, 2, 6))
    P[0, :, 1] = P[0, :, 2] = 0.5
    R[0, :, 1] = 4.0
    P[1, :, 3] = P[2, :, 3] = 1.0
    P[3, 0, 4], R[3, 0, 4] = 1.0, 1.0
    P[3, 1, 4], R[3, 1, 4] = 0.8, 3.0
    P[3, 1, 5], R[3, 1, 5] = 0.2, -6.0
    P[4, :, 4] = P[5, :, 5] = 1.0
    terminal = np.array([False, False, False, False, True, True])
    return TabularMDP(P, R, gamma, terminal=terminal, s0=0)


def next_budget(c: np.ndarray, r: np.ndarray, gamma: float) -> np.ndarray:
    """c' = (c - r) / gamma; with gamma = 0 the future is discounted away, so c' is moot: 0."""
    if gamma == 0:
        return np.zeros(np.broadcast_shapes(np.shape(c), np.shape(r)))
    return (c - r) / gamma


def episode_horizon(mdp: TabularMDP, *, owner: str) -> int:
    """``mdp.max_steps()``, the bound on episode length that undiscounted returns (gamma = 1)
    need; a ValueError naming ``owner`` if some episode can go on forever.

    Examples
    --------
    >>> episode_horizon(risky_chain(), owner="demo")
    3
    """
    depth = mdp.depths()
    if (depth >= 0).all():
        return int(depth.max(initial=0))
    state = int(np.flatnonzero(depth < 0)[0])
    obs = int(mdp.obs_index[state])
    where = f"state {state}" + (f" (observation {obs})" if obs != state else "")
    raise ValueError(
        f"{owner}: gamma = 1 (undiscounted returns) needs every episode to end within a bounded "
        f"number of steps, but from {where} an "
        "episode can cycle among non-terminal states forever, so its undiscounted return can be "
        "infinite or undefined and no value iteration or budget grid bound holds. Use gamma < 1, "
        "or add a horizon: put the step count t in the state and end the episode at t = H."
    )


def check_mdp(mdp: object, *, owner: str) -> TabularMDP:
    """Return ``mdp`` if it is a :class:`TabularMDP`, else raise ``TypeError`` naming ``mdp``.

    Examples
    --------
    >>> check_mdp(risky_chain(), owner="demo").n_states
    6
    """
    if not isinstance(mdp, TabularMDP):
        raise TypeError(f"{owner}: mdp must be a TabularMDP; got {type(mdp).__name__}.")
    return mdp


def generator(seed: Seed, *, owner: str) -> np.random.Generator:
    """``numpy_generator(seed)`` whose errors (e.g. a negative int) name ``owner`` and ``seed``.

    Examples
    --------
    >>> float(generator(0, owner="demo").random()) == float(np.random.default_rng(0).random())
    True
    """
    return numpy_generator(seed, name=f"{owner}: seed")


def count_paths(mdp: TabularMDP, horizon: int, *, owner: str, limit: int = MAX_PATHS) -> int:
    """The number of action-annotated paths of at most ``horizon`` steps from s0, if <= ``limit``.

    N(s, 0) = 1, N(s, d) = 1 at a terminal s, else sum_a sum_{s' : P > 0} N(s', d - 1): the size
    of the tree the exact references expand, counted before expanding it.

    Raises
    ------
    ValueError
        If the tree has more than ``limit`` paths (``horizon`` too large for enumeration).

    Examples
    --------
    >>> count_paths(risky_chain(), 3, owner="demo")  # (2 actions x 2) x 2 x (1 + 2) paths
    24
    """
    # For each s: the successors s' and how many actions reach them.
    rows = [np.flatnonzero(mdp.P[s].sum(axis=0) > 0) for s in range(mdp.n_states)]
    weights = [(mdp.P[s] > 0).sum(axis=0)[rows[s]] for s in range(mdp.n_states)]
    N = np.ones(mdp.n_states, dtype=object)  # Python ints: the counts can outgrow int64
    for _ in range(horizon):
        grown = np.array(
            [1 if mdp.terminal[s] else int(weights[s] @ N[rows[s]]) for s in range(mdp.n_states)],
            dtype=object,
        )
        if np.array_equal(grown, N):  # every path has ended: longer horizons add nothing
            break
        N = grown
        if N[mdp.s0] > limit:
            raise ValueError(
                f"{owner}: horizon = {horizon} expands more than {limit} paths from s0; "
                f"use a shorter horizon or a smaller model."
            )
    return int(N[mdp.s0])


def random_layered_mdp(
    width: int = 2, n_actions: int = 2, horizon: int = 3, gamma: float = 0.9, *, seed: Seed = None
) -> TabularMDP:
    """A random finite-horizon MDP: s0, then ``horizon - 1`` layers of ``width`` states, then end.

    Every transition goes to the next layer (the last layer to the terminal state), with
    Dirichlet(1) probabilities and rewards uniform in [-1, 1], so every episode has exactly
    ``horizon`` rewards.

    Parameters
    ----------
    width, n_actions, horizon
        Layer width, number of actions and number of steps (all >= 1); the tables have
        S * A * S <= ``MAX_TABLE = 10**7`` entries, S = 1 + width (horizon - 1) + 1.
    gamma
        Discount factor in [0, 1] (every episode ends after ``horizon`` steps, so 1 is allowed).
    seed
        Randomness (int, Generator or None).

    Returns
    -------
    TabularMDP
        ``1 + width * (horizon - 1) + 1`` states; state 0 is the start, the last is terminal.

    Examples
    --------
    >>> random_layered_mdp(seed=0).n_states
    6
    """
    owner = "random_layered_mdp"
    for name, value in (("width", width), ("n_actions", n_actions), ("horizon", horizon)):
        check_positive_int(name, value, owner=owner, maximum=MAX_TABLE)
    check_in_interval("gamma", gamma, low=0.0, high=1.0, owner=owner)
    n_states = 1 + width * (horizon - 1) + 1
    if n_states * n_actions * n_states > MAX_TABLE:
        raise ValueError(
            f"{owner}: width, n_actions and horizon give S * A * S = "
            f"{n_states} * {n_actions} * {n_states} > {MAX_TABLE} table entries."
        )
    rng = generator(seed, owner=owner)
    layers = [[0]]
    for t in range(1, horizon):
        layers.append(list(range(1 + width * (t - 1), 1 + width * t)))
    end = 1 + width * (horizon - 1)
    layers.append([end])
    P = np.zeros((end + 1, n_actions, end + 1))
    R = np.zeros_like(P)
    for here, there in itertools.pairwise(layers):
        for s in here:
            P[s][:, there] = rng.dirichlet(np.ones(len(there)), size=n_actions)
            R[s][:, there] = rng.uniform(-1.0, 1.0, size=(n_actions, len(there)))
    P[end, :, end] = 1.0
    terminal = np.zeros(end + 1, bool)
    terminal[end] = True
    return TabularMDP(P, R, gamma, terminal=terminal, s0=0)
