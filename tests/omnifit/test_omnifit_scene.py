"""Issue 43: AV-Scene QA, the SceneThinker stand-in (a tiny real Qwen2.5-Omni thinker) and the
omnifit.scene experiment's claims on their controls."""

import dataclasses

import numpy as np
import pytest
import torch

from icml26.core import Status
from icml26.core.standins import save_checkpoint
from icml26.omnifit import (
    LAHPProfile,
    OmniFitCompressor,
    SceneThinker,
    SceneThinkerConfig,
    load_scene_standin,
    make_scene_dataset,
    run_compressed,
    scene_batch,
    train_scene_thinker,
)
from icml26.omnifit.avscene import AUDIO_TOKENS, PATCHES, scene_token_layout
from icml26.omnifit.experiments.scene import SCENE_CLAIMS, SceneConfig
from icml26.omnifit.scene_model import scene_position_ids

TINY = SceneThinkerConfig(n_layers=2, d=16, n_heads=2, kv_heads=1, d_ff=16)


@pytest.fixture(scope="module")
def data():
    return make_scene_dataset(60, windows=3, seed=5, split="test")


@pytest.fixture(scope="module")
def model():
    return SceneThinker(TINY, seed=0).double()


def test_clips_are_deterministic_and_answers_in_range(data):
    again = make_scene_dataset(60, windows=3, seed=5, split="test")
    assert np.array_equal(data.video, again.video) and np.array_equal(data.labels, again.labels)
    assert data.labels.min() >= 0 and data.labels.max() < 14
    # families 0 (where) answer a quadrant, 1-3 a digit class
    assert (data.labels[data.family == 0] >= 10).all()
    assert (data.labels[data.family != 0] < 10).all()


def test_relevant_tokens_follow_the_question_family(data):
    W = data.windows
    chunks = data.relevant.reshape(len(data), W, PATCHES + AUDIO_TOKENS)
    audio, video = chunks[:, :, PATCHES:], chunks[:, :, :PATCHES]
    assert not audio[data.family == 3].any()  # visual-only questions need no sound
    assert audio[data.family != 3].any(axis=(1, 2)).all()  # the others need the sounding tokens
    # the needed patches are the same cells in every frame (the scene is static)
    assert (video == video[:, :1]).all()
    # 'which visible digit never sounds' needs all three digits
    assert (video[data.family == 1, 0].sum(-1) == 3).all()
    assert (video[data.family == 0, 0].sum(-1) == 1).all()


def test_sound_is_content_not_time():
    """A digit's timbre is the same whatever the clip: the spectra of sounding tokens of one
    class correlate more with each other than with another class's."""
    from icml26.omnifit.avscene import TIMBRE_BINS

    assert len({tuple(b) for b in TIMBRE_BINS}) == 10


def test_position_ids_follow_tmrope_chunks():
    pos = scene_position_ids(3)
    layout = scene_token_layout(3)
    assert pos.shape == (3, len(layout))
    video = torch.as_tensor(layout == 1)
    audio = torch.as_tensor(layout == 2)
    t = pos[0]
    # chunk k's video and audio tokens share the temporal span [50 k, 50 k + 50) (+ offset 1)
    for k in range(3):
        span = t[1 + 24 * k : 1 + 24 * (k + 1)]
        assert span.min() == 1 + 50 * k and span.max() < 1 + 50 * (k + 1)
    assert torch.equal(pos[0, audio], pos[1, audio]) and torch.equal(pos[0, audio], pos[2, audio])
    assert pos[1, video].max() == 4 and pos[2, video].max() == 4  # the 4x4 grid (+ offset 1)
    assert (pos[:, -2:] > pos[:, :-2].max()).all()  # the question after all media


def test_the_layer_loop_is_the_models_forward_and_mu_one_is_identical(model, data):
    batch = scene_batch(data, slice(0, 4))
    with torch.no_grad():
        batch = dataclasses.replace(batch, video=batch.video.double(), audio=batch.audio.double())
        direct = model(batch)
        looped = run_compressed(model, batch).logits
        same = run_compressed(model, batch, OmniFitCompressor(LAHPProfile.uniform(2, 16), 1.0))
    torch.testing.assert_close(looped, direct, atol=1e-12, rtol=0)
    assert torch.equal(same.logits, looped) and direct.shape == (4, 14)


