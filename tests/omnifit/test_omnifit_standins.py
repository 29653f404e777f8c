"""Saved and shipped TinyOmni stand-ins (icml26.omnifit.standins) and the experiments' loader."""

import dataclasses
import json
from dataclasses import replace

import pytest
import torch

from icml26.omnifit import TinyOmni, TinyOmniConfig, evaluate_accuracy, make_dataset
from icml26.omnifit.experiments import ACCURACY_PRESETS, SCORE_ONCE_PRESETS, _load_standin
from icml26.omnifit.standins import SHIPPED_STANDINS, load_standin, save_standin, train_standin

TINY = TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32)


def _logits(model):
    with torch.no_grad():
        return model(make_dataset(3, windows=2, seed=4).batch(slice(None)))


def test_save_load_round_trip_is_exact(tmp_path):
    model = TinyOmni(TINY, seed=3)
    stem = save_standin(model, tmp_path / "sub" / "standin", {"note": "x"})
    loaded, meta = load_standin(stem)
    assert meta == {"model": dataclasses.asdict(TINY), "recipe": {"note": "x"}}
    assert loaded.config == TINY and not loaded.training
    torch.testing.assert_close(_logits(loaded), _logits(model.eval()), rtol=0, atol=0)
    # the .pt or .json path names the same stand-in
    torch.testing.assert_close(_logits(load_standin(stem.with_suffix(".pt"))[0]), _logits(model))


def test_train_standin_is_deterministic_under_its_seed():
    kwargs = dict(train_samples=8, windows=2, epochs=1, batch_size=4, seed=5)
    (a, history_a), (b, history_b) = train_standin(TINY, **kwargs), train_standin(TINY, **kwargs)
    assert history_a.ce == history_b.ce and not a.training
    torch.testing.assert_close(_logits(a), _logits(b), rtol=0, atol=0)
    c, _ = train_standin(TINY, **{**kwargs, "seed": 6})
    assert not torch.equal(_logits(a), _logits(c))


def test_shipped_standin_loads_and_beats_an_untrained_one():
    assert "tinyomni_quick" in SHIPPED_STANDINS
    model, meta = load_standin("tinyomni_quick")
    assert meta["recipe"]["train_samples"] == 12_000 and meta["recipe"]["epochs"] == 8
    test = make_dataset(200, windows=meta["recipe"]["windows"], seed=21, split="test")
    untrained = TinyOmni(TinyOmniConfig(**meta["model"]), seed=0).eval()
    trained_accuracy, _ = evaluate_accuracy(model, test)
    assert trained_accuracy >= evaluate_accuracy(untrained, test)[0] + 0.15


def test_quick_presets_name_the_shipped_standin_with_its_recipe():
    for presets in (ACCURACY_PRESETS, SCORE_ONCE_PRESETS):
        model, train_accuracy = _load_standin(presets["quick"])
        assert model.config.n_layers == presets["quick"].n_layers
        assert 0.0 < train_accuracy <= 1.0


def test_a_stand_in_made_with_another_config_is_refused():
    quick = ACCURACY_PRESETS["quick"]
    with pytest.raises(ValueError, match=r"standin: .*d=96 \(stand-in: 64\).*epochs=3"):
        _load_standin(replace(quick, d=96, epochs=3))


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="name_or_path must be one of"):
        load_standin("no_such_standin")
    (tmp_path / "half.json").write_text(json.dumps({"model": {}, "recipe": {}}))
    with pytest.raises(ValueError, match="name_or_path"):
        load_standin(tmp_path / "half")
    with pytest.raises(TypeError, match="name_or_path"):
        load_standin(3)
    with pytest.raises(TypeError, match="model must be a TinyOmni"):
        save_standin(torch.nn.Linear(2, 2), tmp_path / "p", {})
    with pytest.raises(TypeError, match="recipe must be a dict"):
        save_standin(TinyOmni(TINY), tmp_path / "p", [])
    with pytest.raises(ValueError, match="train_samples"):
        train_standin(TINY, train_samples=0)
