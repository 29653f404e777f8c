"""What the floatnet experiments share: the paper, resources, the case syntax and the per-seed
rows of the width tables.

Cases are written ``"p,emax,d"`` (``",nonneg"`` appended for the non-negative domain). Importing
this module stays light: the floatnet library is imported inside the functions.
"""

from __future__ import annotations

import math
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


def check_config(
    config: object,
    ints: dict[str, tuple[int, int]],
    reals: dict[str, tuple[float, float]] | None = None,
    cases: tuple[str, ...] = (),
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; ``ints`` maps fields to ``(low, high)``, ``reals``
    to closed ``(low, high)``; each field in ``cases`` is a non-empty tuple of
    :func:`parse_case` strings (or one such string) whose grid ``FloatFormat.grid`` accepts.
    """
    from icml26.core import check_fields, check_in_interval, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        check_positive_int(name, getattr(config, name), owner=owner, minimum=low, maximum=high)
    for name, (low, high) in (reals or {}).items():
        check_in_interval(name, getattr(config, name), low=low, high=high, owner=owner)
    for name in cases:
        value = getattr(config, name)
        if not value:
            raise ValueError(f"{owner}: {name} must hold at least one case; got ().")
        for case in (value,) if isinstance(value, str) else value:
            check_case(name, case, owner)


def check_case(name: str, case: str, owner: str) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``case`` is ``"p,emax,d[,nonneg]"`` with a
    valid ``FloatFormat(p, emax)`` and a grid of at most 2^26 points (``FloatFormat.grid``)."""
    parts = case.split(",")
    form = f'{owner}: {name} holds "p,emax,d" or "p,emax,d,nonneg" cases'
    if len(parts) not in (3, 4) or parts[3:] not in ([], ["nonneg"]):
        raise ValueError(f"{form}; got {case!r}.")
    try:
        fmt, d, nonneg = parse_case(case)
    except ValueError as error:  # a non-integer part, or FloatFormat's own range check
        raise ValueError(f"{form}; got {case!r} ({error}).") from None
    count = (fmt.n_values + 1) // 2 if nonneg else fmt.n_values
    if d < 1 or d * math.log2(count) > 26:
        raise ValueError(f"{form} with d >= 1 and |F|^d <= 2^26 points; got {case!r}.")


def check_depth3_cases(name: str, cases: tuple[str, ...], owner: str) -> None:
    """Raise ``ValueError`` naming ``name`` if a case breaks ``build_depth3``'s precondition
    2 emax >= p + 3."""
    for case in cases:
        fmt, _, _ = parse_case(case)
        if 2 * fmt.emax < fmt.p + 3:
            raise ValueError(f"{owner}: {name} cases need 2 emax >= p + 3 (C3); got {case!r}.")


def per_seed_rows(metrics: list[dict[str, Any]], key: str) -> tuple[list[tuple[str, Any]], str]:
    """``(case, value)`` rows of ``metrics[i][key]``: one per case when every seed agrees, else
    one per case and seed (the case then reads ``case, seed i``); and a note saying which."""
    cases = metrics[0][key]
    if all(m[key] == cases for m in metrics):
        note = "1 seed" if len(metrics) == 1 else f"identical in all {len(metrics)} seeds"
        return list(cases.items()), note
    rows = [(f"{case}, seed {i}", m[key][case]) for case in cases for i, m in enumerate(metrics)]
    return rows, f"one row per seed ({len(metrics)} seeds differ)"
