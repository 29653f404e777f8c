"""``hyperdepth.digits``: gate 5, no regression on sklearn digits as a kNN hypergraph.

Flat labels only: HyperDepth's probe accuracy against HyperGRACE's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, Table, register
from icml26.hyperdepth.experiments.common import (
    MAX_DIM,
    PAPER,
    RESOURCES,
    check_config,
    method_rows,
    run_methods,
    within_thread_budget,
)
from icml26.hyperdepth.metrics import MAX_SPLITS

N_DIGITS = 1797  # sklearn's digits: the nodes of the kNN hypergraph


@dataclass(frozen=True)
class DigitsConfig:
    """Gate 5: sklearn digits as a kNN hypergraph (flat labels: accuracy only)."""

    k: int = 10
    epochs: int = 100
    dim: int = 64
    proj_dim: int = 64
    d_h: int = 64
    tree: tuple[int, ...] = (40, 10)  # the spec's real-data rule (4·C, C), C = 10 digits
    methods: tuple[str, ...] = ("raw", "hypergrace", "hyperdepth")
    probe_splits: int = 20

    def __post_init__(self) -> None:
        dims = dict.fromkeys(("dim", "proj_dim", "d_h"), (1, MAX_DIM))
        check_config(
            self,
            # knn_hypergraph needs k < n; epochs >= 1: the loss drop reads the loss history
            {"k": (1, N_DIGITS - 1), "epochs": (1, None), **dims, "probe_splits": (1, MAX_SPLITS)},
            tree=True,
            needs=("hypergrace", "hyperdepth"),
        )


DIG_DEFAULT = DigitsConfig()
DIG_PRESETS = {
    "smoke": replace(
        DIG_DEFAULT, epochs=2, dim=8, proj_dim=8, d_h=8, probe_splits=2
    ),  # seconds (the kNN graph of all 1,797 digits is built anyway)
    # n = 1,797 makes the full-batch InfoNCE 9× the synthetic one: half the epochs and splits
    # keep the quick preset near two minutes.
    "quick": replace(DIG_DEFAULT, epochs=50, probe_splits=10),
    "full": replace(DIG_DEFAULT, epochs=300, dim=256, proj_dim=256),
}
DIG_CLAIMS = (
    Claim(
        "D1",
        "no regression on flat labels: HyperDepth probe accuracy ≥ HyperGRACE − 1 pt",
        "acc_minus_hypergrace",
        ">=",
        -0.01,
        "≥ −0.01",
        "spec §5.4 gate 5",
        source="spec",
        control="raw features X (no training) in place of HyperDepth: 0.914 − 0.944 ≈ −0.03",
        control_value=-0.03,
    ),
)


def digits_tables(metrics: list[dict], config: DigitsConfig) -> list[Table]:
    """Probe accuracy and uniformity per method."""
    rows = method_rows(metrics, config.methods, ("fine_acc", "uniformity", "nmi_fine"))
    title = f"Digits kNN hypergraph (mean over {len(metrics)} seeds)"
    return [Table(title, ["method", "accuracy", "uniformity", "NMI"], rows, "")]


@register(
    name="hyperdepth.digits",
    title="Gate 5: no regression on the flat-label digits kNN hypergraph",
    paper=PAPER,
    claims=DIG_CLAIMS,
    presets=DIG_PRESETS,
    tables=digits_tables,
    seeds=3,  # >= 3 values for a verdict
    resources=RESOURCES,
)
@within_thread_budget
def digits(config: DigitsConfig, ctx: RunContext) -> dict[str, Any]:
    """Gate 5: HyperDepth vs HyperGRACE on digits."""
    from icml26.hyperdepth import load_digits_hypergraph

    data = load_digits_hypergraph(config.k)
    out = run_methods(data, config.methods, config, ctx, config.tree)
    out["acc_minus_hypergrace"] = out["hyperdepth_fine_acc"] - out["hypergrace_fine_acc"]
    return out
