"""A seeded virtual Brownian tree with space-time Levy area: nothing stored per path.

The path on [lo, hi] is defined by recursive midpoint bisection to ``depth`` levels. Each node's
(W, H) is split into its halves' (W1, H1, W2, H2) by the exact conditional Gaussian law, with the
two standard normals of that split drawn from a generator keyed by (seed, depth, index), so any
query, in any order and on any fresh object with the same seed, sees the same path. Inside a leaf
the path is the "Brownian parabola" W(s + tau h) - W(s) = tau W + 6 H tau (1 - tau), which matches
the leaf's increment and space-time Levy area exactly; queries are therefore additive
(W over [a, c] = W over [a, b] + W over [b, c]) to round-off.

Conventions, with h = b - a: W = W_b - W_a ~ N(0, h); H = (1/h) int_a^b (W_r - W_a) dr - W/2 ~
N(0, h/12), independent of W. Split of [s, u] at its midpoint (half = h/2), z1, z2 ~ N(0, 1):
W1 = W/2 + 3H/2 + sqrt(half/8) z1, W2 = W - W1,
H1 = H/4 - sqrt(half/32) z1 + sqrt(half/24) z2, H2 = H/4 - sqrt(half/32) z1 - sqrt(half/24) z2.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import Seed, check_positive_int, numpy_generator

__all__ = ["SeededBrownian"]


def _path_key(seed: Seed, *, owner: str) -> int:
    """The integer that keys a Brownian path: an int as is, else one draw from the generator.

    ``None`` draws the key from fresh OS entropy. The key is drawn once, so every query of one
    path (and of a solver holding the key) sees the same path.
    """
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(seed)
    if seed is None or isinstance(seed, np.random.Generator | torch.Generator):
        return int(numpy_generator(seed).integers(2**63))
    raise TypeError(
        f"{owner}: seed must be an int, a numpy or torch Generator, or None; "
        f"got {seed!r} ({type(seed).__name__})."
    )


@dataclass(frozen=True)
class _Node:
    lo: float
    hi: float
    W: torch.Tensor
    H: torch.Tensor
    depth: int
    index: int


class SeededBrownian:
    """Brownian increments and space-time Levy areas on any [a, b] inside [lo, hi], from a seed.

    Parameters
    ----------
    seed
        Seed of the whole path: an int keys it directly; a numpy / torch generator (or ``None``,
        fresh entropy) gives one integer key, drawn here. The key is kept as ``seed``.
    shape
        Shape of W (the shape of the state it drives).
    lo, hi
        The time span the path lives on.
    depth
        Bisection levels; below (hi - lo) / 2**depth the path is the Brownian parabola.
    dtype, device
        Of the returned tensors (the path itself is computed in float64 on CPU).

    Example
    -------
    >>> bm = SeededBrownian(0, (3,), 0.0, 1.0)
    >>> W, H = bm.increment(0.2, 0.7)
    >>> W2, H2 = SeededBrownian(0, (3,), 0.0, 1.0).increment(0.2, 0.7)
    >>> bool(torch.equal(W, W2) and torch.equal(H, H2))
    True
    """

    def __init__(
        self,
        seed: Seed,
        shape: Sequence[int],
        lo: float,
        hi: float,
        *,
        depth: int = 20,
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
    ) -> None:
        if not hi > lo:
            raise ValueError(f"SeededBrownian: need lo < hi; got lo={lo!r}, hi={hi!r}.")
        self.seed = _path_key(seed, owner="SeededBrownian")
        self.shape = tuple(shape)
        self.lo, self.hi = float(lo), float(hi)
        self.depth = check_positive_int("depth", depth, owner="SeededBrownian")
        self.dtype, self.device = dtype, device

    def _normals(self, depth: int, index: int, n: int) -> torch.Tensor:
        digest = hashlib.blake2b(f"{self.seed}:{depth}:{index}".encode(), digest_size=8).digest()
        generator = torch.Generator().manual_seed(int.from_bytes(digest, "big") >> 1)
        return torch.randn((n, *self.shape), generator=generator, dtype=torch.float64)

    def _root(self) -> _Node:
        h = self.hi - self.lo
        z = self._normals(0, 0, 2)
        return _Node(self.lo, self.hi, math.sqrt(h) * z[0], math.sqrt(h / 12) * z[1], 0, 0)

    def _split(self, node: _Node) -> tuple[_Node, _Node]:
        half = (node.hi - node.lo) / 2
        mid = node.lo + half
        z1, z2 = self._normals(node.depth + 1, node.index, 2)
        W1 = node.W / 2 + 1.5 * node.H + math.sqrt(half / 8) * z1
        common = node.H / 4 - math.sqrt(half / 32) * z1
        H1 = common + math.sqrt(half / 24) * z2
        H2 = common - math.sqrt(half / 24) * z2
        d, i = node.depth + 1, 2 * node.index
        return _Node(node.lo, mid, W1, H1, d, i), _Node(mid, node.hi, node.W - W1, H2, d, i + 1)

    @staticmethod
    def _leaf_piece(node: _Node, a: float, b: float) -> tuple[torch.Tensor, torch.Tensor]:
        # Brownian parabola f(tau) = tau W + 6 H tau (1 - tau); returns (W_ab, K_ab) with
        # K_ab = int_a^b (W_r - W_a) dr.
        h = node.hi - node.lo
        ta, tb = (a - node.lo) / h, (b - node.lo) / h

        def f(tau: float) -> torch.Tensor:
            return tau * node.W + 6 * tau * (1 - tau) * node.H

        def big_f(tau: float) -> torch.Tensor:  # antiderivative of f in tau
            return tau * tau / 2 * node.W + 6 * (tau * tau / 2 - tau**3 / 3) * node.H

        W_ab = f(tb) - f(ta)
        K_ab = h * (big_f(tb) - big_f(ta)) - (b - a) * f(ta)
        return W_ab, K_ab

    def _query(self, node: _Node, a: float, b: float) -> tuple[torch.Tensor, torch.Tensor]:
        if a == node.lo and b == node.hi:
            return node.W, (b - a) * (node.H + node.W / 2)
        if node.depth == self.depth:
            return self._leaf_piece(node, a, b)
        left, right = self._split(node)
        mid = left.hi
        if b <= mid:
            return self._query(left, a, b)
        if a >= mid:
            return self._query(right, a, b)
        W1, K1 = self._query(left, a, mid)
        W2, K2 = self._query(right, mid, b)
        # int_a^b (W_r - W_a) = int_a^m + int_m^b (W_r - W_m) + (b - m) W_am
        return W1 + W2, K1 + K2 + (b - mid) * W1

    def increment(self, a: float, b: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(W, H) over [a, b]; for a > b, the reversed interval gives (-W, H) of [b, a].

        Raises
        ------
        ValueError
            If the interval leaves [lo, hi] or is empty.
        """
        a, b = float(a), float(b)
        if a == b:
            raise ValueError(f"SeededBrownian.increment: empty interval [{a!r}, {b!r}].")
        lo, hi = min(a, b), max(a, b)
        if lo < self.lo or hi > self.hi:
            raise ValueError(
                f"SeededBrownian.increment: [{lo!r}, {hi!r}] leaves the path's span "
                f"[{self.lo!r}, {self.hi!r}]."
            )
        W, K = self._query(self._root(), lo, hi)
        H = K / (hi - lo) - W / 2
        sign = 1.0 if b > a else -1.0
        return (sign * W).to(self.device, self.dtype), H.to(self.device, self.dtype)
