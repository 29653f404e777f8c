"""Saved and shipped TinyARVLA policies (icml26.scale.policies)."""

import json

import pytest
import torch

from icml26.scale import AmbiguousReach2DEnv, GreedyDecoder, TinyARVLA, TinyVLAAdapter, evaluate
from icml26.scale.policies import SHIPPED_POLICIES, load_policy, save_policy, train_policy


def _logits(model):
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (3, 48, 48, 3), dtype=torch.uint8, generator=generator)
    return model.prefill(images, torch.tensor([0, 3, 7]))[0]


def test_save_load_round_trip_is_exact(tmp_path):
    model = TinyARVLA(d_vision=16, d_model=24, layers=1, vision_layers=2, stem="linear", seed=3)
    stem = save_policy(model, tmp_path / "sub" / "policy", {"note": "x"})
    loaded, meta = load_policy(stem)
    assert meta == {"model": model.config, "recipe": {"note": "x"}}
    assert loaded.config == model.config and not loaded.training
    torch.testing.assert_close(_logits(loaded), _logits(model.eval()), rtol=0, atol=0)
    # the .pt or .json path names the same policy
    torch.testing.assert_close(_logits(load_policy(stem.with_suffix(".pt"))[0]), _logits(model))


def test_train_policy_is_deterministic_under_its_seed():
    kwargs = dict(demos=3, steps=4, batch_size=8, d_vision=16, d_model=16, layers=1, seed=5)
    (a, losses_a), (b, losses_b) = train_policy(**kwargs), train_policy(**kwargs)
    assert losses_a == losses_b
    torch.testing.assert_close(_logits(a), _logits(b), rtol=0, atol=0)


def test_shipped_policy_loads_and_beats_an_untrained_one():
    assert "reach_quick" in SHIPPED_POLICIES
    model, meta = load_policy("reach_quick")
    assert meta["recipe"]["walls"] == [1, 1] and meta["recipe"]["final_bc_loss"] < 0.5
    env = AmbiguousReach2DEnv("id", n_walls=(1, 1))
    untrained = TinyVLAAdapter(TinyARVLA(**meta["model"], seed=0))
    trained = evaluate(GreedyDecoder(), env, 60, [11], TinyVLAAdapter(model)).mean
    assert trained >= evaluate(GreedyDecoder(), env, 60, [11], untrained).mean + 0.15


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="name_or_path must be one of"):
        load_policy("no_such_policy")
    (tmp_path / "half.json").write_text(json.dumps({"model": {}, "recipe": {}}))
    with pytest.raises(ValueError, match="name_or_path"):
        load_policy(tmp_path / "half")
    with pytest.raises(TypeError, match="name_or_path"):
        load_policy(3)
    with pytest.raises(TypeError, match="model must be a TinyARVLA"):
        save_policy(torch.nn.Linear(2, 2), tmp_path / "p", {})
    with pytest.raises(TypeError, match="recipe must be a dict"):
        save_policy(TinyARVLA(d_vision=16, d_model=16), tmp_path / "p", [])
