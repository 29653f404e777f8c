"""CVaR Q-learning on the budget grid (Algorithm B, spec §2.5), model-free.

The transition does not depend on the budget, so one observed (s, a, r, s') updates every budget
node at once: y_k = rho(c_k, r) + gamma (1 - terminated) max_a' Q(s', (c_k - r) / gamma, a'), with
Q interpolated linearly in c. Episodes start from a fresh budget c_0 ~ Uniform(nodes) to explore.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import Seed, check_in_interval, check_one_of, check_positive_int, numpy_generator
from icml26.cvar_rl.budget import BudgetGrid, redistributed_reward
from icml26.cvar_rl.mdp import TabularMDP

__all__ = ["QLearningResult", "cvar_q_learning"]

_PROGRESS_EVERY = 1000  # steps between two on_progress calls: cheap next to ~50 us per step


@dataclass(frozen=True)
class QLearningResult:
    """Result of :func:`cvar_q_learning`.

    Attributes
    ----------
    Q
        Learned action values Q[s, k, a], shape (S, K, A) (S = observations for an environment).
    visits
        Visit counts N(s, a), shape (S, A).
    episodes
        Number of episodes started.
    """

    Q: np.ndarray
    visits: np.ndarray
    episodes: int


class _ModelEnv:
    """reset/step on a TabularMDP, drawing from the caller's generator."""

    def __init__(self, mdp: TabularMDP, rng: np.random.Generator) -> None:
        self.mdp, self.rng, self.cdf = mdp, rng, np.cumsum(mdp.P, axis=2)

    def reset(self) -> int:
        self.state = self.mdp.s0
        return self.state

    def step(self, action: int) -> tuple[int, float, bool]:
        s = self.state
        s_next = min(
            int(np.searchsorted(self.cdf[s, action], self.rng.random(), side="right")),
            self.mdp.n_states - 1,
        )
        self.state = s_next
        return s_next, float(self.mdp.R[s, action, s_next]), bool(self.mdp.terminal[s_next])


class _GymEnv:
    """reset/step on a gymnasium environment with Discrete spaces, seeded once."""

    def __init__(self, env: Any, rng: np.random.Generator) -> None:
        import gymnasium as gym

        spaces = (env.observation_space, env.action_space)
        if not all(isinstance(space, gym.spaces.Discrete) for space in spaces):
            raise TypeError(
                "cvar_q_learning: env must have Discrete observation and action spaces; got "
                f"{type(spaces[0]).__name__} and {type(spaces[1]).__name__}."
            )
        self.env, self.seed = env, int(rng.integers(2**31))
        self.n_states, self.n_actions = int(spaces[0].n), int(spaces[1].n)

    def reset(self) -> int:
        state, _ = self.env.reset(seed=self.seed)
        self.seed = None  # seed only the first reset: the env's generator carries on from there
        return int(state)

    def step(self, action: int) -> tuple[int, float, bool]:
        state, reward, terminated, _, _ = self.env.step(action)
        return int(state), float(reward), bool(terminated)


