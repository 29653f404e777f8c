"""CVaR Q-learning on the budget grid (Algorithm B, spec §2.5), model-free.

The transition does not depend on the budget, so one observed (s, a, r, s') updates every budget
node at once: y_k = rho(c_k, r) + gamma (1 - terminated) max_a' Q(s', (c_k - r) / gamma, a'), with
Q interpolated linearly in c. Episodes start from a fresh budget c_0 ~ Uniform(nodes) to explore.

Step sizes. The default ``"rescaled_linear"`` schedule lr_n = 1 / (1 + (1 - gamma) n), n = N(s, a),
satisfies the Robbins–Monro conditions (sum lr_n = inf, sum lr_n^2 < inf), so the asynchronous
stochastic-approximation theorem (Tsitsiklis 1994) gives Q -> the projected fixed point of grid
value iteration almost surely when every (s, a) is visited infinitely often (the projected
operator is a gamma-contraction and the sampled targets are bounded). Unlike 1 / n, whose error
decays like n^-(1 - gamma) (Szepesvari 1997), it forgets its first ~1 / (1 - gamma) targets and has
near-optimal sample complexity (Wainwright 2019; Li et al. 2021, "Is Q-learning minimax
optimal?"). Deviation from the spec: its default ``poly`` schedule had a floor lr >= 0.05, which
violates sum lr^2 < inf; ``poly`` is kept with the floor off by default.

Undiscounted returns. gamma = 1 is allowed when every episode ends within H steps (checked on the
model: a :class:`TabularMDP`, or the toy-text table of an environment). Every policy is then
proper, so the operator is a contraction in a weighted max norm (Bertsekas & Tsitsiklis 1996,
stochastic shortest paths) and the same theorem applies; ``"rescaled_linear"`` puts H in place of
the effective horizon 1 / (1 - gamma): lr_n = 1 / (1 + n / H) = H / (H + n), the rate of
episodic Q-learning (Jin et al. 2018 use (H + 1) / (H + n)).

Ties. Where several actions attain max_a Q (e.g. once the budget is exhausted, when every action
has Q = 0), the greedy policy needs a second criterion. A second table Q_mean(s, c, a) learns the
expected discounted return of the remaining episode when the tied actions are broken by Q_mean
itself (target r + gamma (1 - terminated) Q_mean(s', c', a*), a* the tie-broken greedy action at
(s', c')), the model-free counterpart of :func:`augmented_value_iteration`'s lexicographic DP.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import (
    Progress,
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    progress_reporter,
)
from icml26.cvar_rl.budget import BudgetGrid, check_grid, redistributed_reward
from icml26.cvar_rl.mdp import MAX_HORIZON, TabularMDP, episode_horizon, generator
from icml26.cvar_rl.policies import AugmentedGreedyPolicy

__all__ = ["QLearningResult", "cvar_q_learning", "step_size"]

_LR_SCHEDULES = ("rescaled_linear", "poly", "harmonic")
_PROGRESS_EVERY = 1000  # steps between two progress reports: cheap next to ~50 us per step
_BLOCK = 4096  # uniforms drawn per block: one generator call instead of three per step
MAX_STEPS = 10**8  # cvar_q_learning: environment steps (~50 us each: hours)


def step_size(
    n: Any,
    schedule: str = "rescaled_linear",
    *,
    gamma: float = 0.95,
    omega: float = 0.6,
    lr_min: float = 0.0,
    horizon: int | None = None,
) -> np.ndarray:
    """The learning rate after ``n`` visits of a pair, for each schedule of :func:`cvar_q_learning`.

    * ``"rescaled_linear"``: 1 / (1 + (1 - gamma) n), and 1 / (1 + n / horizon) at gamma = 1;
    * ``"poly"``: max(lr_min, n^-omega);
    * ``"harmonic"``: 1 / n (sample averages).

    All three satisfy the Robbins–Monro conditions sum lr = inf, sum lr^2 < inf, except ``poly``
    with ``lr_min > 0`` (a floor keeps sum lr^2 infinite: Q then hovers in a noise ball).

    Parameters
    ----------
    n
        Visit counts, >= 1 (any shape).
    schedule
        ``"rescaled_linear"``, ``"poly"`` or ``"harmonic"``.
    gamma, omega, lr_min
        Discount factor in [0, 1] (``rescaled_linear``), exponent in [0.5, 1] and floor
        (``poly``).
    horizon
        The most steps an episode lasts: needed by ``rescaled_linear`` at gamma = 1 only.

    Returns
    -------
    numpy.ndarray
        The step sizes, shape of ``n``.

    Raises
    ------
    ValueError
        On an unknown schedule or out-of-range parameters, or ``rescaled_linear`` at gamma = 1
        without a horizon.

    Examples
    --------
    >>> step_size([1, 21, 201], gamma=0.95).round(4).tolist()
    [0.9524, 0.4878, 0.0905]
    >>> step_size([1, 3], gamma=1.0, horizon=3).tolist()
    [0.75, 0.5]
    """
    owner = "step_size"
    check_one_of("schedule", schedule, _LR_SCHEDULES, owner=owner)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, owner=owner)
    omega = check_in_interval("omega", omega, low=0.5, high=1.0, owner=owner)
    lr_min = check_in_interval("lr_min", lr_min, low=0.0, high=1.0, owner=owner)
    if horizon is not None:
        horizon = check_positive_int("horizon", horizon, owner=owner, maximum=MAX_HORIZON)
    n = check_array("n", n, owner=owner)
    if np.any(n < 1):
        raise ValueError(f"step_size: n must be >= 1; got min {n.min()!r}.")
    return np.asarray(_schedule(schedule, gamma, omega, lr_min, horizon, owner)(n))


def _rescaled_linear(n: Any, gamma: float) -> Any:
    return 1.0 / (1.0 + (1.0 - gamma) * n)


def _episodic_linear(n: Any, horizon: int) -> Any:
    return 1.0 / (1.0 + n / horizon)


def _harmonic(n: Any) -> Any:
    return 1.0 / n


def _poly(n: Any, omega: float, lr_min: float) -> Any:
    return np.maximum(lr_min, n**-omega)


def _schedule(
    schedule: str, gamma: float, omega: float, lr_min: float, horizon: int | None, owner: str
) -> Callable[[Any], Any]:
    """The validated schedule as a function of n (scalar or array), for the inner loop."""
    if schedule == "rescaled_linear" and gamma == 1.0:
        if horizon is None:
            raise ValueError(
                f"{owner}: the rescaled_linear schedule at gamma = 1 needs a horizon (the most "
                "steps an episode lasts), which takes the place of 1 / (1 - gamma)."
            )
        return functools.partial(_episodic_linear, horizon=horizon)
    if schedule == "rescaled_linear":
        return functools.partial(_rescaled_linear, gamma=gamma)
    if schedule == "harmonic":
        return _harmonic
    return functools.partial(_poly, omega=omega, lr_min=lr_min)


@dataclass(frozen=True)
class QLearningResult:
    """Result of :func:`cvar_q_learning`.

    Attributes
    ----------
    Q
        Learned action values Q[s, k, a], shape (S, K, A) (S = observations for an environment).
    Q_mean
        Learned tie-break values: the expected discounted return of the remaining episode, shape
        (S, K, A).
    visits
        Visit counts N(s, a), shape (S, A).
    episodes
        Number of episodes started.
    grid
        The budget grid.
    gamma
        The discount factor.
    tie_tol
        Actions within ``tie_tol`` of max_a Q count as tied.
    """

    Q: np.ndarray
    Q_mean: np.ndarray
    visits: np.ndarray
    episodes: int
    grid: BudgetGrid
    gamma: float
    tie_tol: float

    def __post_init__(self) -> None:
        owner = "QLearningResult"
        grid = check_grid(self.grid, owner=owner)
        Q = check_array("Q", self.Q, owner=owner, ndim=3)
        if min(Q.shape) < 1 or Q.shape[1] != grid.K:
            raise ValueError(f"{owner}: Q must have shape (S, {grid.K}, A); got {Q.shape}.")
        Q_mean = check_array("Q_mean", self.Q_mean, owner=owner, shape=Q.shape)
        visits = check_array("visits", self.visits, owner=owner, shape=(Q.shape[0], Q.shape[2]))
        if np.any(visits < 0) or np.any(visits != np.round(visits)):
            raise ValueError(f"{owner}: visits must hold counts >= 0.")
        check_positive_int("episodes", self.episodes, minimum=0, owner=owner)
        gamma = check_in_interval(
            "gamma", self.gamma, low=0.0, high=1.0, closed="right", owner=owner
        )
        tie_tol = check_in_interval("tie_tol", self.tie_tol, low=0.0, owner=owner)
        for name, value in (("Q", Q), ("Q_mean", Q_mean), ("visits", visits.astype(np.int64)),
                            ("gamma", gamma), ("tie_tol", tie_tol)):  # fmt: skip
            object.__setattr__(self, name, value)

    def policy(self, b: float) -> AugmentedGreedyPolicy:
        """The augmented greedy policy from budget ``b`` in the learned Q, ties by ``Q_mean``.

        Raises
        ------
        ValueError
            If ``b`` is not a finite budget.
        """
        b = check_in_interval("b", b, owner="QLearningResult.policy")
        return AugmentedGreedyPolicy(
            self.Q, self.grid, self.gamma, b, Q_mean=self.Q_mean, tie_tol=self.tie_tol
        )


class _ModelEnv:
    """reset/step on a TabularMDP; ``u`` is the uniform that draws the next state."""

    def __init__(self, mdp: TabularMDP) -> None:
        self.mdp, self.cdf = mdp, np.cumsum(mdp.P, axis=2)

    def reset(self) -> int:
        self.state = self.mdp.s0
        return self.state

    def step(self, action: int, u: float) -> tuple[int, float, bool, bool]:
        s = self.state
        s_next = min(
            int(np.searchsorted(self.cdf[s, action], u, side="right")), self.mdp.n_states - 1
        )
        self.state = s_next
        return s_next, float(self.mdp.R[s, action, s_next]), bool(self.mdp.terminal[s_next]), False


class _GymEnv:
    """reset/step on a gymnasium environment with Discrete spaces, seeded once."""

    def __init__(self, env: Any, rng: np.random.Generator) -> None:
        import gymnasium as gym

        spaces = (getattr(env, "observation_space", None), getattr(env, "action_space", None))
        if not all(isinstance(space, gym.spaces.Discrete) for space in spaces):
            raise TypeError(
                "cvar_q_learning: env_or_mdp must be a TabularMDP or an environment with "
                "Discrete observation and action spaces; got "
                f"{type(spaces[0]).__name__} and {type(spaces[1]).__name__}."
            )
        self.env, self.seed = env, int(rng.integers(2**31))
        self.n_states, self.n_actions = int(spaces[0].n), int(spaces[1].n)

    def reset(self) -> int:
        state, _ = self.env.reset(seed=self.seed)
        self.seed = None  # seed only the first reset: the env's generator carries on from there
        return int(state)

    def step(self, action: int, u: float) -> tuple[int, float, bool, bool]:
        state, reward, terminated, truncated, _ = self.env.step(action)
        return int(state), float(reward), bool(terminated), bool(truncated)


class _Targets:
    """rho(c_k, r) and the interpolation of the next budgets (c_k - r) / gamma, cached per r.

    Tabular environments have few distinct rewards, so this removes all per-step grid arithmetic.
    """

    def __init__(self, grid: BudgetGrid, gamma: float) -> None:
        self.grid, self.gamma = grid, gamma
        self.cache: dict[float, tuple[np.ndarray, ...]] = {}

    def __call__(self, r: float) -> tuple[np.ndarray, ...]:
        if r not in self.cache:
            nodes = self.grid.nodes
            i0, w = self.grid.weights((nodes - r) / self.gamma)
            w = w[:, None, None]  # broadcast over (table, action)
            self.cache[r] = (redistributed_reward(nodes, r), i0, i0 + 1, 1 - w, w)
        return self.cache[r]


def _behaviour_greedy(q: np.ndarray, q_mean: np.ndarray, tie_tol: float, u: float) -> int:
    """The greedy action in q (A,), ties broken by q_mean (A,), remaining ties by the uniform u.

    Random remaining ties matter early on, when the whole table is 0: the lowest index would
    repeat one action everywhere and leave exploration to epsilon alone.
    """
    mean_of_tied = np.where(q >= q.max() - tie_tol, q_mean, -np.inf)
    candidates = np.flatnonzero(mean_of_tied >= mean_of_tied.max() - tie_tol)
    return int(candidates[min(int(u * candidates.size), candidates.size - 1)])


def _undiscounted_horizon(env_or_mdp: Any, owner: str) -> int:
    """The most steps an episode lasts, from the model; refuse gamma = 1 where it is unbounded."""
    if isinstance(env_or_mdp, TabularMDP):
        return episode_horizon(env_or_mdp, owner=owner)
    if not isinstance(getattr(getattr(env_or_mdp, "unwrapped", None), "P", None), dict):
        raise ValueError(
            f"{owner}: gamma = 1 (undiscounted returns) needs every episode to end within a "
            "bounded number of steps, which is checked on a model: pass a TabularMDP or an "
            "environment with a toy-text table env.unwrapped.P (this one has none), or use "
            "gamma < 1."
        )
    # gamma = 0 here only builds the model: the horizon check below names this function.
    return episode_horizon(TabularMDP.from_gymnasium(env_or_mdp, gamma=0.0), owner=owner)


def cvar_q_learning(
    env_or_mdp: Any,
    grid: BudgetGrid,
    gamma: float,
    n_steps: int,
    *,
    lr_schedule: str = "rescaled_linear",
    omega: float = 0.6,
    lr_min: float = 0.0,
    eps: float = 0.2,
    update_all_budgets: bool = True,
    max_episode_steps: int = 200,
    tie_tol: float = 1e-9,
    seed: Seed = None,
    progress: Progress = None,
) -> QLearningResult:
    """Tabular CVaR Q-learning with the redistributed reward on a budget grid.

    Parameters
    ----------
    env_or_mdp
        A :class:`TabularMDP` (sampled directly) or a gymnasium environment with ``Discrete``
        spaces (only ``reset``/``step`` are used; its own time limit also truncates: a
        ``truncated`` step bootstraps and starts a new episode).
    grid
        The budget grid.
    gamma
        Discount factor in (0, 1]; 1 (undiscounted) only if every episode ends within a bounded
        number of steps H, checked on ``env_or_mdp``'s model (a TabularMDP, or an environment's
        toy-text table ``unwrapped.P``).
    n_steps
        Number of environment steps, at most ``MAX_STEPS = 10**8``.
    lr_schedule
        ``"rescaled_linear"`` (default): lr = 1 / (1 + (1 - gamma) n), or 1 / (1 + n / H) at
        gamma = 1; ``"poly"``:
        lr = max(lr_min, n^-omega); ``"harmonic"``: lr = 1 / n; see :func:`step_size`. With
        ``update_all_budgets`` n = N(s, a), else n counts the visits of the updated (s, k, a).
    omega, lr_min
        Parameters of the ``"poly"`` schedule (``lr_min > 0`` breaks Robbins–Monro).
    eps
        Exploration rate of the epsilon-greedy behaviour policy, in [0, 1].
    update_all_budgets
        Update every budget node per transition (default) or only the node nearest to the
        current budget.
    max_episode_steps
        Episode cap; a truncated episode bootstraps (it is not terminal).
    tie_tol
        Actions within ``tie_tol`` of max_a Q count as tied; ties go to the largest Q_mean.
    seed
        Randomness (int, Generator or None).
    progress
        ``None``/``False`` (silent), ``True`` (a rich bar) or a callable
        ``progress(done, total, metrics)`` (:mod:`icml26.core.progress`), called every 1000 steps
        and once at the end with ``total = n_steps``; it does not affect the result.

    Returns
    -------
    QLearningResult

    Raises
    ------
    ValueError
        On out-of-range hyper-parameters, or gamma = 1 where an episode can go on forever or an
        environment has no table to check that on.
    TypeError
        If an environment has non-Discrete spaces.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain, cvar_from_values
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 201)
    >>> res = cvar_q_learning(mdp, grid, mdp.gamma, 5000, seed=0)
    >>> mean, _ = cvar_from_values(res.Q[0].max(axis=1), grid, alpha=1.0)
    >>> res.Q.shape, abs(mean - 2.972) < 0.3  # alpha = 1: the risk-neutral value 2.972
    ((6, 201, 2), True)
    """
    owner = "cvar_q_learning"
    grid = check_grid(grid, owner=owner)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, closed="right", owner=owner)
    n_steps = check_positive_int("n_steps", n_steps, owner=owner, maximum=MAX_STEPS)
    check_one_of("lr_schedule", lr_schedule, _LR_SCHEDULES, owner=owner)
    omega = check_in_interval("omega", omega, low=0.5, high=1.0, owner=owner)
    lr_min = check_in_interval("lr_min", lr_min, low=0.0, high=1.0, owner=owner)
    eps = check_in_interval("eps", eps, low=0.0, high=1.0, owner=owner)
    max_episode_steps = check_positive_int("max_episode_steps", max_episode_steps, owner=owner)
    tie_tol = check_in_interval("tie_tol", tie_tol, low=0.0, owner=owner)
    rng = generator(seed, owner=owner)
    if isinstance(env_or_mdp, TabularMDP):
        env = _ModelEnv(env_or_mdp)
        n_states, n_actions = env_or_mdp.n_states, env_or_mdp.n_actions
    else:
        env = _GymEnv(env_or_mdp, rng)
        n_states, n_actions = env.n_states, env.n_actions
    horizon = _undiscounted_horizon(env_or_mdp, owner) if gamma == 1.0 else None
    nodes, targets = grid.nodes, _Targets(grid, gamma)
    rate = _schedule(lr_schedule, gamma, omega, lr_min, horizon, owner)
    # table[s, k, 0] = Q(s, c_k, .) and table[s, k, 1] = Q_mean(s, c_k, .): one gather for both.
    table = np.zeros((n_states, grid.K, 2, n_actions))
    visits = np.zeros((n_states, n_actions), dtype=np.int64)
    node_visits = None if update_all_budgets else np.zeros((n_states, grid.K, n_actions), np.int64)
    episodes, t_episode, reset = 0, 0, True
    with progress_reporter(progress, n_steps, "CVaR Q-learning steps") as report:
        for step in range(n_steps):
            if step and step % _PROGRESS_EVERY == 0:
                report(step)
            if step % _BLOCK == 0:
                # Per step: explore?, the random action, the episode's budget, the next state.
                draws = rng.random((min(_BLOCK, n_steps - step), 4))
            u_explore, u_action, u_budget, u_next = draws[step % _BLOCK]
            if reset:
                s, c = env.reset(), float(nodes[min(int(u_budget * grid.K), grid.K - 1)])
                episodes, t_episode, reset = episodes + 1, 0, False
            k = int((min(max(c, grid.c_lo), grid.c_hi) - grid.c_lo) / grid.delta + 0.5)  # nearest
            if u_explore < eps:
                a = min(int(u_action * n_actions), n_actions - 1)
            else:
                a = _behaviour_greedy(table[s, k, 0], table[s, k, 1], tie_tol, u_action)
            s_next, r, terminated, truncated = env.step(a, u_next)
            visits[s, a] += 1
            rho, i0, i1, w0, w1 = targets(r)
            rows = slice(None) if update_all_budgets else slice(k, k + 1)
            target = np.empty((rho[rows].size, 2))  # (n, 2): the targets of Q and Q_mean
            target[:, 0], target[:, 1] = rho[rows], r
            if not terminated:
                nxt = table[s_next, i0[rows]] * w0[rows] + table[s_next, i1[rows]] * w1[rows]
                q_next, mean_next = nxt[:, 0], nxt[:, 1]  # (n, A) each
                best = q_next.max(axis=1)
                tied = q_next >= best[:, None] - tie_tol
                target[:, 0] += gamma * best
                target[:, 1] += gamma * np.where(tied, mean_next, -np.inf).max(axis=1)
            if update_all_budgets:
                lr = rate(int(visits[s, a]))
            else:
                node_visits[s, k, a] += 1
                lr = rate(int(node_visits[s, k, a]))
            table[s, rows, :, a] += lr * (target - table[s, rows, :, a])
            c, s, t_episode = (c - r) / gamma, s_next, t_episode + 1
            reset = terminated or truncated or t_episode >= max_episode_steps
        report(n_steps)
    Q, Q_mean = table[:, :, 0].copy(), table[:, :, 1].copy()
    return QLearningResult(Q, Q_mean, visits, episodes, grid, gamma, tie_tol)
