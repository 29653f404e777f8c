"""Random instances the paper's claims are checked on: target tables and width-1 networks.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026): the constructions must represent *every* f: D -> F, so the
reproduction draws targets uniformly from F; width-1 networks are drawn with small parameters so
that their outputs do not overflow everywhere (spec section 2.8).
"""

from __future__ import annotations

import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator
from icml26.floatnet.formats import FloatFormat, check_format
from icml26.floatnet.network import FloatReLUNet

__all__ = ["random_table", "random_width1_net"]

MAX_TABLE = 2**26  # values of one table (512 MiB of float64)
MAX_DEPTH = 10_000


def random_table(fmt: FloatFormat, n: int, seed: Seed = None) -> np.ndarray:
    """``n`` values drawn uniformly (with replacement) from the finite values of F.

    The values of a random target f on an ``n``-point domain: pass ``lambda D: table`` (or the
    array itself, indexed like the domain) to a construction.

    Parameters
    ----------
    fmt
        The format F.
    n
        Number of values (at most 2^26).
    seed
        Randomness (int, Generator or None); a Generator is used as is.

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> table = random_table(fmt, len(fmt.grid(1)), seed=0)
    >>> table.shape, bool(np.all(fmt.contains(table)))
    ((55,), True)
    """
    owner = "random_table"
    fmt = check_format(fmt, owner=owner)
    n = check_positive_int("n", n, minimum=0, maximum=MAX_TABLE, owner=owner)
    return numpy_generator(seed).choice(fmt.values(), size=n)


def random_width1_net(
    fmt: FloatFormat, depth: int, seed: Seed = None, *, bound: float = 4.0
) -> FloatReLUNet:
    """A random width-1 network of ``depth`` layers: every weight and bias drawn uniformly from
    the values of F with magnitude at most ``bound``.

    Parameters
    ----------
    fmt
        The format F.
    depth
        Number of layers (1 to 10000).
    seed
        Randomness (int, Generator or None); a Generator is used as is.
    bound
        Largest parameter magnitude (> 0); small values keep most networks from overflowing.

    Examples
    --------
    >>> from icml26.floatnet import is_monotone
    >>> net = random_width1_net(FloatFormat(3, 3), depth=4, seed=0)
    >>> net.width, net.depth, is_monotone(net)
    (1, 4, True)
    """
    owner = "random_width1_net"
    fmt = check_format(fmt, owner=owner)
    depth = check_positive_int("depth", depth, maximum=MAX_DEPTH, owner=owner)
    bound = check_in_interval("bound", bound, low=0.0, closed="right", owner=owner)
    rng = numpy_generator(seed)
    small = fmt.values()[np.abs(fmt.values()) <= bound]
    layers = [(rng.choice(small, (1, 1)), rng.choice(small, 1)) for _ in range(depth)]
    return FloatReLUNet(fmt, layers)
