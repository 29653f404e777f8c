"""The shipped MLPs of the synthetic/main quick presets (issue 51): what quick evaluates is what
the recorded command trains, and quick reads them instead of training."""

from dataclasses import replace

import pytest
import torch
from standin_checks import assert_retrained, relative_distance

from icml26.core import RunContext
from icml26.core.standins import load_checkpoint, standins_of, train_standin
from icml26.spinefl.experiments.common import run_grid
from icml26.spinefl.experiments.main import MAIN_PRESETS
from icml26.spinefl.experiments.shipped import mlp_standin_name
from icml26.spinefl.experiments.synthetic import SYNTHETIC_PRESETS, synthetic
from icml26.spinefl.standins import MLP_CELLS, MLP_STANDINS, STANDINS


def test_every_cell_of_both_quick_presets_is_shipped_once_with_its_record():
    assert standins_of("spinefl") == STANDINS
    syn, main = SYNTHETIC_PRESETS["quick"], MAIN_PRESETS["quick"]
    assert syn.mode == main.mode == "standins" and syn.n_seeds == 3
    names = {
        mlp_standin_name(task, alpha, seed, method)
        for config in (syn, main)
        for task in config.tasks
        for alpha in config.alphas
        for seed in range(config.n_seeds)
        for method in config.methods
    }
    assert names == set(MLP_STANDINS) and len(names) == 26  # the 4 shared cells counted once
    for name, (recipe, _, alpha, seed, method) in MLP_CELLS.items():
        state, meta = load_checkpoint(MLP_STANDINS[name].path)
        assert meta["command"] == f"icml26 tool spinefl train-standin {name}"
        assert (meta["recipe"]["method"], meta["recipe"]["alpha"]) == (method, alpha)
        assert (meta["recipe"]["seed"], meta["recipe"]["rounds"]) == (seed, recipe.rounds)
        assert all(v.dtype == torch.float16 for v in state.values())
        assert 0.1 < meta["metrics"]["score"] < 1.0


def test_the_recorded_command_reproduces_a_shipped_model(tmp_path):
    name = "synthetic_spinefl_alpha01_seed0"
    stem = train_standin(MLP_STANDINS[name], out=tmp_path)
    state, meta = load_checkpoint(stem)
    shipped_state, shipped_meta = load_checkpoint(MLP_STANDINS[name].path)
    # another CPU's round-off grown through training: 0.065 from the shipped model and scores
    # within 0.007 measured on an AVX-512 machine (2026-12-08), while seed 1's shipped model is
    # 1.33 away
    seed_gap = relative_distance(load_checkpoint(MLP_STANDINS[name[:-1] + "1"].path)[0],
                                 shipped_state)  # fmt: skip
    assert_retrained(state, shipped_state, max_distance=0.3 * seed_gap)
    assert meta["metrics"] == pytest.approx(shipped_meta["metrics"], abs=0.03)
    assert meta["recipe"] == shipped_meta["recipe"]


def test_quick_scores_are_the_shipped_models_recorded_scores(tmp_path):
    config = SYNTHETIC_PRESETS["quick"]
    rows = run_grid(config, RunContext(seed=0, artifact_dir=tmp_path))
    assert len(rows) == 3 * len(config.methods)
    for row in rows:
        name = mlp_standin_name(row["task"], row["alpha"], row["seed"], row["method"])
        _, meta = load_checkpoint(MLP_STANDINS[name].path)
        assert row["score"] == meta["metrics"]["score"]
        assert row["levels"] == {
            k.removeprefix("level_"): v for k, v in meta["metrics"].items() if "level_" in k
        }
    metrics = synthetic(config, RunContext(seed=0, artifact_dir=tmp_path))
    assert len(metrics["spine_minus_best_baseline"]) == len(metrics["min_margin_over_chance"]) == 3


def test_a_config_the_standins_were_not_trained_with_is_refused(tmp_path):
    ctx = RunContext(seed=0, artifact_dir=tmp_path)
    with pytest.raises(ValueError, match="another recipe"):
        run_grid(replace(SYNTHETIC_PRESETS["quick"], rounds=26), ctx)
    with pytest.raises(FileNotFoundError, match="synthetic_spinefl_alpha01_seed3"):
        run_grid(replace(SYNTHETIC_PRESETS["quick"], n_seeds=4), ctx)
