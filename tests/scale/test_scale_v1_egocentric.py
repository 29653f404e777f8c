"""The egocentric option of AmbiguousReach2D-v1 (issue 41): the agent at the image centre, every
object at its offset from the agent (not the mirrored one), the default view unchanged, and the
view carried from a policy's training recipe to the experiments that evaluate it."""

import colorsys
import hashlib
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml26.core import RunContext, torch_threads
from icml26.core.standins import save_checkpoint
from icml26.scale import (
    ENV_ID_V1,
    AmbiguousReach2DV1Env,
    TinyOpenVLA,
    load_policy,
    policy_view,
)
from icml26.scale.env_v1 import EGO_SCALE, IMAGE
from icml26.scale.experiments import reach_v1 as v1
from icml26.scale.standins import policy_v1_trainer

SMALL = {"d_vision": 16, "d_model": 16, "heads": 2, "mlp_ratio": 2}
CENTRE = IMAGE // 2


def _ego(**kwargs):
    return AmbiguousReach2DV1Env(view="egocentric", render_mode="rgb_array", **kwargs)


def _colour(hue, light):
    return np.array(colorsys.hsv_to_rgb(hue / 360.0, 0.85, 0.95)) * light * 255


def _blob_centre(image, colour):
    """Mean (column, row) of the pixels within 3 levels of ``colour``."""
    rows, cols = np.nonzero(np.abs(image.astype(float) - colour).max(-1) <= 3)
    assert len(rows) > 0
    return cols.mean(), rows.mean()


@pytest.mark.parametrize("seed", range(8))
def test_agent_is_at_the_centre_and_the_target_at_its_offset(seed):
    env = _ego(n_distractors=(0, 0), n_walls=(0, 0))
    env.reset(seed=seed)
    scene = env.unwrapped._scene
    for _ in range(4):
        image = env.render()
        white = round(255 * scene["light"])
        ring = np.ones((5, 5), bool)
        ring[1:-1, 1:-1] = False
        window = image[CENTRE - 2 : CENTRE + 3, CENTRE - 2 : CENTRE + 3]
        assert np.abs(window[ring].astype(int) - min(white, 255)).max() <= 1  # the agent's ring
        offset = scene["objects"][0] - scene["agent"]  # (target - agent), world units
        x, y = _blob_centre(image, _colour(scene["hues"][0], scene["light"]))
        # column = x, row = y, each at CENTRE + EGO_SCALE * offset (within the pixel grid)
        assert abs(x - (CENTRE + math.floor(EGO_SCALE * offset[0]))) <= 0.5
        assert abs(y - (CENTRE + math.floor(EGO_SCALE * offset[1]))) <= 0.5
        # wrong-sign guard: a target to the right of / below the agent is drawn right of / below
        # the centre (a view that drew agent - target would fail here)
        assert np.sign(x - CENTRE) == np.sign(offset[0]) or abs(offset[0]) < 1 / EGO_SCALE
        assert np.sign(y - CENTRE) == np.sign(offset[1]) or abs(offset[1]) < 1 / EGO_SCALE
        env.step(np.array([0.7, -0.4, -1.0]))  # the world shifts; the agent stays centred


def test_moving_right_shifts_the_world_left():
    env = _ego(n_distractors=(0, 0), n_walls=(0, 0))
    env.reset(seed=2)
    scene = env.unwrapped._scene
    scene["agent"] = np.array([0.3, 0.5])
    scene["objects"][0] = np.array([0.7, 0.5])
    colour = _colour(scene["hues"][0], scene["light"])
    before, _ = _blob_centre(env.render(), colour)
    for _ in range(2):
        env.step(np.array([1.0, 0.0, -1.0]))  # 2 x 0.08 to the right
    after, _ = _blob_centre(env.render(), colour)
    assert after - before == pytest.approx(-2 * 0.08 * EGO_SCALE, abs=1.0)
    assert after < before


