"""Maximum-weight basis of a matroid whose circuits have at most ``c`` elements, in expected
``O(n^{2-1/c} log n)`` size-sensitive cost (spec §2.4; the sampling schedule is inferred).

If every circuit has ``<= c`` elements, a uniform ``q``-subset of the current candidate set ``S``
holds a whole circuit with probability about ``m (q/|S|)^c``, ``m = |S| - r``. The algorithm keeps
sampling ``Q ⊆ S``; a dependent sample yields (by binary search, A5) the lightest element of a
circuit, which the red rule removes from ``S``; an independent sample doubles ``q``. Summing
``|S| m^{-1/c} log n`` over ``m = n - r, …, 1`` gives ``O(n^{2-1/c} log n)``.

Las Vegas: the output is always the greedy basis (only deleted elements are spanned by heavier
elements of ``S``, so ``cl(S) = E`` throughout, and the loop stops only when ``S`` is independent);
the circuit bound ``c`` only affects the cost.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator
from icml26.matroid.graphic import GraphicMatroid, is_networkx_graph
from icml26.matroid.greedy import (
    _lightest_in_dependent,
    _weight_order,
    check_weights,
    graph_matroid,
)
from icml26.matroid.oracle import IndependenceOracle, check_oracle

__all__ = ["bounded_circuit_max_weight_basis"]


def bounded_circuit_max_weight_basis(
    oracle: IndependenceOracle | nx.Graph,
    weights: object,
    c: int,
    *,
    seed: Seed = None,
    q0: int | None = None,
    growth: float = 2.0,
) -> list[int] | list[tuple]:
    """Maximum-weight basis by random circuit sampling (spec §2.4).

    1. ``S ←`` all elements, ``q ← q0``.
    2. If ``q >= |S|``: query ``S``; if independent, return it. Otherwise draw ``Q``, ``q``
       elements of ``S`` uniformly without replacement; if independent, ``q ← min(⌈growth·q⌉, |S|)``
       and repeat.
    3. ``Q`` dependent: find the lightest element of one of its circuits by binary search over
       prefixes of ``Q`` (sorted by decreasing weight) and delete it from ``S``.

    Bookkeeping is ``O(q)`` per round (swap-with-last deletion and a position map), so wall time
    follows the model cost.

    Parameters
    ----------
    oracle
        The matroid, or an undirected networkx ``Graph`` / ``MultiGraph`` (its graphic matroid;
        circuits are cycles, so ``c`` bounds the cycle length, e.g. 3 for disjoint triangles).
    weights
        One finite weight per element; ties are broken by smaller id first. For a graph or a
        :class:`~icml26.matroid.GraphicMatroid`, ``None`` reads the ``weight`` edge attribute
        (a string names another attribute of a graph).
    c
        Bound on the circuit size the cost analysis assumes, ``c >= 2``. Correctness does not
        depend on it.
    seed
        Randomness of the samples (int, generator or ``None``).
    q0
        Initial sample size; default ``c``.
    growth
        Factor by which ``q`` grows after an independent sample, ``> 1``.

    Returns
    -------
    list of int, or list of tuple
        The maximum-weight basis, heaviest element first (identical to
        :func:`~icml26.matroid.max_weight_basis` with the same weights): element ids, or for a
        graph its networkx edges ``(u, v, key)`` / ``(u, v)``.

    Raises
    ------
    TypeError
        If ``oracle`` is not an oracle or a parameter has the wrong type.
    ValueError
        If ``weights`` has the wrong length or non-finite entries, ``c < 2``, ``q0 < 1`` or
        ``growth <= 1``.

    Examples
    --------
    >>> from icml26.matroid import UniformBlocks, max_weight_basis
    >>> M = UniformBlocks(nblocks=50, m=2, c=2)
    >>> w = np.random.default_rng(0).permutation(M.n).astype(float)
    >>> bounded_circuit_max_weight_basis(M, w, c=2, seed=0) == max_weight_basis(M, w)
    True
    """
    owner = "bounded_circuit_max_weight_basis"
    if is_networkx_graph(oracle):
        matroid, w = graph_matroid(oracle, weights)
        basis = bounded_circuit_max_weight_basis(matroid, w, c, seed=seed, q0=q0, growth=growth)
        return matroid.edges_of(basis)
    oracle = check_oracle(oracle, owner=owner)
    if weights is None and isinstance(oracle, GraphicMatroid):
        weights = oracle.weights
    w = check_weights(weights, oracle.n, owner=owner)
    c = check_positive_int("c", c, owner=owner, minimum=2)
    q = c if q0 is None else check_positive_int("q0", q0, owner=owner)
    growth = check_in_interval("growth", growth, low=1.0, closed="neither", owner=owner)
    rng = numpy_generator(seed)

    order = _weight_order(w)
    rank_of = np.empty(oracle.n, dtype=np.int64)  # position in the decreasing-weight order
    rank_of[order] = np.arange(oracle.n)
    S = order.copy()  # S[:size] are the live candidates
    position = rank_of.copy()  # S[position[e]] == e
    size = oracle.n
    while True:
        if q >= size:
            Q = np.sort(rank_of[S[:size]])
            Q = order[Q]
            if oracle.is_independent(Q):
                return Q.tolist()
        else:
            Q = S[rng.choice(size, q, replace=False)]
            Q = Q[np.argsort(rank_of[Q])]
            if oracle.is_independent(Q):
                q = min(math.ceil(growth * q), size)
                continue
        # Red rule: the lightest element of a circuit is in no maximum-weight basis.
        e = _lightest_in_dependent(oracle, Q)
        i, last = position[e], S[size - 1]
        S[i], position[last] = last, i
        size -= 1
