"""A2: hybrid ``SA`` vs Transformers and SSMs of 1–8× its parameters on MQAR
(``hybrid_seq.param_efficiency``; the abstract's "up to 6× as many parameters")."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.hybrid_seq.experiments.common import (
    PAPER,
    TRAIN_RESOURCES,
    WHERE_ABSTRACT,
    WHERE_SPEC,
    by_params,
    fit,
)


@dataclass(frozen=True)
class ParamEfficiencyConfig:
    L: int = 128
    n_kv: int = 16
    n_keys: int = 64
    n_values: int = 64
    n_fillers: int = 32
    power_a: float = 0.01
    hybrid_pattern: str = "SA"
    hybrid_d: int = 32
    baseline_patterns: tuple[str, ...] = ("AA", "AAAA", "SS", "SSSS")
    baseline_widths: tuple[int, ...] = (16, 32, 64, 96, 128)
    steps: int = 3000
    lrs: tuple[float, ...] = (1e-3, 3e-3)
    batch_size: int = 64
    warmup: int = 100
    n_val: int = 500
    n_test: int = 2000
    max_ratio: float = 8.0
    underperform_margin: float = 0.01  # "underperforms" = accuracy below the hybrid's by > this


PARAM_EFFICIENCY = ParamEfficiencyConfig()
PARAM_EFFICIENCY_PRESETS = {
    "smoke": replace(
        PARAM_EFFICIENCY,
        L=32,
        n_kv=4,
        baseline_patterns=("AA", "SS"),
        baseline_widths=(16,),
        steps=3,
        lrs=(3e-3,),
        batch_size=8,
        warmup=1,
        n_val=16,
        n_test=32,
    ),
    # ~2 min on 2 cores: the smoke task, two families at two widths, one lr, 400 steps
    "quick": replace(
        PARAM_EFFICIENCY,
        L=32,
        n_kv=4,
        n_keys=32,
        n_values=32,
        n_fillers=16,
        baseline_patterns=("AA", "SS"),
        baseline_widths=(32, 64),
        steps=400,
        lrs=(3e-3,),
        n_val=250,
        n_test=1000,
    ),
    "full": PARAM_EFFICIENCY,  # spec §2.5, 3 seeds: icml26 run ... --preset full --seeds 3
}


def _param_efficiency_plot(metrics: list[dict[str, Any]], config: Any) -> dict:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    runs = sorted(metrics[0]["runs"], key=by_params)
    acc = _token_acc_per_seed(metrics)  # (n_seeds, n_runs) in the order of seed 0's runs
    for family in sorted({r["pattern"] for r in runs}):
        cols = [i for i, r in enumerate(runs) if r["pattern"] == family]
        mean_band(ax, [runs[i]["params"] for i in cols], acc[:, cols], label=family, marker="o")
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("MQAR token accuracy")
    ax.set_title(f"MQAR accuracy vs parameters ({seeds_note(len(metrics))})", fontsize=9)
    legend_outside(ax)
    fig.tight_layout()
    return {"accuracy_vs_params": fig}


def _token_acc_per_seed(metrics: list[dict[str, Any]]) -> np.ndarray:
    """Token accuracy of seed 0's runs (by params) in every seed, matched on (pattern, d)."""
    runs = sorted(metrics[0]["runs"], key=by_params)
    out = np.full((len(metrics), len(runs)), np.nan)
    for s, m in enumerate(metrics):
        by_arch = {(r["pattern"], r["d_model"]): r["token_acc"] for r in m["runs"]}
        for i, r in enumerate(runs):
            out[s, i] = by_arch.get((r["pattern"], r["d_model"]), np.nan)
    return out


def _param_efficiency_tables(metrics: list[dict[str, Any]], config: Any) -> list[Table]:
    m = metrics[0]
    acc = _token_acc_per_seed(metrics)
    rows = [
        [
            r["pattern"],
            r["d_model"],
            r["params"],
            r["params"] / m["hybrid_params"],
            float(np.nanmean(acc[:, i])),
            int(np.sum(~np.isnan(acc[:, i]))),
        ]
        for i, r in enumerate(sorted(m["runs"], key=by_params))
    ]
    return [
        Table(
            title=f"MQAR token accuracy vs parameters (mean over {len(metrics)} seeds)",
            columns=["pattern", "d", "params", "× hybrid", "token acc (mean)", "n seeds"],
            rows=rows,
            note="Paper (abstract): hybrids beat non-hybrids with up to 6× as many parameters.",
        )
    ]


@register(
    name="hybrid_seq.param_efficiency",
    title="A2: hybrid SA vs Transformers and SSMs of 1–8× its parameters on MQAR",
    paper=PAPER,
    claims=(
        Claim(
            "A2a",
            "Hybrid SA at d=32 reaches MQAR token accuracy >= 0.90",
            "hybrid_token_acc",
            ">=",
            0.90,
            "learned hybrids solve MQAR",
            WHERE_SPEC,
            source="spec",
        ),
        Claim(
            "A2b",
            "Every non-hybrid with <= 2× the hybrid's parameters is >= 0.10 below it",
            "gap_within_2x",
            ">=",
            0.10,
            "hybrids outperform non-hybrids",
            WHERE_SPEC,
            source="spec",
        ),
        Claim(
            "A2c",
            "Largest parameter ratio (<= 8) at which a non-hybrid still underperforms",
            "largest_underperforming_ratio",
            ">=",
            6.0,
            "up to 6× as many parameters",
            WHERE_ABSTRACT,
            source="paper",
        ),
    ),
    presets=PARAM_EFFICIENCY_PRESETS,
    plot=_param_efficiency_plot,
    tables=_param_efficiency_tables,
    seeds=1,
    resources=TRAIN_RESOURCES,
)
def param_efficiency(config: ParamEfficiencyConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.hybrid_seq import MQAR, count_params, evaluate

    task = MQAR(
        config.L,
        config.n_kv,
        config.n_keys,
        config.n_values,
        config.n_fillers,
        power_a=config.power_a,
    )
    configs = [(config.hybrid_pattern, config.hybrid_d)] + [
        (p, d) for p in config.baseline_patterns for d in config.baseline_widths
    ]
    test_seed = ctx.seed_for("test")
    runs = []
    with ctx.progress(len(configs) * config.steps * len(config.lrs), "training") as bar:
        for pattern, d in configs:
            search = fit(task, pattern, d, config, ctx, bar)
            model, lr = search.model, search.lr
            token_acc, seq_acc = evaluate(model, task, n=config.n_test, seed=test_seed)[config.L]
            runs.append(
                {
                    "pattern": pattern,
                    "d_model": d,
                    "params": count_params(model),
                    "lr": lr,
                    "token_acc": token_acc,
                    "seq_acc": seq_acc,
                }
            )
    hybrid, baselines = runs[0], runs[1:]
    ratio = [r["params"] / hybrid["params"] for r in baselines]
    within_2x = [r["token_acc"] for r, q in zip(baselines, ratio, strict=True) if q <= 2.0]
    under = [
        q
        for r, q in zip(baselines, ratio, strict=True)
        if q <= config.max_ratio
        and r["token_acc"] < hybrid["token_acc"] - config.underperform_margin
    ]
    return {
        "hybrid_token_acc": hybrid["token_acc"],
        "hybrid_params": hybrid["params"],
        "gap_within_2x": hybrid["token_acc"] - max(within_2x) if within_2x else math.nan,
        "largest_underperforming_ratio": max(under) if under else 0.0,
        "runs": runs,
    }
