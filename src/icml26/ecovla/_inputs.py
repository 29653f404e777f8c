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
