"""Boundary checks shared by the ecovla modules (private).

``core.validation.torch_generator`` accepts negative ints (what ``manual_seed`` takes); the ecovla
API takes seeds in [0, 2^63) or generators: :func:`check_seed` passes generators and ``None``
through and checks ints with ``core.validation.check_seed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core.validation import check_seed as core_check_seed


def check_seed(seed: Any, owner: str, name: str = "seed") -> Any:
    """``seed`` unchanged if it is None or a generator; an int in [0, 2^63) via core's check."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if type(seed).__name__ == "Generator" and type(seed).__module__.startswith("torch"):
        return seed
    return core_check_seed(name, seed, owner=owner)


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
