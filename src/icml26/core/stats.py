"""Aggregation of a metric: over seeds (mean and a 95% t-interval), and over paired items
(a hierarchical bootstrap: seeds, then items within each seed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Aggregate", "aggregate", "bootstrap_mean", "paired_bootstrap"]

MAX_BOOTSTRAP = 100_000


@dataclass(frozen=True)
class Aggregate:
    """Summary of one metric over ``n`` seeds.

    ``ci_low``/``ci_high`` bound the 95% Student-t confidence interval of the mean. With a
    single seed, or when a value is infinite, no interval can be estimated and the bounds are
    the smallest and largest observed values.
    """

    mean: float
    std: float
    ci_low: float
    ci_high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the width of the confidence interval."""
        return (self.ci_high - self.ci_low) / 2


def aggregate(values: Sequence[float], confidence: float = 0.95) -> Aggregate:
    """Aggregate per-seed values of one metric.

    Examples
    --------
    >>> a = aggregate([1.0, 2.0, 3.0])
    >>> round(a.mean, 6), round(a.ci_low, 3), round(a.ci_high, 3)
    (2.0, -0.484, 4.484)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"aggregate needs a non-empty 1-D sequence; got shape {x.shape}.")
    n = int(x.size)
    mean = float(x.mean())
    if n == 1 or not np.all(np.isfinite(x)):
        std = float(x.std(ddof=1)) if n > 1 and np.all(np.isfinite(x)) else math.nan
        return Aggregate(mean, std, float(x.min()), float(x.max()), n)
    std = float(x.std(ddof=1))
    from scipy import stats  # imported here: scipy is slow to import and listing needs none

    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n)
    return Aggregate(mean, std, mean - half, mean + half, n)


def bootstrap_mean(
    groups: Sequence[Sequence[float]],
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Aggregate:
    """Mean over groups of the per-group item means, with a hierarchical percentile bootstrap.

    ``groups`` holds one list of per-item values per seed (e.g. per-table paired differences).
    Each bootstrap draw resamples the seeds with replacement, then the items within each drawn
    seed; with one seed only the items are resampled. ``n`` of the result counts the items.

    Examples
    --------
    >>> a = bootstrap_mean([[0.1, 0.2, 0.3, 0.2], [0.2, 0.25, 0.15]], seed=0)
    >>> round(a.mean, 3), a.ci_low > 0, a.n
    (0.2, True, 7)
    """
    arrays = [np.asarray(g, dtype=float) for g in groups]
    if not arrays or any(a.ndim != 1 or a.size == 0 for a in arrays):
        raise ValueError("bootstrap_mean needs non-empty 1-D groups of item values.")
    if not 0 < confidence < 1:
        raise ValueError(f"bootstrap_mean: confidence must be in (0, 1); got {confidence}.")
    if not 1 <= n_boot <= MAX_BOOTSTRAP:
        raise ValueError(f"bootstrap_mean: n_boot must be in [1, {MAX_BOOTSTRAP}]; got {n_boot}.")
    n = sum(a.size for a in arrays)
    mean = float(np.mean([a.mean() for a in arrays]))
    if not all(np.all(np.isfinite(a)) for a in arrays):
        return Aggregate(mean, math.nan, mean, mean, n)
    rng = np.random.default_rng(seed)
    k = len(arrays)
    picks = rng.integers(0, k, size=(n_boot, k)) if k > 1 else np.zeros((n_boot, 1), dtype=int)
    slot_means = np.empty((n_boot, k))
    for slot in range(k):  # each drawn seed gets its own resample of its items
        for g, a in enumerate(arrays):
            rows = np.nonzero(picks[:, slot] == g)[0]
            idx = rng.integers(0, a.size, size=(rows.size, a.size))
            slot_means[rows, slot] = a[idx].mean(axis=1)
    stats_ = slot_means.mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(stats_, [tail, 1 - tail])
    spread = float(stats_.std(ddof=1)) if n_boot > 1 else math.nan
    return Aggregate(mean, spread, float(low), float(high), n)


def paired_bootstrap(
    method: Sequence[float], control: Sequence[float], confidence: float = 0.95, seed: int = 0
) -> Aggregate:
    """Mean paired difference ``method - control`` over items, with a bootstrap interval.

    Examples
    --------
    >>> a = paired_bootstrap([0.8, 0.7, 0.9, 0.75], [0.7, 0.65, 0.8, 0.7])
    >>> round(a.mean, 4), a.ci_low > 0
    (0.075, True)
    """
    m, c = np.asarray(method, dtype=float), np.asarray(control, dtype=float)
    if m.shape != c.shape or m.ndim != 1:
        raise ValueError(
            f"paired_bootstrap: method and control must be 1-D of one length; got {m.shape} "
            f"and {c.shape}."
        )
    return bootstrap_mean([m - c], confidence=confidence, seed=seed)
