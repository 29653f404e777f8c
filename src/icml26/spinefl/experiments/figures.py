"""The figures of the MLP comparison grids: accuracy curves, per-level bars, paired diffs."""

from __future__ import annotations

from typing import Any

import numpy as np


def comparison_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note

    m = metrics[0]
    n = len(metrics)
    inner = f"{config.n_seeds} seed{'s' if config.n_seeds > 1 else ''} per record; {seeds_note(n)}"
    figures = {}
    for key, curves in m["curves"].items():
        if config.mode == "train":  # shipped stand-ins hold the final model only: no curve
            fig, ax = plt.subplots(figsize=(6.5, 3.8))
            for method, curve in curves.items():
                rounds = np.arange(1, len(curve) + 1) * config.eval_every
                values = np.asarray([r["curves"][key][method] for r in metrics], dtype=float)
                mean_band(ax, rounds, values, label=method, lw=2 if method == "SpineFL" else 1)
            ax.set_xlabel("round")
            ax.set_ylabel("global test accuracy")
            ax.set_title(f"{key}: global accuracy ({inner})", fontsize=8)
            legend_outside(ax)
            fig.tight_layout()
            figures[f"accuracy_{key}"] = fig
        fig, ax = plt.subplots(figsize=(6.5, 3.5))
        methods = list(m["levels"][key])
        levels = list(m["levels"][key][methods[0]])
        width = 0.8 / max(len(levels), 1)
        for i, lvl in enumerate(levels):
            values = np.asarray(
                [[r["levels"][key][meth].get(lvl, np.nan) for meth in methods] for r in metrics],
                dtype=float,
            )
            bars_with_seeds(ax, methods, values, offset=i * width, width=width, label=f"r={lvl}")
        ax.set_xticks(np.arange(len(methods)) + 0.4 - width / 2, methods, rotation=45, fontsize=7)
        ax.set_ylabel("deployed sub-model accuracy")
        ax.set_title(f"{key}: accuracy of every width level ({inner})", fontsize=8)
        legend_outside(ax)
        fig.tight_layout()
        figures[f"levels_{key}"] = fig
        if key in m["paired"]:
            fig, ax = plt.subplots(figsize=(5.5, 3.2))
            names = list(m["paired"][key])
            for i, other in enumerate(names):
                diffs = [d for r in metrics for d in r["paired"].get(key, {}).get(other, [])]
                ax.scatter(np.full(len(diffs), i), 100 * np.asarray(diffs), s=14)
            ax.axhline(0.0, color="grey", lw=0.8)
            ax.set_xticks(range(len(names)), names, rotation=45)
            ax.set_ylabel("SpineFL − method (pt)")
            ax.set_title(f"{key}: paired differences, every seed of {n} record(s)", fontsize=8)
            fig.tight_layout()
            figures[f"paired_{key}"] = fig
    return figures
