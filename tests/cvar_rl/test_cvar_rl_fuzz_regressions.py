"""Regressions for the fuzz findings of issue 16: wrong kinds, bad batches, calls out of order and
oversized requests are refused at the public boundary with a message naming the parameter."""

import dataclasses
import math

import numpy as np
import pytest

from icml26.cvar_rl import (
    BudgetGrid,
    ChowPolicy,
    EpisodeNotStartedError,
    MarkovPolicy,
    augmented_bellman,
    augmented_value_iteration,
    bauerle_ott_vi,
    brute_force_static_cvar,
    brute_force_truncated_mean,
    chow_cvar_vi,
    cvar_from_values,
    cvar_q_learning,
    empirical_cvar,
    exact_augmented_cvar,
    exact_augmented_value,
    exact_return_distribution,
    random_layered_mdp,
    redistributed_reward,
    risk_neutral_vi,
    risky_chain,
    rollout_returns,
)
from icml26.cvar_rl.exact import _enumerate
from icml26.cvar_rl.mdp import count_paths

MDP = risky_chain()
GRID = BudgetGrid.from_reward_bounds(*MDP.reward_bounds(), MDP.gamma, K=41)
SOLUTION = augmented_value_iteration(MDP, GRID)
CHOW = chow_cvar_vi(MDP)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: risk_neutral_vi(None), "risk_neutral_vi: mdp must be a TabularMDP"),
        (lambda: bauerle_ott_vi(MDP, None), "bauerle_ott_vi: grid must be a BudgetGrid"),
        (lambda: chow_cvar_vi({}), "chow_cvar_vi: mdp must be a TabularMDP"),
        (lambda: augmented_bellman(None, GRID, 0.0), "mdp must be a TabularMDP"),
        (lambda: cvar_from_values(np.zeros(41), [], 0.5), "grid must be a BudgetGrid"),
        (lambda: rollout_returns(MDP, 2.5, 10, 3), "policy must be an AbstractPolicy"),
        (lambda: exact_return_distribution((), MarkovPolicy([0] * 6), 3), "mdp must be a"),
        (lambda: brute_force_static_cvar(-1, 0.5, 3), "mdp must be a TabularMDP"),
        (lambda: exact_augmented_value(MDP, {}, 3), "c must be an array"),
        (lambda: redistributed_reward(3.0, {}), "r must be an array"),
        (lambda: ChowPolicy(None, 0.5), "solution must be a ChowSolution"),
        (lambda: cvar_q_learning(None, GRID, 0.9, 10), "env_or_mdp must be a TabularMDP"),
        (lambda: cvar_q_learning(MDP, None, 0.9, 10), "grid must be a BudgetGrid"),
        (lambda: dataclasses.replace(SOLUTION, grid=None), "grid must be a BudgetGrid"),
    ],
)
def test_wrong_kinds_are_type_errors_naming_the_parameter(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: MarkovPolicy(-math.inf), "actions must be"),
        (lambda: MarkovPolicy([0.5, 1.0]), "actions must hold one integer action"),
        (lambda: MarkovPolicy([0, 1]).act_batch(np.array([2]), np.zeros(1)), "states must hold"),
        (lambda: SOLUTION.policy(0.0).act_batch(np.zeros(2), np.zeros(3)), "memory must have"),
        (lambda: SOLUTION.policy(0.0).act_batch([0], [math.nan]), "memory must not hold NaN"),
        (lambda: SOLUTION.policy(0.0).q_at([9], [0.0]), r"states must hold integer ids"),
        (lambda: CHOW.q_values(np.zeros(()), np.zeros(())), "rows must be 1-D"),
        (lambda: CHOW.q_values([0], [0.0]), r"y must hold confidence levels in \(0, 1\]"),
        (lambda: CHOW.next_level([0], [0.5], [-1]), "next_states must hold integer ids"),
        (lambda: ChowPolicy(CHOW, 0.5).act_batch([3], [2.0]), "memory must hold confidence"),
        (lambda: GRID.interp(-1.0, 0.0), r"values must have shape \(\.\.\., 41\)"),
        (lambda: GRID.weights(math.nan), "c must not hold NaN"),
        (lambda: redistributed_reward(np.zeros(2), np.zeros(3)), "c and r must broadcast"),
        (lambda: redistributed_reward(math.nan, 2.5), "c must be numbers or \\+-inf, not NaN"),
        (lambda: redistributed_reward(1.0, [0.0, math.nan]), "r must be numbers or"),
        (lambda: dataclasses.replace(CHOW, y=CHOW.y[::-1]), "y must be increasing"),
        (lambda: dataclasses.replace(SOLUTION, s0=99), r"s0 must be an integer in \[0, 5\]"),
        (lambda: random_layered_mdp(seed=-2), "seed must be an int >= 0"),
        (lambda: random_layered_mdp(gamma=math.inf), r"gamma must be in \[0, 1\]"),
        (lambda: exact_augmented_value(MDP, 0.0, 3, state=6), r"state must be an integer in"),
    ],
)
def test_bad_values_are_value_errors_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: BudgetGrid(0.0, 1.0, 2**31), r"K must be an integer in \[2, 10000000\]"),
        (lambda: random_layered_mdp(2, 2**31, 3), r"n_actions must be an integer in"),
        (lambda: random_layered_mdp(100, 100, 100), "S \\* A \\* S"),
        (lambda: rollout_returns(MDP, MarkovPolicy([0] * 6), 10, 2**31), r"horizon must be an"),
        (lambda: rollout_returns(MDP, MarkovPolicy([0] * 6), 10**12, 3), r"n_episodes must be"),
        (lambda: risk_neutral_vi(MDP, max_iter=2**31), r"max_iter must be an integer in"),
        (lambda: augmented_value_iteration(MDP, GRID, max_iter=10**12), r"max_iter must be"),
        (lambda: cvar_q_learning(MDP, GRID, 0.9, 10**12), r"n_steps must be an integer in"),
        (lambda: MarkovPolicy([0]).initial_memory(2**31), r"n must be an integer in"),
        (lambda: brute_force_truncated_mean(MDP, 1.0, 2**31), r"horizon must be an integer in"),
        (
            lambda: exact_return_distribution(random_layered_mdp(3, 3, 20), MarkovPolicy([0]), 20),
            "expands more than 1000000 paths",
        ),
        (lambda: exact_augmented_cvar(random_layered_mdp(2, 2, 12), 0.5, 12), "expands more"),
        (lambda: chow_cvar_vi(MDP, np.linspace(1e-9, 1.0, 10**6)), "segment tables"),
    ],
)
def test_huge_requests_are_refused_before_the_work(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_episode_methods_out_of_order_name_their_parameter():
    pi = MarkovPolicy([0] * 6)
    # A RuntimeError as before, and a ValueError for callers that validate input that way.
    with pytest.raises(EpisodeNotStartedError, match=r"act\(state\) needs an episode"):
        pi.act(0)
    assert issubclass(EpisodeNotStartedError, RuntimeError | ValueError)
    pi.reset()
    with pytest.raises(ValueError, match=r"observe\(reward, next_state\) needs a preceding"):
        pi.observe(1.0)
    with pytest.raises(ValueError, match="state 7 is refused"):
        pi.act(7)
    chow = ChowPolicy(CHOW, 0.5)
    chow.reset()
    chow.act(0)
    # Chow et al.'s memory update needs the next state: -1 ("unknown") is refused, not guessed.
    with pytest.raises(ValueError, match="next_state -1 is refused"):
        chow.observe(0.0)
    with pytest.raises(ValueError, match="gamma > 0"):
        augmented_value_iteration(risky_chain(gamma=0.0), GRID).policy(0.0)


def test_count_paths_is_the_number_of_enumerated_paths():
    # Independent reference: the brute-force enumeration lists every action-annotated path.
    for mdp, horizon in [(MDP, 1), (MDP, 3), (MDP, 5), (random_layered_mdp(2, 3, 3, seed=1), 3)]:
        returns, _ = _enumerate(mdp, horizon, markov=False)
        assert count_paths(mdp, horizon, owner="test") == returns.size


def test_valid_calls_are_unchanged():
    # Infinite budgets are clamped to the grid's end, as before (long rollouts reach them).
    values = GRID.nodes**2
    assert float(GRID.interp(values, math.inf)) == values[-1]
    assert float(GRID.interp(values, -math.inf)) == values[0]
    # The exact references agree with each other on the risky chain (spec §2.2).
    assert exact_augmented_cvar(MDP, 0.5, 3)[0] == pytest.approx(0.972, abs=1e-9)
    assert brute_force_static_cvar(MDP, 0.5, 3)[0] == pytest.approx(0.972, abs=1e-9)
    z = rollout_returns(MDP, SOLUTION.policy(2.5), 200, 5, seed=0)
    assert z.shape == (200,) and np.all(np.isfinite(z))


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_gamma_zero_discounts_the_next_budget_away():
    # Before, (c - r) / 0 gave NaN budgets (0/0 at c = r) and a divide-by-zero warning. With
    # gamma = 0 only the first reward counts: CVaR_0.5 of {4, 0} w.p. 1/2 each is 0, and the
    # brute force over every policy agrees; the grid answer is within its own error bound.
    mdp = risky_chain(gamma=0.0)
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, K=201)
    estimate = augmented_value_iteration(mdp, grid).cvar(0.5)
    exact, _ = brute_force_static_cvar(mdp, 0.5, 3)
    assert exact == 0.0 and exact_augmented_cvar(mdp, 0.5, 3)[0] == 0.0
    assert abs(estimate.value - exact) <= estimate.error_bound
    assert np.all(np.isfinite(bauerle_ott_vi(mdp, grid)))


