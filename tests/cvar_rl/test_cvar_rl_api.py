"""Spec §7 checks 11-12 (Q-learning, determinism), gymnasium models and bad inputs."""

import gymnasium as gym
import numpy as np
import pytest

from icml26.cvar_rl import (
    AugmentedGreedyPolicy,
    BudgetGrid,
    MarkovPolicy,
    TabularMDP,
    augmented_bellman,
    augmented_value_iteration,
    brute_force_static_cvar,
    chow_cvar_vi,
    cvar_from_values,
    cvar_q_learning,
    exact_cvar,
    optimal_cvar_rollouts,
    risk_neutral_vi,
    risky_chain,
    rollout_returns,
    step_size,
)


@pytest.fixture(scope="module")
def chain_solution():
    mdp = risky_chain()
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, 401)
    return mdp, grid, augmented_value_iteration(mdp, grid)


def test_q_learning_matches_value_iteration_on_risky_chain(chain_solution):
    mdp, grid, sol = chain_solution
    q = cvar_q_learning(mdp, grid, mdp.gamma, 20_000, lr_schedule="harmonic", eps=0.3, seed=0)
    for alpha in (0.1, 0.3, 0.5, 1.0):
        vi, b = cvar_from_values(sol.V[0], grid, alpha)
        ql, b_q = cvar_from_values(q.Q[0].max(axis=1), grid, alpha)
        assert abs(ql - vi) <= 0.1  # spec §5 Q2 acceptance band (measured ~0.03)
        budgets = np.array([(b - 4.0) / 0.81, b / 0.81])  # budget at s1 after L and after U
        budgets_q = np.array([(b_q - 4.0) / 0.81, b_q / 0.81])
        vi_actions = AugmentedGreedyPolicy(sol.Q, grid, mdp.gamma, b).act_batch(
            np.array([3, 3]), budgets
        )
        q_actions = AugmentedGreedyPolicy(q.Q, grid, mdp.gamma, b_q).act_batch(
            np.array([3, 3]), budgets_q
        )
        np.testing.assert_array_equal(vi_actions, q_actions)


def test_single_budget_updates_touch_one_node_per_step(chain_solution):
    mdp, grid, _ = chain_solution
    q = cvar_q_learning(mdp, grid, mdp.gamma, 50, update_all_budgets=False, seed=1)
    assert np.count_nonzero(q.Q) <= 50  # at most one (s, k, a) entry per transition


def test_q_learning_and_rollouts_are_deterministic_under_a_seed(chain_solution):
    mdp, grid, _ = chain_solution
    a = cvar_q_learning(mdp, grid, mdp.gamma, 500, seed=5)
    b = cvar_q_learning(mdp, grid, mdp.gamma, 500, seed=5)
    np.testing.assert_array_equal(a.Q, b.Q)
    np.testing.assert_array_equal(a.visits, b.visits)


def test_scalar_policy_interface_updates_the_budget(chain_solution):
    mdp, grid, sol = chain_solution
    pi = AugmentedGreedyPolicy(sol.Q, grid, mdp.gamma, b=2.0)
    pi.reset()
    pi.act(0)
    pi.observe(4.0)
    assert pi.memory == pytest.approx((2.0 - 4.0) / 0.9, abs=1e-15)


def test_cliff_model_splits_the_reward_collision_at_the_start():
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=0.95, slip=0.1)
    assert mdp.n_states == 49 and mdp.obs_index[48] == 36 and mdp.terminal[47]
    # From the start, "right" falls off the cliff (-100, back to start) with prob 1 - 3 * 0.025.
    assert mdp.P[36, 1, 48] == pytest.approx(0.925, abs=1e-12)
    assert mdp.R[36, 1, 48] == -100.0 and mdp.R[36, 2, 36] == -1.0
    np.testing.assert_allclose(mdp.P.sum(axis=2), 1.0, atol=1e-12)
    V, _ = risk_neutral_vi(mdp)
    assert V[48] == pytest.approx(V[36], abs=1e-9)  # a copy has its observation's value


def test_exact_cvar_of_a_two_point_law():
    # P(Z=0) = 0.2, P(Z=10) = 0.8: CVaR_0.5 = (0.2 * 0 + 0.3 * 10) / 0.5 = 6.
    assert exact_cvar([10.0, 0.0], [0.8, 0.2], 0.5) == pytest.approx(6.0, abs=1e-12)


# Bad inputs ------------------------------------------------------------------------------------
def good_tables():
    P = np.zeros((2, 1, 2))
    P[:, 0, 1] = 1.0
    return P, np.zeros((2, 1, 2))


