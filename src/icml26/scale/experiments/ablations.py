"""``scale.ablations``: other uncertainty measures setting tau, and the instantaneous u_{t-1}
instead of its change driving the vision temperature (the paper's LIBERO-Long ablation table).

Every comparison is a paired per-episode difference (bootstrap over seeds, then episodes)
that a decoder identical to the compared one fails (``> 0``); the paper's figures are its
ablation table's. The gates of :data:`~icml26.scale.experiments.common.REACH_GATES` stand
before every claim.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from icml26.core import Claim, Resources, RunContext, Table, register
from icml26.scale.experiments.common import (
    ABLATIONS,
    GREEDY,
    PAPER,
    REACH_DEFAULT,
    REACH_GATES,
    REACH_PRESETS,
    ReachConfig,
    paired_gap,
    reach_tables,
    run_reach,
    sr_figure,
)

ABLATION_DEFAULT = replace(REACH_DEFAULT, decoders=ABLATIONS)
ABLATION_PRESETS = {
    "smoke": replace(REACH_PRESETS["smoke"], decoders=ABLATIONS),  # seconds
    "quick": replace(REACH_PRESETS["quick"], decoders=ABLATIONS),  # the shipped policy
    "full": ABLATION_DEFAULT,
}
PAPER_ABLATION = [
    ["greedy", "52.7"],
    ["adaptive decoding only", "58.0"],
    ["adaptive visual attention only", "56.0"],
    ["SCALE (both)", "63.3"],
    ["self-certainty / entropy / Gini measure", "53.8 / 55.4 / 57.8"],
    ["vision driven by u_{t-1} instead of Δu", "55.4"],
    ["LLM cross-modal attention instead of vision encoder", "57.4 (not built)"],
]
MEASURES = ("scale_p_max", "scale_entropy", "scale_self_certainty", "scale_gini")
WHERE_ABLATION = "paper ablation table (OpenVLA, LIBERO-Long)"


def ablation_tables(metrics: list[dict[str, Any]], config: ReachConfig) -> list[Table]:
    paper = Table(
        "Paper's ablation (OpenVLA, LIBERO-Long, SR %)", ["variant", "paper"], PAPER_ABLATION
    )
    return [*reach_tables(metrics, config), paper]


ABLATION_CLAIMS = (
    *REACH_GATES,
    Claim("A1", "SCALE's self-uncertainty > the best alternative measure (p_max, entropy, "
          "self-certainty, Gini) setting tau (paired episodes)", "scale_minus_best_measure_pt",
          ">", 0.0, "63.3 vs 53.8-57.8 (self-certainty 53.8, entropy 55.4, Gini 57.8)",
          WHERE_ABLATION, source="paper", over="items",
          control="the best alternative measure in place of self-uncertainty", control_value=0.0),
    Claim("A2", "Δu drives gamma better than the instantaneous u_{t-1}: SCALE - instantaneous > 0",
          "scale_minus_instantaneous_pt", ">", 0.0, "63.3 vs 55.4 (+7.9)", WHERE_ABLATION,
          source="paper", over="items", control="the instantaneous u_{t-1} in place of Δu",
          control_value=0.0),
    Claim("A3", "Both components beat greedy: SCALE - greedy > 0 (paired episodes)",
          "scale_minus_greedy_pt", ">", 0.0, "63.3 vs 52.7 (+10.6)", WHERE_ABLATION,
          source="paper", over="items", control=GREEDY, control_value=0.0),
)  # fmt: skip


@register(
    name="scale.ablations",
    title="Ablations: uncertainty measure and Δu vs u for the vision temperature",
    paper=PAPER,
    claims=ABLATION_CLAIMS,
    presets=ABLATION_PRESETS,
    plot=lambda metrics, config: {
        "ablations": sr_figure(metrics, config, "Ablations on AmbiguousReach2D")
    },
    tables=ablation_tables,
    seeds=1,  # quick: 1 seed, paired episodes; the full protocol is --seeds 5
    resources=Resources(cpus=1),  # a d = 48 model gains nothing from a second thread
    deterministic_metrics=("forward_pass_gap",),
)
def ablations(config: ReachConfig, ctx: RunContext) -> dict[str, Any]:
    out = run_reach(config, ctx)
    splits = config.splits
    out["scale_minus_best_measure_pt"] = paired_gap(out, "scale", MEASURES, splits)
    out["scale_minus_instantaneous_pt"] = paired_gap(out, "scale", ("scale_instantaneous",), splits)
    out["scale_minus_greedy_pt"] = paired_gap(out, "scale", ("greedy",), splits)
    return out
