"""Spec §7 checks 1-10 and 12: identities, operator properties and exact references."""

import numpy as np
import pytest

from icml26.cvar_rl import (
    AugmentedGreedyPolicy,
    BudgetGrid,
    ChowPolicy,
    MarkovPolicy,
    TabularMDP,
    augmented_bellman,
    augmented_value_iteration,
    bauerle_ott_vi,
    brute_force_static_cvar,
    brute_force_truncated_mean,
    chow_cvar_vi,
    cvar_from_values,
    cvar_standard_error,
    empirical_cvar,
    exact_augmented_cvar,
    exact_augmented_value,
    exact_cvar,
    exact_return_distribution,
    random_layered_mdp,
    redistributed_reward,
    risk_neutral_vi,
    risky_chain,
    rollout_returns,
)

ALPHAS = (0.1, 0.3, 0.5, 1.0)


def random_cyclic_mdp(seed: int, n_states: int = 4, n_actions: int = 2, gamma: float = 0.8):
    """A dense random MDP without terminal states, rewards in [-1, 1]."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n_states), size=(n_states, n_actions))
    R = rng.uniform(-1.0, 1.0, size=(n_states, n_actions, n_states))
    return TabularMDP(P, R, gamma)


def exact_grid(mdp, K):
    return BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, K)


def cyclic_grid(K):
    """[-5, 5] contains [Z_min, Z_max] of random_cyclic_mdp (|r| <= 1, gamma = 0.8), so clamping
    is exact, and 0 is a node for odd K, so c^+ and min(c, 0) are interpolated exactly."""
    return BudgetGrid(-5.0, 5.0, K)


# 1. Telescoping identity ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_telescoping_identity_redistributes_the_terminal_shortfall(seed):
    rng = np.random.default_rng(seed)
    gamma, T, b = rng.uniform(0.5, 0.99), 15, rng.uniform(-5, 5)
    R = rng.uniform(-2, 2, size=T)
    disc = gamma ** np.arange(T)
    Z = disc @ R
    c = np.empty(T)
    c[0] = b
    for t in range(T - 1):
        c[t + 1] = (c[t] - R[t]) / gamma
    shortfall = max(b, 0) + disc @ (np.maximum(c - R, 0) - np.maximum(c, 0))
    capped = min(b, 0) + disc @ redistributed_reward(c, R)
    # c_t grows like gamma^-t (up to ~1e5 here) and is multiplied back by gamma^t: round-off ~1e-11.
    assert shortfall == pytest.approx(max(b - Z, 0), abs=1e-10)
    assert capped == pytest.approx(min(Z, b), abs=1e-10)


# 2. Reward bounds -------------------------------------------------------------------------------
def test_redistributed_reward_bounds_and_regimes():
    c, r = np.meshgrid(np.linspace(-5, 5, 101), np.linspace(-3, 3, 61))
    rho = redistributed_reward(c, r)
    assert np.all(rho >= np.minimum(r, 0)) and np.all(rho <= np.maximum(r, 0))
    rich, broke = c >= np.maximum(r, 0), c <= np.minimum(r, 0)
    np.testing.assert_array_equal(rho[rich], r[rich])
    np.testing.assert_array_equal(rho[broke], 0.0)


# 3. Contraction ---------------------------------------------------------------------------------
def exact_operator(mdp, V, states, c):
    """(T V)(s, c) with continuous next budgets (no grid), V a function of (s, c)."""
    out = np.full(c.shape, -np.inf)
    for a in range(mdp.n_actions):
        q = np.zeros(c.shape)
        for s_next in range(mdp.n_states):
            p, r = mdp.P[states, a, s_next], mdp.R[states, a, s_next]
            q += p * (redistributed_reward(c, r) + mdp.gamma * V(s_next, (c - r) / mdp.gamma))
        out = np.maximum(out, q)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_exact_and_projected_operators_are_gamma_contractions(seed):
    rng = np.random.default_rng(seed)
    mdp = random_cyclic_mdp(seed)
    A1, A2, B1, B2 = (rng.normal(size=mdp.n_states) for _ in range(4))
    V1 = lambda s, c: B1[s] + A1[s] * np.tanh(c)  # noqa: E731
    V2 = lambda s, c: B2[s] + A2[s] * np.tanh(c)  # noqa: E731
    # sup_c |dB + dA tanh(c)| = |dB| + |dA| since tanh takes values arbitrarily close to +-1.
    sup = np.max(np.abs(B1 - B2) + np.abs(A1 - A2))
    states = np.repeat(np.arange(mdp.n_states), 400)
    c = np.tile(np.linspace(-20, 20, 400), mdp.n_states)
    gap = np.abs(exact_operator(mdp, V1, states, c) - exact_operator(mdp, V2, states, c))
    assert gap.max() <= mdp.gamma * sup + 1e-12  # 1e-12: round-off of sums of O(1) terms
    grid = cyclic_grid(41)
    U1, U2 = rng.normal(size=(2, mdp.n_states, grid.K))
    T1, T2 = augmented_bellman(mdp, grid, U1), augmented_bellman(mdp, grid, U2)
    assert np.abs(T1 - T2).max() <= mdp.gamma * np.abs(U1 - U2).max() + 1e-12


# 4. Brute force ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_augmented_dp_equals_brute_force_over_history_dependent_policies(seed):
    mdp = random_layered_mdp(2, 2, 3, gamma=0.9, seed=seed)
    for c in (-1.5, -0.3, 0.0, 0.4, 2.0):
        v = float(exact_augmented_value(mdp, c, horizon=3)) + min(c, 0.0)
        assert v == pytest.approx(brute_force_truncated_mean(mdp, c, 3), abs=1e-12)  # round-off
    for alpha in (0.1, 0.25, 0.5, 0.8, 1.0):
        cvar, n_policies = brute_force_static_cvar(mdp, alpha, 3)
        assert n_policies == 128
        assert exact_augmented_cvar(mdp, alpha, 3)[0] == pytest.approx(cvar, abs=1e-12)


def test_risky_chain_needs_memory():
    mdp = risky_chain()
    expected = {0.1: 0.81, 0.3: 0.81, 0.5: 0.972, 1.0: 2.972}  # enumerated by hand in spec §5
    for alpha, value in expected.items():
        assert brute_force_static_cvar(mdp, alpha, 3)[0] == pytest.approx(value, abs=1e-12)
    assert brute_force_static_cvar(mdp, 0.5, 3, markov=True)[0] == pytest.approx(0.81, abs=1e-12)


# 5. alpha = 1 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_alpha_one_gives_the_risk_neutral_value(seed):
    mdp = random_cyclic_mdp(seed)
    grid = cyclic_grid(51)
    sol = augmented_value_iteration(mdp, grid, tol=1e-10)
    V_rn, _ = risk_neutral_vi(mdp, tol=1e-12)
    # VI stops at residual 1e-10, so its distance to the fixed point is <= 1e-10 * g / (1 - g).
    assert cvar_from_values(sol.V[mdp.s0], grid, 1.0)[0] == pytest.approx(V_rn[mdp.s0], abs=1e-8)


# 6. Boundaries ----------------------------------------------------------------------------------
def test_boundary_values_of_the_exact_and_grid_solutions():
    mdp = random_layered_mdp(2, 2, 3, gamma=0.9, seed=7)
    r_min, r_max = mdp.reward_bounds()
    z_min, z_max = r_min / (1 - mdp.gamma), r_max / (1 - mdp.gamma)
    V_rn, _ = risk_neutral_vi(mdp)
    low = np.array([z_min - 3.0, z_min])
    high = np.array([z_max, z_max + 4.0])
    for s in range(mdp.n_states):
        np.testing.assert_allclose(
            exact_augmented_value(mdp, low, 3, s), np.maximum(low, 0), atol=1e-12
        )
        expected = V_rn[s] - np.minimum(high, 0)
        np.testing.assert_allclose(exact_augmented_value(mdp, high, 3, s), expected, atol=1e-9)
    mdp = random_cyclic_mdp(1)
    grid = cyclic_grid(61)
    sol = augmented_value_iteration(mdp, grid, tol=1e-11)
    V_rn, _ = risk_neutral_vi(mdp, tol=1e-13)
    # At the grid ends the next budget clamps to the same end, so the recursion there is exact.
    np.testing.assert_allclose(sol.V[:, 0], max(grid.c_lo, 0.0), atol=1e-9)
    np.testing.assert_allclose(sol.V[:, -1], V_rn - min(grid.c_hi, 0.0), atol=1e-9)
    chain = risky_chain()
    sol = augmented_value_iteration(chain, exact_grid(chain, 101))
    np.testing.assert_array_equal(sol.V[chain.terminal], 0.0)


# 7. Lipschitz and monotone ----------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_values_are_one_lipschitz_and_capped_value_is_monotone(seed):
    mdp = random_cyclic_mdp(seed)
    grid = cyclic_grid(81)  # with 0 off the grid, interpolating min(c, 0) breaks the bound
    V = augmented_value_iteration(mdp, grid).V
    assert np.abs(np.diff(V, axis=1)).max() <= grid.delta * (1 + 1e-9)
    assert np.diff(V + np.minimum(grid.nodes, 0), axis=1).min() >= -1e-9  # VI tolerance 1e-8 * g


# 8. Sparse operator ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mdp", "grid"),
    [(risky_chain(), BudgetGrid(-60.0, 40.0, 101)), (random_cyclic_mdp(2), cyclic_grid(101))],
)
def test_sparse_operator_is_degenerate_from_zero_and_right_from_cplus(mdp, grid):
    assert 0.0 in grid.nodes.round(12)  # so c^+ is interpolated exactly
    np.testing.assert_array_equal(bauerle_ott_vi(mdp, grid, init="zero"), 0.0)
    V = augmented_value_iteration(mdp, grid, tol=1e-11).V
    W = bauerle_ott_vi(mdp, grid, init="cplus", tol=1e-11)
    np.testing.assert_allclose(W, np.maximum(grid.nodes, 0) - V, atol=1e-8)


# 9. Discretisation ------------------------------------------------------------------------------
def test_discretisation_error_respects_the_bound_and_shrinks():
    mdp = risky_chain()
    g = mdp.gamma
    for alpha in (0.3, 0.5, 1.0):
        exact, _ = exact_augmented_cvar(mdp, alpha, 3)
        errors = []
        for K in (101, 201, 401, 801):
            grid = exact_grid(mdp, K)
            cvar, _ = cvar_from_values(augmented_value_iteration(mdp, grid).V[0], grid, alpha)
            bound = g * grid.delta / (2 * alpha * (1 - g)) + (1 + 2 / alpha) * grid.delta / 2
            assert abs(cvar - exact) <= bound
            errors.append(abs(cvar - exact))
        assert errors[-1] <= errors[0] + 1e-12  # K=101 can be exact by luck (error 0)


# 10. Policy consistency -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_executed_augmented_policy_attains_the_optimum(seed):
    mdp = random_layered_mdp(2, 2, 3, gamma=0.9, seed=seed)
    grid = exact_grid(mdp, 2001)
    sol = augmented_value_iteration(mdp, grid)
    for alpha in (0.2, 0.5, 1.0):
        best, _ = brute_force_static_cvar(mdp, alpha, 3)
        _, b = cvar_from_values(sol.V[mdp.s0], grid, alpha)
        z, p = exact_return_distribution(mdp, AugmentedGreedyPolicy(sol.Q, grid, mdp.gamma, b), 3)
        # A policy can only lose against the optimum; the loss is a grid effect of order delta.
        assert best - 2 * grid.delta / alpha <= exact_cvar(z, p, alpha) <= best + 1e-12


def test_chow_policy_never_beats_the_optimum_and_is_exact_at_alpha_one():
    mdp = risky_chain()
    chow = chow_cvar_vi(mdp)
    for alpha in ALPHAS:
        z, p = exact_return_distribution(mdp, ChowPolicy(chow, alpha), 3)
        assert exact_cvar(z, p, alpha) <= brute_force_static_cvar(mdp, alpha, 3)[0] + 1e-12
    assert chow.V[0, -1] == pytest.approx(2.972, abs=1e-9)  # y = 1 is the risk-neutral value


# CVaR estimators --------------------------------------------------------------------------------
def test_exact_and_empirical_cvar_closed_forms():
    z = np.arange(1.0, 11.0)
    assert empirical_cvar(z, 0.3) == pytest.approx(2.0, abs=1e-12)
    assert empirical_cvar(z, 0.25) == pytest.approx((1 + 2 + 0.5 * 3) / 2.5, abs=1e-12)
    assert empirical_cvar(z, 1.0) == pytest.approx(5.5, abs=1e-12)
    rng = np.random.default_rng(0)
    u = rng.uniform(size=200_000)
    # CVaR_a of U(0, 1) is a / 2; the estimator's SE at n = 2e5 is about 1e-3 here.
    assert empirical_cvar(u, 0.2) == pytest.approx(0.1, abs=5e-3)


def test_rollouts_match_the_exact_distribution_and_are_deterministic():
    mdp = risky_chain()
    policy = MarkovPolicy([1] * 6)
    z1 = rollout_returns(mdp, policy, 40_000, 5, seed=3)
    np.testing.assert_array_equal(z1, rollout_returns(mdp, policy, 40_000, 5, seed=3))
    atoms, probs = exact_return_distribution(mdp, policy, 5)
    # SE of the mean of returns with sd ~3.4 at n = 4e4 is 0.017: 5 SE.
    assert z1.mean() == pytest.approx(atoms @ probs, abs=0.09)


def test_cvar_standard_error_matches_the_spread_of_empirical_cvar_over_replications():
    # An independent reference: the SD of empirical_cvar over 500 independent samples of 2,000.
    # The SD of a 500-sample SD is ~3 % of it, so 10 % is a 3-sigma band (measured: < 1 % off).
    rng = np.random.default_rng(1)
    for draws, alpha in (
        (rng.normal(size=(500, 2000)), 0.1),
        (rng.exponential(size=(500, 2000)), 0.25),
    ):
        spread = np.std([empirical_cvar(z, alpha) for z in draws])
        se = np.mean([cvar_standard_error(z, alpha) for z in draws])
        assert se == pytest.approx(spread, rel=0.1)
    assert cvar_standard_error(np.full(10, 3.0), 0.2) == 0.0  # no spread, no error
    with pytest.raises(ValueError, match="returns"):
        cvar_standard_error([], 0.5)
    with pytest.raises(ValueError, match="alpha"):
        cvar_standard_error([1.0, 2.0], 1.5)
