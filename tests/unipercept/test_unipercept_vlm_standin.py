"""Issue 44/51: the shipped seed-0 PerceptVLM suite is what ``icml26 tool unipercept
train-standin vlm_suite`` records and produces (its first stage retrained bit for bit here)."""

import torch

from icml26.core import checkpoint_dir, load_checkpoint
from icml26.core.standins import standins_of
from icml26.core.threads import torch_threads
from icml26.unipercept.standins import STANDINS, load_vlm_suite
from icml26.unipercept.vlm_pipeline import SUITE, VLM_RECIPE, train_vlm_suite


def test_the_shipped_suite_records_how_it_was_made():
    _, meta = load_checkpoint(checkpoint_dir("unipercept") / "vlm_suite")
    assert standins_of("unipercept") == STANDINS
    assert meta["command"] == "icml26 tool unipercept train-standin vlm_suite"
    assert meta["recipe"] == dict(VLM_RECIPE) and meta["config"]["models"] == list(SUITE)
    for arm in ("dapt_agsr", "dapt_threshold", "base_agsr", "blind_agsr"):
        assert meta["metrics"][f"{arm}_kl_mean"] >= 0
    models, metrics = load_vlm_suite()
    assert metrics == meta["metrics"]
    assert set(models) == set(SUITE) and models["blind_agsr"].question_blind
    assert load_vlm_suite({**VLM_RECIPE, "seed": 1}) is None  # another recipe: not shipped


def test_retraining_the_base_stage_reproduces_the_shipped_weights():
    _, meta = load_checkpoint(checkpoint_dir("unipercept") / "vlm_suite")
    with torch_threads(1):
        models, metrics = train_vlm_suite(VLM_RECIPE, stages=1)
    assert metrics["base_loss"] == meta["metrics"]["base_loss"]
    shipped = load_vlm_suite()[0]["base"].model.state_dict()
    for key, value in models["base"].model.state_dict().items():
        assert torch.equal(value.half().float(), shipped[key]), key
