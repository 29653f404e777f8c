"""``matroid.partition_size`` (E3): first-fit (A3) vs the exact partition size (A4).

On random small matroids of five families (:func:`~icml26.matroid.random_small_matroid`): the
ratio first-fit / exact and first-fit's cost against n (n + k).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.matroid.experiments.common import PAPER, RESOURCES


@dataclass(frozen=True)
class PartitionConfig:
    """E3: first-fit (A3) vs exact (A4) partition size on random small matroids."""

    instances: int = 20  # per family and k
    n_max: int = 40
    ks: tuple[int, ...] = (2, 3)


DEFAULT = PartitionConfig()
PRESETS = {
    "smoke": replace(DEFAULT, instances=2, n_max=16),  # seconds
    "quick": DEFAULT,
    "full": replace(DEFAULT, instances=60),
}
CLAIMS = (
    Claim(
        "E3a",
        "first-fit is a 2-approximation: min over instances of s / p_k ≥ 1/2",
        "min_ratio",
        ">=",
        0.5,
        "constant-factor approximation at Õ(n²) cost",
        "abstract; spec §2.3 A3",
        source="paper",
        kind="claim",
    ),
    Claim(
        "E3b",
        "first-fit cost ≤ n (n + k) on every instance",
        "max_cost_over_bound",
        "<=",
        1.0,
        "O(n²)",
        "abstract; spec §2.3 A3",
        source="paper",
        kind="sanity",
    ),
)


@register(
    name="matroid.partition_size",
    title="E3: first-fit partition size vs the exact matroid-partition algorithm",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    seeds=1,
    resources=RESOURCES,
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
