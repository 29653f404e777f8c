"""Behaviour cloning (two explicit stages, core training pieces, progress); calibration frames."""

import numpy as np
import pytest
import torch

from icml26.core import NonFiniteLossError
from icml26.ecovla import TinyVLA, TinyVLAConfig, collect_demos, initial_frames, train_bc


@pytest.fixture(scope="module")
def demos():
    return collect_demos(2, seed=0)


def tiny(seed=0):
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, d_ff=64, patch=16), seed=seed)


def test_the_encoder_stage_is_explicit_and_counted_in_losses_and_progress(demos):
    with pytest.raises(TypeError, match="encoder_steps"):
        train_bc(tiny(), demos, steps=5)  # no silent encoder stage: it must be written
    seen = []
    losses = train_bc(
        tiny(),
        demos,
        steps=3,
        encoder_steps=2,
        batch_size=4,
        progress=lambda done, total, m: seen.append((done, total, sorted(m))),
    )
    assert len(losses) == 5 and all(np.isfinite(losses))
    assert seen == [(i, 5, ["loss"]) for i in range(1, 6)]
    assert len(train_bc(tiny(), demos, steps=2, encoder_steps=0, batch_size=4)) == 2


def test_training_is_deterministic_under_a_seed(demos):
    a, b = tiny(), tiny()
    backbone = [p.detach().clone() for p in a.backbone.parameters()]
    la = train_bc(a, demos, steps=1, encoder_steps=2, batch_size=4, seed=3)
    lb = train_bc(b, demos, steps=1, encoder_steps=2, batch_size=4, seed=3)
    assert la == lb
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert any(
        not torch.equal(p, q) for p, q in zip(a.backbone.parameters(), backbone, strict=True)
    )
    assert la != train_bc(tiny(), demos, steps=1, encoder_steps=2, batch_size=4, seed=4)
    assert not a.training  # left in eval mode


def test_a_nan_loss_stops_training_naming_the_step(demos):
    model = tiny()
    with torch.no_grad():
        model.head[0].weight.fill_(float("nan"))
    with pytest.raises(NonFiniteLossError, match="train_bc: the loss is nan at step 0"):
        train_bc(model, demos, steps=2, encoder_steps=1, batch_size=4)


def test_initial_frames_are_the_first_steps_of_seeded_episodes():
    frames = initial_frames(6, per_episode=4, seed=1)
    again = initial_frames(6, per_episode=4, seed=np.random.default_rng(1))
    assert len(frames) == 6
    for f, g in zip(frames, again, strict=True):
        np.testing.assert_array_equal(f["image"], g["image"])
    assert not np.array_equal(frames[0]["image"], initial_frames(6, seed=2)[0]["image"])
    # frames 0-3 come from one episode, 4-5 from the next (another instruction or layout)
    assert all(np.array_equal(frames[0]["instruction"], f["instruction"]) for f in frames[:4])
    with pytest.raises(ValueError, match="split must be one of"):
        initial_frames(4, split="dark")
    with pytest.raises(ValueError, match="n must be an integer"):
        initial_frames(0)


def test_training_resumes_where_it_stopped_with_the_same_minibatches(demos, tmp_path):
    from icml26.core import TrainingCheckpoint

    whole = tiny()
    expected = train_bc(whole, demos, steps=3, encoder_steps=2, batch_size=4, seed=5)
    first = tiny()
    ckpt = TrainingCheckpoint(tmp_path / "run.pt", every=3)

    def stop_after_three(done, total, metrics):
        if done == 4:
            raise KeyboardInterrupt  # the run dies after the save at step 3

    with pytest.raises(KeyboardInterrupt):
        train_bc(
            first,
            demos,
            steps=3,
            encoder_steps=2,
            batch_size=4,
            seed=5,
            resume=ckpt,
            progress=stop_after_three,
        )
    resumed = tiny(seed=1)  # other initial weights: the checkpoint replaces them
    losses = train_bc(
        resumed,
        demos,
        steps=3,
        encoder_steps=2,
        batch_size=4,
        seed=5,
        resume=TrainingCheckpoint(tmp_path / "run.pt", every=3),
    )
    assert losses == pytest.approx(expected, rel=0, abs=0)
    for p, q in zip(whole.parameters(), resumed.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    with pytest.raises(TypeError, match="resume"):
        train_bc(tiny(), demos, steps=1, encoder_steps=0, resume=str(tmp_path / "run.pt"))
    with pytest.raises(ValueError, match="weight_decay"):
        train_bc(tiny(), demos, steps=1, encoder_steps=0, weight_decay=-1.0)


def test_without_the_backbone_the_action_ignores_the_observation():
    # no shortcut into the action queries (issue 42): with every block's MLP and attention output
    # zeroed the queries never see the instruction, proprio or image, so every row acts alike
    from icml26.ecovla import Shift2DPickPlaceEnv

    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)
    env = Shift2DPickPlaceEnv()
    observations = [env.reset(seed=s)[0] for s in range(3)]
    features = model.encode_observations(observations)
    skipped, _ = model.act_rows(observations, features, model.masks_of(["skip"] * 3))
    dense, _ = model.act_rows(observations, features, model.masks_of([None] * 3))
    np.testing.assert_allclose(skipped[1:], skipped[:1].repeat(2, axis=0), rtol=0, atol=1e-6)
    assert np.abs(dense[1:] - dense[:1]).max() > 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_shipped_policy_is_what_its_recorded_recipe_trained(seed):
    # the record names the recipe of this seed, and the loaded weights reproduce the open-loop
    # error measured on them when training ended (other weights would not, to 1e-6)
    from icml26.ecovla.standins import (
        CHECK_METRIC,
        POLICIES,
        RECIPES,
        STANDINS,
        PolicyRecipe,
        check_error,
        load_policy,
    )

    name = POLICIES[seed]
    _, meta = STANDINS[name].load()
    assert RECIPES[name].seed == seed
    assert PolicyRecipe.from_record(meta["recipe"]) == RECIPES[name]
    assert meta["config"].get("n_tasks", 0) == RECIPES[name].model_config().n_tasks
    assert meta["command"] == f"icml26 tool ecovla train-standin {name}"
    assert check_error(load_policy(name)) == pytest.approx(meta["metrics"][CHECK_METRIC], abs=1e-6)
