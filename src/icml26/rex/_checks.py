"""Boundary checks shared by the rex modules: schedules, models, times, grids and states.

Every message names the parameter, its owner, what is allowed and what was received.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icml26.core import check_in_interval, check_tensor

if TYPE_CHECKING:
    import torch

    from icml26.rex.schedules import Schedule

MAX_POINTS = 10_000_000  # largest number of points a sampler or data set draws at once
MAX_GRID = 100_000  # longest time grid accepted


def check_schedule(name: str, schedule: Any, *, owner: str) -> Schedule:
    """``schedule`` if it is a :class:`~icml26.rex.schedules.Schedule`, else ``TypeError``."""
    from icml26.rex.schedules import Schedule

    if not isinstance(schedule, Schedule):
        raise TypeError(
            f"{owner}: {name} must be a Schedule (VPSchedule, FlowMatchingSchedule, "
            f"CustomSchedule); got {type(schedule).__name__}."
        )
    return schedule


def check_callable(name: str, fn: Any, *, owner: str) -> Any:
    """``fn`` if it is callable, else ``TypeError``."""
    if not callable(fn):
        raise TypeError(f"{owner}: {name} must be callable; got {type(fn).__name__}.")
    return fn


def check_time(schedule: Schedule, name: str, t: Any, *, owner: str) -> float:
    """``t`` as a float where the schedule has alpha_t > 0 and sigma_t > 0, both finite."""
    t = check_in_interval(name, t, owner=owner)
    if not math.isfinite(t):
        raise ValueError(f"{owner}: {name} must be a finite time; got {t!r}.")
    try:
        a, s = schedule.alpha(t), schedule.sigma(t)
    except ValueError as err:
        raise ValueError(f"{owner}: {name} is outside the schedule's time range: {err}") from None
    if not (math.isfinite(a) and math.isfinite(s) and a > 0 and s > 0):
        raise ValueError(
            f"{owner}: {name} must be a time with alpha > 0 and sigma > 0; got {name}={t!r} "
            f"(alpha={a!r}, sigma={s!r})."
        )
    return t


def check_grid(
    schedule: Schedule, name: str, ts: Any, *, owner: str, minimum: int = 2
) -> list[float]:
    """``ts`` as a list of at least ``minimum`` valid, strictly monotone times."""
    if hasattr(ts, "tolist"):
        ts = ts.tolist()
    if isinstance(ts, str | bytes) or not isinstance(ts, Sequence):
        raise TypeError(f"{owner}: {name} must be a sequence of times; got {type(ts).__name__}.")
    if not minimum <= len(ts) <= MAX_GRID:
        raise ValueError(
            f"{owner}: {name} must hold between {minimum} and {MAX_GRID} times; got {len(ts)}."
        )
    for t in ts:
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise TypeError(f"{owner}: {name} must hold real times; got {t!r}.")
    times = [check_time(schedule, name, t, owner=owner) for t in ts]
    steps = [b - a for a, b in itertools.pairwise(times)]
    if not (all(h > 0 for h in steps) or all(h < 0 for h in steps)):
        raise ValueError(f"{owner}: {name} must be strictly monotone; got {times[:4]}...")
    return times


def check_state(name: str, x: Any, *, owner: str) -> torch.Tensor:
    """A floating tensor with a leading batch dimension."""
    check_tensor(name, x, owner=owner)
    if x.dim() < 1:
        raise ValueError(f"{owner}: {name} must have a leading batch dimension; got a 0-d tensor.")
    return x
