"""Gymnasium interface: registered envs pass gymnasium's own check_env, policies act on the env's
observations, and rollouts on a gymnasium env follow the model's exact return distribution."""

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml26.cvar_rl import (
    BudgetGrid,
    ChowPolicy,
    EpisodeNotStartedError,
    MarkovPolicy,
    TabularMDP,
    TabularMDPEnv,
    augmented_value_iteration,
    chow_cvar_vi,
    exact_return_distribution,
    random_layered_mdp,
    register_envs,
    risk_neutral_vi,
    risky_chain,
    rollout,
    rollout_returns,
)

IDS = register_envs()


def test_register_envs_is_idempotent_and_namespaced():
    assert IDS == ("icml26/RiskyChain-v0", "icml26/RandomLayeredMDP-v0")
    assert register_envs() == IDS
    for env_id in IDS:
        assert gym.spec(env_id).namespace == "icml26"
    # gymnasium's "module:id" form imports the module (which registers) before making the env
    env = gym.make("icml26.cvar_rl.envs:icml26/RiskyChain-v0")
    assert env.spec.id == "icml26/RiskyChain-v0"


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("icml26/RiskyChain-v0", {}), ("icml26/RandomLayeredMDP-v0", {"width": 3, "horizon": 4})],
)
def test_registered_envs_pass_gymnasium_check_env(env_id, kwargs, recwarn):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped)  # gymnasium's own checker: spaces, seeding determinism, API types
    assert not [w for w in recwarn if "gymnasium" in str(w.filename)]  # and no checker warning


@pytest.mark.parametrize(
    "mdp", [risky_chain(0.9), random_layered_mdp(3, 2, 4, gamma=0.8, seed=5)], ids=["chain", "rand"]
)
def test_from_gymnasium_reads_the_registered_model_back(mdp):
    # TabularMDPEnv carries the toy-text table P[s][a]; from_gymnasium on it gives a model with
    # the same values (it may split a state entered with two rewards into copies).
    back = TabularMDP.from_gymnasium(TabularMDPEnv(mdp), gamma=mdp.gamma)
    assert back.s0 == mdp.s0
    V, _ = risk_neutral_vi(mdp, tol=1e-12)
    V_back, _ = risk_neutral_vi(back, tol=1e-12)
    assert V_back[back.s0] == pytest.approx(V[mdp.s0], abs=1e-9)  # both VIs stop at 1e-12
    grid = BudgetGrid(-10.0, 10.0, 201)
    aug, aug_back = augmented_value_iteration(mdp, grid), augmented_value_iteration(back, grid)
    np.testing.assert_allclose(aug_back.V[back.s0], aug.V[mdp.s0], atol=1e-8)


def atom_frequencies(returns, atoms, probs):
    """Probability of each distinct exact atom, and the empirical frequency of it."""
    keys = np.round(atoms, 9)
    distinct = np.unique(keys)
    exact = np.array([probs[keys == k].sum() for k in distinct])
    empirical = np.array([np.mean(np.round(returns, 9) == k) for k in distinct])
    assert np.isin(np.round(returns, 9), distinct).all()  # no return outside the exact support
    return exact, empirical


def test_augmented_policy_on_the_gymnasium_env_follows_the_exact_return_distribution():
    # α = 0.5 on RiskyChain: the CVaR-optimal policy plays differently at s1 after L and U, so
    # the budget it carries through policy(obs) / observe(r) must be right.
    mdp = risky_chain()
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, 2001)
    sol = augmented_value_iteration(mdp, grid)
    policy = sol.policy(sol.cvar(0.5).b_star)
    atoms, probs = exact_return_distribution(mdp, policy, horizon=3)
    n = 4000
    z = rollout(gym.make("icml26/RiskyChain-v0"), policy, n, seed=0, gamma=mdp.gamma)
    exact, empirical = atom_frequencies(z, atoms, probs)
    # 5 binomial standard errors (p(1-p)/n <= 1/(4n)): false alarm probability ~1e-6 per atom
    assert np.abs(empirical - exact).max() <= 5 * math.sqrt(0.25 / n)
    assert len(exact) == 3  # L then safe (+4 +1·γ²), U then risky (+3γ² or -6γ²)


def test_chow_policy_gets_the_next_observation_it_needs():
    # Chow et al.'s policy updates its level from the next state: rollout passes the observation.
    mdp = risky_chain()
    policy = ChowPolicy(chow_cvar_vi(mdp), alpha=0.3)
    atoms, probs = exact_return_distribution(mdp, policy, horizon=3)
    n = 4000
    z = rollout(gym.make("icml26/RiskyChain-v0"), policy, n, seed=3, gamma=mdp.gamma)
    exact, empirical = atom_frequencies(z, atoms, probs)
    assert np.abs(empirical - exact).max() <= 5 * math.sqrt(0.25 / n)  # as above


