"""``matroid.greedy_cost`` (E4): greedy's size-sensitive cost is Θ(n·r).

On U_{n/2,n} in id order (where the cost has a closed form) and on random graphs G(n_v, p)
(:func:`~icml26.matroid.gnp_graphic_instance`), with the fitted slope of log cost vs log(n·r).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, RunContext, check_in_interval, register
from icml26.matroid.experiments.common import PAPER, RESOURCES, check_config
from icml26.matroid.instances import MAX_GNP_VERTICES
from icml26.matroid.oracle import MAX_GROUND_SET

if TYPE_CHECKING:
    from icml26.matroid import IndependenceOracle


@dataclass(frozen=True)
class GreedyCostConfig:
    """E4: greedy's cost on U_{n/2,n} (in id order) and on random graphs G(n_v, p)."""

    uniform_ns: tuple[int, ...] = (256, 512, 1024, 2048, 4096)
    graph_vertices: tuple[int, ...] = (32, 64, 128, 256, 512)
    mean_degree: float = 8.0  # so n ≈ 4 n_v edges and r ≈ n_v - 1: n and r both grow

    def __post_init__(self) -> None:
        check_config(
            self,
            # U_{n/2,n}: rank >= 1, so the log of n r is defined
            {"uniform_ns": (2, MAX_GROUND_SET), "graph_vertices": (2, MAX_GNP_VERTICES)},
            slopes=("uniform_ns", "graph_vertices"),
        )
        # gnp_graphic_instance's range; 0 (no edges, rank 0) leaves no slope to fit
        high = min(self.graph_vertices) - 1
        check_in_interval(
            "mean_degree",
            self.mean_degree,
            low=0.0,
            high=high,
            closed="right",
            owner="GreedyCostConfig",
        )


DEFAULT = GreedyCostConfig()
PRESETS = {
    "smoke": replace(DEFAULT, uniform_ns=(64, 128, 256), graph_vertices=(16, 32, 64)),
    "quick": DEFAULT,
    "full": replace(DEFAULT, uniform_ns=(*DEFAULT.uniform_ns, 8192, 16384)),
}
CLAIMS = (
    Claim(
        "E4a",
        "greedy cost on U_{n/2,n} equals the closed form r(r+1)/2 + (n-r)(r+1)",
        "uniform_closed_form_error",
        "<=",
        0.0,
        "Σ_e (|B_e|+1)",
        "spec §2.3 A1",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "E4b",
        "uniform: log cost vs log(n·r) has slope 1 ± 0.05 (closed form, no randomness)",
        "uniform_slope_vs_nr",
        "within",
        1.0,
        "Θ(n·r)",
        "spec §5 E4",
        tolerance=0.05,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "E4c",
        "graphic G(n_v, p): log cost vs log(n·r) has slope 1 ± 0.1",
        "graphic_slope_vs_nr",
        "within",
        1.0,
        "Θ(n·r)",
        "spec §5 E4",
        tolerance=0.1,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "E4d",
        "greedy cost ≤ n (r + 1) on every instance",
        "max_cost_over_bound",
        "<=",
        1.0,
        "n (r + 1)",
        "spec §2.3 A1",
        source="spec",
        kind="sanity",
    ),
)


def e4_plot(metrics: list[dict], config: GreedyCostConfig) -> dict[str, Any]:
    """Greedy cost against n·r for both families: every seed's points and the seed mean.

    The random graphs' ``n`` and ``r`` differ between seeds, so the mean line runs through the
    seeds' geometric-mean ``n·r`` at each size, with the min–max band of the cost.
    """
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for family in ("uniform", "graphic"):
        nr = stack(metrics, f"{family}_n") * stack(metrics, f"{family}_r")  # (seeds, sizes)
        costs = stack(metrics, f"{family}_cost")
        slopes = stack(metrics, f"{family}_slope_vs_nr")
        line = mean_band(
            ax,
            np.exp(np.log(nr).mean(axis=0)),
            costs,
            marker="o",
            label=f"{family}: slope {slopes.mean():.3f}",
        )
        if len(metrics) > 1:
            ax.plot(nr.ravel(), costs.ravel(), ".", color=line.get_color(), alpha=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n · r")
    ax.set_ylabel("greedy cost Σ (|B_e| + 1)")
    ax.set_title(f"Greedy cost vs n·r ({seeds_note(len(metrics))})", fontsize=10)
    legend_outside(ax)
    fig.tight_layout()
    return {"greedy_cost_vs_nr": fig}


@register(
    name="matroid.greedy_cost",
    title="E4: greedy's size-sensitive cost is Θ(n·r)",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    plot=e4_plot,
    seeds=3,  # the random graphs differ per seed; U_{n/2,n} in id order does not
    resources=RESOURCES,
    deterministic_metrics=("uniform_*",),
)
def greedy_cost(config: GreedyCostConfig, ctx: RunContext) -> dict[str, Any]:
    """E4: greedy cost on uniform and random graphic matroids."""
    from icml26.matroid import (
        CostCounter,
        UniformMatroid,
        fit_loglog_slope,
        gnp_graphic_instance,
        max_weight_basis,
    )

    rng = ctx.numpy_generator()
    out: dict[str, Any] = {}
    bound_ratios, errors = [], []
    total = len(config.uniform_ns) + len(config.graph_vertices)
    with ctx.progress(total, "E4 instances (greedy)") as bar:
        for family in ("uniform", "graphic"):
            ns, rs, costs = [], [], []
            sizes = config.uniform_ns if family == "uniform" else config.graph_vertices
            for size in sizes:
                if family == "uniform":
                    matroid: IndependenceOracle = UniformMatroid(size, size // 2)
                    weights = None
                else:
                    matroid, weights = gnp_graphic_instance(
                        size, seed=rng, mean_degree=config.mean_degree
                    )
                counter = CostCounter(matroid)
                r = len(max_weight_basis(counter, weights))
                n = matroid.n
                ns.append(n)
                rs.append(r)
                costs.append(counter.total_cost)
                bound_ratios.append(counter.total_cost / (n * (r + 1)))
                if family == "uniform":
                    closed_form = r * (r + 1) // 2 + (n - r) * (r + 1)
                    errors.append(abs(counter.total_cost - closed_form))
                bar.advance()
            out[f"{family}_n"], out[f"{family}_r"], out[f"{family}_cost"] = ns, rs, costs
            nr = [n * r for n, r in zip(ns, rs, strict=True)]
            out[f"{family}_slope_vs_nr"] = fit_loglog_slope(nr, costs)
    out["uniform_closed_form_error"] = float(max(errors))
    out["max_cost_over_bound"] = float(max(bound_ratios))
    return out
