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
