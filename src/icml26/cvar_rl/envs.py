"""Gymnasium side: a tabular MDP as a ``gymnasium.Env``, the registered test envs, and rollouts.

``TabularMDPEnv(mdp)`` simulates a :class:`TabularMDP` with gymnasium's API (``Discrete``
observations = model state ids, ``Discrete`` actions, the env's own ``np_random``) and carries
the toy-text table ``P[s][a] = [(p, s', r, terminated), ...]``, so that
:meth:`TabularMDP.from_gymnasium` reads the model back. :func:`register_envs` registers the
project's test problems under the ``icml26/`` namespace (``icml26/RiskyChain-v0``,
``icml26/RandomLayeredMDP-v0``); importing this module registers them, so
``gymnasium.make("icml26.cvar_rl.envs:icml26/RiskyChain-v0")`` works in a fresh process.
:func:`rollout` plays any :class:`AbstractPolicy` on any env with ``Discrete`` observations.

The env does not discount: rewards are the model's r(s, a, s'); ``rollout(..., gamma=...)``
discounts them.
"""

from __future__ import annotations

from typing import Any, final

import gymnasium as gym
import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int
from icml26.cvar_rl.mdp import (
    MAX_HORIZON,
    TabularMDP,
    check_mdp,
    generator,
    random_layered_mdp,
    risky_chain,
)
from icml26.cvar_rl.policies import MAX_EPISODES, AbstractPolicy, check_policy

__all__ = ["TabularMDPEnv", "register_envs", "rollout"]

RISKY_CHAIN_ID = "icml26/RiskyChain-v0"
RANDOM_LAYERED_ID = "icml26/RandomLayeredMDP-v0"


@final
class TabularMDPEnv(gym.Env):
    """A :class:`TabularMDP` as a gymnasium environment.

    ``reset`` returns the start state ``mdp.s0``; ``step(a)`` draws s' ~ P(. | s, a) from the
    env's ``np_random``, returns the reward R[s, a, s'] and ``terminated = mdp.terminal[s']``.
    Never truncates (wrap with ``gymnasium.wrappers.TimeLimit`` or register with
    ``max_episode_steps``). ``info`` holds ``{"prob": P(s' | s, a)}`` as in toy-text.

    Parameters
    ----------
    mdp
        The model to simulate.
    render_mode
        Only ``None`` (no rendering).

    Raises
    ------
    TypeError
        If ``mdp`` is not a :class:`TabularMDP`.
    ValueError
        If ``render_mode`` is not ``None``.

    Examples
    --------
    >>> env = TabularMDPEnv(risky_chain())
    >>> env.reset(seed=0)
    (0, {'prob': 1.0})
    >>> env.step(0)[1:3]  # s0 -> U (reward 0) with this seed, not terminated
    (0.0, False)
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(self, mdp: TabularMDP, render_mode: str | None = None) -> None:
        self.mdp = check_mdp(mdp, owner="TabularMDPEnv")
        if render_mode is not None:
            raise ValueError(
                f"TabularMDPEnv: render_mode must be None (no rendering); got {render_mode!r}."
            )
        self.render_mode = None
        self.observation_space = gym.spaces.Discrete(self.mdp.n_states)
        self.action_space = gym.spaces.Discrete(self.mdp.n_actions)
        self._cdf = np.cumsum(self.mdp.P, axis=2)  # (S, A, S): inverse-CDF sampling of s'
        self.P = {
            s: {a: self._outcomes(s, a) for a in range(self.mdp.n_actions)}
            for s in range(self.mdp.n_states)
        }
        self._state: int | None = None

    def _outcomes(self, s: int, a: int) -> list[tuple[float, int, float, bool]]:
        """Toy-text row: (p, s', r, terminated) for every s' with P(s' | s, a) > 0."""
        mdp = self.mdp
        if mdp.terminal[s]:  # absorbing with reward 0
            return [(1.0, s, 0.0, True)]
        return [
            (float(mdp.P[s, a, t]), int(t), float(mdp.R[s, a, t]), bool(mdp.terminal[t]))
            for t in np.flatnonzero(mdp.P[s, a] > 0)
        ]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """Start an episode in ``mdp.s0`` (``seed`` seeds ``np_random``, as in gymnasium)."""
        super().reset(seed=seed)
        self._state = self.mdp.s0
        return self._state, {"prob": 1.0}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict[str, Any]]:
        """One transition: (s', r, terminated, truncated = False, {"prob": p})."""
        if self._state is None:
            raise gym.error.ResetNeeded("TabularMDPEnv: call reset() before step().")
        if not self.action_space.contains(action):
            raise ValueError(
                f"TabularMDPEnv.step: action must be in range(0, {self.mdp.n_actions}); "
                f"got {action!r}."
            )
        s, a = self._state, int(action)
        u = self.np_random.random()
        s_next = min(int(np.searchsorted(self._cdf[s, a], u, side="right")), self.mdp.n_states - 1)
        if self.mdp.terminal[s]:
            s_next = s
        reward = 0.0 if self.mdp.terminal[s] else float(self.mdp.R[s, a, s_next])
        self._state = s_next
        terminated = bool(self.mdp.terminal[s_next])
        return s_next, reward, terminated, False, {"prob": float(self.mdp.P[s, a, s_next])}


def _risky_chain_env(render_mode: str | None = None) -> TabularMDPEnv:
    """Entry point of ``icml26/RiskyChain-v0`` (gamma is not part of the env)."""
    return TabularMDPEnv(risky_chain(), render_mode=render_mode)


def _random_layered_env(
    width: int = 2,
    n_actions: int = 2,
    horizon: int = 3,
    model_seed: int = 0,
    render_mode: str | None = None,
) -> TabularMDPEnv:
    """Entry point of ``icml26/RandomLayeredMDP-v0``; ``model_seed`` draws the tables."""
    mdp = random_layered_mdp(width, n_actions, horizon, seed=model_seed)
    return TabularMDPEnv(mdp, render_mode=render_mode)


def register_envs() -> tuple[str, ...]:
    """Register the test environments with ``gymnasium.register`` (idempotent).

    ``icml26/RiskyChain-v0`` is :func:`risky_chain` (3 steps, then terminal);
    ``icml26/RandomLayeredMDP-v0`` is :func:`random_layered_mdp` with ``make`` keywords
    ``width``, ``n_actions``, ``horizon`` and ``model_seed`` (default 2, 2, 3, 0). Both end by
    termination; ``max_episode_steps`` is a safety limit of 1000 steps.

    Returns
    -------
    tuple of str
        The registered ids.

    Examples
    --------
    >>> import gymnasium as gym
    >>> register_envs()
    ('icml26/RiskyChain-v0', 'icml26/RandomLayeredMDP-v0')
    >>> gym.make("icml26/RiskyChain-v0").observation_space
    Discrete(6)
    """
    entries = {
        RISKY_CHAIN_ID: f"{__name__}:_risky_chain_env",
        RANDOM_LAYERED_ID: f"{__name__}:_random_layered_env",
    }
    for env_id, entry_point in entries.items():
        if env_id not in gym.registry:  # re-registering warns
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=1000)
    return tuple(entries)


