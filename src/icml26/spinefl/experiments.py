"""Registered reproductions (spec §5): the quick synthetic comparison, the full §5.4 grid, and
Fashion-MNIST.

The paper's full text was not found: its only figure is the abstract's "up to +3.28 %" over
state-of-the-art heterogeneous FL methods at real scale. Every threshold below is the spec's own
small-scale target (``source="spec"``); the determinism check holds by construction
(``kind="sanity"``). Seeds run inside one task so that every method sees the same partition,
initial weights and participants (paired differences); the reported figure is the mean over
seeds.

Importing this module stays light (``icml26 list``): the method (torch, sklearn) is imported
inside the run functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

REQUIRES = ("sklearn",)
# Small MLPs and batch-32 SGD: one thread is fastest (OpenMP overhead dominates at this size).
RESOURCES = Resources(cpus=1)
PAPER = (
    "Required Spine Optional Limbs: Heterogeneous Federated Learning via Backbone-sharing and "
    "Activation-guided Selection (SpineFL), ICML 2026 poster 65972 (no arXiv id found)"
)
SPEC = "spec §5.4"


@dataclass(frozen=True)
class CompareConfig:
    """One comparison grid: tasks x alphas x seeds x methods (spec §5.3)."""

    tasks: tuple[str, ...] = ("synthetic",)
    alphas: tuple[float, ...] = (0.1,)
    methods: tuple[str, ...] = ("SpineFL", "HeteroFL", "FedRolex", "FedDropout")
    n_seeds: int = 2
    rounds: int = 40
    n_clients: int = 20
    participation: float = 0.5
    local_epochs: int = 1
    lr: float = 0.05
    batch_size: int = 32
    momentum: float = 0.9
    hidden: tuple[int, ...] = (256, 256)
    n_samples: int = 12_000  # synthetic task: generated samples (train + 2 000 test)
    n_train: int | None = None  # keep a random subset of the training set (None: all)
    min_size: int = 10
    eval_every: int = 1
    beta: float = 0.5
    temperature: float = 1.0
    gamma: float = 0.5


def _seeds(ctx: RunContext, n: int) -> list[int]:
    return [int(s) for s in ctx.numpy_generator("seeds").integers(0, 2**31 - 1, size=n)]


def _run_grid(config: CompareConfig, ctx: RunContext) -> list[dict[str, Any]]:
    """Every (task, alpha, seed, method) run of the grid, as compare_methods rows."""
    from icml26.spinefl import compare_methods, make_task

    seeds = _seeds(ctx, config.n_seeds)
    rows: list[dict[str, Any]] = []
    n_runs = len(config.tasks) * len(config.alphas) * len(seeds) * len(config.methods)
    with ctx.progress(n_runs, "federated runs") as bar:
        for task_name in config.tasks:
            for alpha in config.alphas:
                for seed in seeds:
                    task = make_task(
                        task_name,
                        alpha,
                        seed,
                        n_clients=config.n_clients,
                        min_size=config.min_size,
                        hidden=config.hidden,
                        n_samples=config.n_samples,
                        n_train=config.n_train,
                    )
                    rows += compare_methods(
                        task,
                        config.methods,
                        seed,
                        alpha=alpha,
                        rounds=config.rounds,
                        participation=config.participation,
                        local_epochs=config.local_epochs,
                        lr=config.lr,
                        batch_size=config.batch_size,
                        momentum=config.momentum,
                        eval_every=config.eval_every,
                        spine_kwargs={
                            "beta": config.beta,
                            "temperature": config.temperature,
                            "gamma": config.gamma,
                        },
                        on_run=bar.advance,
                    )
    for row in rows:
        row.pop("wall_s")  # timing is not a metric: records must be identical under a seed
    return rows


def _mean(rows: list[dict[str, Any]], task: str, alpha: float, method: str) -> float:
    scores = [
        r["score"]
        for r in rows
        if r["task"] == task and r["alpha"] == alpha and r["method"] == method
    ]
    return float(np.mean(scores)) if scores else float("nan")


def _summary(rows: list[dict[str, Any]], config: CompareConfig) -> dict[str, Any]:
    """Mean score per (task, alpha, method), mean curves, mean level accuracies, paired diffs."""
    out: dict[str, Any] = {"scores": {}, "curves": {}, "levels": {}, "paired": {}}
    for task in config.tasks:
        for alpha in config.alphas:
            key = f"{task}@{alpha:g}"
            out["scores"][key] = {m: _mean(rows, task, alpha, m) for m in config.methods}
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


def _best_baseline(scores: dict[str, float]) -> float:
    from icml26.spinefl import BASELINES

    present = [scores[m] for m in BASELINES if m in scores]
    return max(present) if present else float("nan")


def _over_records(metrics: list[dict[str, Any]], get: Any) -> float:
    """Mean over the records (framework seeds) of ``get(record)``; NaN where none has it."""
    values = []
    for m in metrics:
        try:
            values.append(float(get(m)))
        except KeyError:
            continue
    return float(np.mean(values)) if values else float("nan")


def _runs_note(config: CompareConfig, n_records: int) -> str:
    """How many seeds stand behind a number: inner seeds of one record x records."""
    seeds = f"{config.n_seeds} seed{'s' if config.n_seeds > 1 else ''}"
    return f"mean over {seeds}" if n_records == 1 else f"mean over {n_records} records x {seeds}"


def _table(metrics: list[dict[str, Any]], config: CompareConfig, title: str) -> list[Table]:
    m = metrics[0]
    keys = list(m["scores"])
    note = _runs_note(config, len(metrics))
    rows = [
        [
            method,
            *(
                f"{100 * _over_records(metrics, lambda r, k=k, a=method: r['scores'][k][a]):.2f}"
                for k in keys
            ),
        ]
        for method in config.methods
    ]
    level_cols = sorted(
        {lvl for k in keys for levels in m["levels"][k].values() for lvl in levels}, key=float
    )

    def level(k: str, method: str, lvl: str) -> str:
        value = _over_records(metrics, lambda r: r["levels"][k][method][lvl])
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
            note="score = mean of the last 5 evaluations (FedAvg-small: its r_min model)",
        ),
        Table(
            f"Per-level deployed sub-model accuracy (%), {note}",
            ["method @ task", *(f"r={lvl}" for lvl in level_cols)],
            level_rows,
        ),
        Table(
            "Paired per-seed differences (pt), every seed of every record",
            ["comparison", "per seed", "mean", "n seeds"],
            paired_rows,
        ),
    ]


def _plot(metrics: list[dict[str, Any]], config: CompareConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note

    m = metrics[0]
    n = len(metrics)
    inner = f"{config.n_seeds} seed{'s' if config.n_seeds > 1 else ''} per record; {seeds_note(n)}"
    figures = {}
    for key, curves in m["curves"].items():
        fig, ax = plt.subplots(figsize=(6.5, 3.8))
        for method, curve in curves.items():
            rounds = np.arange(1, len(curve) + 1) * config.eval_every
            values = np.asarray([r["curves"][key][method] for r in metrics], dtype=float)
            mean_band(ax, rounds, values, label=method, lw=2 if method == "SpineFL" else 1)
        ax.set_xlabel("round")
        ax.set_ylabel("global test accuracy")
        ax.set_title(f"{key}: global accuracy ({inner})", fontsize=8)
        legend_outside(ax)
        fig.tight_layout()
        figures[f"accuracy_{key}"] = fig
        fig, ax = plt.subplots(figsize=(6.5, 3.5))
        methods = list(m["levels"][key])
        levels = list(m["levels"][key][methods[0]])
        width = 0.8 / max(len(levels), 1)
        for i, lvl in enumerate(levels):
            values = np.asarray(
                [[r["levels"][key][meth].get(lvl, np.nan) for meth in methods] for r in metrics],
                dtype=float,
            )
            bars_with_seeds(ax, methods, values, offset=i * width, width=width, label=f"r={lvl}")
        ax.set_xticks(np.arange(len(methods)) + 0.4 - width / 2, methods, rotation=45, fontsize=7)
        ax.set_ylabel("deployed sub-model accuracy")
        ax.set_title(f"{key}: accuracy of every width level ({inner})", fontsize=8)
        legend_outside(ax)
        fig.tight_layout()
        figures[f"levels_{key}"] = fig
        if key in m["paired"]:
            fig, ax = plt.subplots(figsize=(5.5, 3.2))
            names = list(m["paired"][key])
            for i, other in enumerate(names):
                diffs = [d for r in metrics for d in r["paired"].get(key, {}).get(other, [])]
                ax.scatter(np.full(len(diffs), i), 100 * np.asarray(diffs), s=14)
            ax.axhline(0.0, color="grey", lw=0.8)
            ax.set_xticks(range(len(names)), names, rotation=45)
            ax.set_ylabel("SpineFL − method (pt)")
            ax.set_title(f"{key}: paired differences, every seed of {n} record(s)", fontsize=8)
            fig.tight_layout()
            figures[f"paired_{key}"] = fig
    return figures


# --- spinefl.synthetic (quick) -----------------------------------------------------------------

SYNTHETIC_DEFAULT = CompareConfig()
SYNTHETIC_PRESETS = {
    # seconds: a 2 400-sample task, 8 clients, narrow MLP, 3 rounds (claims are not expected)
    "smoke": replace(
        SYNTHETIC_DEFAULT, n_seeds=1, rounds=3, n_clients=8, hidden=(32, 32), n_samples=2_400
    ),
    "quick": SYNTHETIC_DEFAULT,
    "full": replace(SYNTHETIC_DEFAULT, n_seeds=5, rounds=150, local_epochs=2),  # §5.3 full
}
SYNTHETIC_CLAIMS = (
    Claim(
        "Q1",
        "Every method beats chance (10 %) by more than 20 pt",
        "min_margin_over_chance",
        ">",
        0.20,
        "> chance + 20 pt",
        "spec §5.4 (quick gate)",
        source="spec",
    ),
    Claim(
        "Q2",
        "SpineFL is within 3 pt of the best baseline (HeteroFL, FedRolex, FedDropout)",
        "spine_minus_best_baseline",
        ">=",
        -0.03,
        ">= best − 3 pt",
        "spec §5.4 (quick gate)",
        source="spec",
    ),
)


def synthetic_tables(metrics: list[dict[str, Any]], config: CompareConfig) -> list[Table]:
    return _table(metrics, config, "Synthetic task")


@register(
    name="spinefl.synthetic",
    title="Synthetic task, alpha = 0.1: SpineFL vs HeteroFL / FedRolex / FedDropout",
    paper=PAPER,
    claims=SYNTHETIC_CLAIMS,
    presets=SYNTHETIC_PRESETS,
    plot=_plot,
    tables=synthetic_tables,
    seeds=1,  # the config's seeds run inside the task (paired comparison)
    requires=REQUIRES,
    resources=RESOURCES,
)
def synthetic(config: CompareConfig, ctx: RunContext) -> dict[str, Any]:
    rows = _run_grid(config, ctx)
    summary = _summary(rows, config)
    key = f"{config.tasks[0]}@{config.alphas[0]:g}"
    scores = summary["scores"][key]
    return {
        "min_margin_over_chance": min(scores.values()) - 0.1,
        "spine_minus_best_baseline": scores["SpineFL"] - _best_baseline(scores),
        **{f"acc_{m}": s for m, s in scores.items()},
        **summary,
    }


# --- spinefl.main (full): spec §5.4 gates 1-5 --------------------------------------------------

MAIN_METHODS = (
    "SpineFL",
    "HeteroFL",
    "FedRolex",
    "FedDropout",
    "FjORD-lite",
    "FIARSE-lite",
    "FedAvg-small",
    "FedAvg-full",
    "SpineFL-beta0",
    "SpineFL-T0",
    "SpineFL-uniform",
    "SpineFL-global",
)
MAIN_DEFAULT = CompareConfig(
    tasks=("synthetic", "digits"),
    alphas=(0.1, 0.5),
    methods=MAIN_METHODS,
    n_seeds=5,
    rounds=150,
    local_epochs=2,
)
MAIN_PRESETS = {
    # seconds: one tiny synthetic task, the methods the gates need, 2 rounds
    "smoke": replace(
        MAIN_DEFAULT,
        tasks=("synthetic",),
        methods=("SpineFL", *MAIN_METHODS[1:6], "FedAvg-full", "SpineFL-beta0", "SpineFL-T0"),
        n_seeds=1,
        rounds=2,
        n_clients=8,
        hidden=(32, 32),
        n_samples=2_400,
        local_epochs=1,
    ),
    # ~2 min: synthetic only, 1 seed, 20 rounds, without the optional ablations
    "quick": replace(
        MAIN_DEFAULT,
        tasks=("synthetic",),
        methods=("SpineFL", *MAIN_METHODS[1:6], "FedAvg-full", "SpineFL-beta0", "SpineFL-T0"),
        n_seeds=1,
        rounds=20,
        local_epochs=1,
    ),
    "full": MAIN_DEFAULT,
}
MAIN_CLAIMS = (
    Claim(
        "M1a",
        "Sanity: every method reaches >= 60 % global accuracy at alpha = 0.5 (synthetic)",
        "min_acc_alpha05",
        ">=",
        0.60,
        ">= 60 %",
        f"{SPEC} item 1",
        source="spec",
    ),
    Claim(
        "M1b",
        "FedAvg-full >= every sub-model method - 0.5 pt (synthetic, both alphas)",
        "fedavg_full_minus_best_submodel",
        ">=",
        -0.005,
        ">= -0.5 pt",
        f"{SPEC} item 1",
        source="spec",
    ),
    Claim(
        "M2a",
        "SpineFL >= best of HeteroFL/FedRolex/FedDropout/FjORD-lite/FIARSE-lite at alpha = 0.1",
        "spine_margin_alpha01",
        ">=",
        0.0,
        ">= 0 (paper abstract: up to +3.28 pt at real scale)",
        f"{SPEC} item 2",
        source="spec",
    ),
    Claim(
        "M2b",
        "... and at alpha = 0.5",
        "spine_margin_alpha05",
        ">=",
        0.0,
        ">= 0",
        f"{SPEC} item 2",
        source="spec",
    ),
    Claim(
        "M2c",
        "... with a margin >= +0.5 pt in at least one of the two",
        "spine_margin_max",
        ">=",
        0.005,
        ">= +0.5 pt (paper abstract: up to +3.28 pt)",
        f"{SPEC} item 2",
        source="spec",
    ),
    Claim(
        "M3",
        "Stochastic vs guided: SpineFL >= FedDropout + 1.0 pt at alpha = 0.1",
        "spine_minus_feddropout_alpha01",
        ">=",
        0.01,
        ">= +1.0 pt",
        f"{SPEC} item 3",
        source="spec",
    ),
    Claim(
        "M4a",
        "Ablation: SpineFL >= its beta = 0 variant at alpha = 0.1",
        "spine_minus_beta0_alpha01",
        ">=",
        0.0,
        ">= 0",
        f"{SPEC} item 4",
        source="spec",
    ),
    Claim(
        "M4b",
        "Ablation: SpineFL >= its T -> 0 (deterministic top-k) variant at alpha = 0.1",
        "spine_minus_t0_alpha01",
        ">=",
        0.0,
        ">= 0",
        f"{SPEC} item 4",
        source="spec",
    ),
    Claim(
        "M5",
        "Determinism: the same seed gives identical metrics (SpineFL rerun)",
        "determinism_max_abs_diff",
        "<=",
        0.0,
        "identical",
        f"{SPEC} item 5",
        source="spec",
        kind="sanity",
    ),
)


def main_tables(metrics: list[dict[str, Any]], config: CompareConfig) -> list[Table]:
    return _table(metrics, config, "Spec §5.4 grid")


def _determinism_gap(config: CompareConfig, ctx: RunContext) -> float:
    """Max |difference| of two SpineFL runs from the same seed (accuracy curves)."""
    from icml26.spinefl import make_task, run_method

    seed = _seeds(ctx, 1)[0]
    task = make_task(
        config.tasks[0],
        config.alphas[0],
        seed,
        n_clients=config.n_clients,
        min_size=config.min_size,
        hidden=config.hidden,
        n_samples=config.n_samples,
        n_train=config.n_train,
    )
    rounds = min(config.rounds, 5)
    curves = [np.asarray(run_method(task, "SpineFL", rounds=rounds, seed=seed)[1].global_acc)]
    curves.append(np.asarray(run_method(task, "SpineFL", rounds=rounds, seed=seed)[1].global_acc))
    return float(np.max(np.abs(curves[0] - curves[1])))


@register(
    name="spinefl.main",
    title="Spec §5.4 grid: synthetic + digits x alpha in {0.1, 0.5}, all methods and ablations",
    paper=PAPER,
    claims=MAIN_CLAIMS,
    presets=MAIN_PRESETS,
    plot=_plot,
    tables=main_tables,
    seeds=1,  # the config's seeds run inside the task (paired comparison)
    requires=REQUIRES,
    resources=RESOURCES,
)
def main(config: CompareConfig, ctx: RunContext) -> dict[str, Any]:
    rows = _run_grid(config, ctx)
    summary = _summary(rows, config)
    gate_task = "synthetic" if "synthetic" in config.tasks else config.tasks[0]

    def scores(alpha: float) -> dict[str, float]:
        return summary["scores"].get(f"{gate_task}@{alpha:g}", {})

    def margin(alpha: float, other: str | None = None) -> float:
        s = scores(alpha)
        if "SpineFL" not in s:
            return float("nan")
        reference = _best_baseline(s) if other is None else s.get(other, float("nan"))
        return s["SpineFL"] - reference

    submodel_gaps = [
        s["FedAvg-full"] - max(v for k, v in s.items() if k != "FedAvg-full")
        for s in (scores(a) for a in config.alphas)
        if "FedAvg-full" in s and len(s) > 1
    ]
    m01, m05 = margin(0.1), margin(0.5)
    return {
        "min_acc_alpha05": min(scores(0.5).values()) if scores(0.5) else float("nan"),
        "fedavg_full_minus_best_submodel": min(submodel_gaps) if submodel_gaps else float("nan"),
        "spine_margin_alpha01": m01,
        "spine_margin_alpha05": m05,
        "spine_margin_max": float(np.nanmax([m01, m05])),
        "spine_minus_feddropout_alpha01": margin(0.1, "FedDropout"),
        "spine_minus_beta0_alpha01": margin(0.1, "SpineFL-beta0"),
        "spine_minus_t0_alpha01": margin(0.1, "SpineFL-T0"),
        "determinism_max_abs_diff": _determinism_gap(config, ctx),
        **summary,
    }


# --- spinefl.fashion_mnist (full): the same comparison on real data ----------------------------

FASHION_DEFAULT = CompareConfig(
    tasks=("fashion_mnist",),
    alphas=(0.1,),
    methods=("SpineFL", "HeteroFL", "FedRolex", "FedDropout", "FjORD-lite", "FIARSE-lite"),
    n_seeds=3,
    rounds=100,
    local_epochs=2,
)
FASHION_PRESETS = {
    # seconds, and on synthetic data: the real images come from a Debian package
    # (dataset-fashion-mnist) that a test machine need not have; quick and full read them
    "smoke": replace(
        FASHION_DEFAULT,
        tasks=("synthetic",),
        methods=("SpineFL", "HeteroFL"),
        n_seeds=1,
        rounds=2,
        n_clients=8,
        hidden=(32, 32),
        n_train=800,
        local_epochs=1,
    ),
    # ~2 min: 12 000 training images, 1 seed, 30 rounds, the quick line-up
    "quick": replace(
        FASHION_DEFAULT,
        methods=("SpineFL", "HeteroFL", "FedRolex", "FedDropout"),
        n_seeds=1,
        rounds=30,
        n_train=12_000,
        local_epochs=1,
    ),
    "full": FASHION_DEFAULT,
}
FASHION_CLAIMS = (
    Claim(
        "F1",
        "Fashion-MNIST, alpha = 0.1: SpineFL >= the best baseline (the §5.4 central gate)",
        "spine_minus_best_baseline",
        ">=",
        0.0,
        ">= 0 (paper abstract: up to +3.28 pt at real scale)",
        f"{SPEC} item 2, applied to real data",
        source="spec",
    ),
)


def _fashion_data_missing(config: CompareConfig) -> str | None:
    """Why ``config`` cannot run here: its Fashion-MNIST files are absent (None if present)."""
    from icml26.spinefl.data import _fashion_mnist_missing

    return _fashion_mnist_missing() if "fashion_mnist" in config.tasks else None


def fashion_tables(metrics: list[dict[str, Any]], config: CompareConfig) -> list[Table]:
    return _table(metrics, config, "Fashion-MNIST, MLP 784-256-256-10")


@register(
    name="spinefl.fashion_mnist",
    title="Fashion-MNIST (real, offline), alpha = 0.1: SpineFL vs the baselines",
    paper=PAPER,
    claims=FASHION_CLAIMS,
    presets=FASHION_PRESETS,
    plot=_plot,
    tables=fashion_tables,
    seeds=1,  # the config's seeds run inside the task (paired comparison)
    requires=REQUIRES,
    resources=RESOURCES,
    data_check=_fashion_data_missing,  # quick and full read a Debian package's files
)
def fashion_mnist(config: CompareConfig, ctx: RunContext) -> dict[str, Any]:
    rows = _run_grid(config, ctx)
    summary = _summary(rows, config)
    scores = summary["scores"][f"{config.tasks[0]}@{config.alphas[0]:g}"]
    return {
        "spine_minus_best_baseline": scores["SpineFL"] - _best_baseline(scores),
        **{f"acc_{m}": s for m, s in scores.items()},
        **summary,
    }
