"""Aggregation of a metric over seeds: mean, sample standard deviation and a 95% t-interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Aggregate", "aggregate"]


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

    Example
    -------
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
