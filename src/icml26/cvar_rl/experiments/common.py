"""Pieces every cvar_rl reproduction shares: the paper, the resources, the config check, seed
means for tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import Resources

# NumPy/SciPy only, single-threaded loops and small sparse products: one core per task.
RESOURCES = Resources(cpus=1)
PAPER = (
    "Muni, Taboga, Derman, Bacon & Delage, Reward Redistribution for CVaR MDPs using a Bellman "
    "Operator on L-infinity, ICML 2026 (arXiv:2602.03778)"
)

# Discount factors of the experiments: value iteration without a horizon needs gamma < 1 and
# the budget update c' = (c - r) / gamma (policies, Q-learning) needs gamma > 0.
GAMMA = (0.0, 1.0, "neither")
ALPHA = (0.0, 1.0, "right")  # CVaR levels, as exact_cvar and AugmentedSolution.cvar take them


def check_config(
    config: object,
    ints: dict[str, tuple[int, int]],
    reals: dict[str, tuple[float, float, str]],
    choices: dict[str, tuple[str, ...]] | None = None,
    may_be_empty: tuple[str, ...] = (),
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``. ``ints`` maps fields to ``(low, high)``, ``reals``
    to ``(low, high, closed)`` (``check_in_interval``'s ``closed``) and ``choices`` to the names
    allowed; a tuple field is checked entry by entry and must not be empty unless it is in
    ``may_be_empty``.
    """
    from icml26.core import check_fields, check_in_interval, check_one_of, check_positive_int

    owner = type(config).__name__
    check_fields(config)

    def entries(name: str) -> tuple:
        value = getattr(config, name)
        if not isinstance(value, tuple):
            return (value,)
        if not value and name not in may_be_empty:
            raise ValueError(f"{owner}: {name} must not be empty.")
        return value

    for name, (low, high) in ints.items():
        for value in entries(name):
            check_positive_int(name, value, owner=owner, minimum=low, maximum=high)
    for name, (low, high, closed) in reals.items():
        for value in entries(name):
            check_in_interval(name, value, low=low, high=high, closed=closed, owner=owner)
    for name, allowed in (choices or {}).items():
        for value in entries(name):
            check_one_of(name, value, allowed, owner=owner)


def seed_mean(metrics: list[dict[str, Any]], key: str) -> np.ndarray:
    """The seed mean of a metric (a number or a list per alpha)."""
    from icml26.core.plotting import stack

    return stack(metrics, key).mean(axis=0)


def over_seeds(metrics: list[dict[str, Any]]) -> str:
    """'1 seed' or 'mean over n seeds', for table titles."""
    return "1 seed" if len(metrics) == 1 else f"mean over {len(metrics)} seeds"
