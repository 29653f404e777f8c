"""Input validation in one voice, and the one door through which randomness enters.

Every message names the parameter and its owner, states what is allowed and shows what was
received, e.g. ``RexSolver: zeta must be in (0, 1]; got 1.5 (float).``
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import torch

# torch is imported only by the functions that make tensors, so that importing core stays light.
Seed: TypeAlias = "int | np.random.Generator | torch.Generator | None"

__all__ = [
    "Seed",
    "check_array",
    "check_device",
    "check_in_interval",
    "check_one_of",
    "check_positive_int",
    "check_seed",
    "check_tensor",
    "numpy_generator",
    "torch_generator",
]


def _shown(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _prefix(owner: str | None) -> str:
    return f"{owner}: " if owner else ""


def check_one_of(name: str, value: Any, allowed: Iterable[Any], *, owner: str | None = None) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise a ``ValueError`` listing them.

    Examples
    --------
    >>> check_one_of("kind", "linear", ("linear", "scaled_linear"))
    'linear'
    """
    allowed = tuple(allowed)
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{_prefix(owner)}{name} must be one of {choices}; got {_shown(value)}.")
    return value


def check_positive_int(
    name: str, value: Any, *, owner: str | None = None, minimum: int = 1, maximum: int | None = None
) -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[minimum, maximum]``; bools are refused.

    ``maximum`` bounds a size before anything of that size is allocated; document it in the
    caller's docstring.

    Examples
    --------
    >>> check_positive_int("n_steps", 10, maximum=10**6)
    10
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{_prefix(owner)}{name} must be an integer; got {_shown(value)}.")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{_prefix(owner)}{name} must be an integer {bounds}; got {value!r}.")
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

    Examples
    --------
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


def _is_torch_generator(value: Any) -> bool:
    torch = sys.modules.get("torch")  # a torch.Generator exists only once torch is imported
    return torch is not None and isinstance(value, torch.Generator)


def _shape_text(shape: Sequence[int | None]) -> str:
    dims = ["any" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _check_shape(
    name: str,
    got: tuple[int, ...],
    ndim: int | None,
    shape: Sequence[int | None] | None,
    owner: str | None,
) -> None:
    if ndim is not None and len(got) != ndim:
        raise ValueError(f"{_prefix(owner)}{name} must be {ndim}-D; got shape {got}.")
    if shape is not None and (
        len(got) != len(shape)
        or any(s is not None and s != g for s, g in zip(shape, got, strict=False))
    ):
        raise ValueError(f"{_prefix(owner)}{name} must have shape {_shape_text(shape)}; got {got}.")


def check_array(
    name: str,
    value: Any,
    *,
    owner: str | None = None,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    dtype: Any = float,
    finite: bool = True,
) -> np.ndarray:
    """Return ``value`` as a numpy array of ``dtype`` after checking its rank, shape and values.

    Parameters
    ----------
    ndim, shape
        Required rank, and required shape (``None`` entries match any length).
    dtype
        The dtype the array is converted to; a value that cannot be converted is a ``TypeError``.
    finite
        Refuse NaN and infinite entries.

    Examples
    --------
    >>> check_array("x", [[1, 2]], ndim=2).dtype
    dtype('float64')
    """
    try:
        # numpy reads None as NaN when converting to float: refuse it instead.
        if value is None or (
            isinstance(value, list | tuple)
            and any(v is None for v in np.asarray(value, dtype=object).flat)
        ):
            raise TypeError
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(
            f"{_prefix(owner)}{name} must be an array of {np.dtype(dtype).name}; "
            f"got {type(value).__name__}."
        ) from None
    _check_shape(name, array.shape, ndim, shape, owner)
    if finite and array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
        bad = int(np.sum(~np.isfinite(array)))
        raise ValueError(f"{_prefix(owner)}{name} must be finite; got {bad} NaN/inf entries.")
    return array


def check_tensor(
    name: str,
    value: Any,
    *,
    owner: str | None = None,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    floating: bool = True,
    finite: bool = False,
) -> torch.Tensor:
    """Return ``value`` if it is a ``torch.Tensor`` of the required rank, shape and kind.

    Unlike :func:`check_array` nothing is converted: a tensor API takes tensors.

    Examples
    --------
    >>> import torch
    >>> check_tensor("x", torch.zeros(2, 3), ndim=2).shape
    torch.Size([2, 3])
    """
    import torch

    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{_prefix(owner)}{name} must be a torch.Tensor; got {type(value).__name__}."
        )
    if floating and not value.is_floating_point():
        raise TypeError(
            f"{_prefix(owner)}{name} must be a floating-point tensor; got dtype {value.dtype}."
        )
    _check_shape(name, tuple(value.shape), ndim, shape, owner)
    if finite:
        bad = int((~torch.isfinite(value)).sum())
        if bad:
            raise ValueError(f"{_prefix(owner)}{name} must be finite; got {bad} NaN/inf entries.")
    return value


