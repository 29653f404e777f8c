"""Return distributions of policies (exact on finite trees, or Monte Carlo) and their CVaR.

CVaR_alpha(Z) is the mean of the worst alpha-fraction of returns (the lower tail):
CVaR_alpha(Z) = (1 / alpha) * integral_0^alpha VaR_u(Z) du; alpha = 1 gives the mean.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Seed, check_array, check_in_interval, check_positive_int
from icml26.cvar_rl.mdp import MAX_HORIZON, MAX_PATHS, TabularMDP, check_mdp, count_paths, generator
from icml26.cvar_rl.policies import MAX_EPISODES, AbstractPolicy, check_policy

if TYPE_CHECKING:
    from icml26.cvar_rl.value_iteration import AugmentedSolution, CVaREstimate

__all__ = [
    "cvar_standard_error",
    "empirical_cvar",
    "exact_cvar",
    "exact_return_distribution",
    "optimal_cvar_rollouts",
    "rollout_returns",
]


def exact_cvar(atoms: Any, probs: Any, alpha: float) -> float:
    """CVaR_alpha of a discrete distribution: the mean of its lower alpha-tail.

    Parameters
    ----------
    atoms
        Values of the distribution (n,).
    probs
        Their probabilities (n,), non-negative, summing to 1 (within 1e-8).
    alpha
        Tail level in (0, 1].

    Returns
    -------
    float
        (1 / alpha) * sum_i z_(i) * (min(F_i, alpha) - min(F_{i-1}, alpha)) over sorted atoms.

    Raises
    ------
    ValueError
        If alpha is outside (0, 1], an entry is NaN or infinite, or the probabilities are invalid.

    Examples
    --------
    >>> exact_cvar([0.0, 10.0], [0.5, 0.5], alpha=0.25)
    0.0
    >>> exact_cvar([0.0, 10.0], [0.5, 0.5], alpha=1.0)
    5.0
    """
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner="exact_cvar")
    atoms = check_array("atoms", atoms, owner="exact_cvar").ravel()
    probs = check_array("probs", probs, owner="exact_cvar").ravel()
    if atoms.shape != probs.shape or atoms.size == 0:
        raise ValueError(
            f"exact_cvar: atoms and probs must be non-empty with one shape; got "
            f"{atoms.shape} and {probs.shape}."
        )
    if np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-8:
        raise ValueError(
            f"exact_cvar: probs must be non-negative and sum to 1; got sum {probs.sum()!r}."
        )
    order = np.argsort(atoms, kind="stable")
    F = np.minimum(np.cumsum(probs[order]), alpha)
    mass = np.diff(F, prepend=0.0)
    return float(atoms[order] @ mass / alpha)


def empirical_cvar(returns: Any, alpha: float) -> float:
    """CVaR_alpha of the empirical distribution of ``returns`` (mean of the worst alpha n).

    Parameters
    ----------
    returns
        Sampled returns (n,).
    alpha
        Tail level in (0, 1].

    Returns
    -------
    float

    Examples
    --------
    >>> empirical_cvar([1.0, 2.0, 3.0, 4.0], alpha=0.5)
    1.5
    """
    returns = check_array("returns", returns, owner="empirical_cvar").ravel()
    if returns.size == 0:
        raise ValueError("empirical_cvar: returns must hold at least one return; got none.")
    return exact_cvar(returns, np.full(returns.size, 1.0 / max(returns.size, 1)), alpha)


def cvar_standard_error(returns: Any, alpha: float) -> float:
    """Standard error of :func:`empirical_cvar` from the influence function of CVaR.

    The influence function of CVaR_alpha at Z is (VaR_alpha - Z)^+ / alpha up to a constant, so
    SE = std((VaR_alpha - Z)^+) / (alpha sqrt(n)), with VaR_alpha the empirical alpha-quantile.

    Parameters
    ----------
    returns
        Sampled returns (n,), finite.
    alpha
        Tail level in (0, 1].

    Returns
    -------
    float
        The standard error (0 when every return is equal).

    Raises
    ------
    ValueError
        If ``returns`` is empty or not finite, or alpha is outside (0, 1].

    Examples
    --------
    >>> z = np.random.default_rng(0).normal(size=10_000)
    >>> round(empirical_cvar(z, alpha=0.1), 2), round(cvar_standard_error(z, alpha=0.1), 2)
    (-1.75, 0.02)
    """
    owner = "cvar_standard_error"
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    returns = check_array("returns", returns, owner=owner).ravel()
    if returns.size == 0:
        raise ValueError(f"{owner}: returns must hold at least one return; got none.")
    var = np.quantile(returns, alpha)
    return float(np.std(np.maximum(var - returns, 0.0)) / (alpha * math.sqrt(returns.size)))


def _step(cdf: np.ndarray, states: np.ndarray, actions: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Next states by inverse-CDF sampling with the uniforms ``u`` (n,); ``cdf`` = cumsum of P."""
    return np.minimum((u[:, None] > cdf[states, actions]).sum(axis=1), cdf.shape[2] - 1)


