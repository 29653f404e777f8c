"""Issue 44's data and stages: generic pretraining without perceptual labels, DAPT without ISTA
ratings, GRPO arms with KL logged, seeded and resumable stage by stage."""

import numpy as np
import pytest
import torch

from icml26.core import TrainingCheckpoint
from icml26.core.threads import torch_threads
from icml26.unipercept import GenericQAItem, VRItem, make_pretrain_set
from icml26.unipercept.vlm_pipeline import SUITE, VLM_RECIPE, suite_data, train_vlm_suite

TINY = {**VLM_RECIPE, "size": 16, "n": 8, "pretrain_epochs": 1, "dapt_epochs": 1,
        "grpo_steps": 2, "grpo_batch": 4, "batch": 8, "n_group": 4}  # fmt: skip


def test_pretraining_asks_nothing_perceptual():
    items = make_pretrain_set(80, seed=0, size=16)
    assert all(isinstance(it, GenericQAItem) for it in items)
    kinds = {it.meta["kind"] for it in items}
    assert kinds == {"kind", "count", "shape", "colour"}
    for it in items:
        answer = it.options[it.answer_index]
        if it.meta["kind"] == "colour":
            assert answer == ("red", "green", "blue")[int(np.argmax(it.image.mean(axis=(0, 1))))]
        words = it.question.lower()
        assert not any(w in words for w in ("quality", "distortion", "texture", "rate", "degrad"))


def test_dapt_holds_no_ista_rating_and_rl_holds_both():
    data = suite_data(TINY)
    dapt_ratings = {it.domain for it in data["dapt"] if isinstance(it, VRItem)}
    rl_ratings = {it.domain for it in data["rl"] if isinstance(it, VRItem)}
    assert dapt_ratings == {"IQA"} and rl_ratings == {"IQA", "ISTA"}
    assert not any(isinstance(it, GenericQAItem) for it in data["dapt"] + data["rl"])
    test = suite_data(TINY, "test")
    train_sources = {it.source for it in data["dapt"] if isinstance(it, VRItem)}
    assert train_sources.isdisjoint({it.source for it in test["vr"] if it.domain == "IQA"})


@pytest.fixture(scope="module")
def suite():
    with torch_threads(1):  # module scope: before conftest's per-test thread fixture
        return train_vlm_suite(TINY)


def test_every_arm_moves_away_from_its_start_and_logs_kl(suite):
    models, metrics = suite
    assert set(models) == set(SUITE)
    for arm in ("dapt_agsr", "dapt_threshold", "base_agsr", "blind_agsr"):
        assert np.isfinite(metrics[f"{arm}_kl_mean"]) and metrics[f"{arm}_kl_mean"] >= 0
    base = models["base"].state_dict()
    assert any(not torch.equal(v, models["dapt"].state_dict()[k]) for k, v in base.items())
    assert models["blind_agsr"].question_blind and not models["dapt_agsr"].question_blind


def test_a_run_resumed_at_a_stage_boundary_gives_the_same_weights(suite, tmp_path):
    models, metrics = suite
    resume = TrainingCheckpoint(tmp_path / "r.pt", every=1)
    train_vlm_suite(TINY, resume, stages=3)  # stopped after the first GRPO arm
    again, again_metrics = train_vlm_suite(TINY, TrainingCheckpoint(tmp_path / "r.pt", every=1))
    assert again_metrics == metrics
    for name in SUITE:
        torch.testing.assert_close(again[name].state_dict(), models[name].state_dict(),
                                   rtol=0, atol=0)  # fmt: skip
