"""Q3: the PLD of the Gaussian member (T = 5, s = 2) composed n times against the exact δ.

n Gaussian releases with std s are one release with std s/√n, so the exact δ is closed-form.
Both checks compare the PLD with that exact value (pessimistic, and within 3 %): ``sanity``
checks of the PLD construction and of dp_accounting's composition, not reproductions.
Deterministic (declared): one seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, register
from icml26.sgg_dp.experiments.common import INF, MAX_T, PAPER, RESOURCES, check_config


@dataclass(frozen=True)
class CompositionConfig:
    T: int = 5
    std: float = 2.0
    eps: float = 1.0
    counts: tuple[int, ...] = (1, 4, 16)
    M: int = 65536  # direction-table cells: the snapping cost is far below the loss grid step
    n_panels: int = 40
    value_discretization_interval: float = 1e-3

    def __post_init__(self) -> None:
        check_config(
            self,
            {"T": (1, MAX_T), "counts": (1, 10**4), "M": (2, 2**24), "n_panels": (1, 10**4)},
            {"std": (0.0, INF, "neither"), "eps": (0.0, INF),
             "value_discretization_interval": (0.0, 1.0, "right")},
        )  # fmt: skip


DEFAULT = CompositionConfig()
PRESETS = {
    "smoke": replace(DEFAULT, counts=(1, 4), M=4096, n_panels=10),  # seconds
    "quick": DEFAULT,
    "full": replace(DEFAULT, counts=(1, 2, 4, 8, 16, 32, 64)),
}


@register(
    name="sgg_dp.composition",
    title="Q3: PLD of the Gaussian member (T = 5, s = 2) after n compositions vs exact δ",
    paper=PAPER,
    claims=(
        Claim(
            "Q3a",
            "PLD δ is pessimistic: δ_PLD / δ_exact >= 1 for every n",
            "min_ratio",
            ">=",
            1.0,
            "δ_PLD ≥ δ_exact (pessimistic rounding)",
            "spec §5 quick Q3",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "Q3b",
            "PLD δ is within 3% of exact: δ_PLD / δ_exact <= 1.03",
            "max_ratio",
            "<=",
            1.03,
            "spec prototype 1.017, 1.009, 1.009",
            "spec §2.5, §5 quick Q3",
            source="spec",
            kind="sanity",
        ),
    ),
    presets=PRESETS,
    resources=RESOURCES,
    seeds=1,  # deterministic
    deterministic_metrics=("min_ratio", "max_ratio", "ratios"),
)
def composition(config: CompositionConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import analytic_gaussian_delta, gaussian_member

    mech = gaussian_member(config.T, std=config.std)
    pld = mech.to_pld(config.value_discretization_interval, config.M, config.n_panels)
    ratios = []
    with ctx.progress(len(config.counts), "composing the PLD") as bar:
        for n in config.counts:
            # n Gaussian releases with std s are one release with std s/√n.
            exact = analytic_gaussian_delta(config.eps, config.std / math.sqrt(n))
            ratios.append(pld.self_compose(n).get_delta_for_epsilon(config.eps) / exact)
            bar.advance()
    return {"min_ratio": min(ratios), "max_ratio": max(ratios), "ratios": ratios}
