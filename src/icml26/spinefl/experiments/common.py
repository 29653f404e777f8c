"""What the spinefl experiments share: the comparison config, the paired grid over seeds, its
summary, tables and figure.

Seeds run inside one task so that every method sees the same partition, initial weights and
participants (paired differences). Importing this module stays light (``icml26 list``): the
method (torch, sklearn) is imported inside the functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import Resources, RunContext, Table
from icml26.spinefl.experiments.config import CompareConfig, make_grid_task, run_kwargs
from icml26.spinefl.experiments.figures import comparison_plot
from icml26.spinefl.experiments.shipped import standin_rows

__all__ = ["CompareConfig", "comparison_plot", "comparison_tables", "run_grid", "summarize_grid"]

# Small MLPs and batch-32 SGD: one thread is fastest (OpenMP overhead dominates at this size).
RESOURCES = Resources(cpus=1)
PAPER = (
    "Required Spine Optional Limbs: Heterogeneous Federated Learning via Backbone-sharing and "
    "Activation-guided Selection (SpineFL), ICML 2026 poster 65972 (no arXiv id found)"
)
SPEC = "spec §5.4"


def run_grid(config: CompareConfig, ctx: RunContext) -> list[dict[str, Any]]:
    """Every (task, alpha, seed, method) run of the grid, as compare_methods rows."""
    if config.mode == "standins":
        return standin_rows(config, ctx)
    from icml26.spinefl import compare_methods

    seeds = ctx.seeds_for("seeds", config.n_seeds)
    rows: list[dict[str, Any]] = []
    n_runs = len(config.tasks) * len(config.alphas) * len(seeds) * len(config.methods)
    with ctx.progress(n_runs, "federated runs") as bar:
        for task_name in config.tasks:
            for alpha in config.alphas:
                for seed in seeds:
                    task = make_grid_task(config, task_name, alpha, seed)
                    kwargs = run_kwargs(config)
                    rows += compare_methods(
                        task,
                        config.methods,
                        seed,
                        alpha=alpha,
                        rounds=kwargs.pop("rounds"),
                        progress=bar.part(),
                        **kwargs,
                    )
    for row in rows:
        row.pop("wall_s")  # timing is not a metric: records must be identical under a seed
    return rows


def mean_accuracy(rows: list[dict[str, Any]], task: str, alpha: float, method: str) -> float:
    scores = [
        r["score"]
        for r in rows
        if r["task"] == task and r["alpha"] == alpha and r["method"] == method
    ]
    return float(np.mean(scores)) if scores else float("nan")


def summarize_grid(rows: list[dict[str, Any]], config: CompareConfig) -> dict[str, Any]:
    """Mean score per (task, alpha, method), mean curves, mean level accuracies, paired diffs."""
    out: dict[str, Any] = {"scores": {}, "curves": {}, "levels": {}, "paired": {}}
    for task in config.tasks:
        for alpha in config.alphas:
            key = f"{task}@{alpha:g}"
            out["scores"][key] = {m: mean_accuracy(rows, task, alpha, m) for m in config.methods}
            mine = [r for r in rows if r["task"] == task and r["alpha"] == alpha]
            out["curves"][key] = {
                m: np.mean([r["curve"] for r in mine if r["method"] == m], axis=0).tolist()
                for m in config.methods
            }
            out["levels"][key] = {
                m: {
                    lvl: float(np.mean([r["levels"][lvl] for r in mine if r["method"] == m]))
                    for lvl in next(r for r in mine if r["method"] == m)["levels"]
                }
                for m in config.methods
            }
            spine = [r["score"] for r in mine if r["method"] == "SpineFL"]
            if spine:
                out["paired"][key] = {
                    m: [
                        s - r["score"]
                        for s, r in zip(spine, [x for x in mine if x["method"] == m], strict=True)
                    ]
                    for m in config.methods
                    if m != "SpineFL"
                }
    return out


def best_baseline(scores: dict[str, float]) -> float:
    from icml26.spinefl import BASELINES

    present = [scores[m] for m in BASELINES if m in scores]
    return max(present) if present else float("nan")


def best_baseline_name(scores: dict[str, float]) -> str | None:
    """The external baseline with the best mean score (None when none ran)."""
    from icml26.spinefl import BASELINES

    present = [m for m in BASELINES if m in scores]
    return max(present, key=lambda m: scores[m]) if present else None


def per_seed(rows: list[dict[str, Any]], task: str, alpha: float, method: str) -> list[float]:
    """``method``'s score for every inner seed, in seed order (paired across methods)."""
    return [
        float(r["score"])
        for r in rows
        if r["task"] == task and r["alpha"] == alpha and r["method"] == method
    ]