def test_markov_policy_on_frozen_lake_env_matches_the_model():
    mdp = TabularMDP.from_gymnasium("FrozenLake-v1", gamma=0.95)
    _, Q = risk_neutral_vi(mdp)
    policy = MarkovPolicy(Q.argmax(axis=1))
    n = 3000
    z_env = rollout(gym.make("FrozenLake-v1"), policy, n, seed=1, gamma=mdp.gamma)
    z_model = rollout_returns(mdp, policy, n, horizon=100, seed=2)  # the env's TimeLimit: 100
    se = math.sqrt((z_env.var() + z_model.var()) / n)
    assert abs(z_env.mean() - z_model.mean()) <= 5 * se  # two independent MC means


def test_deterministic_env_gives_the_models_returns_exactly():
    # CliffWalking without slip is deterministic; "right" from the start falls off the cliff
    # (-100) back to the start, which the model holds as a copy (obs_index maps it to 36).
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=0.9)
    assert np.array_equal(mdp.obs_index[:48], np.arange(48))  # observation o is model state o
    _, Q = risk_neutral_vi(mdp)
    actions = Q.argmax(axis=1)
    actions[[36, 48]] = 1  # start and its copy: step right, into the cliff, forever
    policy = MarkovPolicy(actions)
    z_env = rollout(gym.make("CliffWalking-v1"), policy, 2, seed=0, gamma=0.9, max_steps=30)
    z_model = rollout_returns(mdp, policy, 2, horizon=30, seed=0)
    np.testing.assert_allclose(z_env, z_model, rtol=1e-12)
    assert z_env[0] == pytest.approx(-100 * (1 - 0.9**30) / (1 - 0.9))


def test_policy_call_takes_numpy_and_python_ints_and_refuses_the_rest():
    policy = MarkovPolicy([1, 0, 1])
    with pytest.raises(EpisodeNotStartedError, match="call reset"):
        policy(0)
    policy.reset()
    assert policy(np.int64(0)) == policy(np.array(0)) == policy(0) == 1
    with pytest.raises(TypeError, match="observation must be an integer state id"):
        policy(0.0)
    with pytest.raises(TypeError, match="observation must be an integer state id"):
        policy(np.array([0, 1]))
    with pytest.raises(ValueError, match="state must be an integer"):
        policy(-1)
    with pytest.raises(ValueError, match="states must hold integer ids"):
        policy(3)


def test_rollout_and_env_refuse_bad_input():
    env = gym.make("icml26/RiskyChain-v0")
    policy = MarkovPolicy([0] * 6)
    with pytest.raises(TypeError, match=r"rollout: env must be a gymnasium\.Env"):
        rollout(risky_chain(), policy, 3)
    with pytest.raises(TypeError, match="rollout: policy must be an AbstractPolicy"):
        rollout(env, [0] * 6, 3)
    with pytest.raises(ValueError, match="episodes must be"):
        rollout(env, policy, 0)
    with pytest.raises(ValueError, match=r"gamma must be in \[0, 1\]"):
        rollout(env, policy, 3, gamma=1.5)
    with pytest.raises(ValueError, match="seed must be"):
        rollout(env, policy, 3, seed=-1)
    with pytest.raises(TypeError, match="TabularMDPEnv: mdp must be a TabularMDP"):
        TabularMDPEnv("RiskyChain")
    with pytest.raises(ValueError, match="render_mode must be None"):
        TabularMDPEnv(risky_chain(), render_mode="human")
    raw = TabularMDPEnv(risky_chain())
    with pytest.raises(gym.error.ResetNeeded):
        raw.step(0)
    raw.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be in range\(0, 2\)"):
        raw.step(2)


def test_rollout_int_seed_is_gymnasiums_reset_seed():
    env = gym.make("icml26/RiskyChain-v0")
    policy = MarkovPolicy([1] * 6)
    a = rollout(env, policy, 50, seed=7)
    b = rollout(env, policy, 50, seed=7)
    np.testing.assert_array_equal(a, b)
    # by hand, as a gymnasium user would write the loop
    by_hand = []
    for episode in range(50):
        env.reset(seed=7 if episode == 0 else None)
        total, done = 0.0, False
        while not done:
            _, r, terminated, truncated, _ = env.step(1)
            total, done = total + r, terminated or truncated
        by_hand.append(total)
    np.testing.assert_array_equal(a, by_hand)
