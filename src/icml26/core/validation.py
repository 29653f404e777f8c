"""Input validation in one voice, and the one door through which randomness enters.

Every message names the parameter and its owner, states what is allowed and shows what was
received, e.g. ``RexSolver: zeta must be in (0, 1]; got 1.5 (float).``
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, TypeAlias

import numpy as np
import torch

Seed: TypeAlias = int | np.random.Generator | torch.Generator | None

__all__ = [
    "Seed",
    "check_in_interval",
    "check_one_of",
    "check_positive_int",
    "numpy_generator",
    "torch_generator",
]


def _shown(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _prefix(owner: str | None) -> str:
    return f"{owner}: " if owner else ""


def check_one_of(name: str, value: Any, allowed: Iterable[Any], *, owner: str | None = None) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise a ``ValueError`` listing them.

    Example
    -------
    >>> check_one_of("kind", "linear", ("linear", "scaled_linear"))
    'linear'
    """
    allowed = tuple(allowed)
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{_prefix(owner)}{name} must be one of {choices}; got {_shown(value)}.")
    return value


def check_positive_int(name: str, value: Any, *, owner: str | None = None, minimum: int = 1) -> int:
    """Return ``value`` as ``int`` if it is an integer ``>= minimum`` (bools are refused).

    Example
    -------
    >>> check_positive_int("n_steps", 10)
    10
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{_prefix(owner)}{name} must be an integer; got {_shown(value)}.")
    if value < minimum:
        raise ValueError(f"{_prefix(owner)}{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_in_interval(
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    closed: str = "both",
    owner: str | None = None,
) -> float:
    """Return ``value`` as ``float`` if it lies in the interval, else raise ``ValueError``.

    Parameters
    ----------
    closed
        Which ends belong to the interval: ``"both"``, ``"left"``, ``"right"`` or ``"neither"``.

    Example
    -------
    >>> check_in_interval("zeta", 0.999, low=0.0, high=1.0, closed="right")
    0.999
    """
    check_one_of("closed", closed, ("both", "left", "right", "neither"), owner="check_in_interval")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{_prefix(owner)}{name} must be a real number; got {_shown(value)}.")
    value = float(value)
    left_ok = value >= low if closed in ("both", "left") else value > low
    right_ok = value <= high if closed in ("both", "right") else value < high
    if math.isnan(value) or not (left_ok and right_ok):
        lb = "[" if closed in ("both", "left") else "("
        rb = "]" if closed in ("both", "right") else ")"
        interval = f"{lb}{low:g}, {high:g}{rb}"
        raise ValueError(f"{_prefix(owner)}{name} must be in {interval}; got {value!r}.")
    return value


def numpy_generator(seed: Seed) -> np.random.Generator:
    """Normalise ``seed`` to a ``numpy.random.Generator``.

    An ``int`` seeds a fresh PCG64 generator, a ``Generator`` is returned as is, a
    ``torch.Generator`` seeds one from its next draw, and ``None`` draws fresh OS entropy.

    Example
    -------
    >>> numpy_generator(0).integers(10) == numpy_generator(0).integers(10)
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, torch.Generator):
        return np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=seed)))
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise TypeError(
        f"seed must be an int, numpy Generator, torch Generator or None; got {_shown(seed)}."
    )


def torch_generator(seed: Seed, device: str | torch.device = "cpu") -> torch.Generator:
    """Normalise ``seed`` to a ``torch.Generator`` on ``device``.

    Example
    -------
    >>> g = torch_generator(0)
    >>> torch.equal(torch.randn(3, generator=g), torch.randn(3, generator=torch_generator(0)))
    True
    """
    if isinstance(seed, torch.Generator):
        return seed
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    elif isinstance(seed, np.random.Generator):
        generator.manual_seed(int(seed.integers(0, 2**62)))
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        generator.manual_seed(int(seed))
    else:
        raise TypeError(
            f"seed must be an int, numpy Generator, torch Generator or None; got {_shown(seed)}."
        )
    return generator
