"""AmbiguousReach2D-v1 (issue 41): continuous moves, a reversible grip, the DART expert, and the
gymnasium ids under the project's icml26/ namespace (issue 49)."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml26.scale import (
    ENV_ID,
    ENV_ID_V1,
    LEGACY_ENV_ID,
    SPLITS_V1,
    AmbiguousReach2DEnv,
    AmbiguousReach2DV1Env,
    collect_dart_demonstrations,
    dart_rollout,
    expert_action,
)
from icml26.scale.env_v1 import HOLD_STEPS, REACH, STEP


def _run_expert(env, seed):
    env.reset(seed=seed)
    for _ in range(env.unwrapped.max_steps):
        _, reward, terminated, truncated, _ = env.step(expert_action(env))
        if terminated or truncated:
            return reward
    return 0.0


@pytest.mark.parametrize("split", sorted(SPLITS_V1))
def test_expert_solves_every_split_with_walls(split):
    env = AmbiguousReach2DV1Env(split, n_walls=(1, 1))
    assert np.mean([_run_expert(env, s) for s in range(40)]) >= 0.95


def test_gymnasium_checker_and_namespaced_ids():
    check_env(AmbiguousReach2DV1Env(render_mode="rgb_array"), skip_render_check=False)
    assert ENV_ID_V1 == "icml26/AmbiguousReach2D-v1" and ENV_ID == "icml26/AmbiguousReach2D-v0"
    assert isinstance(gym.make(ENV_ID_V1, split="ood_hue").unwrapped, AmbiguousReach2DV1Env)
    # the module:id form imports the module first (a fresh process needs nothing else)
    assert isinstance(gym.make(f"icml26.scale.env:{ENV_ID}").unwrapped, AmbiguousReach2DEnv)
    # the old public id still works, with a deprecation warning naming the new one
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make(LEGACY_ENV_ID, split="ood_noise")
    assert isinstance(env.unwrapped, AmbiguousReach2DEnv) and env.unwrapped.split == "ood_noise"
    assert any(ENV_ID in str(w.message) for w in caught)


def test_grip_is_reversible_and_success_needs_holding_the_target():
    env = AmbiguousReach2DV1Env(n_distractors=(2, 2), n_walls=(0, 0))
    env.reset(seed=3)
    scene = env._scene
    # put the agent on a distractor: gripping lifts it, releasing drops it, nothing ends
    scene["agent"] = scene["objects"][1].copy()
    _, reward, terminated, _, info = env.step(np.array([0.0, 0.0, 1.0]))
    assert info["held"] == 1 and not terminated and reward == 0.0
    assert np.array_equal(expert_action(env), [0.0, 0.0, -1.0])  # the expert lets go
    env.step(np.array([0.5, 0.0, 1.0]))  # the held object moves with the agent
    assert np.allclose(scene["objects"][1], scene["agent"])
    _, _, terminated, _, info = env.step(np.array([0.0, 0.0, -1.0]))
    assert info["held"] == -1 and not terminated
    # on the target: success only after holding it for HOLD_STEPS steps
    scene["agent"] = scene["objects"][0] + REACH / 2
    for t in range(HOLD_STEPS):
        _, reward, terminated, _, info = env.step(np.array([0.0, 0.0, 1.0]))
        assert info["held"] == 0 and terminated == (t == HOLD_STEPS - 1)
    assert reward == 1.0


def test_moves_are_continuous_and_walls_block():
    env = AmbiguousReach2DV1Env(n_walls=(0, 0))
    env.reset(seed=1)
    env._scene["agent"] = np.array([0.5, 0.5])
    env.step(np.array([0.25, -0.5, -1.0]))
    assert np.allclose(env._scene["agent"], [0.5 + STEP * 0.25, 0.5 - STEP * 0.5])
    env = AmbiguousReach2DV1Env(n_walls=(1, 1))
    env.reset(seed=1)
    scene = env._scene
    wall = scene["wall"]
    centre = (wall[:2] + wall[2:]) / 2
    thin = int(np.argmin(wall[2:] - wall[:2]))
    start = centre.copy()
    start[thin] = wall[thin] - 0.04  # just before the wall's face
    scene["agent"] = start
    push = np.zeros(3)
    push[thin], push[2] = 1.0, -1.0
    for _ in range(3):
        env.step(push)
    assert scene["agent"][thin] < wall[thin]  # it never passes through


def test_dart_data_hold_recovery_states_with_clean_labels():
    env = AmbiguousReach2DV1Env(n_distractors=(3, 3))
    rng = np.random.default_rng(0)
    releases = 0
    for seed in range(20):
        env.reset(seed=seed)
        observations, labels, _ = dart_rollout(env, rng, noise=0.3, detour=1.0)
        releases += sum(np.array_equal(a, [0.0, 0.0, -1.0]) for a in labels)
        assert len(observations) == len(labels)
    assert releases > 0  # detours grab a distractor; the label says let go
    demos = collect_dart_demonstrations(env, 5, seed=0)
    again = collect_dart_demonstrations(env, 5, seed=0)
    assert np.array_equal(demos.images, again.images) and demos.expert_success >= 0.8


def test_deterministic_under_seed_and_refuses_bad_input():
    a, b = AmbiguousReach2DV1Env(), AmbiguousReach2DV1Env()
    assert np.array_equal(a.reset(seed=5)[0]["image"], b.reset(seed=5)[0]["image"])
    with pytest.raises(ValueError, match="split"):
        AmbiguousReach2DV1Env("mars")
    with pytest.raises(ValueError, match="n_walls"):
        AmbiguousReach2DV1Env(n_walls=(0, 2))
    with pytest.raises(ValueError, match="reset"):
        AmbiguousReach2DV1Env().step(np.zeros(3))
    with pytest.raises(ValueError):
        a.step(np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(TypeError, match="AmbiguousReach2DV1Env"):
        expert_action(AmbiguousReach2DEnv())
    with pytest.raises(ValueError, match="noise"):
        dart_rollout(a, np.random.default_rng(0), noise=-1.0)
