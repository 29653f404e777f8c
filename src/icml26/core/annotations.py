"""Values checked against type annotations, in one place: records' fields and ``--set`` values.

:func:`conform` walks an annotation (``int``, ``float | None``, ``tuple[int, ...]``,
``Literal[...]``, ``Mapping[str, float]``, ...) and returns the value, converted where the
caller allows it (``lenient``: YAML lists to tuples, a scalar to a 1-tuple, ``"1e-3"`` to a
float), or raises :class:`AnnotationMismatchError`. :func:`check_fields` applies it to every
field of a dataclass instance.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

__all__ = ["AnnotationMismatchError", "annotation_text", "check_fields", "conform", "field_hints"]

MAX_DEPTH = 6  # nesting beyond this is accepted unchecked


class AnnotationMismatchError(ValueError):
    """A value does not match an annotation."""


def conform(value: Any, hint: Any, *, lenient: bool = False, finite: bool = True) -> Any:
    """``value`` as an instance of ``hint``, element-wise; :class:`AnnotationMismatchError` if not.

    ``int`` is accepted where ``float`` is expected (and converted); bools are never numbers.
    ``finite=True`` refuses NaN and infinities in floats. An annotation this function does not
    know is accepted.

    Examples
    --------
    >>> conform([1, 2], tuple[float, ...], lenient=True)
    (1.0, 2.0)
    >>> conform("x", int | None)
    Traceback (most recent call last):
    ...
    icml26.core.annotations.AnnotationMismatchError: expected int | None; got 'x'
    """
    try:
        return _conform(value, hint, lenient, finite, 0)
    except AnnotationMismatchError:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise AnnotationMismatchError(f"expected {annotation_text(hint)}; got {shown}") from None


def _conform(value: Any, hint: Any, lenient: bool, finite: bool, depth: int) -> Any:
    if hint is Any or hint is object or depth > MAX_DEPTH:
        return value
    if hint is None or hint is type(None):
        if value is None:
            return None
        raise AnnotationMismatchError
    # the plain scalar hints first: most fields are one, and they have no origin to look up
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise AnnotationMismatchError
    if hint is int:
        if type(value) is int:
            return value
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        raise AnnotationMismatchError
    if hint is float:
        if type(value) is float and (not finite or math.isfinite(value)):
            return value
        if lenient and isinstance(value, str):  # YAML 1.1 reads 1e-3 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                raise AnnotationMismatchError from None
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise AnnotationMismatchError
        if finite and not math.isfinite(float(value)):
            raise AnnotationMismatchError
        return float(value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise AnnotationMismatchError
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    deeper = depth + 1
    if origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                return _conform(value, option, lenient, finite, deeper)
            except AnnotationMismatchError:
                continue
        raise AnnotationMismatchError
    if origin is typing.Literal:
        if value in args and not (isinstance(value, bool) and True not in args):
            return value
        raise AnnotationMismatchError
    if origin is tuple:
        if lenient and not isinstance(value, tuple):
            value = tuple(value) if isinstance(value, list) else (value,)
        if not isinstance(value, tuple):
            raise AnnotationMismatchError
        if not args:
            return value
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_conform(v, args[0], lenient, finite, deeper) for v in value)
        if len(args) != len(value):
            raise AnnotationMismatchError
        return tuple(
            _conform(v, a, lenient, finite, deeper) for v, a in zip(value, args, strict=True)
        )
    if origin in (list, Sequence):
        ok = isinstance(value, list | tuple) if origin is Sequence else isinstance(value, list)
        if not ok:
            raise AnnotationMismatchError
        inner = args[0] if args else Any
        items = [_conform(v, inner, lenient, finite, deeper) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise AnnotationMismatchError
        key, item = args if args else (Any, Any)
        for k, v in value.items():
            _conform(k, key, lenient, finite, deeper)
            _conform(v, item, lenient, finite, deeper)
        return value
    if origin is not None and origin in (Callable, typing.Callable):
        if callable(value):
            return value
        raise AnnotationMismatchError
    if isinstance(hint, type):
        if isinstance(value, hint):
            return value
        raise AnnotationMismatchError
    return value  # an annotation this checker does not know: not refused


def annotation_text(hint: Any) -> str:
    """An annotation as a reader writes it: ``int``, ``tuple[int, ...]``, ``float | None``."""
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("NoneType", "None")


@cache
def _cached_hints(cls: type) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):  # a name that exists only for type checkers
        return {}
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.name in hints}


def field_hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a dataclass's fields ({} when they cannot be resolved)."""
    return dict(_cached_hints(cls))


def check_fields(record: Any, *, skip: tuple[str, ...] = (), nan_ok: tuple[str, ...] = ()) -> None:
    """Raise ``TypeError`` naming the first field of dataclass ``record`` that does not match its
    annotation (``skip``: fields the caller checks; ``nan_ok``: float fields where NaN means
    "not defined", e.g. a rate over no events). Floats must otherwise be finite.

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Row:
    ...     n: int
    ...     rate: float
    >>> check_fields(Row(n=2, rate=0.5))
    >>> check_fields(Row(n="2", rate=0.5))
    Traceback (most recent call last):
    ...
    TypeError: Row: n must be int; got '2'.
    """
    owner = type(record).__name__
    for name, hint in _cached_hints(type(record)).items():
        if name in skip:
            continue
        value = getattr(record, name)
        if name in nan_ok and isinstance(value, float) and math.isnan(value):
            continue
        try:
            _conform(value, hint, False, True, 0)
        except AnnotationMismatchError:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TypeError(
                f"{owner}: {name} must be {annotation_text(hint)}; got {shown}."
            ) from None
