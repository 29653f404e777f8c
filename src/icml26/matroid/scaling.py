"""Measuring how an algorithm's size-sensitive cost grows with ``n``, and fitting the exponent."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from icml26.core import (
    Progress,
    Seed,
    check_array,
    check_positive_int,
    numpy_generator,
    progress_reporter,
)
from icml26.matroid.oracle import MAX_GROUND_SET, CostCounter, IndependenceOracle, default_cost

__all__ = ["ScalingRecord", "fit_loglog_slope", "run_scaling_experiment"]

Instance = tuple[IndependenceOracle, np.ndarray]
# Instances per size that run_scaling_experiment accepts: far more than any fit needs.
MAX_REPEATS = 10**4
Algorithm = Callable[[IndependenceOracle, np.ndarray, np.random.Generator], Sequence[int]]


@dataclass(frozen=True)
class ScalingRecord:
    """One algorithm run on one instance: its charged cost, calls, largest query and output."""

    algorithm: str
    n: int
    repeat: int
    cost: float
    calls: int
    max_query: int
    wall_s: float
    basis: tuple[int, ...]


def fit_loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x``: the exponent ``a`` in ``y ≈ b x^a``.

    Raises
    ------
    TypeError
        If ``xs`` or ``ys`` is not numeric.
    ValueError
        If fewer than two points, lengths differ, a value is not finite and positive, or all
        ``xs`` are equal.

    Examples
    --------
    >>> round(fit_loglog_slope([1, 2, 4], [3, 12, 48]), 6)
    2.0
    """
    owner = "fit_loglog_slope"
    x = check_array("xs", xs, owner=owner, ndim=1, dtype=np.float64)
    y = check_array("ys", ys, owner=owner, ndim=1, dtype=np.float64)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(
            f"fit_loglog_slope: xs and ys must be 1-D of the same length >= 2; "
            f"got shapes {x.shape} and {y.shape}."
        )
    if not (np.all(x > 0) and np.all(y > 0)):
        raise ValueError("fit_loglog_slope: xs and ys must be positive.")
    log_x = np.log(x)
    if np.ptp(log_x) == 0:
        raise ValueError(f"{owner}: xs must hold at least two distinct values; got only {x[0]}.")
    slope, _ = np.polyfit(log_x, np.log(y), 1)
    return float(slope)


def run_scaling_experiment(
    make_instance: Callable[[int, np.random.Generator], Instance],
    ns: Sequence[int],
    algorithms: Mapping[str, Algorithm],
    *,
    repeats: int | Sequence[int] = 1,
    seed: Seed = None,
    cost_fn: Callable[[int], float] = default_cost,
    progress: Progress = None,
) -> list[ScalingRecord]:
    """Run every algorithm on the same random instances of every size and charge their queries.

    Parameters
    ----------
    make_instance
        ``make_instance(n, rng) -> (oracle, weights)``: a random instance of size about ``n``.
    ns
        Sizes to run, each at most :data:`~icml26.matroid.oracle.MAX_GROUND_SET`.
    algorithms
        Name to ``algorithm(oracle, weights, rng) -> basis``; each runs on a fresh
        :class:`CostCounter` around the instance.
    repeats
        Instances per size: one count for all sizes or one per size, at most ``MAX_REPEATS``.
    seed
        Randomness of the instances and the algorithms.
    cost_fn
        Cost of one query of a given size.
    progress
        ``True`` (a progress bar), a callable ``progress(done, total, {})`` called after all
        algorithms ran on an instance (``total = sum(repeats)``), or ``None``
        (``icml26.core.progress``).

    Returns
    -------
    list of ScalingRecord
        One record per (size, instance, algorithm).

    Raises
    ------
    TypeError
        If a callable argument is not callable, or ``ns``/``repeats`` is not a sequence of
        integers.
    ValueError
        If ``repeats`` does not match ``ns`` or a size or count is not a positive integer in range.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid, max_weight_basis
    >>> make = lambda n, rng: (UniformMatroid(n, n // 2), rng.random(n))
    >>> greedy = {"greedy": lambda oracle, w, rng: max_weight_basis(oracle, w)}
    >>> records = run_scaling_experiment(make, [8], greedy)
    >>> records[0].cost  # 1 + 2 + 3 + 4 + 4 * 5
    30
    """
    owner = "run_scaling_experiment"
    for name, fn in (("make_instance", make_instance), ("cost_fn", cost_fn)):
        if not callable(fn):
            raise TypeError(f"{owner}: {name} must be callable; got {type(fn).__name__}.")
    if not isinstance(algorithms, Mapping) or not all(
        isinstance(k, str) and callable(v) for k, v in algorithms.items()
    ):
        raise TypeError(
            f"{owner}: algorithms must map names (str) to callables; "
            f"got {type(algorithms).__name__}."
        )
    ns = _int_list("ns", ns, owner=owner)
    if isinstance(repeats, int):
        counts = [repeats] * len(ns)
    else:
        counts = _int_list("repeats", repeats, owner=owner)
    if len(counts) != len(ns):
        raise ValueError(
            f"run_scaling_experiment: repeats must be an int or one count per n; "
            f"got {len(counts)} counts for {len(ns)} sizes."
        )
    for n, count in zip(ns, counts, strict=True):
        check_positive_int("ns", n, owner=owner, maximum=MAX_GROUND_SET)
        check_positive_int("repeats", count, owner=owner, maximum=MAX_REPEATS)
    rng = numpy_generator(seed)
    records = []
    done = 0
    with progress_reporter(progress, sum(counts), "instances (all algorithms)") as report:
        for n, count in zip(ns, counts, strict=True):
            for repeat in range(count):
                instance_rng, *algorithm_rngs = rng.spawn(1 + len(algorithms))
                oracle, weights = make_instance(n, instance_rng)
                for (name, algorithm), algorithm_rng in zip(
                    algorithms.items(), algorithm_rngs, strict=True
                ):
                    counter = CostCounter(oracle, cost_fn)
                    start = time.perf_counter()
                    basis = tuple(int(e) for e in algorithm(counter, weights, algorithm_rng))
                    wall = time.perf_counter() - start
                    records.append(
                        ScalingRecord(
                            name,
                            oracle.n,
                            repeat,
                            counter.total_cost,
                            counter.calls,
                            counter.max_query,
                            wall,
                            basis,
                        )
                    )
                done += 1
                report(done)
    return records


def _int_list(name: str, values: object, *, owner: str) -> list:
    """``values`` as a list, if it is a sequence (of what the caller checks next)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(
            f"{owner}: {name} must be a sequence of integers; got {type(values).__name__}."
        )
    return list(values)
