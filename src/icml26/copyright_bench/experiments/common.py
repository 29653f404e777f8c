"""Pieces the Copyright-Bench reproductions share: the paper, the factor levels, the
HeuristicAgent's coefficients read from a config."""

from __future__ import annotations

from typing import Any

PAPER = (
    "Copyright-Bench: Agentic Evaluation of Copyright Law Compliance, ICML 2026 (poster 66009; "
    "arXiv id not found)"
)
INTENTS = ("neutral", "style_preference", "explicit_request", "compliance_reminder")
PRESSURES = ("none", "moderate", "high")
# The HeuristicAgent's intercept and effects (spec §5.1), fields of the configs that use it.
HEURISTIC_KEYS = (
    "intercept",
    "style_preference",
    "explicit_request",
    "compliance_reminder",
    "moderate",
    "high",
)

# the range a config may set them in (the logit scale: beyond ±20 a rate is 0 or 1)
HEURISTIC_RANGES = {k: (-20.0, 20.0) for k in HEURISTIC_KEYS}


def heuristic_coefs(config: Any) -> dict[str, float]:
    """The HeuristicAgent coefficients of a config (the fields named in ``HEURISTIC_KEYS``)."""
    return {k: float(getattr(config, k)) for k in HEURISTIC_KEYS}


def check_config(
    config: Any,
    ints: dict[str, tuple[int, int]],
    reals: dict[str, tuple[float, float]] | None = None,
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40): ``ValueError`` or
    ``TypeError`` naming the field and its allowed range, before any task runs.

    Checks the field types (core's ``check_fields``), the integer and real ranges given, and
    that ``intents`` / ``pressures``, where present, are non-empty, distinct factor levels.
    """
    from icml26.core import check_fields, check_in_interval, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        check_positive_int(name, getattr(config, name), owner=owner, minimum=low, maximum=high)
    for name, (low, high) in (reals or {}).items():
        check_in_interval(name, getattr(config, name), low=low, high=high, owner=owner)
    for name, levels in (("intents", INTENTS), ("pressures", PRESSURES)):
        values = getattr(config, name, None)
        if values is None:
            continue
        if not values or len(set(values)) != len(values) or not set(values) <= set(levels):
            raise ValueError(
                f"{owner}: {name} must be distinct levels of {levels}, at least one; got "
                f"{values!r}."
            )
