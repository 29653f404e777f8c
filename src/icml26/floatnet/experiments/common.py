"""What the floatnet experiments share: the paper, resources, the case syntax and the per-seed
rows of the width tables.

Cases are written ``"p,emax,d"`` (``",nonneg"`` appended for the non-negative domain). Importing
this module stays light: the floatnet library is imported inside the functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icml26.core import Resources

if TYPE_CHECKING:
    from icml26.floatnet import FloatFormat

PAPER = (
    "Park, Park & Hwang, On Minimum Depth and Width of Floating-Point Neural Networks for "
    "Representing Floating-Point Functions, ICML 2026 (poster 65974; no arXiv id)"
)
RESOURCES = Resources(cpus=1)  # numpy on small arrays: one core per task


def parse_case(case: str) -> tuple[FloatFormat, int, bool]:
    """``"p,emax,d[,nonneg]"`` -> (F(p, emax), d, nonneg)."""
    from icml26.floatnet import FloatFormat

    p, emax, d, *rest = case.split(",")
    return FloatFormat(int(p), int(emax)), int(d), rest == ["nonneg"]


def per_seed_rows(metrics: list[dict[str, Any]], key: str) -> tuple[list[tuple[str, Any]], str]:
    """``(case, value)`` rows of ``metrics[i][key]``: one per case when every seed agrees, else
    one per case and seed (the case then reads ``case, seed i``); and a note saying which."""
    cases = metrics[0][key]
    if all(m[key] == cases for m in metrics):
        note = "1 seed" if len(metrics) == 1 else f"identical in all {len(metrics)} seeds"
        return list(cases.items()), note
    rows = [(f"{case}, seed {i}", m[key][case]) for case in cases for i, m in enumerate(metrics)]
    return rows, f"one row per seed ({len(metrics)} seeds differ)"