def numpy_generator(seed: Seed, *, name: str = "seed") -> np.random.Generator:
    """Normalise ``seed`` to a ``numpy.random.Generator``.

    An ``int`` (>= 0) seeds a fresh PCG64 generator, a ``Generator`` is returned as is, a
    ``torch.Generator`` seeds one from its next draw, and ``None`` draws fresh OS entropy.
    ``name`` is the caller's parameter, as errors name it.

    Examples
    --------
    >>> bool(numpy_generator(0).integers(10) == numpy_generator(0).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if _is_torch_generator(seed):
        import torch

        return np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=seed)))
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(_seed_int(seed, name, 0, None))


def torch_generator(
    seed: Seed, device: str | torch.device = "cpu", *, name: str = "seed"
) -> torch.Generator:
    """Normalise ``seed`` to a ``torch.Generator`` on ``device``.

    An ``int`` must lie in [-2**63, 2**64) (what ``manual_seed`` takes); ``name`` is the caller's
    parameter, as errors name it.

    Examples
    --------
    >>> import torch
    >>> g = torch_generator(0)
    >>> torch.equal(torch.randn(3, generator=g), torch.randn(3, generator=torch_generator(0)))
    True
    """
    import torch

    if isinstance(seed, torch.Generator):
        return seed
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    elif isinstance(seed, np.random.Generator):
        generator.manual_seed(int(seed.integers(0, 2**62)))
    else:
        generator.manual_seed(_seed_int(seed, name, -(2**63), 2**64))
    return generator


def _seed_int(seed: Any, name: str, low: int, high: int | None) -> int:
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
        raise TypeError(
            f"{name} must be an int, numpy Generator, torch Generator or None; got {_shown(seed)}."
        )
    if seed < low or (high is not None and seed >= high):
        upper = "" if high is None else f" and < {high}"
        raise ValueError(f"{name} must be an int >= {low}{upper}; got {int(seed)}.")
    return int(seed)


def check_seed(name: str, value: Any, *, owner: str | None = None) -> int:
    """Return ``value`` if it is an int seed in ``[0, 2**63)``; bools and floats are refused.

    Examples
    --------
    >>> check_seed("seed", 7)
    7
    """
    return _seed_int(value, f"{_prefix(owner)}{name}", 0, 2**63)


def check_device(name: str, value: Any, *, owner: str | None = None) -> str:
    """Return ``value`` if it names a torch device that exists on this machine.

    ``"cpu"`` and ``"meta"`` always do; ``"cuda"``, ``"cuda:1"``, ``"mps"`` only where that
    backend is available.

    Examples
    --------
    >>> check_device("device", "cpu")
    'cpu'
    """
    if not isinstance(value, str):
        raise TypeError(f"{_prefix(owner)}{name} must be a device name (str); got {_shown(value)}.")
    import torch

    try:
        kind = torch.device(value).type
    except RuntimeError:
        raise ValueError(
            f"{_prefix(owner)}{name} must be a torch device name such as 'cpu' or 'cuda'; "
            f"got {value!r}."
        ) from None
    backend = getattr(torch, kind, None)
    if kind not in ("cpu", "meta") and not getattr(backend, "is_available", lambda: False)():
        raise ValueError(f"{_prefix(owner)}{name}: device {value!r} is not available here.")
    return value
