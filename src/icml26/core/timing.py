"""Wall-clock timing that a shared, loaded machine distorts as little as possible."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from icml26.core.validation import check_positive_int

__all__ = ["interleaved_median_seconds"]

MAX_ROUNDS = 10**4


def interleaved_median_seconds(
    fns: Mapping[str, Callable[[], Any]],
    repeats: int,
    warmup: int = 1,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median wall time (seconds) of each callable, timed round-robin.

    ``warmup`` untimed rounds, then ``repeats`` rounds in which every callable runs once, in the
    order given: a load spike slows every callable of its round alike instead of one callable's
    whole block, so ratios of the medians stay meaningful on a shared machine. ``clock`` reads
    seconds (a fake clock makes the result deterministic in tests).

    Examples
    --------
    >>> t = interleaved_median_seconds({"a": lambda: sum(range(10))}, repeats=3)
    >>> t["a"] >= 0
    True
    """
    owner = "interleaved_median_seconds"
    if not isinstance(fns, Mapping) or not fns:
        raise TypeError(f"{owner}: fns must be a non-empty mapping of name -> callable.")
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"{owner}: fns[{name!r}] must be callable; got {type(fn).__name__}.")
    repeats = check_positive_int("repeats", repeats, maximum=MAX_ROUNDS, owner=owner)
    warmup = check_positive_int("warmup", warmup, minimum=0, maximum=MAX_ROUNDS, owner=owner)
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    seconds: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = clock()
            fn()
            seconds[name].append(clock() - start)
    return {name: statistics.median(ts) for name, ts in seconds.items()}
