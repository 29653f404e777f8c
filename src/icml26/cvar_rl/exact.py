"""Exact references on finite-horizon MDPs: the off-grid augmented DP and brute-force enumeration.

``exact_augmented_value`` evaluates the redistributed recursion at any continuous budget by
expanding the tree, so it has no discretisation error. ``brute_force_static_cvar`` enumerates
every deterministic policy that maps state histories (s_0, ..., s_t) to actions (for deterministic
policies the past actions are functions of the past states, so this is every deterministic
history-dependent policy), or every deterministic Markov policy, and returns the best CVaR.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int
from icml26.cvar_rl.budget import redistributed_reward
from icml26.cvar_rl.mdp import TabularMDP, check_mdp, count_paths, next_budget

__all__ = [
    "brute_force_cvar_then_mean",
    "brute_force_static_cvar",
    "brute_force_truncated_mean",
    "exact_augmented_cvar",
    "exact_augmented_value",
]

_MAX_POLICIES = 2**20
# The exact references expand trees in Python: at most this many action-annotated paths.
MAX_EXACT_PATHS = 10**5
# ... and recurse once per step: a horizon beyond Python's recursion depth cannot be expanded.
MAX_EXACT_HORIZON = 500


def _check_tree(mdp: object, horizon: object, owner: str) -> tuple[TabularMDP, int]:
    """The model and horizon of an exact reference, refused before a tree too large is grown."""
    mdp = check_mdp(mdp, owner=owner)
    horizon = check_positive_int("horizon", horizon, owner=owner, maximum=MAX_EXACT_HORIZON)
    count_paths(mdp, horizon, owner=owner, limit=MAX_EXACT_PATHS)
    return mdp, horizon


def exact_augmented_value(
    mdp: TabularMDP, c: Any, horizon: int, state: int | None = None
) -> np.ndarray:
    """V*(s, c) = max_pi E[sum_{t<horizon} gamma^t rho(c_t, R_t)] at continuous budgets ``c``.

    Parameters
    ----------
    mdp
        The model; rewards after ``horizon`` steps are ignored (exact for MDPs that end by then).
    c
        Budgets, any shape.
    horizon
        Number of steps of the recursion.
    state
        The state s (default: the start state).

    Returns
    -------
    numpy.ndarray
        V*(s, c), the shape of ``c``.

    Raises
    ------
    TypeError, ValueError
        If ``mdp`` is not a TabularMDP, ``c`` is not numeric, ``state`` is not a state, or
        ``horizon`` exceeds 500 steps or ``MAX_EXACT_PATHS = 10**5`` paths (from s0).

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> v = exact_augmented_value(risky_chain(), 100.0, horizon=3)  # risk-neutral: c >= Z_max
    >>> round(float(v), 6)
    2.972
    """
    owner = "exact_augmented_value"
    mdp, horizon = _check_tree(mdp, horizon, owner)
    c = check_array("c", c, owner=owner, finite=False)
    if state is None:
        s = mdp.s0
    else:
        s = check_positive_int("state", state, minimum=0, maximum=mdp.n_states - 1, owner=owner)
    return _value(mdp, s, c, horizon)


def _value(mdp: TabularMDP, s: int, c: np.ndarray, depth: int) -> np.ndarray:
    if depth == 0 or mdp.terminal[s]:
        return np.zeros_like(c)
    best = np.full_like(c, -np.inf)
    for a in range(mdp.n_actions):
        q = np.zeros_like(c)
        for s_next in np.flatnonzero(mdp.P[s, a]):
            r = mdp.R[s, a, s_next]
            future = _value(mdp, s_next, next_budget(c, r, mdp.gamma), depth - 1)
            q += mdp.P[s, a, s_next] * (redistributed_reward(c, r) + mdp.gamma * future)
        best = np.maximum(best, q)
    return best


def _path_returns(mdp: TabularMDP, horizon: int) -> np.ndarray:
    """Every discounted return a path of at most ``horizon`` steps from s0 can have."""
    states, returns = np.array([mdp.s0]), np.zeros(1)
    for t in range(horizon):
        live = ~mdp.terminal[states]
        s, a, s_next = np.nonzero(mdp.P[states[live]] > 0)
        branch_returns = returns[live][s] + mdp.gamma**t * mdp.R[states[live][s], a, s_next]
        states = np.concatenate([states[~live], s_next])
        returns = np.concatenate([returns[~live], branch_returns])
    return np.unique(returns)


def exact_augmented_cvar(mdp: TabularMDP, alpha: float, horizon: int) -> tuple[float, float]:
    """CVaR*_alpha = max_b b - (b^+ - V*(s0, b)) / alpha with the exact off-grid V*.

    The maximum over b is attained at a return some path can have, so b ranges over those.

    Parameters
    ----------
    mdp
        The model (finite horizon).
    alpha
        Tail level in (0, 1].
    horizon
        Number of steps.

    Returns
    -------
    cvar, b_star

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> round(exact_augmented_cvar(risky_chain(), 0.5, horizon=3)[0], 6)
    0.972
    """
    owner = "exact_augmented_cvar"
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    mdp, horizon = _check_tree(mdp, horizon, owner)
    b = _path_returns(mdp, horizon)
    objective = b - (np.maximum(b, 0.0) - _value(mdp, mdp.s0, b, horizon)) / alpha
    k = int(np.argmax(objective))
    return float(objective[k]), float(b[k])


def _enumerate(mdp: TabularMDP, horizon: int, markov: bool) -> tuple[np.ndarray, np.ndarray]:
    """Returns of all action-annotated paths and each deterministic policy's path probabilities.

    Returns
    -------
    returns
        (n_paths,) discounted return of each path.
    probs
        (n_policies, n_paths): the probability of each path under each policy (0 if the policy
        does not take the path's actions).
    """
    # A path is (decision nodes, actions, probability, return, current history, done).
    paths: list[tuple[tuple[Any, ...], tuple[int, ...], float, float, tuple[int, ...]]] = [
        ((), (), 1.0, 0.0, (mdp.s0,))
    ]
    nodes: dict[Any, int] = {}
    for t in range(horizon):
        grown = []
        for path_nodes, actions, p, z, history in paths:
            s = history[-1]
            if mdp.terminal[s]:
                grown.append((path_nodes, actions, p, z, history))
                continue
            node = nodes.setdefault(s if markov else history, len(nodes))
            for a in range(mdp.n_actions):
                for s_next in np.flatnonzero(mdp.P[s, a]):
                    grown.append(
                        (
                            (*path_nodes, node),
                            (*actions, a),
                            p * mdp.P[s, a, s_next],
                            z + mdp.gamma**t * mdp.R[s, a, s_next],
                            (*history, int(s_next)),
                        )
                    )
        paths = grown
    n_policies = mdp.n_actions ** len(nodes)
    if n_policies > _MAX_POLICIES:
        raise ValueError(
            f"brute force: the mdp has {len(nodes)} decision nodes over this horizon, i.e. "
            f"{n_policies} policies; at most {_MAX_POLICIES} are enumerated."
        )
    # policies[i, node] = the action of policy i at that node (all A^N combinations).
    policies = np.array(np.unravel_index(np.arange(n_policies), (mdp.n_actions,) * len(nodes))).T
    probs = np.empty((n_policies, len(paths)))
    for j, (path_nodes, actions, p, _, _) in enumerate(paths):
        follows = np.all(policies[:, list(path_nodes)] == np.array(actions, dtype=int), axis=1)
        probs[:, j] = p * follows
    return np.array([path[3] for path in paths]), probs


def _policy_cvars(returns: np.ndarray, probs: np.ndarray, alpha: float) -> np.ndarray:
    """CVaR_alpha of each policy's return law (one row of ``probs`` per policy), (n_policies,)."""
    order = np.argsort(returns, kind="stable")
    F = np.minimum(np.cumsum(probs[:, order], axis=1), alpha)  # (n_policies, n_paths)
    return np.diff(F, axis=1, prepend=0.0) @ returns[order] / alpha


def brute_force_static_cvar(
    mdp: TabularMDP, alpha: float, horizon: int, *, markov: bool = False
) -> tuple[float, int]:
    """The best CVaR_alpha over all deterministic history-dependent (or Markov) policies.

    Parameters
    ----------
    mdp
        A finite-horizon model (returns are truncated after ``horizon`` steps).
    alpha
        Tail level in (0, 1].
    horizon
        Number of steps.
    markov
        Enumerate Markov policies (one action per state) instead of history-dependent ones.

    Returns
    -------
    cvar, n_policies
        The best CVaR and the number of policies enumerated.

    Raises
    ------
    ValueError
        If alpha is outside (0, 1], there are more than 2**20 policies, or ``horizon`` exceeds
        500 steps or expands more than ``MAX_EXACT_PATHS = 10**5`` paths.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> cvar, n = brute_force_static_cvar(risky_chain(), 0.5, horizon=3)
    >>> round(cvar, 6), n
    (0.972, 32)
    """
    owner = "brute_force_static_cvar"
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    mdp, horizon = _check_tree(mdp, horizon, owner)
    returns, probs = _enumerate(mdp, horizon, bool(markov))
    return float(_policy_cvars(returns, probs, alpha).max()), probs.shape[0]


def brute_force_cvar_then_mean(
    mdp: TabularMDP, alpha: float, horizon: int, *, tol: float = 1e-9
) -> tuple[float, float]:
    """The best CVaR_alpha, and the best mean among the policies that attain it, by enumeration.

    The lexicographic reference for the tie-broken greedy policy of
    :func:`augmented_value_iteration`: over every deterministic history-dependent policy pi,
    cvar = max_pi CVaR_alpha(Z^pi) and mean = max { E[Z^pi] : CVaR_alpha(Z^pi) >= cvar - tol }.

    Parameters
    ----------
    mdp
        A finite-horizon model (returns are truncated after ``horizon`` steps).
    alpha
        Tail level in (0, 1].
    horizon
        Number of steps.
    tol
        Policies within ``tol`` of the best CVaR count as optimal (round-off).

    Returns
    -------
    cvar, mean

    Raises
    ------
    ValueError
        If alpha is outside (0, 1], there are more than 2**20 policies, or ``horizon`` exceeds
        500 steps or expands more than ``MAX_EXACT_PATHS = 10**5`` paths.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> [round(x, 6) for x in brute_force_cvar_then_mean(risky_chain(), 0.5, horizon=3)]
    [0.972, 2.891]
    """
    owner = "brute_force_cvar_then_mean"
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="right", owner=owner)
    mdp, horizon = _check_tree(mdp, horizon, owner)
    tol = check_in_interval("tol", tol, low=0.0, owner=owner)
    returns, probs = _enumerate(mdp, horizon, False)
    cvars, means = _policy_cvars(returns, probs, alpha), probs @ returns
    best = float(cvars.max())
    return best, float(means[cvars >= best - tol].max())


def brute_force_truncated_mean(mdp: TabularMDP, c: float, horizon: int) -> float:
    """max over deterministic history-dependent policies of E[min(Z, c)], by enumeration.

    Equals V*(s0, c) + min(c, 0) (spec §2.2), a check of the augmented DP.

    Examples
    --------
    >>> from icml26.cvar_rl import risky_chain
    >>> round(brute_force_truncated_mean(risky_chain(), 100.0, horizon=3), 6)
    2.972
    """
    owner = "brute_force_truncated_mean"
    c = check_in_interval("c", c, owner=owner)
    mdp, horizon = _check_tree(mdp, horizon, owner)
    returns, probs = _enumerate(mdp, horizon, False)
    return float((probs @ np.minimum(returns, c)).max())
