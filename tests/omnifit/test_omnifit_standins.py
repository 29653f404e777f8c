"""TinyOmni stand-ins (icml26.omnifit.standins): training, resuming, the core checkpoint format,
the shipped one and the experiments' loader."""

import dataclasses
import json
from dataclasses import replace

import pytest
import torch

from icml26.core import TrainingCheckpoint
from icml26.core.standins import Standin, load_checkpoint, save_checkpoint
from icml26.core.standins import train_standin as train_core_standin
from icml26.omnifit import (
    SHIPPED_STANDINS,
    TinyOmni,
    TinyOmniConfig,
    evaluate_accuracy,
    load_standin,
    make_dataset,
    standin_trainer,
    train_standin,
)
from icml26.omnifit.experiments.accuracy import ACCURACY_PRESETS
from icml26.omnifit.experiments.common import load_preset_standin
from icml26.omnifit.experiments.score_once import SCORE_ONCE_PRESETS
from icml26.omnifit.standins import STANDINS, TINYOMNI_QUICK, TINYOMNI_QUICK_RECIPE

TINY = TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32)
# 16 streams in batches of 4 for 2 epochs: 8 steps, so a resume lands mid-epoch and on a boundary
TINY_RECIPE = dict(train_samples=16, windows=2, epochs=2, batch_size=4, seed=5)


def _logits(model):
    with torch.no_grad():
        return model(make_dataset(3, windows=2, seed=4).batch(slice(None)))


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_train_standin_is_deterministic_under_its_seed():
    (a, history_a), (b, history_b) = (
        train_standin(TINY, **TINY_RECIPE),
        train_standin(TINY, **TINY_RECIPE),
    )
    assert history_a.ce == history_b.ce and not a.training and _same_weights(a, b)
    c, _ = train_standin(TINY, **{**TINY_RECIPE, "seed": 6})
    assert not torch.equal(_logits(a), _logits(c))


class _StopError(Exception):
    pass


@pytest.mark.parametrize("stop_after", [3, 4])  # mid-epoch, and at the epoch boundary
def test_an_interrupted_training_resumes_to_the_same_model(tmp_path, stop_after):
    straight, history = train_standin(TINY, **TINY_RECIPE)
    resume = TrainingCheckpoint(tmp_path / "run.pt", every=1)

    def stop(done, total, metrics):  # interrupts step stop_after + 1 before its save
        if done == stop_after + 1:
            raise _StopError

    with pytest.raises(_StopError):
        train_standin(TINY, **TINY_RECIPE, resume=resume, progress=stop)
    seen = []
    resumed, resumed_history = train_standin(
        TINY, **TINY_RECIPE, resume=resume, progress=lambda d, t, m: seen.append(d)
    )
    assert seen == list(range(stop_after + 1, 9))  # only the missing steps ran
    assert resumed_history == history and _same_weights(resumed, straight)


def test_train_standin_command_writes_a_loadable_core_checkpoint(tmp_path):
    standin = Standin(
        name="tiny",
        system="omnifit",
        description="test",
        train=standin_trainer(TINY, **TINY_RECIPE),
    )
    stem = train_core_standin(standin, out=tmp_path)
    model, meta = load_standin(stem)
    straight, history = train_standin(TINY, **TINY_RECIPE)
    assert _same_weights(model, straight) and not model.training
    assert meta["config"] == dataclasses.asdict(TINY) and meta["recipe"] == {
        **TINY_RECIPE,
        "clutter": 0.3,
        "lr": 2e-3,
        "infonce_weight": 0.1,
    }
    assert meta["metrics"]["train_accuracy"] == history.train_accuracy
    assert meta["command"] == "icml26 tool omnifit train-standin tiny"
    assert not (tmp_path / "tiny.resume.pt").exists()


def test_load_standin_round_trip_is_exact(tmp_path):
    model = TinyOmni(TINY, seed=3)
    stem = save_checkpoint(
        tmp_path / "sub" / "standin", model, {"config": dataclasses.asdict(TINY)}
    )
    loaded, meta = load_standin(stem)
    assert meta == {"config": dataclasses.asdict(TINY)}
    assert loaded.config == TINY and not loaded.training
    torch.testing.assert_close(_logits(loaded), _logits(model.eval()), rtol=0, atol=0)


def test_shipped_standin_is_declared_with_its_recipe_and_beats_an_untrained_one():
    assert SHIPPED_STANDINS == ("tinyomni_quick", "scene_s0", "scene_s1", "scene_s2")
    assert set(STANDINS) == set(SHIPPED_STANDINS)
    model, meta = load_standin("tinyomni_quick")
    assert meta["config"] == dataclasses.asdict(TINYOMNI_QUICK)
    assert meta["recipe"] == TINYOMNI_QUICK_RECIPE
    assert meta["command"] == "icml26 tool omnifit train-standin tinyomni_quick"
    state, _ = load_checkpoint(STANDINS["tinyomni_quick"].path)
    assert sum(t.numel() * t.element_size() for t in state.values()) < 5e6  # a few MB
    test = make_dataset(200, windows=meta["recipe"]["windows"], seed=21, split="test")
    untrained = TinyOmni(TinyOmniConfig(**meta["config"]), seed=0).eval()
    trained_accuracy, _ = evaluate_accuracy(model, test)
    assert trained_accuracy >= evaluate_accuracy(untrained, test)[0] + 0.15


def test_quick_presets_name_the_shipped_standin_with_its_recipe():
    for presets in (ACCURACY_PRESETS, SCORE_ONCE_PRESETS):
        model, train_accuracy = load_preset_standin(presets["quick"])
        assert model.config.n_layers == presets["quick"].n_layers
        assert 0.0 < train_accuracy <= 1.0


def test_a_stand_in_made_with_another_config_is_refused():
    quick = ACCURACY_PRESETS["quick"]
    with pytest.raises(ValueError, match=r"not made with .*d=96 \(stand-in: 64\).*epochs=3"):
        load_preset_standin(replace(quick, d=96, epochs=3))


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="name_or_path must be one of"):
        load_standin("no_such_standin")
    (tmp_path / "half.json").write_text(json.dumps({"config": {}}))
    with pytest.raises(ValueError, match="name_or_path"):
        load_standin(tmp_path / "half")
    save_checkpoint(tmp_path / "other", torch.nn.Linear(2, 2), {"config": {"width": 3}})
    with pytest.raises(ValueError, match="not a TinyOmni checkpoint"):
        load_standin(tmp_path / "other")
    with pytest.raises(TypeError, match="name_or_path"):
        load_standin(3)
    with pytest.raises(TypeError, match="expect must be a mapping"):
        load_standin("tinyomni_quick", expect=[("d", 64)])
    with pytest.raises(TypeError, match="config must be a TinyOmniConfig"):
        standin_trainer({"d": 16})
    with pytest.raises(ValueError, match="train_samples"):
        train_standin(TINY, train_samples=0)
