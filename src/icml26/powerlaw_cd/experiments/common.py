"""What the powerlaw_cd reproductions share: the paper and where their figures come from."""

from __future__ import annotations

from typing import Any

PAPER = (
    "Tusoni et al., Robust Causal Discovery in Real-World Time Series with Power-Laws, "
    "ICML 2026 (arXiv:2507.12257)"
)
WHERE = "spec §5 (paper tables not seen; figures from the spec's calibration run)"
WHERE_ABSTRACT = (
    "abstract: 'consistently outperforms state-of-the-art alternatives on synthetic "
    "benchmarks' (no number; the tables were not seen)"
)


def check_config(
    config: Any,
    *,
    zero_ok: tuple[str, ...] = (),
    unit: tuple[str, ...] = (),
    positive: tuple[str, ...] = (),
    choices: dict[str, tuple[Any, ...]] | None = None,
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; every int is in ``[1, 10**8]`` (``[0, ...]`` for
    the fields in ``zero_ok``); every float and every number in a tuple is finite, in
    ``[0, 1]`` for the fields in ``unit`` and ``> 0`` for those in ``positive``; a tuple is
    non-empty (unless in ``zero_ok``); ``choices`` lists the values a field (or each entry of a
    tuple field) may take.
    """
    import math
    from dataclasses import fields

    from icml26.core import check_fields, check_in_interval, check_one_of, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for f in fields(config):
        value = getattr(config, f.name)
        items = value if isinstance(value, tuple) else (value,)
        if isinstance(value, tuple) and not value and f.name not in zero_ok:
            raise ValueError(f"{owner}: {f.name} must not be empty.")
        for v in items:
            if isinstance(v, bool) or not isinstance(v, int | float):
                continue
            if isinstance(v, int):
                low = 0 if f.name in zero_ok else 1
                check_positive_int(f.name, v, owner=owner, minimum=low, maximum=10**8)
            elif not math.isfinite(v):
                raise ValueError(f"{owner}: {f.name} must be finite; got {v!r}.")
            elif f.name in unit:
                check_in_interval(f.name, v, low=0.0, high=1.0, owner=owner)
            elif f.name in positive:
                check_in_interval(f.name, v, low=0.0, closed="neither", owner=owner)
    for name, allowed in (choices or {}).items():
        value = getattr(config, name)
        for v in value if isinstance(value, tuple) else (value,):
            check_one_of(name, v, allowed, owner=owner)
