"""core v3 services: training pieces, resumable training, stand-in checkpoints, progress, seeds."""

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from icml26.core import (
    NonFiniteLossError,
    RunContext,
    Standin,
    TrainedStandin,
    TrainingCheckpoint,
    adamw,
    check_device,
    check_fields,
    check_seed,
    load_checkpoint,
    optimizer_step,
    progress_reporter,
    save_checkpoint,
    set_lr,
)
from icml26.core.annotations import AnnotationMismatchError, conform
from icml26.core.standins import train_standin


def _train(steps, resume=None, stop_at=None):
    """A tiny regression loop written with the core pieces; stops early at ``stop_at``."""
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    opt = adamw(model, lr=0.05, weight_decay=0.01, no_decay_on_vectors=True)
    start = resume.restore(model, opt, generators={"batches": g}) if resume else 0
    losses = list(resume.extra.get("losses", [])) if resume else []
    for step in range(start, steps):
        if step == stop_at:
            return model, losses
        set_lr(opt, 0.05 * (1 - step / steps))
        x = torch.randn(8, 3, generator=g)
        loss = ((model(x).squeeze(1) - x.sum(1)) ** 2).mean()
        losses.append(optimizer_step(loss, opt, step=step, clip=1.0, owner="toy"))
        if resume:
            resume.save_if_due(step + 1, model, opt, {"batches": g}, {"losses": losses})
    return model, losses


def test_an_interrupted_loop_resumes_to_the_same_weights(tmp_path):
    straight, straight_losses = _train(12)
    resume = TrainingCheckpoint(tmp_path / "run.pt", every=4)
    _train(12, resume, stop_at=6)  # stopped after step 6: the last save is at step 4
    resumed, losses = _train(12, TrainingCheckpoint(tmp_path / "run.pt", every=4))
    assert torch.equal(straight.weight, resumed.weight)
    assert losses == straight_losses
    assert straight_losses[-1] < straight_losses[0]


def test_a_non_finite_loss_stops_before_the_update():
    w = torch.nn.Parameter(torch.tensor(1.0))
    opt = torch.optim.SGD([w], lr=1.0)
    with pytest.raises(NonFiniteLossError, match="toy: the loss is nan at step 3"):
        optimizer_step(w * math.nan, opt, step=3, owner="toy")
    assert float(w.detach()) == 1.0


def test_weight_decay_skips_vectors():
    opt = adamw(torch.nn.LayerNorm(4), lr=0.1, weight_decay=0.5, no_decay_on_vectors=True)
    assert [len(g["params"]) for g in opt.param_groups] == [0, 2]
    with pytest.raises(TypeError, match=r"needs an nn\.Module"):
        adamw([torch.nn.Parameter(torch.ones(2))], lr=0.1, no_decay_on_vectors=True)
    with pytest.raises(ValueError, match="lr"):
        adamw(torch.nn.Linear(1, 1), lr=0.0)


def test_checkpoints_round_trip_exactly(tmp_path):
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    stem = save_checkpoint(tmp_path / "sub" / "net", net, {"config": {"d": 4}})
    state, meta = load_checkpoint(str(stem) + ".json")
    assert meta == {"config": {"d": 4}}
    assert all(torch.equal(state[k], v) for k, v in net.state_dict().items())
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(tmp_path / "absent")
    with pytest.raises(TypeError):
        save_checkpoint(tmp_path / "bad", net, {"x": object()})
    assert not (tmp_path / "bad.safetensors").exists()


def test_train_standin_writes_weights_and_how_they_were_made(tmp_path):
    calls = []

    def train(resume, progress):
        calls.append(resume.path.name)
        model, losses = _train(8, resume)
        return TrainedStandin(model, {"d": 3}, {"steps": 8, "seed": 0}, "toy", {"loss": losses[-1]})

    standin = Standin("toy_quick", "matroid", "a toy", train, checkpoint_every=2)
    stem = train_standin(standin, tmp_path)
    state, meta = load_checkpoint(stem)
    assert calls == ["toy_quick.resume.pt"] and not (tmp_path / "toy_quick.resume.pt").exists()
    assert meta["command"] == "icml26 tool matroid train-standin toy_quick"
    assert (
        meta["config"] == {"d": 3} and meta["data"] == "toy" and len(meta["code_fingerprint"]) == 16
    )
    assert set(state) == {"weight", "bias"}


def test_progress_reporter_forms():
    seen = []
    with progress_reporter(lambda *a: seen.append(a), 2, "x") as report:
        report(1, loss=1.0)
    assert seen == [(1, 2, {"loss": 1.0})]
    for quiet in (None, False, True):
        with progress_reporter(quiet, 1, "x") as report:
            report(1)
    with pytest.raises(TypeError, match="progress must be"), progress_reporter(3, 1, "x"):
        pass
    events = []
    with RunContext(seed=0, progress_sink=events.append).progress(4, "bar") as bar:
        bar(3, 4, {})  # a bar is a progress callback
    assert bar.completed == 3 and ("advance", events[0][1], 3) in events


def test_seed_streams_are_the_first_draw_of_the_named_generator():
    ctx = RunContext(seed=11)
    assert ctx.seed_for("init") == int(ctx.numpy_generator("init").integers(0, 2**31 - 1))
    assert ctx.seeds_for("clients", 3) == [
        int(s) for s in ctx.numpy_generator("clients").integers(0, 2**31 - 1, size=3)
    ]


def test_validators():
    assert check_seed("seed", 3) == 3
    for bad, error in ((True, TypeError), (1.5, TypeError), (-1, ValueError)):
        with pytest.raises(error, match="seed"):
            check_seed("seed", bad, owner="f")
    assert check_device("device", "cpu") == "cpu"
    with pytest.raises(ValueError, match="torch device name"):
        check_device("device", "gpu0")
    with pytest.raises(TypeError, match="device"):
        check_device("device", 0)


@dataclass
class Row:
    n: int
    rate: float
    sizes: tuple[int, ...] = ()
    name: str | None = None


def test_one_annotation_checker_for_records_and_overrides():
    check_fields(Row(1, 0.5, (1, 2), None))
    for row, field in [
        (Row("1", 0.5), "n"),
        (Row(1, math.nan), "rate"),
        (Row(1, 0.5, (1, "2")), "sizes"),
        (Row(True, 0.5), "n"),
    ]:
        with pytest.raises(TypeError, match=f"Row: {field} must be"):
            check_fields(row)
    check_fields(Row(1, math.nan), nan_ok=("rate",))
    assert conform([1, 2], tuple[float, ...], lenient=True) == (1.0, 2.0)
    assert conform("1e-3", float, lenient=True) == 0.001
    with pytest.raises(AnnotationMismatchError, match="expected tuple"):
        conform([1, 2], tuple[int, ...])
    assert np.isinf(conform(math.inf, float, finite=False))