def test_an_interrupted_training_resumes_identically(tmp_path):
    from icml26.core.training import TrainingCheckpoint

    data = make_scene_dataset(64, windows=2, seed=1)
    full = train_scene_thinker(SceneThinker(TINY, seed=3), data, epochs=2, batch_size=16, seed=4)

    def stop_at_step_5(done, total, metrics=None):
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # checkpoint after step 3, killed after step 5
        train_scene_thinker(SceneThinker(TINY, seed=3), data, epochs=2, batch_size=16, seed=4,
                            progress=stop_at_step_5,
                            resume=TrainingCheckpoint(tmp_path / "r.pt", every=3))  # fmt: skip
    resumed = train_scene_thinker(
        SceneThinker(TINY, seed=3), data, epochs=2, batch_size=16, seed=4,
        resume=TrainingCheckpoint(tmp_path / "r.pt", every=3),
    )  # fmt: skip
    assert len(full.ce) == 8
    assert resumed.ce == pytest.approx(full.ce, rel=1e-5)


def test_a_tinyomni_checkpoint_is_refused(tmp_path):
    save_checkpoint(tmp_path / "x", torch.nn.Linear(1, 1), {"config": {"d": 4}})
    with pytest.raises(ValueError, match="not a SceneThinker"):
        load_scene_standin(tmp_path / "x")


def test_config_validation():
    with pytest.raises(ValueError, match="multiple of 8"):
        SceneThinkerConfig(d=12, n_heads=1, kv_heads=1)
    with pytest.raises(ValueError, match="rope_theta"):
        SceneThinkerConfig(rope_theta=float("nan"))
    with pytest.raises(ValueError, match="mus"):
        SceneConfig(mus=(0.0,))
    with pytest.raises(ValueError, match="standins"):
        SceneConfig(standins=())


CLAIMS = {c.id: c for c in SCENE_CLAIMS}


def test_one_headline_at_the_papers_bar_and_gates():
    assert [c.id for c in SCENE_CLAIMS if c.headline] == ["O1"]
    assert CLAIMS["O1"].threshold == 98.0 and CLAIMS["O1"].source == "paper"
    assert [c.id for c in SCENE_CLAIMS if c.kind == "gate"] == ["SG1", "SG2", "SG3", "SG4", "SG5"]
    assert CLAIMS["SK1"].kind == "sanity"


@pytest.mark.parametrize("cid", ["SA2", "SA3", "SA4", "SA5"])
def test_each_difference_fails_on_its_control(cid):
    """The method replaced by its control: per-clip differences are all 0 -> not reproduced."""
    claim = CLAIMS[cid]
    verdict = claim.judge([[0.0] * 200, [0.0] * 200, [0.0] * 200])
    assert verdict.status is Status.NOT_REPRODUCED


def test_relative_claims_fail_on_random_drops_value():
    from icml26.omnifit.experiments.scene import CONTROL_RELATIVE

    for cid in ("O1", "SA1"):
        verdict = CLAIMS[cid].judge([[CONTROL_RELATIVE] * 100] * 3)
        assert verdict.status is Status.NOT_REPRODUCED


def test_shipped_scene_standins_are_declared_with_their_recipe_and_load_identically():
    import math

    from icml26.core.standins import load_checkpoint
    from icml26.omnifit.standins import SCENE_CONFIG, SCENE_RECIPE, STANDINS

    batch = scene_batch(make_scene_dataset(8, windows=SCENE_RECIPE["windows"], seed=2), slice(None))
    logits = []
    for seed in range(3):
        name = f"scene_s{seed}"
        model, meta = load_scene_standin(name)
        assert meta["recipe"] == {**SCENE_RECIPE, "seed": seed}
        assert meta["command"] == f"icml26 tool omnifit train-standin {name}"
        assert model.config == SCENE_CONFIG and not model.training
        assert meta["metrics"]["final_ce"] < math.log(14)  # below a uniform guess
        state, _ = load_checkpoint(STANDINS[name].path)
        assert sum(t.numel() * t.element_size() for t in state.values()) < 2e6
        with torch.no_grad():
            logits.append(model(batch))
    assert not torch.equal(logits[0], logits[1])  # three independently trained models
