"""Boundary checks shared by the ecovla modules (private).

``core.validation.numpy_generator`` hands a negative int straight to numpy, whose message does not
name the parameter; :func:`check_seed` refuses it first (reported to core, issue 27).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

MAX_SEED = 2**63 - 1


def check_seed(seed: Any, owner: str, name: str = "seed") -> Any:
    """``seed`` unchanged if it is None, a generator, or an int in [0, 2^63); else an error."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if type(seed).__name__ == "Generator" and type(seed).__module__.startswith("torch"):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{owner}: {name} must be an int, a numpy/torch Generator or None; got "
            f"{type(seed).__name__}."
        )
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{owner}: {name} must be an int in [0, 2^63); got {seed!r}.")
    return int(seed)


def check_int_array(name: str, value: Any, owner: str, dtype: Any, ndim: int) -> np.ndarray:
    """``value`` as an array of the integer ``dtype`` after checking its rank and value range.

    ``np.asarray(-1, dtype=np.uint8)`` raises an ``OverflowError`` that names nothing, and a float
    array is cast silently (NaN becomes an arbitrary integer); both are refused here first.
    """
    info = np.iinfo(dtype)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{owner}: {name} must be an array of {np.dtype(dtype).name}.") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{owner}: {name} must be an array of {np.dtype(dtype).name}; got dtype {array.dtype}."
        )
    if array.ndim != ndim:
        raise ValueError(f"{owner}: {name} must be {ndim}-D; got shape {array.shape}.")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array) & (array == np.round(array))):
        raise ValueError(f"{owner}: {name} must hold whole numbers; got non-integral entries.")
    if array.size and (array.min() < info.min or array.max() > info.max):
        raise ValueError(
            f"{owner}: {name} must hold values in [{info.min}, {info.max}]; "
            f"got [{array.min()}, {array.max()}]."
        )
    return array.astype(dtype, copy=False)
