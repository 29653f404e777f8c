"""Quick's grid rows from the shipped final MLPs of its runs (issue 51).

The stand-ins themselves (and the command that trains each) are declared in
:mod:`icml26.spinefl.standins`; this module names, loads and evaluates them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from icml26.core import RunContext
from icml26.spinefl.experiments.config import CompareConfig, make_grid_task

__all__ = [
    "grid_score",
    "load_mlp_standin",
    "mlp_standin_name",
    "recipe_of",
    "standin_recipe",
    "standin_rows",
]


_GRID_AXES = ("mode", "tasks", "alphas", "methods", "n_seeds")


def mlp_standin_name(task: str, alpha: float, seed: int, method: str) -> str:
    """``<task>_<method>_alpha<alpha without the dot>_seed<seed>``, e.g. ``..._alpha01_seed0``.

    Examples
    --------
    >>> mlp_standin_name("synthetic", 0.1, 2, "FedAvg-small")
    'synthetic_fedavg_small_alpha01_seed2'
    """
    slug = method.lower().replace("-", "_")
    return f"{task}_{slug}_alpha{str(alpha).replace('.', '')}_seed{seed}"


def recipe_of(config: CompareConfig) -> CompareConfig:
    """What one run of the grid depends on besides its cell: ``config`` without the grid axes."""
    return replace(
        config, mode="train", tasks=("synthetic",), alphas=(0.1,), methods=("SpineFL",), n_seeds=1
    )


def standin_recipe(
    config: CompareConfig, task: str, alpha: float, seed: int, method: str
) -> dict[str, Any]:
    """The ``recipe`` a stand-in of this cell records (and quick checks): JSON-ready."""
    fields = {k: v for k, v in recipe_of(config).__dict__.items() if k not in _GRID_AXES}
    return {"task": task, "alpha": alpha, "seed": seed, "method": method, **fields}


def grid_score(model: Any, method: str, task: Any) -> float:
    """Test accuracy of a final global model (FedAvg-small: of its r_min-width prefix)."""
    from icml26.spinefl.models import extract_submodel, sub_width
    from icml26.spinefl.training import evaluate_accuracy

    if method == "FedAvg-small":
        r_min = min(task.ratios)
        model = extract_submodel(
            model, {k: np.arange(sub_width(N, r_min)) for k, N in model.layer_sizes().items()}
        )
    return evaluate_accuracy(model, *task.test)


@cache
def load_mlp_standin(name: str) -> tuple[Any, dict[str, Any]]:
    """The shipped MLP ``name`` (float32, eval mode) and its record; cached.

    Raises ``FileNotFoundError`` when it is not shipped and ``ValueError`` for a checkpoint that
    is not a :class:`~icml26.spinefl.SliceableMLP` (before building anything).
    """
    from icml26.core.standins import checkpoint_dir, load_checkpoint
    from icml26.spinefl.models import SliceableMLP

    state, meta = load_checkpoint(checkpoint_dir("spinefl") / name)
    config = meta.get("config", {})
    if config.get("class") != "SliceableMLP":
        raise ValueError(f"load_mlp_standin: {name!r} is not a SliceableMLP checkpoint.")
    model = SliceableMLP(config["dims"], device="meta")
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True, assign=True)
    return model.eval(), meta


def standin_rows(config: CompareConfig, ctx: RunContext) -> list[dict[str, Any]]:
    """The grid's rows from the shipped MLPs: every score is evaluated here, on the test set.

    Inner seeds are 0 .. n_seeds - 1. ``curve`` holds that one score and ``levels`` the
    per-level accuracies recorded when the stand-in was trained (mean of the run's last 5
    evaluations). Raises ``ValueError`` for a cell whose shipped record has another recipe.
    """
    rows = []
    n_runs = len(config.tasks) * len(config.alphas) * config.n_seeds * len(config.methods)
    with ctx.progress(n_runs, "shipped models") as bar:
        for task_name in config.tasks:
            for alpha in config.alphas:
                for seed in range(config.n_seeds):
                    task = make_grid_task(config, task_name, alpha, seed)
                    for method in config.methods:
                        name = mlp_standin_name(task_name, alpha, seed, method)
                        model, meta = load_mlp_standin(name)
                        wanted = standin_recipe(config, task_name, alpha, seed, method)
                        if json.loads(json.dumps(wanted)) != meta["recipe"]:
                            raise ValueError(
                                f"standin_rows: the shipped {name!r} was trained with another "
                                "recipe than this config's; run the grid with mode='train'."
                            )
                        score = grid_score(model, method, task)
                        metrics = meta["metrics"]
                        levels = {
                            k.removeprefix("level_"): v
                            for k, v in metrics.items()
                            if k.startswith("level_")
                        }
                        rows.append(
                            {
                                "task": task_name,
                                "alpha": float(alpha),
                                "seed": seed,
                                "method": method,
                                "score": score,
                                "curve": [score],
                                "levels": levels,
                            }
                        )
                        bar.advance()
    return rows
