"""``hyperdepth.synthetic``: gates 1–3 on the spec's synthetic hierarchical hypergraph (§5.1).

HyperDepth vs HyperGRACE (+ TriCL-lite and the ablations in the full preset): discrimination
(fine-level probe accuracy), flattening (SFI) and hierarchy recovery (coarse NMI, dendrogram
purity).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, Table, register
from icml26.hyperdepth.experiments.common import (
    MAX_DIM,
    MIN_PER_FINE,
    PAPER,
    RESOURCES,
    best_baseline,
    check_config,
    depth_restored,
    method_rows,
    premise_metrics,
    run_methods,
    synthetic_plot,
    within_thread_budget,
)
from icml26.hyperdepth.metrics import MAX_SPLIT_NODES, MAX_SPLITS


@dataclass(frozen=True)
class SyntheticConfig:
    """Spec §5.1 synthetic hierarchy: 4 coarse × 3 fine classes, hyperedges of size 3–8."""

    n_per_fine: int = 50  # quick: n = 600
    n_edges: int = 400
    feature_dim: int = 64
    epochs: int = 100
    dim: int = 64
    proj_dim: int = 64
    d_h: int = 64
    tree: tuple[int, ...] = (16, 4)
    # both readings of the high branch (issue 45): the spec's complement and the band-pass
    methods: tuple[str, ...] = ("raw", "hypergrace", "hyperdepth", "hd_band")
    probe_splits: int = 20

    def __post_init__(self) -> None:
        dims = dict.fromkeys(("feature_dim", "dim", "proj_dim", "d_h"), (1, MAX_DIM))
        check_config(
            self,
            # the probe splits at most MAX_SPLIT_NODES nodes, n = 12 · n_per_fine; epochs >= 1:
            # the loss drop reads the loss history
            {
                "n_per_fine": (MIN_PER_FINE, MAX_SPLIT_NODES // 12),
                "n_edges": (1, None),
                **dims,
                "epochs": (1, None),
                "probe_splits": (1, MAX_SPLITS),
            },
            tree=True,
            needs=("hypergrace", "hyperdepth"),
        )


SYN_DEFAULT = SyntheticConfig()
SYN_PRESETS = {
    "smoke": replace(
        SYN_DEFAULT,
        n_per_fine=8,
        n_edges=40,
        feature_dim=8,
        epochs=4,
        dim=8,
        proj_dim=8,
        d_h=8,
        probe_splits=2,
    ),  # seconds: the contract test runs it twice
    # 3 seeds (a verdict needs >= 3 values); 10 probe splits instead of 20 pay for the third
    "quick": replace(SYN_DEFAULT, probe_splits=10),
    "full": replace(
        SYN_DEFAULT,
        n_per_fine=100,
        n_edges=800,
        epochs=300,
        dim=256,
        proj_dim=256,
        methods=(
            "raw",
            "p2x",
            "hypergrace",
            "tricl",
            "hyperdepth",
            "hd_band",
            "hd_nogate",
            "hd_noenergy",
            "hd_coupled",
        ),
    ),  # spec §5.3 full budget; run with --seeds 5
}
WHERE_P0 = "issue 45 (premise gate P0)"
WHERE_BAND = "issue 45 (two readings of the high branch, pre-registered 2026-12-07)"
SYN_CLAIMS = (
    Claim(
        "P0",
        "premise: the contrastive reference flattens the hierarchy — centroid SFI(HyperGRACE) ≥ "
        "centroid SFI(P²X, its own smoothed input) + 0.05",
        "premise_centroid_sfi_gap",
        ">=",
        0.05,
        "the abstract's Semantic Flattening of standard contrastive objectives",
        WHERE_P0,
        source="spec",
        kind="gate",
    ),
    Claim(
        "P0s",
        "premise in the SFI that S3 and G2 use: pairwise SFI(HyperGRACE) ≥ pairwise SFI(P²X) "
        "+ 0.05",
        "premise_sfi_gap",
        ">=",
        0.05,
        "the abstract's Semantic Flattening of standard contrastive objectives",
        WHERE_P0,
        source="spec",
        kind="gate",
    ),
    Claim(
        "S1",
        "HyperDepth's training loss decreases (mean of the first vs last 10% of epochs)",
        "hyperdepth_loss_drop",
        ">",
        0.0,
        "loss decreases",
        "spec §5.4 quick",
        source="spec",
        kind="sanity",  # gradient descent on its own loss: a check of the optimiser, not the paper
    ),
    Claim(
        "S2",
        "HyperDepth fine-level probe accuracy > 1/12 + 0.3",
        "hyperdepth_fine_acc",
        ">",
        1 / 12 + 0.3,
        "> 0.383",
        "spec §5.4 quick",
        source="spec",
        gates=(),
        control="an embedding with no class information (probe at chance, 1/12)",
        control_value=1 / 12,
    ),
    Claim(
        "S3",
        "less flattening than HyperGRACE: SFI(HyperDepth) − SFI(HyperGRACE) < 0",
        "sfi_minus_hypergrace",
        "<",
        0.0,
        "SFI(HyperDepth) < SFI(HyperGRACE)",
        "spec §5.4 quick",
        source="spec",
        gates=("P0", "P0s"),
        control="HyperGRACE in place of HyperDepth (difference 0)",
        control_value=0.0,
    ),
    Claim(
        "G1",
        "discrimination kept: fine accuracy ≥ best of HyperGRACE/TriCL-lite − 1 pt (baselines run)",
        "fine_acc_minus_best",
        ">=",
        -0.01,
        "≥ −0.01",
        "spec §5.4 gate 1 (full preset)",
        source="spec",
        gates=(),
        control=(
            "an embedding with no class information in place of HyperDepth: 1/12 minus the best "
            "baseline's accuracy (about 0.74 at the quick scale)"
        ),
        control_value=1 / 12 - 0.74,
    ),
    Claim(
        "G2",
        "less flattening: SFI ≤ best baseline's SFI − 0.05",
        "sfi_minus_best",
        "<=",
        -0.05,
        "≤ −0.05",
        "spec §5.4 gate 2 (full preset)",
        source="spec",
        gates=("P0", "P0s"),
        control="the least flattened baseline in place of HyperDepth (difference 0)",
        control_value=0.0,
    ),
    Claim(
        "G3a",
        "hierarchy recovered: coarse k-means NMI ≥ best baseline + 0.05",
        "nmi_coarse_minus_best",
        ">=",
        0.05,
        "≥ +0.05",
        "spec §5.4 gate 3 (full preset)",
        source="spec",
        gates=("P0",),
        control="the best baseline in place of HyperDepth (difference 0)",
        control_value=0.0,
    ),
    Claim(
        "G3b",
        "hierarchy recovered: dendrogram purity ≥ best baseline + 0.03",
        "dp_minus_best",
        ">=",
        0.03,
        "≥ +0.03",
        "spec §5.4 gate 3 (full preset)",
        source="spec",
        gates=("P0",),
        control="the best baseline in place of HyperDepth (difference 0)",
        control_value=0.0,
    ),
    Claim(
        "DR",
        "complement reading (I − P², the spec): HyperDepth removes ≥ half of the flattening that "
        "contrast adds — (cSFI(HyperGRACE) − cSFI(HD)) / (cSFI(HyperGRACE) − cSFI(P²X)) ≥ 0.5",
        "hyperdepth_depth_restored",
        ">=",
        0.5,
        "≥ 0.5 (centroid SFI)",
        WHERE_BAND,
        source="spec",
        gates=("P0",),
        control="HyperGRACE in place of HyperDepth (share 0)",
        control_value=0.0,
    ),
    Claim(
        "DRb",
        "band reading (P − P⁸): the same share of flattening removed ≥ 0.5",
        "hd_band_depth_restored",
        ">=",
        0.5,
        "≥ 0.5 (centroid SFI)",
        WHERE_BAND,
        source="spec",
        gates=("P0",),
        control="HyperGRACE in place of HyperDepth (share 0)",
        control_value=0.0,
    ),
    Claim(
        "G1b",
        "band reading: fine accuracy ≥ best of the baselines run − 1 pt",
        "hd_band_fine_acc_minus_best",
        ">=",
        -0.01,
        "≥ −0.01",
        WHERE_BAND,
        source="spec",
        gates=(),
        control=(
            "an embedding with no class information in place of HyperDepth: 1/12 minus the best "
            "baseline's accuracy (about 0.74 at the quick scale)"
        ),
        control_value=1 / 12 - 0.74,
    ),
    Claim(
        "G3ab",
        "band reading: coarse k-means NMI ≥ best baseline + 0.05",
        "hd_band_nmi_coarse_minus_best",
        ">=",
        0.05,
        "≥ +0.05",
        WHERE_BAND,
        source="spec",
        gates=("P0",),
        control="the best baseline in place of HyperDepth (difference 0)",
        control_value=0.0,
    ),
)
SYN_KEYS = ("fine_acc", "coarse_acc", "sfi", "centroid_sfi", "uniformity")
SYN_KEYS += ("nmi_coarse", "nmi_fine", "dp")


def synthetic_tables(metrics: list[dict], config: SyntheticConfig) -> list[Table]:
    """All methods' metrics, mean over seeds."""
    columns = ["method", "fine acc", "coarse acc", "SFI", "centroid SFI", "uniformity"]
    columns += ["NMI coarse", "NMI fine"]
    columns.append("dendrogram purity")
    rows = method_rows(metrics, config.methods, SYN_KEYS)
    note = f"n = {12 * config.n_per_fine}, {config.epochs} epochs, d = {config.dim}"
    title = f"Synthetic hierarchical hypergraph (mean over {len(metrics)} seeds)"
    return [Table(title, columns, rows, note)]


