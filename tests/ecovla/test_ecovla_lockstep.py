"""Lock-step batched evaluation (issue 42): per-row channel masks compute what one episode at a
time computes; gymnasium wrappers are accepted and vector envs refused with what to pass
(issue 49)."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from icml26.ecovla import (
    FAILURE_MODES,
    DensePolicy,
    EcoVLAPruner,
    FixedPatternPolicy,
    Shift2DPickPlaceEnv,
    SkipBackbonePolicy,
    TinyVLA,
    TinyVLAConfig,
    evaluate,
    evaluate_lockstep,
    initial_frames,
    oracle_pruner,
    random_pattern,
    static_wanda_pattern,
)
from icml26.ecovla.env import GRASP_RADIUS


@pytest.fixture(scope="module")
def model():
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)


def one_at_a_time(policy, seed, steps=12):
    env = Shift2DPickPlaceEnv(split="shift", max_steps=steps)
    obs, _ = env.reset(seed=seed)
    policy.reset()
    firsts, done = [], False
    while not done:
        chunk = np.asarray(policy.step(obs))
        firsts.append(chunk[0].copy())
        for action in chunk[:2]:
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            if done:
                break
    return np.stack(firsts), [r.used for r in getattr(policy, "records", [])]


@pytest.mark.parametrize("kind", ["dense", "static", "eap", "oracle"])
def test_lockstep_rows_replay_one_episode_at_a_time(model, kind):
    calib = initial_frames(4, seed=0)
    policy = {
        "dense": lambda: DensePolicy(model),
        "static": lambda: FixedPatternPolicy(model, static_wanda_pattern(model, calib, 0.4)),
        "eap": lambda: EcoVLAPruner(model, ratio=0.4, p=80, warmup=1).calibrate(calib),
        "oracle": lambda: oracle_pruner(model, 0.4).calibrate(calib),
    }[kind]
    seeds = [3, 4]
    expected = [one_at_a_time(policy(), s) for s in seeds]
    template = policy()
    rows = [template.clone() if kind in ("eap", "oracle") else template for _ in seeds]
    firsts = {i: [] for i in range(len(rows))}

    for i, row in enumerate(rows):
        commit = row.commit

        def recorded(action, captured, commit=commit, i=i):
            out = commit(action, captured)
            firsts[i].append(np.asarray(out)[0].copy())
            return out

        if kind in ("eap", "oracle"):
            row.commit = recorded
    envs = [Shift2DPickPlaceEnv(split="shift", max_steps=12) for _ in seeds]
    result = evaluate_lockstep(rows, envs, seeds, execute=2)
    assert result.queries.tolist() == [len(e[0]) for e in expected]
    if kind == "oracle":
        assert all(u is not None for e in expected for u in e[1][1:])  # sparse after t = 0
    if kind in ("eap", "oracle"):
        for i, (actions, used) in enumerate(expected):
            assert [r.used for r in rows[i].records] == used  # same patterns, same steps
            np.testing.assert_allclose(np.stack(firsts[i]), actions, atol=1e-5)


def test_row_masks_equal_sliced_weights_and_fastv_ranks_each_row(model):
    env = Shift2DPickPlaceEnv(split="shift")
    obs = [env.reset(seed=s)[0] for s in range(3)]
    patterns = [random_pattern(model, 0.4, seed=1), None, random_pattern(model, 0.25, seed=2)]
    features = model.encode_observations(obs)
    actions, _ = model.act_rows(obs, features, model.masks_of(patterns))
    for row, pattern in enumerate(patterns):
        model.install(pattern)
        np.testing.assert_allclose(actions[row], model.act(obs[row]), atol=1e-5)
    model.install(None)
    model.set_token_pruning(0.5, 1)
    try:
        actions, _ = model.act_rows(obs, features, model.masks_of([None] * 3))
        for row in range(3):  # each row keeps its own tokens: equal to a batch of one
            np.testing.assert_allclose(actions[row], model.act(obs[row]), atol=1e-5)
    finally:
        model.set_token_pruning(1.0, 1)
    skip, _ = model.act_rows(obs[:1], features[:1], model.masks_of(["skip"]))
    np.testing.assert_allclose(skip[0], SkipBackbonePolicy(model).step(obs[0]), atol=1e-6)
    assert not np.allclose(skip[0], DensePolicy(model).step(obs[0]))
    with pytest.raises(TypeError, match="patterns"):
        model.masks_of(["all"])
    with pytest.raises(TypeError, match="observations must be a sequence"):  # fuzz campaign 3
        model.act_rows(0.5, features, model.masks_of([None] * 3))


def test_lockstep_traces_drift_and_failure_modes(model):
    calib = initial_frames(4, seed=0)
    static = FixedPatternPolicy(model, static_wanda_pattern(model, calib, 0.4))
    envs = [Shift2DPickPlaceEnv(max_steps=8) for _ in range(2)]
    result = evaluate_lockstep([DensePolicy(model), static], envs, [5, 5], 2, [True, True])
    assert result.drift[0] == [0.0] * 4  # dense against itself
    assert all(d > 0 for d in result.drift[1])
    assert set(result.failure) <= set(FAILURE_MODES)
    with pytest.raises(ValueError, match="own env"):
        evaluate_lockstep([DensePolicy(model)] * 2, [envs[0]] * 2, [0, 1])
    with pytest.raises(ValueError, match="one seed per policy"):
        evaluate_lockstep([DensePolicy(model)], envs[:1], [0, 1])
    with pytest.raises(TypeError, match="trace"):
        evaluate_lockstep([DensePolicy(model)], envs[:1], [0], trace=[1])


def test_evaluate_accepts_gymnasium_wrappers_and_refuses_vector_envs(model):
    wrapped = gym.make("Shift2DPickPlace-v0", max_steps=6)
    plain = Shift2DPickPlaceEnv(max_steps=6)
    a = evaluate(DensePolicy(model), wrapped, episodes=2, execute=2)
    b = evaluate(DensePolicy(model), plain, episodes=2, execute=2)
    assert a.length.tolist() == b.length.tolist() == [6, 6]
    vector = gym.vector.SyncVectorEnv([lambda: Shift2DPickPlaceEnv(max_steps=6)] * 2)
    with pytest.raises(TypeError, match=r"not a vector env.*evaluate_lockstep"):
        evaluate(DensePolicy(model), vector, episodes=1)
    with pytest.raises(TypeError, match="wrapper of one"):
        evaluate(DensePolicy(model), gym.make("CartPole-v1"), episodes=1)
    result = evaluate_lockstep(
        [DensePolicy(model)], [gym.make("Shift2DPickPlace-v0", max_steps=6)], [0], 2
    )
    assert result.length.tolist() == [6]


def test_per_row_fastv_selection_is_each_rows_own():
    from icml26.ecovla import fastv_token_prune

    h = torch.arange(12.0).view(2, 6, 1)
    attn = torch.tensor([[0.0, 0.5, 0.1, 0.3, 0.1, 0.0], [0.0, 0.1, 0.5, 0.1, 0.3, 0.0]])
    kept_h, kept = fastv_token_prune(h, attn, 0.5, 1, 4, per_row=True)
    assert kept.tolist() == [[0, 1, 3, 5], [0, 2, 4, 5]]
    assert kept_h[1, :, 0].tolist() == [6.0, 8.0, 10.0, 11.0]
    with pytest.raises(TypeError, match="per_row"):
        fastv_token_prune(h, attn, 0.5, 1, 4, per_row=1)


class _Scripted(DensePolicy):
    """Acts with the env's expert, bent by ``mode``, ignoring the model's action."""

    def __init__(self, model, env, mode):
        super().__init__(model)
        self.env, self.mode, self.released = env, mode, False

    def commit(self, action, captured):
        s = self.env._state
        if self.mode == "still" or self.released:
            return np.zeros((1, 3))
        if self.mode == "other object":
            s["target"], real = (s["target"] + 1) % 3, s["target"]
        if self.mode == "other pad":
            s["goal"], real = 1 - s["goal"], s["goal"]
        expert = self.env.expert_action()
        if self.mode == "other object":
            s["target"] = real
        if self.mode == "other pad":
            s["goal"] = real
        if self.mode in ("other object", "other pad"):  # let go once, then stay still
            self.released = expert[2] < 0 and s["held"] >= 0
        holding = s["held"] == s["target"]
        if self.mode == "never close":
            expert[2] = -1.0
        if self.mode == "never open" and holding:
            expert[2] = 1.0
        if self.mode == "drop" and holding and s["t"] >= 3:
            expert[2], self.released = -1.0, True
        return expert[None]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("expert", "success"),
        ("still", "never reached"),
        ("never close", "reached, not grasped"),
        ("other object", "wrong object"),
        ("drop", "dropped"),
        ("other pad", "wrong pad"),
        ("never open", "held at timeout"),
    ],
)
def test_failure_modes_are_read_from_the_env_state(model, mode, expected):
    env = Shift2DPickPlaceEnv(split="clean", max_steps=70)
    result = evaluate_lockstep([_Scripted(model, env, mode)], [env], [3], execute=1)
    assert result.failure == [expected]
    assert result.success.tolist() == [expected == "success"]
    if mode in ("still", "never close"):
        assert (result.closest[0] <= GRASP_RADIUS) == (mode == "never close")
