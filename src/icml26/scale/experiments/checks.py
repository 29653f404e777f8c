"""Field checks the experiment configs run in ``__post_init__`` (issue 40: a bad ``--set`` is
refused by the CLI before any task starts)."""

from __future__ import annotations

from typing import Any


def check_int_fields(config: Any, bounds: dict[str, tuple[int, int]]) -> None:
    """ValueError naming the field and its range unless each field is an int within bounds."""
    owner = type(config).__name__
    for name, (low, high) in bounds.items():
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{owner}: {name} must be an int in [{low}, {high}]; got {value!r}.")


def check_names(config: Any, name: str, allowed: tuple[str, ...]) -> None:
    """Coerce a list field to a tuple; ValueError unless it is a non-empty subset of ``allowed``."""
    owner = type(config).__name__
    value = getattr(config, name)
    if isinstance(value, list):
        value = tuple(value)
        object.__setattr__(config, name, value)
    if not isinstance(value, tuple) or not value or any(v not in allowed for v in value):
        raise ValueError(f"{owner}: {name} must be a non-empty tuple of {allowed}; got {value!r}.")
