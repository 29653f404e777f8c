"""Pieces every cvar_rl reproduction shares: the paper, the resources, seed means for tables."""

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


def seed_mean(metrics: list[dict[str, Any]], key: str) -> np.ndarray:
    """The seed mean of a metric (a number or a list per alpha)."""
    from icml26.core.plotting import stack

    return stack(metrics, key).mean(axis=0)


def over_seeds(metrics: list[dict[str, Any]]) -> str:
    """'1 seed' or 'mean over n seeds', for table titles."""
    return "1 seed" if len(metrics) == 1 else f"mean over {len(metrics)} seeds"
