"""What the CPO experiments share: the paper, the theory note and the table/figure helpers."""

from __future__ import annotations

import numpy as np

from icml26.core import Resources

PAPER = (
    "Yang, Zhang, Xue, Fang, Han, Guo, Conditional Equivalence of DPO and RLHF: Implicit "
    "Assumption, Failure Modes, and Provable Alignment, ICML 2026 (arXiv:2605.20834)"
)
THEORY = "qualitative (no numeric table retrievable)"
# tiny tensors: a second intra-op thread only adds contention (10x slower on the bandit)
RESOURCES = Resources(cpus=1)


def mean_sd(values: list[float]) -> str:
    """``"mean ± sd"`` over seeds (sd 0 for one seed), three decimals."""
    arr = np.asarray(values, dtype=float)
    return f"{arr.mean():.3f} ± {arr.std(ddof=1) if arr.size > 1 else 0.0:.3f}"


def bars_note(n_seeds: int) -> str:
    """What a bar with seed dots shows, for a figure title."""
    return "1 seed" if n_seeds == 1 else f"bars: mean, dots: {n_seeds} seeds"


def check_config(config: object, ints: dict, reals: dict, choices: dict | None = None) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    ``ints`` maps fields to ``(low, high)``; ``reals`` to ``(low, high)`` or ``(low, high,
    closed)`` (``check_in_interval``'s ``closed``); ``choices`` maps tuple fields to the values
    their entries may take. Field types are core's ``check_fields``.
    """
    from icml26.core import check_fields, check_in_interval, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        check_positive_int(name, getattr(config, name), owner=owner, minimum=low, maximum=high)
    for name, (low, high, *closed) in reals.items():
        check_in_interval(name, getattr(config, name), low=low, high=high,
                          closed=closed[0] if closed else "both", owner=owner)  # fmt: skip
    for name, allowed in (choices or {}).items():
        values = getattr(config, name)
        if len(set(values)) != len(values) or not set(values) <= set(allowed):
            raise ValueError(f"{owner}: {name} must be distinct values of {allowed}; got {values}.")