@register(
    name="hyperdepth.synthetic",
    title="Synthetic hierarchy: discrimination, flattening and hierarchy recovery (gates 1–3)",
    paper=PAPER,
    claims=SYN_CLAIMS,
    presets=SYN_PRESETS,
    plot=synthetic_plot,
    tables=synthetic_tables,
    seeds=3,  # >= 3 values for a verdict; the spec's full gates use --seeds 5
    description="HyperDepth vs HyperGRACE (+ TriCL-lite and ablations in full) on spec §5.1 data.",
    resources=RESOURCES,
)
@within_thread_budget
def synthetic(config: SyntheticConfig, ctx: RunContext) -> dict[str, Any]:
    """Gates 1–3 and the quick asserts on the synthetic hierarchical hypergraph."""
    from icml26.hyperdepth import make_hierarchical_hypergraph

    data = make_hierarchical_hypergraph(
        n_per_fine=config.n_per_fine,
        n_edges=config.n_edges,
        dim=config.feature_dim,
        seed=ctx.numpy_generator("data"),
    )
    out = run_methods(data, config.methods, config, ctx, config.tree)
    out.update(premise_metrics(data, out))
    hd = "hyperdepth"
    out["sfi_minus_hypergrace"] = out[f"{hd}_sfi"] - out["hypergrace_sfi"]
    out["fine_acc_minus_best"] = out[f"{hd}_fine_acc"] - best_baseline(
        out, "fine_acc", config.methods, max
    )
    out["sfi_minus_best"] = out[f"{hd}_sfi"] - best_baseline(out, "sfi", config.methods, min)
    for key in ("nmi_coarse", "dp"):
        out[f"{key}_minus_best"] = out[f"{hd}_{key}"] - best_baseline(out, key, config.methods, max)
    for method in ("hyperdepth", "hd_band"):
        out[f"{method}_depth_restored"] = depth_restored(out, method)
    for key in ("fine_acc", "nmi_coarse"):
        best = best_baseline(out, key, config.methods, max)
        out[f"hd_band_{key}_minus_best"] = out.get(f"hd_band_{key}", float("nan")) - best
    return out
