"""Multi-task pre-training data (issue 42): touch and push variants of the environment, their
scripted experts and demonstrations; pick-place (the evaluated task) is unchanged."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml26.ecovla import TASKS, Demonstrations, Shift2DPickPlaceEnv, collect_demos, scripted_expert
from icml26.ecovla.env import GRASP_RADIUS, PAD_RADIUS


def run_expert(env, seed):
    obs, info = env.reset(seed=seed)
    expert = scripted_expert(env, noise=0.15, seed=seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(expert(obs))
        done = terminated or truncated
    return info


@pytest.mark.parametrize("task", ["touch", "push"])
def test_task_variants_pass_check_env(task):
    check_env(Shift2DPickPlaceEnv(split="shift", task=task), skip_render_check=True)


@pytest.mark.parametrize("split", ["train", "shift"])
@pytest.mark.parametrize("task", TASKS)
def test_scripted_expert_succeeds_on_every_task(task, split):
    env = Shift2DPickPlaceEnv(split=split, task=task)
    assert np.mean([run_expert(env, s)["success"] for s in range(40)]) >= 0.95


def test_the_task_changes_no_layout_draw():
    states = []
    for task in TASKS:
        env = Shift2DPickPlaceEnv(split="shift", task=task)
        env.reset(seed=7)
        s = env._state
        states.append((s["gripper"], s["objects"], s["pads"], s["target"], s["goal"]))
    for other in states[1:]:
        for a, b in zip(states[0], other, strict=True):
            np.testing.assert_array_equal(a, b)


def test_push_shoves_objects_ahead_and_never_grasps():
    env = Shift2DPickPlaceEnv(split="clean", task="push")
    env.reset(seed=0)
    s = env._state
    s["gripper"][:] = s["objects"][0] - np.array([GRASP_RADIUS + 0.01, 0.0])
    start = s["objects"][0].copy()
    for _ in range(3):
        env.step(np.array([1.0, 0.0, 1.0]))  # move right with the gripper "closed"
    assert s["held"] == -1
    assert s["objects"][0][0] > start[0] and s["objects"][0][1] == pytest.approx(start[1])
    assert np.linalg.norm(s["objects"][0] - s["gripper"]) == pytest.approx(GRASP_RADIUS)
    # success: the instructed object within the pad radius of the instructed pad, not held
    s["objects"][s["target"]][:] = s["pads"][s["goal"]] + PAD_RADIUS / 2
    s["gripper"][:] = s["objects"][s["target"]] + 0.3
    assert env.step(np.zeros(3))[4]["success"]


def test_touch_succeeds_when_the_instructed_object_is_grasped():
    env = Shift2DPickPlaceEnv(split="clean", task="touch")
    env.reset(seed=1)
    s = env._state
    other = (s["target"] + 1) % 3
    s["gripper"][:] = s["objects"][other]
    assert not env.step(np.array([0.0, 0.0, 1.0]))[4]["success"]  # the wrong object
    env.step(np.array([0.0, 0.0, -1.0]))
    s["gripper"][:] = s["objects"][s["target"]]
    _, reward, terminated, _, info = env.step(np.array([0.0, 0.0, 1.0]))
    assert info["success"] and terminated and reward == 1.0


def test_multitask_demonstrations_carry_their_task_and_distinct_episodes():
    parts = [collect_demos(2, seed=3, task=task) for task in TASKS]
    both = Demonstrations.concatenate(parts)
    assert len(both) == sum(len(p) for p in parts)
    assert both.task.tolist() == [i for i, p in enumerate(parts) for _ in range(len(p))]
    assert sorted(set(both.episode.tolist())) == list(range(6))
    touch = parts[TASKS.index("touch")]
    assert touch.chunks[-1, -1, 2] == 1.0  # after a touch the label keeps holding
    assert parts[TASKS.index("push")].chunks[:, :, 2].max() == -1.0  # push never closes
    assert collect_demos(1, seed=3).task.tolist() == [0] * len(collect_demos(1, seed=3))


def test_task_inputs_are_checked():
    with pytest.raises(ValueError, match="task must be one of"):
        Shift2DPickPlaceEnv(task="stack")
    with pytest.raises(ValueError, match="task must be one of"):
        collect_demos(1, task="stack")
    demos = collect_demos(1, seed=0)
    fields = {f: getattr(demos, f) for f in Demonstrations.__dataclass_fields__}
    with pytest.raises(ValueError, match="task must hold indices"):
        Demonstrations(**{**fields, "task": np.full(len(demos), 3)})
    with pytest.raises(ValueError, match="task must have one row per frame"):
        Demonstrations(**{**fields, "task": np.zeros(1)})
    with pytest.raises(ValueError, match="parts must be a non-empty"):
        Demonstrations.concatenate([])
