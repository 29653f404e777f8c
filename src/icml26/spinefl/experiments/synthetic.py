"""spinefl.synthetic (quick): SpineFL against the width-heterogeneous baselines on the
synthetic task.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from icml26.core import Claim, RunContext, Table, register
from icml26.spinefl.experiments.common import (
    PAPER,
    RESOURCES,
    CompareConfig,
    best_baseline,
    comparison_plot,
    comparison_tables,
    run_grid,
    summarize_grid,
)

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
    return comparison_tables(metrics, config, "Synthetic task")


@register(
    name="spinefl.synthetic",
    title="Synthetic task, alpha = 0.1: SpineFL vs HeteroFL / FedRolex / FedDropout",
    paper=PAPER,
    claims=SYNTHETIC_CLAIMS,
    presets=SYNTHETIC_PRESETS,
    plot=comparison_plot,
    tables=synthetic_tables,
    seeds=1,  # the config's seeds run inside the task (paired comparison)
    resources=RESOURCES,
)
def synthetic(config: CompareConfig, ctx: RunContext) -> dict[str, Any]:
    rows = run_grid(config, ctx)
    summary = summarize_grid(rows, config)
    key = f"{config.tasks[0]}@{config.alphas[0]:g}"
    scores = summary["scores"][key]
    return {
        "min_margin_over_chance": min(scores.values()) - 0.1,
        "spine_minus_best_baseline": scores["SpineFL"] - best_baseline(scores),
        **{f"acc_{m}": s for m, s in scores.items()},
        **summary,
    }
