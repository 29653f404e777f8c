"""``matroid.partition_size`` (E3): first-fit (A3) vs the exact partition size (A4).

On random small matroids of five families (:func:`~icml26.matroid.random_small_matroid`): the
ratio first-fit / exact and first-fit's cost against n (n + k).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.matroid.experiments.common import PAPER, RESOURCES, check_config
from icml26.matroid.instances import MAX_SMALL_MATROID


@dataclass(frozen=True)
class PartitionConfig:
    """E3: first-fit (A3) vs exact (A4) partition size on random small matroids."""

    instances: int = 7  # per family, k and seed (3 seeds: 210 instances; before: 200 in one)
    n_max: int = 40
    ks: tuple[int, ...] = (2, 3)

    def __post_init__(self) -> None:
        # n is drawn in [4, n_max]; random_small_matroid takes n up to MAX_SMALL_MATROID
        check_config(
            self,
            {
                "instances": (1, 10**4),
                "n_max": (4, MAX_SMALL_MATROID),
                "ks": (1, MAX_SMALL_MATROID),
            },
        )


DEFAULT = PartitionConfig()
PRESETS = {
    "smoke": replace(DEFAULT, instances=2, n_max=16),  # seconds
    "quick": DEFAULT,
    "full": replace(DEFAULT, instances=20),
}
CLAIMS = (
    Claim(
        "E3a",
        "first-fit is a 2-approximation: min over instances of s / p_k ≥ 1/2 (first-fit is "
        "a maximal common independent set, so ≥ p_k / 2 by construction)",
        "min_ratio",
        ">=",
        0.5,
        "1/2 (paper: a constant-factor approximation at Õ(n²) cost)",
        "spec §2.3 A3",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "E3b",
        "first-fit cost ≤ n (n + k) on every instance",
        "max_cost_over_bound",
        "<=",
        1.0,
        "n (n + k) (paper: Õ(n²))",
        "spec §2.3 A3",
        source="spec",
        kind="sanity",
    ),
)


@register(
    name="matroid.partition_size",
    title="E3: first-fit partition size vs the exact matroid-partition algorithm",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    seeds=3,  # the minimum and maximum over each seed's 70 instances: three values each
    resources=RESOURCES,
    deterministic_metrics=("instances",),
)
def partition_size(config: PartitionConfig, ctx: RunContext) -> dict[str, Any]:
    """E3: ratio first-fit / exact and first-fit cost on random small matroids."""
    from icml26.matroid import (
        SMALL_FAMILIES,
        CostCounter,
        partition_size_exact,
        partition_size_first_fit,
        random_small_matroid,
    )

    rng = ctx.numpy_generator()
    ratios, cost_ratios = [], []
    total = len(SMALL_FAMILIES) * len(config.ks) * config.instances
    with ctx.progress(total, "E3 instances (first-fit + exact)") as bar:
        for family in SMALL_FAMILIES:
            for k in config.ks:
                for _ in range(config.instances):
                    n = int(rng.integers(4, config.n_max + 1))
                    counter = CostCounter(random_small_matroid(family, n, rng))
                    s, _ = partition_size_first_fit(counter, k)
                    cost_ratios.append(counter.total_cost / (n * (n + k)))
                    exact, _ = partition_size_exact(counter.base, k)
                    ratios.append(s / exact if exact else 1.0)
                    bar.advance()
    return {
        "min_ratio": float(min(ratios)),
        "mean_ratio": float(np.mean(ratios)),
        "max_cost_over_bound": float(max(cost_ratios)),
        "mean_cost_over_bound": float(np.mean(cost_ratios)),
        "instances": len(ratios),
    }