def cvar_q_learning(
    env_or_mdp: Any,
    grid: BudgetGrid,
    gamma: float,
    n_steps: int,
    *,
    lr_schedule: str = "poly",
    omega: float = 0.6,
    lr_min: float = 0.05,
    eps: float = 0.2,
    update_all_budgets: bool = True,
    max_episode_steps: int = 200,
    seed: Seed = None,
    on_progress: Callable[[int], None] | None = None,
) -> QLearningResult:
    """Tabular CVaR Q-learning with the redistributed reward on a budget grid.

    Parameters
    ----------
    env_or_mdp
        A :class:`TabularMDP` (sampled directly) or a gymnasium environment with ``Discrete``
        spaces (only ``reset``/``step`` are used; its own time limit may also truncate).
    grid
        The budget grid.
    gamma
        Discount factor in (0, 1).
    n_steps
        Number of environment steps.
    lr_schedule
        ``"poly"``: lr = max(lr_min, N(s, a)^-omega); ``"harmonic"``: lr = 1 / N(s, a).
    omega, lr_min
        Parameters of the ``"poly"`` schedule.
    eps
        Exploration rate of the epsilon-greedy behaviour policy, in [0, 1].
    update_all_budgets
        Update every budget node per transition (default) or only the node nearest to the
        current budget.
    max_episode_steps
        Episode cap; a truncated episode bootstraps (it is not terminal).
    seed
        Randomness (int, Generator or None).
    on_progress
        Called with the number of steps done since its previous call, every 1000 steps and once
        at the end (e.g. a progress bar's ``advance``); it does not affect the result.

    Returns
    -------
    QLearningResult

    Raises
    ------
    ValueError
        On out-of-range hyper-parameters.
    TypeError
        If an environment has non-Discrete spaces.

    Example
    -------
    >>> from icml26.cvar_rl import risky_chain, cvar_from_values
    >>> mdp = risky_chain(); grid = BudgetGrid(-60.0, 40.0, 201)
    >>> res = cvar_q_learning(mdp, grid, mdp.gamma, 2000, lr_schedule="harmonic", seed=0)
    >>> res.Q.shape
    (6, 201, 2)
    """
    owner = "cvar_q_learning"
    gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, closed="neither", owner=owner)
    n_steps = check_positive_int("n_steps", n_steps, owner=owner)
    check_one_of("lr_schedule", lr_schedule, ("poly", "harmonic"), owner=owner)
    omega = check_in_interval("omega", omega, low=0.5, high=1.0, owner=owner)
    lr_min = check_in_interval("lr_min", lr_min, low=0.0, high=1.0, owner=owner)
    eps = check_in_interval("eps", eps, low=0.0, high=1.0, owner=owner)
    max_episode_steps = check_positive_int("max_episode_steps", max_episode_steps, owner=owner)
    rng = numpy_generator(seed)
    if isinstance(env_or_mdp, TabularMDP):
        env = _ModelEnv(env_or_mdp, rng)
        n_states, n_actions = env_or_mdp.n_states, env_or_mdp.n_actions
    else:
        env = _GymEnv(env_or_mdp, rng)
        n_states, n_actions = env.n_states, env.n_actions
    nodes = grid.nodes
    Q = np.zeros((n_states, grid.K, n_actions))
    visits = np.zeros((n_states, n_actions), dtype=np.int64)
    episodes, t_episode = 0, max_episode_steps
    for step in range(n_steps):
        if on_progress is not None and step and step % _PROGRESS_EVERY == 0:
            on_progress(_PROGRESS_EVERY)
        if t_episode >= max_episode_steps:
            s, c = env.reset(), float(rng.choice(nodes))
            episodes, t_episode = episodes + 1, 0
        k = int(grid.nearest(c))
        a = int(rng.integers(n_actions)) if rng.random() < eps else int(np.argmax(Q[s, k]))
        s_next, r, terminated = env.step(a)
        visits[s, a] += 1
        n = visits[s, a]
        lr = 1.0 / n if lr_schedule == "harmonic" else max(lr_min, n**-omega)
        budgets = nodes if update_all_budgets else nodes[k : k + 1]
        target = redistributed_reward(budgets, r)
        if not terminated:
            i0, w = grid.weights((budgets - r) / gamma)
            q_next = Q[s_next, i0] * (1 - w[:, None]) + Q[s_next, i0 + 1] * w[:, None]  # (k, A)
            target = target + gamma * q_next.max(axis=1)
        if update_all_budgets:
            Q[s, :, a] += lr * (target - Q[s, :, a])
        else:
            Q[s, k, a] += lr * (target[0] - Q[s, k, a])
        c, s, t_episode = (c - r) / gamma, s_next, t_episode + 1
        if terminated:
            t_episode = max_episode_steps
    if on_progress is not None:
        on_progress(n_steps - (n_steps - 1) // _PROGRESS_EVERY * _PROGRESS_EVERY)
    return QLearningResult(Q, visits, episodes)