def rollout_returns(
    mdp: TabularMDP, policy: AbstractPolicy, n_episodes: int, horizon: int, seed: Seed = None
) -> np.ndarray:
    """Discounted returns of ``n_episodes`` episodes of ``policy``, simulated together.

    Parameters
    ----------
    mdp
        The model to simulate.
    policy
        Any :class:`AbstractPolicy` (its memory is carried per episode).
    n_episodes
        Number of episodes, at most ``MAX_EPISODES = 10**7``.
    horizon
        Steps per episode (at most ``MAX_HORIZON = 10**6``); episodes that have not terminated
        are truncated.
    seed
        Randomness (int, Generator or None).

    Returns
    -------
    numpy.ndarray
        Returns sum_{t < horizon} gamma^t r_t, shape (n_episodes,).

    Raises
    ------
    TypeError, ValueError
        If ``mdp``/``policy`` has the wrong type, a size is out of range, or the policy refuses
        the model's states (e.g. a Markov policy with fewer actions than states).

    Examples
    --------
    >>> from icml26.cvar_rl import MarkovPolicy, risky_chain
    >>> z = rollout_returns(risky_chain(), MarkovPolicy([0] * 6), 1000, 5, seed=0)
    >>> sorted(set(np.round(z, 6).tolist()))
    [0.81, 4.81]
    """
    owner = "rollout_returns"
    mdp, policy = check_mdp(mdp, owner=owner), check_policy(policy, owner=owner)
    n = check_positive_int("n_episodes", n_episodes, owner=owner, maximum=MAX_EPISODES)
    horizon = check_positive_int("horizon", horizon, owner=owner, maximum=MAX_HORIZON)
    rng = generator(seed, owner=owner)
    states = np.full(n, mdp.s0)
    memory = policy.initial_memory(n)
    returns = np.zeros(n)
    cdf = np.cumsum(mdp.P, axis=2)  # once, not per step: the per-step cumsum was half the time
    for t in range(horizon):
        live = np.flatnonzero(~mdp.terminal[states])
        if live.size == 0:
            break
        s = states[live]
        a = policy.act_batch(s, memory[live])
        s_next = _step(cdf, s, a, rng.random(live.size))
        r = mdp.R[s, a, s_next]
        returns[live] += mdp.gamma**t * r
        memory[live] = policy.update_memory(memory[live], s, a, r, s_next)
        states[live] = s_next
    return returns