def test_outside_the_world_reads_as_wall_and_walls_are_drawn():
    env = _ego(n_walls=(1, 1))
    env.reset(seed=1)
    scene = env.unwrapped._scene
    scene["agent"] = np.array([0.05, 0.95])
    image = env.render().astype(int)
    grey = round(0.5 * scene["light"] * 255)
    assert np.abs(image[:, :14] - grey).max() <= 1  # x < 0: left of the world
    assert np.abs(image[19:] - grey).max() <= 1  # y > 1: below the world
    inside = image[CENTRE - 12 : CENTRE - 3, CENTRE + 4 : CENTRE + 14]
    assert (np.abs(inside - round(0.1 * scene["light"] * 255)) <= 1).any()  # the floor
    wall = scene["wall"]
    x = CENTRE + math.floor(EGO_SCALE * ((wall[0] + wall[2]) / 2 - 0.05))
    y = CENTRE + math.floor(EGO_SCALE * ((wall[1] + wall[3]) / 2 - 0.95))
    assert abs(int(image[y, x, 0]) - grey) <= 1


def test_same_scenes_dynamics_and_draws_as_the_allocentric_view():
    ego, allo = _ego(), AmbiguousReach2DV1Env(render_mode="rgb_array")
    rng = np.random.default_rng(0)
    for seed in range(3):
        a, b = ego.reset(seed=seed)[0], allo.reset(seed=seed)[0]
        assert a["instruction"] == b["instruction"] and not np.array_equal(a["image"], b["image"])
        for _ in range(10):
            action = rng.uniform(-1, 1, 3)
            *ra, ia = ego.step(action)
            *rb, ib = allo.step(action)
            assert ra[1:] == rb[1:] and ia == ib
            assert np.array_equal(ego._scene["agent"], allo._scene["agent"])
        assert ego.np_random.bit_generator.state == allo.np_random.bit_generator.state


def test_default_view_is_the_allocentric_one_bit_for_bit():
    """The shipped policies' observation: the images of the code before the option, pinned."""
    assert AmbiguousReach2DV1Env().view == "allocentric"
    digest, rng = hashlib.sha256(), np.random.default_rng(1)
    for split in ("id", "ood_hue", "ood_noise"):
        for seed in range(5):
            env = AmbiguousReach2DV1Env(split, n_walls=(1, 1))
            digest.update(env.reset(seed=seed)[0]["image"].tobytes())
            for _ in range(8):
                digest.update(env.step(rng.uniform(-1, 1, 3))[0]["image"].tobytes())
    assert digest.hexdigest() == (
        "7d2b618fdddbda9e1d5ca52d1ea6e5ade7b0951cf9f6512ad29bbd8c979479ed"
    )


def test_gymnasium_checker_copies_and_bad_view():
    check_env(_ego(), skip_render_check=False)
    env = gym.make(ENV_ID_V1, view="egocentric")
    assert env.unwrapped.view == "egocentric"
    copy = AmbiguousReach2DV1Env(**env.unwrapped.kwargs())  # how evaluate builds its batch
    assert copy.view == "egocentric"
    with pytest.raises(ValueError, match="view"):
        AmbiguousReach2DV1Env(view="overhead")


def test_training_records_the_view_and_the_experiment_evaluates_in_it(tmp_path, monkeypatch):
    with torch_threads(1):
        trained = policy_v1_trainer(SMALL, demos=2, steps=2, batch_size=4, view="egocentric")(
            None, None
        )
    assert trained.recipe["view"] == "egocentric" and "egocentric view" in trained.data
    default = policy_v1_trainer(SMALL, demos=2, steps=1, batch_size=4)(None, None)
    assert default.recipe["view"] == "allocentric"
    # the shipped policies predate the option: their records read allocentric
    assert policy_view(load_policy("reach_v1_s0")[1]) == "allocentric"
    with pytest.raises(ValueError, match="view"):
        policy_view({"recipe": {"view": "overhead"}})
    with pytest.raises(TypeError, match="meta"):
        policy_view(None)
    model = TinyOpenVLA(seed=0, **SMALL)
    stem = save_checkpoint(
        tmp_path / "ego",
        model,
        {
            "config": {"architecture": "TinyOpenVLA", **model.config},
            "recipe": {"view": "egocentric"},
            "metrics": {"final_bc_loss": 1.0},
        },
    )
    views = []
    init = AmbiguousReach2DV1Env.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        views.append(self.view)

    monkeypatch.setattr(AmbiguousReach2DV1Env, "__init__", spy)
    config = v1.ReachV1Config(policies=(str(stem),), episodes=2, splits=("id",),
                              decoders=("greedy", "scale"), expert_episodes=2)  # fmt: skip
    with torch_threads(1):
        out = v1.run_v1("scale.reach_v1", config, RunContext(seed=0))
    assert views and set(views) == {"egocentric"} and len(out["ep_id_greedy"]) == 2
