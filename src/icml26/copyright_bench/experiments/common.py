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


def heuristic_coefs(config: Any) -> dict[str, float]:
    """The HeuristicAgent coefficients of a config (the fields named in ``HEURISTIC_KEYS``)."""
    return {k: float(getattr(config, k)) for k in HEURISTIC_KEYS}