def test_bad_transition_tables_are_refused():
    P, R = good_tables()
    bad = P.copy()
    bad[0, 0, 1] = 1.0 + 1e-6
    with pytest.raises(ValueError, match="must sum to 1"):
        TabularMDP(bad, R, 0.9)
    neg = np.array([[[1.5, -0.5]], [[0.0, 1.0]]])
    with pytest.raises(ValueError, match="non-negative"):
        TabularMDP(neg, R, 0.9)
    with pytest.raises(ValueError, match="R must have the shape of P"):
        TabularMDP(P, np.zeros((2, 2, 2)), 0.9)
    with pytest.raises(ValueError, match=r"shape \(S, A, S\)"):
        TabularMDP(np.ones((2, 1, 3)) / 3, np.zeros((2, 1, 3)), 0.9)
    with pytest.raises(ValueError, match=r"gamma must be in \[0, 1\]"):
        TabularMDP(P, R, 1.5)
    with pytest.raises(ValueError, match="terminal must be a boolean"):
        TabularMDP(P, R, 0.9, terminal=[0, 1])


def test_bad_alpha_grid_and_env_are_refused():
    grid = BudgetGrid(-1.0, 1.0, 3)
    for alpha in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
            cvar_from_values(np.zeros(3), grid, alpha)
    with pytest.raises(ValueError, match=r"K must be an integer in \[2, 10000000\]"):
        BudgetGrid(-1.0, 1.0, 1)
    with pytest.raises(ValueError, match="c_lo < c_hi"):
        BudgetGrid(1.0, -1.0, 5)
    with pytest.raises(TypeError, match="Discrete observation and action"):
        TabularMDP.from_gymnasium("CartPole-v1")
    with pytest.raises(TypeError, match="Discrete observation and action"):
        cvar_q_learning(gym.make("CartPole-v1"), grid, 0.9, 10)
    with pytest.raises(ValueError, match="lr_schedule must be one of"):
        cvar_q_learning(risky_chain(), grid, 0.9, 10, lr_schedule="adam")


def test_tables_are_checked_for_rank_and_finiteness_and_the_callers_arrays_stay_writable():
    P, R = good_tables()
    with pytest.raises(ValueError, match="TabularMDP: P must be 3-D; got shape"):
        TabularMDP(P[:, 0, :], R, 0.9)
    bad = R.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="TabularMDP: R must be finite; got 1 NaN/inf"):
        TabularMDP(P, bad, 0.9)
    with pytest.raises(ValueError, match=r"obs_index must have shape \(2,\)"):
        TabularMDP(P, R, 0.9, obs_index=[0, 1, 2])
    mdp = TabularMDP(P, R, 0.9)
    P[0, 0, 0] = 0.5  # the model holds its own copy
    assert P.flags.writeable and mdp.P[0, 0, 0] == 0.0 and not mdp.P.flags.writeable


def test_value_and_policy_arrays_are_checked():
    mdp, grid = risky_chain(), BudgetGrid(-60.0, 40.0, 11)
    with pytest.raises(ValueError, match=r"augmented_bellman: V must have shape \(S, K\)"):
        augmented_bellman(mdp, grid, np.zeros((6, 10)))
    with pytest.raises(ValueError, match="augmented_bellman: V must be finite"):
        augmented_bellman(mdp, grid, np.full((6, 11), np.inf))
    with pytest.raises(ValueError, match=r"cvar_from_values: V_s0 must have shape \(11,\)"):
        cvar_from_values(np.zeros(10), grid, 0.5)
    with pytest.raises(ValueError, match="AugmentedGreedyPolicy: Q must be 3-D"):
        AugmentedGreedyPolicy(np.zeros((6, 11)), grid, 0.9, 0.0)
    with pytest.raises(ValueError, match=r"Q must have shape \(S, 11, A\)"):
        AugmentedGreedyPolicy(np.zeros((6, 10, 2)), grid, 0.9, 0.0)
    with pytest.raises(ValueError, match=r"Q_mean must have the shape of Q \(6, 11, 2\)"):
        AugmentedGreedyPolicy(np.zeros((6, 11, 2)), grid, 0.9, 0.0, Q_mean=np.zeros((6, 11, 3)))
    with pytest.raises(ValueError, match="AugmentedGreedyPolicy: tie_tol must be"):
        AugmentedGreedyPolicy(np.zeros((6, 11, 2)), grid, 0.9, 0.0, tie_tol=-1.0)
    sol = augmented_value_iteration(mdp, grid)
    with pytest.raises(ValueError, match=r"AugmentedSolution.cvar: state must be in \[0, 6\)"):
        sol.cvar(0.5, state=6)
    with pytest.raises(ValueError, match="cvar_q_learning: tie_tol must be"):
        cvar_q_learning(mdp, grid, 0.9, 10, tie_tol=-1.0)
    with pytest.raises(ValueError, match="step_size: schedule must be one of"):
        step_size(3, "adam")
    with pytest.raises(ValueError, match="MarkovPolicy: actions must be 1-D"):
        MarkovPolicy([[0, 1]])
    with pytest.raises(ValueError, match="y_grid must be increasing"):
        chow_cvar_vi(mdp, y_grid=[0.5, 0.2, 1.0])
    with pytest.raises(ValueError, match="chow_cvar_vi: y_grid must be 1-D"):
        chow_cvar_vi(mdp, y_grid=[[0.5, 1.0]])