def test_redistributed_reward_at_infinite_budgets_is_the_limit_not_nan():
    # rho(c, r) = c^+ - (c - r)^+: c -> -inf gives 0 - 0, c -> +inf gives r.
    r = np.array([-3.0, 0.0, 2.0, -math.inf, math.inf])
    assert redistributed_reward(-math.inf, r).tolist() == [0.0] * 5
    assert redistributed_reward(math.inf, r).tolist() == r.tolist()
    # r -> +inf caps at the budget c^+; r -> -inf is -inf for every finite c.
    assert redistributed_reward([2.0, -1.0], math.inf).tolist() == [2.0, 0.0]
    assert redistributed_reward([2.0, -1.0], -math.inf).tolist() == [-math.inf, -math.inf]


def test_empirical_cvar_of_no_returns_names_returns():
    with pytest.raises(ValueError, match="returns must hold at least one return"):
        empirical_cvar(np.zeros(0), alpha=1.0)
    assert empirical_cvar([3.0], alpha=0.2) == pytest.approx(3.0)


def test_a_missing_reward_is_a_type_error_naming_it():
    # The fuzz test found NaN out of c=None (numpy reads None as NaN): check_array refuses it.
    with pytest.raises(TypeError, match="c must be an array"):
        redistributed_reward(None, 2.5)
