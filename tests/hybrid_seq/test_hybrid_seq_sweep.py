"""Issue 46's sweep pieces: non-embedding parameters, early stopping, the bootstrap over seeds,
config validation, and the shipped sweeps (loaded once, re-evaluated)."""

import math

import pytest
import torch

from icml26.hybrid_seq import HybridLM, TrainConfig, train
from icml26.hybrid_seq.sweep import (
    SWEEPS,
    SweepConfig,
    bootstrap_ratio,
    build_family_model,
    non_embedding_params,
    ratio_at,
    sweep_task,
    train_sweep,
)


def _records(acc_sa, acc_aa):
    sa = [
        {
            "name": f"SA-{p}",
            "family": "SA",
            "params": p,
            "non_embedding_params": p - 50,
            "token_acc": a,
        }
        for p, a in zip((100, 200), acc_sa, strict=True)
    ]
    aa = [
        {
            "name": f"AA-{p}",
            "family": "AA",
            "params": p,
            "non_embedding_params": p - 50,
            "token_acc": a,
        }
        for p, a in zip((100, 400, 1600), acc_aa, strict=True)
    ]
    return sa + aa  # fmt: skip


def test_non_embedding_params_leave_out_the_embedding_and_head():
    task = sweep_task("mqar")
    model = build_family_model(task, "AA", 16, seed=0)
    skipped = model.embedding.weight.numel() + model.head.weight.numel()
    assert non_embedding_params(model) == sum(p.numel() for p in model.parameters()) - skipped
    assert model.pos_enc == "rope" and build_family_model(task, "SA", 16, 0).pos_enc == "none"


def test_bootstrap_over_seeds_brackets_the_seed_averaged_ratio():
    seeds = [_records((0.5, 0.95), (0.1, 0.5, 0.95)), _records((0.5, 0.99), (0.1, 0.4, 0.99))]
    seeds.append(_records((0.6, 0.92), (0.2, 0.6, 0.92)))
    b = bootstrap_ratio(seeds, 0.9, n_boot=200, key="params", baselines=("AA",))
    assert b["n_seeds"] == 3 and not b["lower_bound"]
    assert b["low"] <= b["ratio"] <= b["high"] and 4 < b["ratio"] < 8
    one = bootstrap_ratio(seeds[:1], 0.9, key="params", baselines=("AA",))
    assert one["low"] == one["ratio"] == one["high"]  # one seed: no spread to measure
    ne, _ = ratio_at(seeds[0], 0.9, key="non_embedding_params", baselines=("AA",))
    assert ne > ratio_at(seeds[0], 0.9, baselines=("AA",))[0]  # embeddings shrink the ratio


def test_bootstrap_refuses_empty_input_and_bad_levels():
    with pytest.raises(ValueError, match="per_seed"):
        bootstrap_ratio([], 0.9)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ratio([_records((1, 1), (1, 1, 1))], 0.9, level=1.5)


def test_sweep_config_validates_its_fields_by_name():
    with pytest.raises(ValueError, match="task"):
        SweepConfig(task="copy", widths={"SA": (8,)})
    with pytest.raises(ValueError, match="SA"):
        SweepConfig(task="sc", widths={"AA": (8,)})
    with pytest.raises(ValueError, match="even"):
        SweepConfig(task="sc", widths={"SA": (7,)})
    with pytest.raises(ValueError, match="stop_at"):
        SweepConfig(task="sc", widths={"SA": (8,)}, stop_at=1.5)
    assert SWEEPS["sc"].runs()[0] == ("SA", 4)


def test_early_stopping_ends_training_once_the_check_batch_is_solved():
    task = sweep_task("mqar")
    model = HybridLM(task.vocab_size, 8, pattern="AA", seed=0)
    cfg = TrainConfig(steps=40, lr=1e-3, batch_size=4, warmup=1)
    assert len(train(model, task, cfg, stop_at=0.0, check_every=5, n_check=8).loss) == 5
    with pytest.raises(ValueError, match="stop_at"):
        train(model, task, cfg, stop_at=float("nan"))


def test_train_sweep_records_every_model_and_resumes_finished_runs():
    cfg = SweepConfig(task="mqar", widths={"SA": (4,), "AA": (4,)}, steps=3, warmup=1,
                      batch_size=4, n_test=8)  # fmt: skip
    seen = []
    models, records = train_sweep(cfg, on_run=lambda n, m, r: seen.append(n))
    assert seen == ["SA-4", "AA-4"] and [r["steps_run"] for r in records] == [3, 3]
    again, _ = train_sweep(cfg, done={"SA-4": (models["SA-4"], records[0])})
    assert again["SA-4"] is models["SA-4"]


def test_shipped_sweeps_load_once_and_hold_every_run():
    from icml26.hybrid_seq.standins import load_sweep

    models, records = load_sweep("mqar")
    assert load_sweep("mqar")[0] is models  # cached: one load per process
    assert [r["name"] for r in records] == [f"{f}-{d}" for f, d in SWEEPS["mqar"].runs()]
    task = sweep_task("mqar")
    batch = task.sample(2, torch.Generator().manual_seed(0))
    assert torch.isfinite(models["SA-8"](batch.inputs)).all()
    assert all(0.0 <= r["token_acc"] <= 1.0 and not math.isnan(r["params"]) for r in records)