def test_cvar_refuses_nan_probabilities():
    # A NaN sum is neither > nor < anything, so the sum-to-one test alone would let it through.
    with pytest.raises(ValueError, match="exact_cvar: probs must be finite"):
        exact_cvar([0.0, 1.0], [np.nan, 1.0], 0.5)


@pytest.mark.parametrize("n_steps", [1, 999, 1000, 2500])
def test_q_learning_progress_reports_every_step_and_changes_nothing(n_steps):
    mdp = risky_chain()
    grid = BudgetGrid(-60.0, 40.0, 21)
    calls = []
    with_cb = cvar_q_learning(
        mdp, grid, mdp.gamma, n_steps, seed=3, progress=lambda d, t, m: calls.append((d, t))
    )
    without = cvar_q_learning(mdp, grid, mdp.gamma, n_steps, seed=3)
    # done counts climb in steps of 1000 to n_steps, each with total = n_steps
    assert calls[-1] == (n_steps, n_steps) and len(calls) == -(-n_steps // 1000)
    assert [d for d, _ in calls] == sorted({*range(1000, n_steps, 1000), n_steps})
    np.testing.assert_array_equal(with_cb.Q, without.Q)
    with pytest.raises(TypeError, match="progress"):
        cvar_q_learning(mdp, grid, mdp.gamma, 10, seed=3, progress="yes")


def test_optimal_cvar_rollouts_simulate_the_policy_read_off_the_solution(chain_solution):
    mdp, _, sol = chain_solution
    estimate, z = optimal_cvar_rollouts(mdp, sol, 0.5, 500, horizon=3, seed=0)
    assert estimate == sol.cvar(0.5)
    policy = sol.policy(estimate.b_star)
    np.testing.assert_array_equal(z, rollout_returns(mdp, policy, 500, 3, seed=0))
    with pytest.raises(TypeError, match="solution"):
        optimal_cvar_rollouts(mdp, sol.V, 0.5, 10, 3)
    other = TabularMDP.from_gymnasium("FrozenLake-v1", gamma=0.9)
    with pytest.raises(ValueError, match="solution"):
        optimal_cvar_rollouts(other, sol, 0.5, 10, 3)
    with pytest.raises(ValueError, match="alpha"):
        optimal_cvar_rollouts(mdp, sol, 0.0, 10, 3)


def test_chow_policy_batch_computes_each_distinct_pair_once_with_the_same_result():
    # act_batch / update_memory work on the distinct (state, level[, next state]) rows and
    # scatter back: every row must equal the same row computed alone.
    from icml26.cvar_rl import ChowPolicy, random_layered_mdp

    mdp = random_layered_mdp(width=3, n_actions=2, horizon=3, seed=4)
    policy = ChowPolicy(chow_cvar_vi(mdp), 0.3)
    rng = np.random.default_rng(0)
    states = rng.integers(0, mdp.n_states, 40)
    levels = rng.choice([0.3, 0.5, 1.0], 40)
    actions = policy.act_batch(states, levels)
    alone = [policy.act_batch(states[i : i + 1], levels[i : i + 1])[0] for i in range(40)]
    assert actions.tolist() == alone
    next_states = rng.integers(0, mdp.n_states, 40)
    rewards = np.zeros(40)
    memory = policy.update_memory(levels, states, actions, rewards, next_states)
    for i in range(40):
        one = policy.update_memory(
            levels[i : i + 1],
            states[i : i + 1],
            actions[i : i + 1],
            rewards[:1],
            next_states[i : i + 1],
        )
        assert memory[i] == one[0]


def test_a_horizon_tightens_the_budget_grid_and_the_bound_still_covers_the_exact_cvar():
    # Issue 49, item 7: a horizon-bounded MDP no longer gets a grid spanning r / (1 - gamma).
    mdp = risky_chain()
    r_min, r_max = mdp.reward_bounds()
    wide = BudgetGrid.from_reward_bounds(r_min, r_max, mdp.gamma, K=401)
    assert mdp.max_steps() == 3 and TabularMDP.from_gymnasium("FrozenLake-v1").max_steps() is None
    tight = BudgetGrid.from_reward_bounds(r_min, r_max, mdp.gamma, K=401, horizon=mdp.max_steps())
    steps = 1 + mdp.gamma + mdp.gamma**2
    assert (tight.c_lo, tight.c_hi) == pytest.approx((min(r_min * steps, 0), max(r_max * steps, 0)))
    assert tight.delta < wide.delta
    exact = brute_force_static_cvar(mdp, 0.5, 3)[0]
    estimates = [augmented_value_iteration(mdp, g).cvar(0.5) for g in (wide, tight)]
    assert estimates[1].error_bound < estimates[0].error_bound
    assert all(e.clamping_exact and abs(e.value - exact) <= e.error_bound for e in estimates)
    assert BudgetGrid.from_reward_bounds(0.0, 1.0, 1.0, 5, horizon=4).c_hi == 4.0
    with pytest.raises(ValueError, match="gamma"):
        BudgetGrid.from_reward_bounds(0.0, 1.0, 1.0, 5)  # no horizon: gamma must be < 1
