"""Each comparative claim, evaluated on its control for real, is not reproduced (issue 39).

The claim's metric is computed as the experiment computes it, with the method replaced by its
control (the best Markov policy, an untrained Q-table, the risk-neutral policy, the sparse
operator's degenerate fixed point, Chow's own policy), on small inputs.
"""

import math

import numpy as np
import pytest

from icml26.core import Status
from icml26.cvar_rl import (
    BudgetGrid,
    ChowPolicy,
    MarkovPolicy,
    TabularMDP,
    augmented_value_iteration,
    bauerle_ott_vi,
    brute_force_static_cvar,
    chow_cvar_vi,
    cvar_from_values,
    cvar_standard_error,
    empirical_cvar,
    exact_augmented_cvar,
    optimal_cvar_rollouts,
    risk_neutral_vi,
    risky_chain,
    rollout_returns,
)
from icml26.cvar_rl.experiments.cliff import CLIFF_CLAIMS, tradeoff
from icml26.cvar_rl.experiments.frontier import FRONTIER_CLAIMS, frontier_defects
from icml26.cvar_rl.experiments.frozen_lake import LAKE_CLAIMS
from icml26.cvar_rl.experiments.risky_chain import (
    RISKY_CLAIMS,
    RISKY_DEFAULT,
    s1_actions,
)


def _claim(claims, claim_id):
    return next(c for c in claims if c.id == claim_id)


def _fails(claim, value, n=3):
    return claim.judge([value] * n).status is not Status.REPRODUCED


@pytest.fixture(scope="module")
def chain():
    mdp = risky_chain(RISKY_DEFAULT.gamma)
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, 401)
    return mdp, grid, augmented_value_iteration(mdp, grid)


@pytest.fixture(scope="module")
def cliff():
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=0.95, slip=0.1)
    _, Q_rn = risk_neutral_vi(mdp)
    return mdp, MarkovPolicy(Q_rn.argmax(axis=1))


def test_risky_chain_best_markov_policy_fails_q1b_and_q1c():
    alphas = RISKY_DEFAULT.alphas
    mdp = risky_chain(RISKY_DEFAULT.gamma)
    exact = [exact_augmented_cvar(mdp, a, 3)[0] for a in alphas]
    markov = [brute_force_static_cvar(mdp, a, 3, markov=True)[0] for a in alphas]
    gap = max(abs(e - m) for e, m in zip(exact, markov, strict=True))
    for claim_id in ("Q1b", "Q1c"):
        claim = _claim(RISKY_CLAIMS, claim_id)
        assert gap == pytest.approx(claim.control_value, abs=1e-3)
        assert _fails(claim, gap)


def test_risky_chain_untrained_q_table_fails_q2a(chain):
    _, grid, sol = chain
    zeros = np.zeros(grid.K)
    gap = max(
        abs(cvar_from_values(zeros, grid, a)[0] - sol.cvar(a).value) for a in RISKY_DEFAULT.alphas
    )
    claim = _claim(RISKY_CLAIMS, "Q2a")
    assert gap == pytest.approx(claim.control_value, abs=0.05)
    assert _fails(claim, gap)


def test_risky_chain_any_markov_policy_mismatches_vi_at_alpha_half(chain):
    # VI plays different s1 actions after the two branches at alpha = 0.5; a Markov policy
    # plays one action there, so it mismatches VI after at least one branch.
    _, _, sol = chain
    vi_actions = s1_actions(sol.policy(sol.cvar(0.5).b_star))
    assert len(set(vi_actions)) == 2
    mismatches = min(sum(a != v for v in vi_actions) for a in (0, 1))
    claim = _claim(RISKY_CLAIMS, "Q2b")
    assert mismatches == claim.control_value == 1.0
    assert _fails(claim, float(mismatches))


