"""Matroid families with ``O(|Q|)``-work oracles (up to ``α``/log factors): uniform, blocks of
uniform matroids, partition, direct sums, binary linear and transversal matroids.

The graphic matroid lives in :mod:`icml26.matroid.graphic`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import final

import numpy as np

from icml26.core import check_positive_int
from icml26.matroid.oracle import AbstractMatroid, IndependenceOracle, check_oracle

__all__ = [
    "DirectSum",
    "LinearMatroidGF2",
    "PartitionMatroid",
    "TransversalMatroid",
    "UniformBlocks",
    "UniformMatroid",
]


def _int_array(name: str, values: object, *, owner: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise TypeError(
            f"{owner}: {name} must be a 1-D sequence of integers; got dtype {array.dtype}, "
            f"shape {array.shape}."
        )
    return array.astype(np.int64)


def _id_set(members: object, i: int, *, owner: str) -> list[int]:
    """``sets[i]`` of a transversal matroid as its sorted distinct integer ids."""
    if isinstance(members, str | bytes) or not isinstance(members, Iterable):
        raise TypeError(
            f"{owner}: sets[{i}] must be an iterable of element ids; got {type(members).__name__}."
        )
    ids = np.asarray(list(members))
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise TypeError(
            f"{owner}: sets[{i}] must hold integer element ids; got dtype {ids.dtype}, "
            f"shape {ids.shape}."
        )
    return sorted(set(ids.tolist()))


@final
class UniformMatroid(AbstractMatroid):
    """The uniform matroid ``U_{r,n}``: a set is independent iff it has at most ``r`` elements.

    Parameters
    ----------
    n
        Ground-set size, at most :data:`~icml26.matroid.oracle.MAX_GROUND_SET`.
    r
        Rank, ``0 <= r <= n``.

    Raises
    ------
    TypeError, ValueError
        If ``n`` or ``r`` is not an integer in range.

    Examples
    --------
    >>> U = UniformMatroid(4, 2)
    >>> U.is_independent([0, 3]), U.is_independent([0, 1, 2])
    (True, False)
    """

    def __init__(self, n: int, r: int) -> None:
        self._init_ground_set(n)
        self.r = check_positive_int("r", r, owner="UniformMatroid", minimum=0)
        if self.r > self.n:
            raise ValueError(f"UniformMatroid: r must be <= n = {self.n}; got {r!r}.")

    def _independent(self, Q: np.ndarray) -> bool:
        return Q.size <= self.r


@final
class UniformBlocks(AbstractMatroid):
    """Direct sum of ``nblocks`` copies of ``U_{c-1,m}``; element ``e`` lives in block ``e // m``.

    Every circuit has exactly ``c`` elements (``c`` elements of one block), the rank is
    ``nblocks * (c - 1)``. With ``m = 2(c - 1)`` half of the elements are outside every basis,
    the worst case for greedy.

    Parameters
    ----------
    nblocks
        Number of blocks (``n = nblocks * m``, at most
        :data:`~icml26.matroid.oracle.MAX_GROUND_SET`).
    m
        Elements per block, ``m >= c``.
    c
        Circuit size, ``c >= 2``.

    Raises
    ------
    TypeError, ValueError
        If a parameter is not an integer in range.

    Examples
    --------
    >>> M = UniformBlocks(nblocks=3, m=2, c=2)  # three parallel pairs
    >>> M.n, M.is_independent([0, 2, 4]), M.is_independent([0, 1])
    (6, True, False)
    """

    def __init__(self, nblocks: int, m: int, c: int) -> None:
        owner = "UniformBlocks"
        self.nblocks = check_positive_int("nblocks", nblocks, owner=owner)
        self.c = check_positive_int("c", c, owner=owner, minimum=2)
        self.m = check_positive_int("m", m, owner=owner, minimum=self.c)
        self._init_ground_set(self.nblocks * self.m, name="nblocks * m")

    def _independent(self, Q: np.ndarray) -> bool:
        if Q.size < self.c:
            return True
        # Independent iff no block holds c of the query's elements.
        return int(np.bincount(Q // self.m).max()) <= self.c - 1


@final
class PartitionMatroid(AbstractMatroid):
    """Partition matroid: ``Q`` is independent iff ``|Q ∩ block b| <= caps[b]`` for every ``b``.

    Parameters
    ----------
    blocks
        Block id of every element, in ``range(len(caps))``; ``n = len(blocks)``.
    caps
        Capacity of every block, ``>= 0``.

    Raises
    ------
    TypeError
        If ``blocks`` or ``caps`` is not a 1-D integer sequence.
    ValueError
        If a block id is out of range or a capacity is negative.

    Examples
    --------
    >>> P = PartitionMatroid(blocks=[0, 0, 0, 1, 1], caps=[2, 1])
    >>> P.is_independent([0, 1, 3]), P.is_independent([3, 4])
    (True, False)
    """

    def __init__(self, blocks: Sequence[int], caps: Sequence[int]) -> None:
        owner = "PartitionMatroid"
        self.blocks = _int_array("blocks", blocks, owner=owner)
        self.caps = _int_array("caps", caps, owner=owner)
        if self.blocks.size and (self.blocks.min() < 0 or self.blocks.max() >= self.caps.size):
            raise ValueError(
                f"{owner}: block ids must be in range(0, {self.caps.size}); "
                f"got min {self.blocks.min()}, max {self.blocks.max()}."
            )
        if self.caps.size and self.caps.min() < 0:
            raise ValueError(f"{owner}: caps must be >= 0; got {self.caps.min()}.")
        self._init_ground_set(self.blocks.size, name="blocks")

    def _independent(self, Q: np.ndarray) -> bool:
        if Q.size == 0:
            return True
        counts = np.bincount(self.blocks[Q])
        return bool(np.all(counts <= self.caps[: counts.size]))


@final
class DirectSum(AbstractMatroid):
    """Direct sum ``M_1 ⊕ … ⊕ M_k``: element ``offset_i + e`` is element ``e`` of ``parts[i]``.

    ``Q`` is independent iff its restriction to every part is.

    Parameters
    ----------
    *parts
        The summands (any oracles), as separate arguments or one iterable.

    Raises
    ------
    TypeError
        If a part is not an oracle.
    ValueError
        If there are no parts.

    Examples
    --------
    >>> S = DirectSum(UniformMatroid(2, 1), UniformMatroid(3, 3))  # or DirectSum([...])
    >>> S.n, S.is_independent([0, 2, 3, 4]), S.is_independent([0, 1])
    (5, True, False)
    """

    def __init__(self, *parts: IndependenceOracle | Iterable[IndependenceOracle]) -> None:
        if len(parts) == 1 and not isinstance(parts[0], IndependenceOracle):
            if not isinstance(parts[0], Iterable):
                raise TypeError(
                    f"DirectSum: parts must be oracles or one iterable of oracles; got "
                    f"{parts[0]!r} ({type(parts[0]).__name__})."
                )
            parts = tuple(parts[0])  # one iterable of summands
        self.parts = [check_oracle(p, owner="DirectSum", name="parts") for p in parts]
        if not self.parts:
            raise ValueError("DirectSum: parts must hold at least one oracle; got none.")
        sizes = np.array([p.n for p in self.parts], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self._init_ground_set(int(self.offsets[-1]), name="parts")

    def _independent(self, Q: np.ndarray) -> bool:
        if Q.size == 0:
            return True
        part = np.searchsorted(self.offsets, Q, side="right") - 1
        order = np.argsort(part, kind="stable")
        Q, part = Q[order], part[order]
        starts = np.flatnonzero(np.diff(part, prepend=-1))
        stops = np.append(starts[1:], Q.size)
        for start, stop in zip(starts, stops, strict=True):
            i = part[start]
            if not self.parts[i].is_independent(Q[start:stop] - self.offsets[i]):
                return False
        return True


@final
class LinearMatroidGF2(AbstractMatroid):
    """Column matroid of a 0/1 matrix over GF(2): ``Q`` is independent iff its columns are.

    Columns are bit-packed into Python integers; a query runs Gaussian elimination (an XOR basis
    keyed by leading bit), ``O(|Q| · rank)`` word operations. Circuits can be arbitrarily large.

    Parameters
    ----------
    matrix
        Array-like of shape ``(rows, n)`` with entries 0/1 (or booleans).

    Raises
    ------
    ValueError
        If ``matrix`` is not 2-D or has entries other than 0 and 1.

    Examples
    --------
    >>> L = LinearMatroidGF2([[1, 0, 1], [0, 1, 1]])
    >>> L.is_independent([0, 1]), L.is_independent([0, 1, 2])
    (True, False)
    """

    def __init__(self, matrix: object) -> None:
        A = np.asarray(matrix)
        if A.ndim != 2 or not np.isin(A, (0, 1)).all():
            raise ValueError(
                f"LinearMatroidGF2: matrix must be 2-D with entries 0/1; got shape {A.shape}."
            )
        packed = np.packbits(A.T.astype(np.uint8), axis=1)  # (n, ceil(rows / 8))
        self.columns = [int.from_bytes(row.tobytes(), "big") for row in packed]
        self._init_ground_set(A.shape[1], name="matrix")

    def _independent(self, Q: np.ndarray) -> bool:
        pivots: dict[int, int] = {}
        for e in Q.tolist():
            v = self.columns[e]
            while v:
                lead = v.bit_length() - 1
                if lead not in pivots:
                    pivots[lead] = v
                    break
                v ^= pivots[lead]
            else:
                return False
        return True


@final
class TransversalMatroid(AbstractMatroid):
    """Transversal matroid: ``Q`` is independent iff it has a system of distinct representatives.

    Element ``e`` may be matched to set ``i`` when ``e in sets[i]``; ``Q`` is independent iff a
    matching covers all of ``Q`` (BFS augmenting paths, ``O(|Q| · edges)``).

    Parameters
    ----------
    n
        Ground-set size, at most :data:`~icml26.matroid.oracle.MAX_GROUND_SET`.
    sets
        The family ``A_1, …, A_k`` of subsets of ``range(n)``.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not an integer in range, ``sets`` is not a family of integer sets or a set
        holds an id outside ``range(n)``.

    Examples
    --------
    >>> T = TransversalMatroid(3, [[0, 1], [1]])
    >>> T.is_independent([0, 1]), T.is_independent([0, 1, 2])
    (True, False)
    """

    def __init__(self, n: int, sets: Sequence[Iterable[int]]) -> None:
        owner = "TransversalMatroid"
        self._init_ground_set(n)
        if isinstance(sets, str | bytes) or not isinstance(sets, Iterable):
            raise TypeError(
                f"{owner}: sets must be a sequence of sets of element ids; "
                f"got {type(sets).__name__}."
            )
        self.sets = [_id_set(members, i, owner=owner) for i, members in enumerate(sets)]
        self.adjacency: list[list[int]] = [[] for _ in range(self.n)]
        for i, members in enumerate(self.sets):
            for e in members:
                if not 0 <= e < self.n:
                    raise ValueError(f"{owner}: sets[{i}] holds {e}, outside range(0, {self.n}).")
                self.adjacency[e].append(i)

    def _independent(self, Q: np.ndarray) -> bool:
        if Q.size > len(self.sets):
            return False
        holder: dict[int, int] = {}  # set index -> matched element
        matched: dict[int, int] = {}  # element -> set index
        for root in Q.tolist():
            parent: dict[int, int] = {}  # set index -> element that reached it
            queue, free = deque([root]), None
            while queue and free is None:
                x = queue.popleft()
                for s in self.adjacency[x]:
                    if s in parent:
                        continue
                    parent[s] = x
                    if s not in holder:
                        free = s
                        break
                    queue.append(holder[s])
            if free is None:
                return False
            # Flip the augmenting path root -> ... -> free.
            s = free
            while True:
                x = parent[s]
                previous = matched.get(x)
                holder[s], matched[x] = x, s
                if x == root:
                    break
                s = previous
        return True