def _env_seed(seed: Seed, owner: str) -> int | None:
    """An int seed for ``env.reset``: an int as given (gymnasium's convention), else drawn."""
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return check_positive_int("seed", seed, minimum=0, owner=owner)
    return int(generator(seed, owner=owner).integers(0, 2**63 - 1))


def rollout(
    env: gym.Env,
    policy: AbstractPolicy,
    episodes: int,
    seed: Seed = None,
    *,
    gamma: float = 1.0,
    max_steps: int = MAX_HORIZON,
) -> np.ndarray:
    """Returns of ``episodes`` episodes of ``policy`` played on a gymnasium ``env``.

    Each episode: ``policy.reset()``, ``obs = env.reset(...)``, then ``a = policy(obs)``,
    ``obs, r, terminated, truncated, _ = env.step(a)``, ``policy.observe(r, next_state=obs)``
    until ``terminated`` or ``truncated`` (the env's TimeLimit) or ``max_steps`` steps.

    Parameters
    ----------
    env
        A ``gymnasium.Env`` with ``Discrete`` observations the policy knows (e.g. an env the
        policy's model was built from with :meth:`TabularMDP.from_gymnasium`, or a registered
        ``icml26/`` env).
    policy
        Any :class:`AbstractPolicy`.
    episodes
        Number of episodes, at most ``10**7``.
    seed
        An int seeds the first ``env.reset(seed=seed)`` (later resets continue the env's
        stream, as in gymnasium); a Generator or ``None`` draws that int.
    gamma
        Discount in [0, 1] of the returned sums (1: the plain episode return). Pass the
        model's gamma to compare with a CVaR computed on it.
    max_steps
        Steps per episode at most (1 to 10**6); longer episodes are cut.

    Returns
    -------
    numpy.ndarray
        sum_t gamma^t r_t per episode, shape (episodes,).

    Raises
    ------
    TypeError
        If ``env`` is not a ``gymnasium.Env`` or ``policy`` not an :class:`AbstractPolicy`.
    ValueError
        If a size, ``gamma`` or ``seed`` is out of range, or the policy refuses an observation.

    Examples
    --------
    >>> import gymnasium as gym
    >>> from icml26.cvar_rl import MarkovPolicy
    >>> z = rollout(gym.make("icml26/RiskyChain-v0"), MarkovPolicy([0] * 6), 1000, seed=0)
    >>> sorted(set(z.tolist()))  # safe action: 0 + 0 + 1 or 4 + 0 + 1
    [1.0, 5.0]
    """
    owner = "rollout"
    if not isinstance(env, gym.Env):
        raise TypeError(f"{owner}: env must be a gymnasium.Env; got {type(env).__name__}.")
    policy = check_policy(policy, owner=owner)
    n = check_positive_int("episodes", episodes, owner=owner, maximum=MAX_EPISODES)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=1.0, owner=owner)
    max_steps = check_positive_int("max_steps", max_steps, owner=owner, maximum=MAX_HORIZON)
    env_seed = _env_seed(seed, owner)
    returns = np.zeros(n)
    for episode in range(n):
        policy.reset()
        obs, _ = env.reset(seed=env_seed if episode == 0 else None)
        discount = 1.0
        for _ in range(max_steps):
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            returns[episode] += discount * float(reward)
            discount *= gamma
            if terminated or truncated:
                break
            policy.observe(float(reward), next_state=int(obs))
    return returns


register_envs()