def optimal_cvar_rollouts(
    mdp: TabularMDP,
    solution: AugmentedSolution,
    alpha: float,
    n_episodes: int,
    horizon: int,
    seed: Seed = None,
) -> tuple[CVaREstimate, np.ndarray]:
    """CVaR*_alpha predicted by a grid solution and Monte-Carlo returns of the policy it implies.

    Reads b* off ``solution`` (:meth:`AugmentedSolution.cvar`) and simulates the augmented greedy
    policy started from budget b* (:meth:`AugmentedSolution.policy`) with :func:`rollout_returns`,
    so that the predicted value can be checked against ``empirical_cvar(returns, alpha)``.

    Parameters
    ----------
    mdp
        The model ``solution`` was computed for.
    solution
        The result of :func:`augmented_value_iteration` on ``mdp``.
    alpha
        Tail level in (0, 1].
    n_episodes, horizon, seed
        As for :func:`rollout_returns`.

    Returns
    -------
    estimate, returns
        The :class:`CVaREstimate` (value, b*, error bound) and the returns (n_episodes,).

    Raises
    ------
    TypeError, ValueError
        If ``solution`` is not an :class:`AugmentedSolution` of a model with ``mdp``'s states
        and actions, or an argument is out of range.

    Examples
    --------
    >>> from icml26.cvar_rl import BudgetGrid, augmented_value_iteration, risky_chain
    >>> mdp = risky_chain()
    >>> sol = augmented_value_iteration(mdp, BudgetGrid(-60.0, 40.0, 2001))
    >>> estimate, z = optimal_cvar_rollouts(mdp, sol, 0.5, 20_000, horizon=3, seed=0)
    >>> round(estimate.value, 2), abs(empirical_cvar(z, 0.5) - estimate.value) < 0.1
    (0.97, True)
    """
    from icml26.cvar_rl.value_iteration import AugmentedSolution

    owner = "optimal_cvar_rollouts"
    mdp = check_mdp(mdp, owner=owner)
    if not isinstance(solution, AugmentedSolution):
        raise TypeError(
            f"{owner}: solution must be an AugmentedSolution (from augmented_value_iteration); "
            f"got {type(solution).__name__}."
        )
    expected = (mdp.n_states, solution.grid.K, mdp.n_actions)
    if solution.Q.shape != expected:
        raise ValueError(
            f"{owner}: solution must be computed for mdp (Q of shape {expected}); got "
            f"{solution.Q.shape}."
        )
    estimate = solution.cvar(alpha)
    policy = solution.policy(estimate.b_star)
    return estimate, rollout_returns(mdp, policy, n_episodes, horizon, seed)


def exact_return_distribution(
    mdp: TabularMDP, policy: AbstractPolicy, horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """The exact distribution of the (truncated) return of ``policy``, by expanding its tree.

    The number of branches grows like (successors per step)^horizon: use it on small problems.

    Parameters
    ----------
    mdp
        The model.
    policy
        Any :class:`AbstractPolicy`.
    horizon
        Number of steps expanded; the tree (counted before it is expanded, over every action)
        may have at most ``MAX_PATHS = 10**6`` paths.

    Returns
    -------
    atoms, probs
        One atom per branch (not merged), and its probability.

    Raises
    ------
    TypeError, ValueError
        If ``mdp``/``policy`` has the wrong type or ``horizon`` expands too many paths.

    Examples
    --------
    >>> from icml26.cvar_rl import MarkovPolicy, risky_chain
    >>> z, p = exact_return_distribution(risky_chain(), MarkovPolicy([1] * 6), horizon=3)
    >>> round(exact_cvar(z, p, alpha=1.0), 6)
    2.972
    """
    owner = "exact_return_distribution"
    mdp, policy = check_mdp(mdp, owner=owner), check_policy(policy, owner=owner)
    horizon = check_positive_int("horizon", horizon, owner=owner)
    count_paths(mdp, horizon, owner=owner, limit=MAX_PATHS)
    states, probs = np.array([mdp.s0]), np.ones(1)
    returns, memory = np.zeros(1), policy.initial_memory(1)
    for t in range(horizon):
        live = ~mdp.terminal[states]
        if not live.any():
            break
        done = ~live
        a = policy.act_batch(states[live], memory[live])
        p_next = mdp.P[states[live], a]  # (n_live, S)
        branch, s_next = np.nonzero(p_next)
        s = states[live][branch]
        r = mdp.R[s, a[branch], s_next]
        new_memory = policy.update_memory(memory[live][branch], s, a[branch], r, s_next)
        states = np.concatenate([states[done], s_next])
        probs = np.concatenate([probs[done], probs[live][branch] * p_next[branch, s_next]])
        returns = np.concatenate([returns[done], returns[live][branch] + mdp.gamma**t * r])
        memory = np.concatenate([memory[done], new_memory])
    return returns, probs
