"""Checking a record's fields against their annotations, in one place for every record type.

The benchmark's records (turns, observations, transcripts, scores, tasks) are plain
dataclasses that callers may also build by hand; ``check_fields`` makes each refuse a value of
the wrong kind where it is built, with a message naming the field, instead of failing later in
a method that reads it. Floats must be finite unless the annotation says otherwise.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

__all__ = ["check_fields"]


def check_fields(record: Any, *, skip: tuple[str, ...] = (), nan_ok: tuple[str, ...] = ()) -> None:
    """Raise ``TypeError`` naming the first field of ``record`` whose value does not match its
    annotation (``skip``: fields checked by the caller; ``nan_ok``: float fields where NaN
    means "not defined", e.g. a rate over no events)."""
    owner = type(record).__name__
    for name, hint in _hints(type(record)).items():
        if name in skip:
            continue
        value = getattr(record, name)
        if name in nan_ok and isinstance(value, float) and math.isnan(value):
            continue
        if not _matches(value, hint, 0):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TypeError(f"{owner}: {name} must be {_text(hint)}; got {shown}.")


@cache
def _hints(cls: type) -> dict[str, Any]:
    """The annotations of a dataclass's fields ({} when a name only exists for type checkers)."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        return {}
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.name in hints}


def _matches(value: Any, hint: Any, depth: int) -> bool:
    if hint is Any or hint is object or depth > 4:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(value, a, depth + 1) for a in args)
    if origin is typing.Literal:
        return value in args
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return (
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and math.isfinite(float(value))
        )
    if hint is str:
        return isinstance(value, str)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0], depth + 1) for v in value)
        return not args or (
            len(args) == len(value)
            and all(_matches(v, a, depth + 1) for v, a in zip(value, args, strict=True))
        )
    if origin in (list, Sequence):
        inner = args[0] if args else Any
        ok = isinstance(value, list | tuple) if origin is Sequence else isinstance(value, list)
        return ok and all(_matches(v, inner, depth + 1) for v in value)
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            return False
        key, item = args if args else (Any, Any)
        return all(
            _matches(k, key, depth + 1) and _matches(v, item, depth + 1) for k, v in value.items()
        )
    if origin is not None and origin in (Callable, typing.Callable):
        return callable(value)
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return isinstance(value, hint)
        return isinstance(value, hint)
    return True  # an annotation this checker does not know: not refused


def _text(hint: Any) -> str:
    if isinstance(hint, type):
        return {"int": "an int", "float": "a finite float", "str": "a str", "bool": "a bool"}.get(
            hint.__name__, hint.__name__
        )
    return str(hint).replace("typing.", "")