def test_cliff_risk_neutral_policy_in_place_of_the_cvar_policy_fails_q4(cliff):
    mdp, rn = cliff
    z_rn = rollout_returns(mdp, rn, 2000, 100, np.random.default_rng(3))
    z = rollout_returns(mdp, rn, 2000, 100, np.random.default_rng(3))  # the paired stream
    gain = empirical_cvar(z, 0.05) - empirical_cvar(z_rn, 0.05)
    drop = float(z_rn.mean() - z.mean())
    assert gain == 0.0 and drop == 0.0
    for claim_id, value in (("Q4", gain), ("Q4a", gain), ("Q4b", tradeoff(gain, drop))):
        claim = _claim(CLIFF_CLAIMS, claim_id)
        assert value == claim.control_value
        assert _fails(claim, value)
    assert _claim(CLIFF_CLAIMS, "Q4").headline


def test_cliff_sparse_operator_as_predictor_fails_q5(cliff):
    mdp, _ = cliff
    grid = BudgetGrid(-300.0, 0.0, 61)
    W = bauerle_ott_vi(mdp, grid, init="zero")  # its degenerate fixed point
    sol = augmented_value_iteration(mdp, grid)
    gap = 0.0
    for alpha in (0.05, 0.1, 0.25):
        predicted, _ = cvar_from_values(W[mdp.s0], grid, alpha)
        _, z = optimal_cvar_rollouts(mdp, sol, alpha, 2000, 200, seed=0)
        gap = max(gap, abs(predicted - empirical_cvar(z, alpha)))
    claim = _claim(CLIFF_CLAIMS, "Q5")
    assert gap == pytest.approx(claim.control_value, rel=0.1)
    assert _fails(claim, gap)


def test_frozen_lake_untrained_q_table_fails_l3():
    mdp = TabularMDP.from_gymnasium("FrozenLake-v1", gamma=0.95)
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, 11)
    q_alpha1, _ = cvar_from_values(np.zeros(grid.K), grid, 1.0)
    V_rn, _ = risk_neutral_vi(mdp)
    gap = abs(q_alpha1 - float(V_rn[mdp.s0]))
    claim = _claim(LAKE_CLAIMS, "L3")
    assert gap == pytest.approx(claim.control_value, abs=1e-3)
    assert _fails(claim, gap)


def test_frontier_one_policy_for_every_alpha_is_a_defect(cliff):
    # The risk-neutral policy played at every alpha, on the same draws: a flat, monotone curve.
    mdp, rn = cliff
    alphas, a_min = (0.05, 0.25, 1.0), 0.05
    curve = {k: [] for k in ("pred", "mean", "mean_se", "tail", "tail_se", "own")}
    for alpha in alphas:
        z = rollout_returns(mdp, rn, 2000, 100, np.random.default_rng(7))
        curve["mean"].append(float(z.mean()))
        curve["mean_se"].append(float(z.std() / math.sqrt(z.size)))
        curve["tail"].append(empirical_cvar(z, a_min))
        curve["tail_se"].append(cvar_standard_error(z, a_min))
        curve["own"].append(empirical_cvar(z, alpha))
    defects = float(frontier_defects(curve))
    claim = _claim(FRONTIER_CLAIMS, "F1")
    assert defects == claim.control_value == 1.0
    assert _fails(claim, defects)


def test_frontier_f2_and_f4_controls_give_zero_gain(cliff):
    mdp, rn = cliff
    z_rn = rollout_returns(mdp, rn, 1000, 100, np.random.default_rng(5))
    z = rollout_returns(mdp, rn, 1000, 100, np.random.default_rng(5))
    q_gain = empirical_cvar(z, 0.05) - empirical_cvar(z_rn, 0.05)  # rn in place of Q-learning
    chow = ChowPolicy(chow_cvar_vi(mdp, y_grid=np.geomspace(1e-3, 1.0, 5)), 0.05)
    z_a = rollout_returns(mdp, chow, 500, 100, np.random.default_rng(6))
    z_b = rollout_returns(mdp, chow, 500, 100, np.random.default_rng(6))
    chow_gain = empirical_cvar(z_a, 0.05) - empirical_cvar(z_b, 0.05)  # Chow in place of ours
    for claim_id, value in (("F2", q_gain), ("F4", chow_gain)):
        claim = _claim(FRONTIER_CLAIMS, claim_id)
        assert value == claim.control_value == 0.0
        assert _fails(claim, value)
