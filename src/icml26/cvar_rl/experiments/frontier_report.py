"""The report hooks of ``cvar_rl.frontier``: the frontier figure and its tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import Table
from icml26.cvar_rl.experiments.common import over_seeds, seed_mean


def frontier_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    """MC mean against MC CVaR_alpha_min per model: the seed-mean curve, every seed's thin."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for label in metrics[0]["curves"]:
        tails = np.array([m["curves"][label]["tail"] for m in metrics], dtype=float)
        means = np.array([m["curves"][label]["mean"] for m in metrics], dtype=float)
        (line,) = ax.plot(tails.mean(axis=0), means.mean(axis=0), "o-", label=label)
        if len(metrics) > 1:
            for tail, mean in zip(tails, means, strict=True):
                ax.plot(tail, mean, ".-", color=line.get_color(), alpha=0.3, lw=0.8)
    ax.set_xlabel(f"MC CVaR_{min(config.alphas)} of the return (safety)")
    ax.set_ylabel("MC mean return (performance)")
    n = len(metrics)
    ax.set_title(
        "Policies for alpha = "
        + ", ".join(f"{a:g}" for a in config.alphas)
        + (f" (mean of {n} seeds bold, each seed thin)" if n > 1 else " (1 seed)"),
        fontsize=9,
    )
    legend_outside(ax)
    fig.tight_layout()
    return {"frontier": fig}


def frontier_tables(metrics: list[dict[str, Any]], config: Any) -> list[Table]:
    curves = {
        label: {
            k: seed_mean([m["curves"][label] for m in metrics], k) for k in ("pred", "mean", "tail")
        }
        for label in metrics[0]["curves"]
    }
    rows = [
        [
            label,
            *(
                f"{p:.2f} / {x:.2f} / {t:.2f}"
                for p, x, t in zip(c["pred"], c["mean"], c["tail"], strict=True)
            ),
        ]
        for label, c in curves.items()
    ]
    cvar_by_K, ours_mc, chow_mc = (
        seed_mean(metrics, k) for k in ("cvar_by_K", "ours_mc", "chow_mc")
    )
    return [
        Table(
            f"Frontier: predicted CVaR*_alpha / MC mean / MC CVaR_alpha_min per alpha "
            f"({over_seeds(metrics)})",
            ["model", *(f"alpha={a:g}" for a in config.alphas)],
            rows,
        ),
        Table(
            "CVaR* by grid size K (CliffWalking, slip 0.1) and Chow-VI policy's MC CVaR_alpha "
            f"({over_seeds(metrics)})",
            ["alpha", *(f"K={k}" for k in config.Ks), "ours MC", "Chow MC"],
            [
                [a, *(f"{v:.3f}" for v in by_k), f"{o:.2f}", f"{ch:.2f}"]
                for a, by_k, o, ch in zip(config.alphas, cvar_by_K.T, ours_mc, chow_mc, strict=True)
            ],
        ),
    ]
