"""Figures that show every seed: a mean with its spread, and legends that never cover data.

A report figure is read beside a verdict that averages all seeds, so it must show all seeds too.
``plot`` hooks receive one metrics dict per seed; these helpers stack them and draw the mean with
the min–max band over seeds (or the seeds' own points on bar charts), and place the legend
outside the axes.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> metrics = [{"loss": [3.0, 2.0, 1.0]}, {"loss": [3.2, 2.2, 1.4]}]
>>> fig, ax = plt.subplots()
>>> line = mean_band(ax, [1, 2, 3], stack(metrics, "loss"), label="ours")
>>> line.get_ydata().round(2).tolist()
[3.1, 2.1, 1.2]
>>> legend_outside(ax) is not None
True
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["bars_with_seeds", "legend_outside", "mean_band", "seeds_note", "stack"]


def stack(metrics: Sequence[Mapping[str, Any]], key: str) -> np.ndarray:
    """Return ``metrics[i][key]`` for every seed as one float array of shape ``(n_seeds, ...)``."""
    if not metrics:
        raise ValueError("metrics is empty: a plot needs at least one seed")
    missing = [i for i, m in enumerate(metrics) if key not in m]
    if missing:
        raise KeyError(f"metric {key!r} is missing from seed record(s) {missing}")
    return np.asarray([np.asarray(m[key], dtype=float) for m in metrics], dtype=float)


def seeds_note(n_seeds: int) -> str:
    """What a band means, for a title or caption: ``"mean, band: min–max of 3 seeds"``."""
    if n_seeds <= 1:
        return "1 seed"
    return f"mean, band: min–max of {n_seeds} seeds"


def mean_band(ax: Any, x: Any, values: np.ndarray, *, label: str | None = None, **line_kw: Any):
    """Draw the seed mean of ``values`` (shape ``(n_seeds, len(x))``) and its min–max band.

    NaN entries (a seed that did not measure a point) are left out of that point's mean and band.
    Returns the mean's ``Line2D``; ``line_kw`` go to ``ax.plot``.
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    x = np.asarray(x, dtype=float)
    if values.shape[-1] != x.shape[0]:
        raise ValueError(f"values has {values.shape[-1]} points per seed but x has {x.shape[0]}")
    with _all_nan_columns_allowed():
        mean = np.nanmean(values, axis=0)
        low, high = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    (line,) = ax.plot(x, mean, label=label, **line_kw)
    if values.shape[0] > 1:
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def bars_with_seeds(
    ax: Any, labels: Sequence[str], values: np.ndarray, *, offset: float = 0.0,
    width: float = 0.8, label: str | None = None, **bar_kw: Any,
):  # fmt: skip
    """Bars at the seed mean of ``values`` (shape ``(n_seeds, len(labels))``), each seed a dot.

    ``offset``/``width`` place grouped bars; returns the bar container.
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    if values.shape[-1] != len(labels):
        raise ValueError(f"values has {values.shape[-1]} columns for {len(labels)} labels")
    positions = np.arange(len(labels)) + offset
    with _all_nan_columns_allowed():
        mean = np.nanmean(values, axis=0)
    bars = ax.bar(positions, mean, width=width, label=label, **bar_kw)
    if values.shape[0] > 1:
        for seed_values in values:
            ax.plot(positions, seed_values, "k.", markersize=4, zorder=3)
    if offset == 0:
        ax.set_xticks(positions, labels)
    return bars


def legend_outside(target: Any, **legend_kw: Any):
    """Put the legend of an Axes to its right, outside the data area (or under a Figure's axes).

    Returns the legend, or None when nothing is labelled. Call ``fig.tight_layout()`` (or use a
    constrained layout) afterwards so the legend is kept inside the saved image.
    """
    if hasattr(target, "get_legend_handles_labels") and hasattr(target, "transAxes"):
        handles, labels = target.get_legend_handles_labels()
        if not handles:
            return None
        options = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
        return target.legend(handles, labels, **{"fontsize": 8, **options, **legend_kw})
    handles, labels = [], []
    for ax in target.axes:
        for handle, text in zip(*ax.get_legend_handles_labels(), strict=True):
            if text not in labels:
                handles.append(handle)
                labels.append(text)
    if not handles:
        return None
    options = {"loc": "outside lower center", "ncols": min(len(labels), 4)}
    return target.legend(handles, labels, **{"fontsize": 8, **options, **legend_kw})


@contextmanager
def _all_nan_columns_allowed() -> Iterator[None]:
    """A point no seed measured is NaN in the plot, without numpy's 'All-NaN slice' warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
