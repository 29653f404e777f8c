"""gamma = 1 (undiscounted returns) where every episode ends within H steps, refused elsewhere
(issue 49, item 7), through gymnasium's make / the toy-text table of the envs."""

import gymnasium as gym
import numpy as np
import pytest

from icml26.cvar_rl import (
    AugmentedSolution,
    BudgetGrid,
    TabularMDP,
    augmented_value_iteration,
    brute_force_static_cvar,
    cvar_error_bound,
    cvar_from_values,
    cvar_q_learning,
    cvar_standard_error,
    empirical_cvar,
    exact_cvar,
    exact_return_distribution,
    random_layered_mdp,
    register_envs,
    risk_neutral_vi,
    rollout,
    step_size,
)

register_envs()
RISKY_ID, LAYERED_ID = "icml26/RiskyChain-v0", "icml26/RandomLayeredMDP-v0"

# RiskyChain without discount, by hand: s0 pays +4 (branch L) or 0 (branch U) with probability
# 1/2, then s1 pays +1 (safe) or +3 / -6 with probability 0.8 / 0.2 (risky). Playing risky
# after U only gives the returns {5: 0.5, 3: 0.4, -6: 0.1}: CVaR_0.5 = (-0.6 + 1.2) / 0.5 = 1.2;
# safe everywhere gives {5, 1} (CVaR_0.1 = 1); risky everywhere has the best mean 2 + 1.2 = 3.2.
# (With gamma = 0.9 the same optima are 0.81, 0.972 and 2.972.)
UNDISCOUNTED_OPTIMA = {0.1: 1.0, 0.5: 1.2, 1.0: 3.2}


def undiscounted_grid(mdp, K):
    return BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), 1.0, K=K, horizon=mdp.max_steps())


def test_value_iteration_at_gamma_one_matches_hand_computed_cvar_and_gymnasium_rollouts():
    env = gym.make(RISKY_ID)
    mdp = TabularMDP.from_gymnasium(env, gamma=1.0)
    H = mdp.max_steps()
    assert (mdp.gamma, H) == (1.0, 3)
    sol = augmented_value_iteration(mdp, undiscounted_grid(mdp, 2001))
    # Values of a state with d steps left are final after d sweeps: one more sweep confirms it.
    assert (sol.iterations, sol.residual, sol.horizon) == (H + 1, 0.0, H)
    for alpha, optimum in UNDISCOUNTED_OPTIMA.items():
        estimate = sol.cvar(alpha)
        assert estimate.clamping_exact and np.isfinite(estimate.error_bound)
        assert abs(estimate.value - optimum) <= estimate.error_bound
        assert brute_force_static_cvar(mdp, alpha, H)[0] == pytest.approx(optimum, abs=1e-12)
        policy = sol.policy(estimate.b_star)
        atoms, probs = exact_return_distribution(mdp, policy, H)
        assert exact_cvar(atoms, probs, alpha) == pytest.approx(optimum, abs=1e-12)
    # Monte-Carlo of undiscounted returns on the gymnasium env, alpha = 0.5's policy: returns
    # {5, 3, -6} w.p. {0.5, 0.4, 0.1} (mean 3.1, CVaR_0.5 1.2), within 4 standard errors.
    z = rollout(env, sol.policy(sol.cvar(0.5).b_star), 8000, seed=0, gamma=1.0)
    assert set(np.unique(z)) == {5.0, 3.0, -6.0}
    assert abs(z.mean() - 3.1) <= 4 * z.std() / np.sqrt(z.size)
    assert abs(empirical_cvar(z, 0.5) - 1.2) <= 4 * cvar_standard_error(z, 0.5)
    V_rn, _ = risk_neutral_vi(mdp)
    assert V_rn[mdp.s0] == pytest.approx(3.2, abs=1e-12)


@pytest.mark.parametrize("model_seed", [0, 3])
def test_gamma_one_on_the_layered_env_equals_brute_force_over_history_dependent_policies(
    model_seed,
):
    env = gym.make(LAYERED_ID, width=2, n_actions=2, horizon=3, model_seed=model_seed)
    mdp = TabularMDP.from_gymnasium(env, gamma=1.0)  # states split on reward collisions
    direct = random_layered_mdp(2, 2, 3, gamma=1.0, seed=model_seed)  # the same model, unsplit
    sol = augmented_value_iteration(mdp, undiscounted_grid(mdp, 1201))
    assert (sol.iterations, sol.residual) == (4, 0.0)
    for alpha in (0.2, 0.5, 1.0):
        estimate = sol.cvar(alpha)
        brute = brute_force_static_cvar(direct, alpha, 3)[0]
        assert abs(estimate.value - brute) <= estimate.error_bound
        assert abs(estimate.value - brute) < 0.02
    # alpha = 1: the best expected undiscounted sum, by an independent backward recursion.
    V = np.zeros(direct.n_states)
    for s in reversed(range(direct.n_states - 1)):  # layers are numbered forward
        V[s] = np.max(np.sum(direct.P[s] * (direct.R[s] + V[None, :]), axis=1))
    assert sol.cvar(1.0).value == pytest.approx(V[0], abs=sol.cvar(1.0).error_bound)


