"""Partition size ``p_k(M)``: the most elements coverable by ``k`` disjoint independent sets.

``p_k(M) = max{|I_1 ∪ … ∪ I_k| : I_j ∈ I disjoint}``, the rank of the ``k``-fold matroid union,
``= min_{A ⊆ E} (|E \\ A| + k·r(A))`` (Edmonds / Nash-Williams); ``p_1 = r``. The definition is
inferred from third-party summaries of the paper (see docs/matroid.md, Deviations).

- :func:`partition_size_first_fit` (A3): each element goes into the first set it fits;
  a 2-approximation with cost ``<= n (n + k)``.
- :func:`partition_size_exact` (A4): Edmonds' matroid-partition augmenting paths (small ``n``).
- :func:`covering_number_exact`: the least ``k`` with ``p_k = n``.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from icml26.core import check_positive_int
from icml26.matroid.oracle import IndependenceOracle, check_oracle

__all__ = ["covering_number_exact", "partition_size_exact", "partition_size_first_fit"]


def _with(members: list[int], add: int, drop: int | None = None) -> np.ndarray:
    kept = [x for x in members if x != drop] if drop is not None else members
    return np.array([*kept, add], dtype=np.int64)


def partition_size_first_fit(oracle: IndependenceOracle, k: int) -> tuple[int, list[list[int]]]:
    """First-fit into ``k`` independent sets (A3), a 2-approximation of ``p_k``.

    Every element ``e`` (by id) goes into the first ``I_j`` with ``I_j ∪ {e}`` independent. The
    result is a maximal common independent set of ``(⊕_k M)`` and the partition matroid "each
    element at most once", hence ``s >= p_k / 2``. Cost ``<= Σ_e Σ_j (|I_j| + 1) <= n (n + k)``.

    Parameters
    ----------
    oracle
        The matroid.
    k
        Number of sets, ``>= 1``.

    Returns
    -------
    s : int
        ``Σ |I_j|``.
    sets : list of list of int
        The disjoint independent sets ``I_1, …, I_k``.

    Raises
    ------
    TypeError, ValueError
        If ``oracle`` is not an oracle or ``k`` is not an integer ``>= 1``.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> partition_size_first_fit(UniformMatroid(5, 2), 2)
    (4, [[0, 1], [2, 3]])
    """
    oracle = check_oracle(oracle, owner="partition_size_first_fit")
    k = check_positive_int("k", k, owner="partition_size_first_fit")
    sets: list[list[int]] = [[] for _ in range(k)]
    for e in range(oracle.n):
        for members in sets:
            if oracle.is_independent(_with(members, e)):
                members.append(e)
                break
    return sum(len(s) for s in sets), sets


def _augment(oracle: IndependenceOracle, sets: list[list[int]], x: int) -> bool:
    """Insert ``x`` into the union along a shortest exchange path; ``False`` if none exists.

    Nodes are elements; ``y -> z`` (``z ∈ I_j``, ``y ∉ I_j``) when ``I_j - z + y`` is independent
    (``y`` takes ``z``'s place in ``I_j``); a sink is ``y`` with ``I_j + y`` independent. Shortest
    paths keep every exchanged set independent (Edmonds' matroid-partition theorem).
    """
    home = {e: j for j, members in enumerate(sets) for e in members}
    parent: dict[int, tuple[int, int]] = {}  # z -> (y, j): y replaces z in I_j
    queue, seen = deque([x]), {x}
    while queue:
        y = queue.popleft()
        for j, members in enumerate(sets):
            if home.get(y) == j:
                continue
            if oracle.is_independent(_with(members, y)):
                # Apply the path back to x: each step puts y into I_j in place of z.
                sets[j].append(y)
                while y in parent:
                    previous, j = parent[y]
                    sets[j][sets[j].index(y)] = previous
                    y = previous
                return True
            for z in members:
                if z not in seen and oracle.is_independent(_with(members, y, drop=z)):
                    seen.add(z)
                    parent[z] = (y, j)
                    queue.append(z)
    return False


def partition_size_exact(oracle: IndependenceOracle, k: int) -> tuple[int, list[list[int]]]:
    """Exact ``p_k`` by Edmonds' matroid-partition algorithm (A4); for small ``n`` only.

    Elements are inserted one by one along shortest augmenting paths of the exchange graph; an
    element that cannot be inserted is spanned in the union matroid and stays out for good.
    ``O(k n³)`` queries of size ``<= n``.

    Parameters
    ----------
    oracle
        The matroid.
    k
        Number of sets, ``>= 1``.

    Returns
    -------
    p_k : int
        The partition size.
    sets : list of list of int
        ``k`` disjoint independent sets covering ``p_k`` elements.

    Raises
    ------
    TypeError, ValueError
        If ``oracle`` is not an oracle or ``k`` is not an integer ``>= 1``.

    Examples
    --------
    >>> from icml26.matroid import GraphicMatroid
    >>> K4 = GraphicMatroid([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    >>> partition_size_exact(K4, 2)[0]  # K4 is two edge-disjoint spanning trees
    6
    """
    oracle = check_oracle(oracle, owner="partition_size_exact")
    k = check_positive_int("k", k, owner="partition_size_exact")
    sets: list[list[int]] = [[] for _ in range(k)]
    for x in range(oracle.n):
        _augment(oracle, sets, x)
    return sum(len(s) for s in sets), [sorted(s) for s in sets]


def covering_number_exact(oracle: IndependenceOracle) -> int:
    """Least ``k`` such that ``k`` independent sets partition the ground set (small ``n`` only).

    Equals ``max_{∅ ≠ S} ⌈|S| / r(S)⌉`` for a loopless matroid (Edmonds), the least ``k`` with
    ``p_k = n``; ``0`` for the empty ground set.

    Raises
    ------
    TypeError
        If ``oracle`` is not an oracle.
    ValueError
        If the matroid has a loop (no partition exists).

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> covering_number_exact(UniformMatroid(7, 3))
    3
    """
    oracle = check_oracle(oracle, owner="covering_number_exact")
    loops = [e for e in range(oracle.n) if not oracle.is_independent([e])]
    if loops:
        raise ValueError(
            f"covering_number_exact: the matroid must be loopless; element {loops[0]} is a loop."
        )
    if oracle.n == 0:
        return 0
    k = 1
    while partition_size_exact(oracle, k)[0] < oracle.n:
        k += 1
    return k
