"""Shipped global models of the conv testbed (issue 50/51) and of the MLP grids' quick presets.

One stand-in per method of ``spinefl.fmnist_conv``: the final global :class:`SliceableConvNet`
of one federated run on the shipped Fashion-MNIST subset (Dirichlet alpha = 0.1, seed 0,
:data:`STANDIN_RECIPE`; SpineFL with the knobs frozen after tuning, :data:`SPINE_TUNED`). The
quick preset evaluates them instead of training. Retrain one with::

    OMP_NUM_THREADS=1 icml26 tool spinefl train-standin fmnist_conv_spinefl [--out DIR]

A stand-in is one federated run (about 1-2 CPU-minutes); an interrupted run restarts from round
0 (the resume unit is the stand-in, not the round).

The quick presets of ``spinefl.synthetic`` and ``spinefl.main`` (issue 51) evaluate one shipped
MLP per (alpha, inner seed, method) cell they judge, named ``synthetic_<method>_alpha01_seed0``
and so on: the final global model of that run of the grid, weights rounded to float16 (the
rounded model is the stand-in: its recorded metrics are measured on it). A cell both presets
use is shipped once.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from icml26.core.progress import Progress
from icml26.core.standins import Standin, TrainedStandin, TrainFn, load_checkpoint
from icml26.core.threads import torch_threads
from icml26.core.training import TrainingCheckpoint
from icml26.spinefl.conv_testbed import (
    SPINE_TUNED,
    ConvRecipe,
    item_correct,
    make_conv_task,
    run_conv_method,
)
from icml26.spinefl.experiments.config import CompareConfig, make_grid_task, run_kwargs
from icml26.spinefl.experiments.shipped import (
    grid_score,
    mlp_standin_name,
    recipe_of,
    standin_recipe,
)
from icml26.spinefl.models import SliceableConvNet, SliceableMLP
from icml26.spinefl.names import CONV_METHODS

__all__ = [
    "CONV_METHODS",
    "MLP_CELLS",
    "MLP_STANDINS",
    "STANDINS",
    "STANDIN_RECIPE",
    "load_conv_standin",
    "standin_name",
]

STANDIN_RECIPE = ConvRecipe(rounds=20, spine=SPINE_TUNED)
STANDIN_ALPHA, STANDIN_SEED = 0.1, 0


def standin_name(method: str) -> str:
    """``fmnist_conv_<method>`` in lower case with ``-`` as ``_``."""
    if method not in CONV_METHODS:
        raise ValueError(f"standin_name: method must be one of {CONV_METHODS}; got {method!r}.")
    return "fmnist_conv_" + method.lower().replace("-", "_")


def _trainer(method: str) -> TrainFn:
    def train(resume: TrainingCheckpoint | None, progress: Progress) -> TrainedStandin:
        task = make_conv_task(STANDIN_ALPHA, STANDIN_SEED, STANDIN_RECIPE)
        with torch_threads(1):
            history, model = run_conv_method(
                task, method, STANDIN_RECIPE, STANDIN_SEED, progress=progress
            )
        val = float(item_correct(model, *task.val).mean())
        mech = {k: float(v) for k, v in history.mechanism.items() if isinstance(v, int | float)}
        return TrainedStandin(
            model=model,
            config={"class": "SliceableConvNet", "channels": list(model.channels)},
            recipe={
                "method": method,
                "alpha": STANDIN_ALPHA,
                "seed": STANDIN_SEED,
                **{k: v for k, v in STANDIN_RECIPE.__dict__.items() if k != "spine"},
                "spine": dict(STANDIN_RECIPE.spine),
            },
            data="icml26/spinefl/data/fashion_mnist_subset.npz (12 000 train, Dirichlet 0.1 "
            "over 20 clients; val/test 2 000 each)",
            metrics={"test_acc": history.global_acc[-1], "val_acc": val, **mech},
        )

    return train


CONV_STANDINS = {
    standin_name(m): Standin(
        name=standin_name(m),
        system="spinefl",
        description=f"{m}: seed-0 global conv net after {STANDIN_RECIPE.rounds} rounds, "
        "Fashion-MNIST subset, alpha 0.1",
        train=_trainer(m),
    )
    for m in CONV_METHODS
}


# --- the MLP grids (spinefl.synthetic and spinefl.main quick, issue 51) ------------------------


def _mlp_trainer(config: CompareConfig, task_name: str, alpha: float, seed: int, method: str):
    def train(resume: TrainingCheckpoint | None, progress: Progress) -> TrainedStandin:
        from icml26.spinefl.benchmark import run_method

        task = make_grid_task(config, task_name, alpha, seed)
        with torch_threads(1):
            score, history = run_method(
                task, method, seed=seed, progress=progress, **run_kwargs(config)
            )
        model = SliceableMLP(task.dims, device="meta")
        model.load_state_dict(history.final_state, strict=True, assign=True)
        model = model.half().float()  # the shipped precision
        metrics = {
            "score": grid_score(model, method, task),  # what quick recomputes
            "score_last5_fp32": score,  # the training run's own score
            **{f"level_{r}": history.final_level_accuracy(r) for r in history.level_acc},
        }
        return TrainedStandin(
            model=model.half(),
            config={"class": "SliceableMLP", "dims": list(task.dims)},
            recipe=standin_recipe(config, task_name, alpha, seed, method),
            data=f"load_synthetic(seed={seed}, n_samples={config.n_samples}) (sklearn "
            f"make_classification), Dirichlet {alpha} over {config.n_clients} clients",
            metrics=metrics,
        )

    return train


def _mlp_cells() -> dict[str, tuple[CompareConfig, str, float, int, str]]:
    """Every (recipe, task, alpha, inner seed, method) the MLP quick presets evaluate."""
    from icml26.spinefl.experiments.main import MAIN_PRESETS
    from icml26.spinefl.experiments.synthetic import SYNTHETIC_PRESETS

    cells = {}
    for config in (SYNTHETIC_PRESETS["quick"], MAIN_PRESETS["quick"]):
        for task in config.tasks:
            for alpha in config.alphas:
                for seed in range(config.n_seeds):
                    for method in config.methods:
                        name = mlp_standin_name(task, alpha, seed, method)
                        cell = (recipe_of(config), task, alpha, seed, method)
                        if cells.setdefault(name, cell) != cell:
                            raise ValueError(f"stand-in {name!r}: two presets need two recipes.")
    return cells


MLP_CELLS = _mlp_cells()
MLP_STANDINS = {
    name: Standin(
        name=name,
        system="spinefl",
        description=f"{method}: global MLP after {recipe.rounds} rounds, {task} task, "
        f"alpha {alpha}, inner seed {seed} (float16)",
        train=_mlp_trainer(recipe, task, alpha, seed, method),
    )
    for name, (recipe, task, alpha, seed, method) in MLP_CELLS.items()
}
STANDINS = {**CONV_STANDINS, **MLP_STANDINS}


@cache
def load_conv_standin(method: str) -> tuple[SliceableConvNet, dict[str, Any]]:
    """The shipped seed-0 global model of ``method`` (eval mode) and its record; cached.

    Refuses a checkpoint whose config is not a :class:`SliceableConvNet`.
    """
    state, meta = load_checkpoint(STANDINS[standin_name(method)].path)
    config = meta.get("config", {})
    if config.get("class") != "SliceableConvNet":
        raise ValueError(f"load_conv_standin: {method!r} is not a SliceableConvNet checkpoint.")
    model = SliceableConvNet(channels=tuple(config["channels"]), device="meta")
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval(), meta
