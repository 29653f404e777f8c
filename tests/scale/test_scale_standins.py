"""Behaviour-cloned TinyARVLA policies (icml26.scale.standins): training, resuming, the core
checkpoint format and the shipped one."""

import json

import pytest
import torch

from icml26.core import NonFiniteLossError, TrainingCheckpoint
from icml26.core.standins import Standin, load_checkpoint, save_checkpoint
from icml26.core.standins import train_standin as train_core_standin
from icml26.scale import (
    POLICIES_V1,
    POLICIES_V1_ALLOCENTRIC,
    SHIPPED_POLICIES,
    AmbiguousReach2DEnv,
    GreedyDecoder,
    TinyARVLA,
    TinyVLAAdapter,
    collect_demonstrations,
    evaluate,
    load_policy,
    policy_trainer,
    train_bc,
    train_policy,
)
from icml26.scale.standins import REACH_QUICK_MODEL, REACH_QUICK_RECIPE, STANDINS

TINY_MODEL = {"d_vision": 16, "d_model": 16, "layers": 1}
TINY_RECIPE = {"demos": 3, "steps": 6, "batch_size": 8, "seed": 5}


def _logits(model):
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (3, 48, 48, 3), dtype=torch.uint8, generator=generator)
    return model.prefill(images, torch.tensor([0, 3, 7]))[0]


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_train_policy_is_deterministic_under_its_seed():
    (a, losses_a), (b, losses_b) = (
        train_policy(**TINY_RECIPE, **TINY_MODEL),
        train_policy(**TINY_RECIPE, **TINY_MODEL),
    )
    assert losses_a == losses_b and _same_weights(a, b) and not a.training


class _StopError(Exception):
    pass


def test_an_interrupted_training_resumes_to_the_same_policy(tmp_path):
    straight, losses = train_policy(**TINY_RECIPE, **TINY_MODEL)
    resume = TrainingCheckpoint(tmp_path / "run.pt", every=2)

    def stop(done, total, metrics):  # interrupts step 4, before its save (the last was at 2)
        if done == 4:
            raise _StopError

    with pytest.raises(_StopError):
        train_policy(**TINY_RECIPE, **TINY_MODEL, resume=resume, progress=stop)
    seen = []
    resumed, resumed_losses = train_policy(
        **TINY_RECIPE, **TINY_MODEL, resume=resume, progress=lambda d, t, m: seen.append(d)
    )
    assert seen == [3, 4, 5, 6]  # resumed after the last save (step 2)
    assert resumed_losses == losses and _same_weights(resumed, straight)


def test_train_standin_command_writes_a_loadable_core_checkpoint(tmp_path):
    standin = Standin(
        name="tiny",
        system="scale",
        description="test",
        train=policy_trainer(TINY_MODEL, **TINY_RECIPE),
    )
    stem = train_core_standin(standin, out=tmp_path)
    model, meta = load_policy(stem)
    straight, losses = train_policy(**TINY_RECIPE, **TINY_MODEL)
    assert _same_weights(model, straight) and not model.training
    assert meta["config"] == straight.config
    assert meta["recipe"] == {**TINY_RECIPE, "lr": 1e-3, "walls": [1, 1]}  # defaults recorded
    assert meta["metrics"]["final_bc_loss"] == pytest.approx(sum(losses) / len(losses))
    assert meta["command"] == "icml26 tool scale train-standin tiny"


def test_load_policy_round_trip_is_exact(tmp_path):
    model = TinyARVLA(d_vision=16, d_model=24, layers=1, vision_layers=2, stem="linear", seed=3)
    stem = save_checkpoint(tmp_path / "sub" / "policy", model, {"config": model.config})
    loaded, meta = load_policy(stem)
    assert meta == {"config": model.config}
    assert loaded.config == model.config and not loaded.training
    torch.testing.assert_close(_logits(loaded), _logits(model.eval()), rtol=0, atol=0)


def test_shipped_policy_is_declared_with_its_recipe_and_beats_an_untrained_one():
    assert ("reach_quick", *POLICIES_V1_ALLOCENTRIC, *POLICIES_V1) == SHIPPED_POLICIES
    assert set(STANDINS) == set(SHIPPED_POLICIES)
    model, meta = load_policy("reach_quick")
    assert meta["recipe"] == REACH_QUICK_RECIPE and meta["metrics"]["final_bc_loss"] < 0.5
    assert meta["config"] == TinyARVLA(**REACH_QUICK_MODEL).config
    assert meta["command"] == "icml26 tool scale train-standin reach_quick"
    state, _ = load_checkpoint(STANDINS["reach_quick"].path)
    assert sum(t.numel() * t.element_size() for t in state.values()) < 5e6  # a few MB
    env = AmbiguousReach2DEnv("id", n_walls=(1, 1))
    untrained = TinyVLAAdapter(TinyARVLA(**meta["config"], seed=0))
    trained = evaluate(GreedyDecoder(), env, 60, [11], TinyVLAAdapter(model)).mean
    assert trained >= evaluate(GreedyDecoder(), env, 60, [11], untrained).mean + 0.15


def test_a_non_finite_loss_stops_training_before_the_update():
    model = TinyARVLA(d_vision=16, d_model=16, seed=0)
    with torch.no_grad():
        model.head.weight.fill_(float("nan"))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    demos = collect_demonstrations(AmbiguousReach2DEnv(), 1, seed=0)
    with pytest.raises(NonFiniteLossError, match="train_bc: the loss is nan at step 0"):
        train_bc(model, demos, steps=2, batch_size=2)
    torch.testing.assert_close(model.state_dict(), before, rtol=0, atol=0, equal_nan=True)


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="name_or_path must be one of"):
        load_policy("no_such_policy")
    (tmp_path / "half.json").write_text(json.dumps({"config": {}}))
    with pytest.raises(ValueError, match="name_or_path"):
        load_policy(tmp_path / "half")
    save_checkpoint(tmp_path / "other", torch.nn.Linear(2, 2), {"config": {"width": 3}})
    with pytest.raises(ValueError, match="not a TinyARVLA or TinyOpenVLA checkpoint"):
        load_policy(tmp_path / "other")
    with pytest.raises(TypeError, match="name_or_path"):
        load_policy(3)
    with pytest.raises(TypeError, match="model_kwargs must be a mapping"):
        policy_trainer([("d_model", 16)])