def paired_vs(
    rows: list[dict[str, Any]], task: str, alpha: float, other: str | None
) -> list[float]:
    """Per-seed paired differences SpineFL − ``other`` (``[nan]`` when either did not run).

    ``other=None`` takes the best external baseline by mean score (chosen once, then paired
    seed by seed: the comparison is not re-picked per seed).
    """
    if other is None:
        methods = {r["method"] for r in rows if r["task"] == task and r["alpha"] == alpha}
        scores = {m: mean_accuracy(rows, task, alpha, m) for m in methods}
        other = best_baseline_name(scores)
    spine = per_seed(rows, task, alpha, "SpineFL")
    theirs = per_seed(rows, task, alpha, other) if other else []
    if not spine or len(theirs) != len(spine):
        return [float("nan")]
    return [s - t for s, t in zip(spine, theirs, strict=True)]


def over_records(metrics: list[dict[str, Any]], get: Any) -> float:
    """Mean over the records (framework seeds) of ``get(record)``; NaN where none has it."""
    values = []
    for m in metrics:
        try:
            values.append(float(get(m)))
        except KeyError:
            continue
    return float(np.mean(values)) if values else float("nan")


def runs_note(config: CompareConfig, n_records: int) -> str:
    """How many seeds stand behind a number: inner seeds of one record x records."""
    seeds = f"{config.n_seeds} seed{'s' if config.n_seeds > 1 else ''}"
    return f"mean over {seeds}" if n_records == 1 else f"mean over {n_records} records x {seeds}"


def comparison_tables(
    metrics: list[dict[str, Any]], config: CompareConfig, title: str
) -> list[Table]:
    m = metrics[0]
    keys = list(m["scores"])
    note = runs_note(config, len(metrics))
    rows = [
        [
            method,
            *(
                f"{100 * over_records(metrics, lambda r, k=k, a=method: r['scores'][k][a]):.2f}"
                for k in keys
            ),
        ]
        for method in config.methods
    ]
    level_cols = sorted(
        {lvl for k in keys for levels in m["levels"][k].values() for lvl in levels}, key=float
    )

    def level(k: str, method: str, lvl: str) -> str:
        value = over_records(metrics, lambda r: r["levels"][k][method][lvl])
        return "—" if np.isnan(value) else f"{100 * value:.2f}"

    level_rows = [
        [f"{method} @ {k}", *(level(k, method, lvl) for lvl in level_cols)]
        for k in keys
        for method in config.methods
    ]
    paired_rows = []
    for k in keys:
        for other in m["paired"].get(k, {}):
            diffs = [d for r in metrics for d in r["paired"].get(k, {}).get(other, [])]
            paired_rows.append(
                [
                    f"SpineFL − {other} @ {k}",
                    " ".join(f"{100 * d:+.2f}" for d in diffs),
                    f"{100 * float(np.mean(diffs)):+.2f}",
                    len(diffs),
                ]
            )
    return [
        Table(
            f"{title}: final global accuracy (%), {note}",
            ["method", *keys],
            rows,
            note=(
                "score = mean of the last 5 evaluations (FedAvg-small: its r_min model)"
                if config.mode == "train"
                else "score = test accuracy of the shipped final global model of each run "
                "(float16 weights; FedAvg-small: its r_min model)"
            ),
        ),
        Table(
            f"Per-level deployed sub-model accuracy (%), {note}"
            + ("" if config.mode == "train" else ", recorded when the stand-ins were trained"),
            ["method @ task", *(f"r={lvl}" for lvl in level_cols)],
            level_rows,
        ),
        Table(
            "Paired per-seed differences (pt), every seed of every record",
            ["comparison", "per seed", "mean", "n seeds"],
            paired_rows,
        ),
    ]