def test_q_learning_at_gamma_one_on_the_gymnasium_env_learns_the_undiscounted_optimum():
    mdp = TabularMDP.from_gymnasium(RISKY_ID, gamma=1.0)
    grid = undiscounted_grid(mdp, 301)
    q = cvar_q_learning(gym.make(RISKY_ID), grid, 1.0, 60_000, eps=0.3, seed=0)
    assert q.gamma == 1.0
    for alpha, optimum in UNDISCOUNTED_OPTIMA.items():
        learned, b = cvar_from_values(q.Q[0].max(axis=1), grid, alpha)
        assert abs(learned - optimum) < 0.1  # the discounted optima are >= 0.19 away
        atoms, probs = exact_return_distribution(mdp, q.policy(b), 3)
        assert exact_cvar(atoms, probs, alpha) == pytest.approx(optimum, abs=1e-12)


def test_the_episodic_step_size_replaces_one_over_one_minus_gamma_by_the_horizon():
    n = np.array([1, 3, 30])
    assert step_size(n, gamma=1.0, horizon=3) == pytest.approx(3 / (3 + n))
    assert step_size(n, gamma=0.9, horizon=3) == pytest.approx(1 / (1 + 0.1 * n))  # unchanged
    assert step_size(n, "harmonic", gamma=1.0) == pytest.approx(1 / n)
    with pytest.raises(ValueError, match="gamma = 1 needs a horizon"):
        step_size(n, gamma=1.0)


@pytest.mark.parametrize("env_id", ["CliffWalking-v1", "FrozenLake-v1"])
def test_gamma_one_is_refused_where_an_episode_can_cycle_forever(env_id):
    with pytest.raises(ValueError, match="cycle among non-terminal states forever") as error:
        TabularMDP.from_gymnasium(env_id, gamma=1.0)
    assert "Use gamma < 1, or add a horizon" in str(error.value)
    mdp = TabularMDP.from_gymnasium(env_id, gamma=0.9)
    assert mdp.max_steps() is None
    grid = BudgetGrid(-10.0, 10.0, 5)
    for env_or_mdp in (gym.make(env_id), mdp):
        with pytest.raises(ValueError, match=r"cvar_q_learning: gamma = 1 .* cycle"):
            cvar_q_learning(env_or_mdp, grid, 1.0, 10, seed=0)


def test_a_self_loop_names_its_state_and_a_tableless_env_cannot_be_checked():
    P = np.zeros((3, 1, 3))
    P[0, 0, 1] = P[1, 0, 1] = P[2, 0, 2] = 1.0  # state 1 loops on itself; state 2 is terminal
    terminal = np.array([False, False, True])
    with pytest.raises(ValueError, match="from state 0 an episode can cycle"):
        TabularMDP(P, np.zeros_like(P), 1.0, terminal=terminal)
    P[1, 0] = [0.0, 0.5, 0.5]  # ends with probability 1, but not within a bounded number of steps
    with pytest.raises(ValueError, match="gamma = 1"):
        TabularMDP(P, np.zeros_like(P), 1.0, terminal=terminal)
    assert TabularMDP(P, np.zeros_like(P), 0.99, terminal=terminal).depths().tolist() == [-1, -1, 0]

    class NoTable(gym.Env):
        observation_space, action_space = gym.spaces.Discrete(2), gym.spaces.Discrete(1)

        def reset(self, *, seed=None, options=None):
            return 0, {}

        def step(self, action):
            return 1, 0.0, True, False, {}

    with pytest.raises(ValueError, match=r"toy-text table env\.unwrapped\.P"):
        cvar_q_learning(NoTable(), BudgetGrid(0.0, 1.0, 3), 1.0, 10, seed=0)


def test_bounds_and_solutions_at_gamma_one_need_a_horizon():
    grid = BudgetGrid(0.0, 4.0, 81)
    with pytest.raises(ValueError, match="gamma = 1 needs a horizon"):
        BudgetGrid.from_reward_bounds(0.0, 1.0, 1.0, 5)
    with pytest.raises(ValueError, match="gamma = 1 needs a horizon"):
        cvar_error_bound(grid, 1.0, 0.5)
    # G = sum_{t=1}^{H-1} gamma^t = 3 steps of interpolation error delta / 2 = 0.025.
    assert cvar_error_bound(grid, 1.0, 0.5, horizon=4) == pytest.approx(3 * 0.025 / 0.5 + 0.125)
    # With a horizon the discounted bound only tightens.
    assert cvar_error_bound(grid, 0.9, 0.5, horizon=4) < cvar_error_bound(grid, 0.9, 0.5)
    sol = augmented_value_iteration(random_layered_mdp(gamma=1.0, seed=1), grid)
    with pytest.raises(ValueError, match="gamma = 1 needs a horizon"):
        AugmentedSolution(sol.V, sol.Q, grid, 4, 0.0, sol.Q_mean, 1.0, 0, 0.0, True, horizon=None)
