"""A seeded virtual Brownian tree with space-time Levy area: nothing stored per path.

The path on [lo, hi] is defined by recursive midpoint bisection to ``depth`` levels. The depth is
chosen from the smallest interval that will be queried (``min_step``): leaves are at most
``min_step / 2**LEAF_MARGIN`` wide, so on every queried interval the parabola pieces at its two
ends carry a negligible share of the variance (Var(W) / (b - a) >= 1 - 0.6 * 2**-LEAF_MARGIN,
derived below). Without ``min_step`` the tree goes as deep as float64 resolves the span. Each node's
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

Leaf error (derived): the parabola piece from relative position tau to the end of a leaf of
width l has variance l (1 - tau)^2 (1 + 3 tau^2) instead of l (1 - tau), a deficit of at most
0.3 l; a query has two such end pieces, so its relative variance error is at most 0.6 l / (b - a).
A fixed depth of 20 over a clock spanning 4e-5..9e3 (data SDE, t_end = 1e-3) made leaves 8.7e-3
wide, wider than the first 16 steps of a 50-step log-SNR grid: Var(W) / (b - a) was 0.009 there.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator

if TYPE_CHECKING:
    from icml26.rex.parameterization import TimeVariable

__all__ = ["LEAF_MARGIN", "MAX_ELEMENTS", "SeededBrownian", "tree_depth"]

LEAF_MARGIN = 7  # leaves <= min_step / 128: variance error of any query <= 0.5 %
MAX_DEPTH = 60
MAX_ELEMENTS = 2**26  # largest path shape (elements) a SeededBrownian accepts
_CACHE_SIZE = 4 * MAX_DEPTH  # splits kept per path: the two root-to-leaf walks of a query
_RESOLVED_ULPS = 2.0**10  # a leaf spans at least this many ulps of the clock's largest value


def _deepest_resolved(lo: float, hi: float) -> int:
    """The deepest level whose nodes float64 still splits accurately on [lo, hi]."""
    ulp = math.ulp(max(abs(lo), abs(hi)))
    return min(MAX_DEPTH, math.floor(math.log2((hi - lo) / (_RESOLVED_ULPS * ulp))))


def tree_depth(lo: float, hi: float, min_step: float | None = None) -> int:
    """Bisection depth for a path on [lo, hi] queried on intervals no shorter than ``min_step``.

    depth = ceil(log2((hi - lo) / min_step)) + LEAF_MARGIN, so every leaf is at most
    ``min_step / 2**LEAF_MARGIN`` wide; ``None`` gives the deepest level float64 resolves.

    Raises
    ------
    ValueError
        If float64 cannot resolve leaves that small on this span, or the bounds are not finite
        with lo < hi, or ``min_step`` is not positive.

    Examples
    --------
    >>> tree_depth(0.0, 1.0, 1e-3)
    17
    """
    lo = check_in_interval("lo", lo, owner="tree_depth")
    hi = check_in_interval("hi", hi, owner="tree_depth")
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(hi - lo) and hi > lo):
        raise ValueError(
            f"tree_depth: need finite lo < hi with a finite hi - lo; got lo={lo!r}, hi={hi!r}."
        )
    deepest = _deepest_resolved(lo, hi)
    if min_step is None:
        return max(deepest, 1)
    min_step = check_in_interval(
        "min_step", min_step, low=0.0, closed="neither", owner="tree_depth"
    )
    ratio = (hi - lo) / min_step
    # an infinite ratio needs more levels than any float interval resolves (the check below)
    depth = math.inf if math.isinf(ratio) else max(1, math.ceil(math.log2(ratio)) + LEAF_MARGIN)
    if depth > deepest:
        raise ValueError(
            f"tree_depth: min_step={min_step!r} needs {depth} bisection levels on "
            f"[{lo!r}, {hi!r}], but float64 resolves only {deepest}."
        )
    return depth


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


def _check_shape(shape: Sequence[int], *, owner: str) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, str | bytes) or not isinstance(shape, Sequence | torch.Size):
        raise TypeError(f"{owner}: shape must be a sequence of ints; got {shape!r}.")
    dims = tuple(
        check_positive_int("shape", d, owner=owner, minimum=0, maximum=MAX_ELEMENTS) for d in shape
    )
    if math.prod(dims) > MAX_ELEMENTS:
        raise ValueError(
            f"{owner}: shape must have at most {MAX_ELEMENTS} elements; got {dims} "
            f"({math.prod(dims)})."
        )
    return dims


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
    min_step
        The shortest interval that will be queried; the depth is chosen so that leaves are at
        most ``min_step / 2**LEAF_MARGIN`` wide (see :func:`tree_depth`). ``None``: as deep as
        float64 resolves the span.
    depth
        Bisection levels, overriding ``min_step``; below (hi - lo) / 2**depth the path is the
        Brownian parabola, so queries much shorter than that have too little variance.
    dtype, device
        Of the returned tensors (the path itself is computed in float64 on CPU).

    Examples
    --------
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
        min_step: float | None = None,
        depth: int | None = None,
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
    ) -> None:
        owner = "SeededBrownian"
        lo = check_in_interval("lo", lo, owner=owner)
        hi = check_in_interval("hi", hi, owner=owner)
        if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(hi - lo) and hi > lo):
            raise ValueError(
                f"{owner}: need finite lo < hi with a finite hi - lo; got lo={lo!r}, hi={hi!r}."
            )
        self.seed = _path_key(seed, owner=owner)
        self.shape = _check_shape(shape, owner=owner)
        self.lo, self.hi = lo, hi
        if depth is None:
            self.depth = tree_depth(lo, hi, min_step)
        else:
            deepest = max(_deepest_resolved(lo, hi), 1)
            self.depth = check_positive_int("depth", depth, owner=owner, maximum=deepest)
        if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise TypeError(f"{owner}: dtype must be a floating torch.dtype; got {dtype!r}.")
        self.dtype, self.device = dtype, torch.device(device)
        self._children: dict[tuple[int, int], tuple[_Node, _Node]] = {}

    def _normals(self, depth: int, index: int, n: int) -> torch.Tensor:
        digest = hashlib.blake2b(f"{self.seed}:{depth}:{index}".encode(), digest_size=8).digest()
        generator = torch.Generator().manual_seed(int.from_bytes(digest, "big") >> 1)
        return torch.randn((n, *self.shape), generator=generator, dtype=torch.float64)

    def _root(self) -> _Node:
        h = self.hi - self.lo
        z = self._normals(0, 0, 2)
        return _Node(self.lo, self.hi, math.sqrt(h) * z[0], math.sqrt(h / 12) * z[1], 0, 0)

    def _split(self, node: _Node) -> tuple[_Node, _Node]:
        # Consecutive queries of a sweep share most of their ancestors: keep recent splits
        # (values are a pure function of (seed, depth, index), so the cache changes nothing).
        key = (node.depth, node.index)
        children = self._children.get(key)
        if children is None:
            children = self._split_uncached(node)
            if len(self._children) >= _CACHE_SIZE:
                self._children.pop(next(iter(self._children)))  # oldest first
            self._children[key] = children
        return children

    def _split_uncached(self, node: _Node) -> tuple[_Node, _Node]:
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
        a = check_in_interval("a", a, owner="SeededBrownian.increment")
        b = check_in_interval("b", b, owner="SeededBrownian.increment")
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


def brownian_on_grid(
    seed: Seed, tv: TimeVariable, ts: Sequence[float], x: torch.Tensor
) -> SeededBrownian:
    """The path a solver uses on ``ts``: the noise-clock span, depth from its shortest step.

    Every step of the grid is then resolved by the tree (leaves at most 1/2**LEAF_MARGIN of the
    shortest step), whatever the grid's spacing in the clock.
    """
    clocks = [tv.noise_clock(t) for t in ts]
    min_step = min(abs(b - a) for a, b in itertools.pairwise(clocks))
    return SeededBrownian(
        seed, x.shape, min(clocks), max(clocks), min_step=min_step, dtype=x.dtype, device=x.device
    )
