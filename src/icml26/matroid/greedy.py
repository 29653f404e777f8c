"""Greedy bases (algorithms A1/A2 of the spec) and the circuit-finding binary search (A5).

Greedy scans the elements by decreasing weight and keeps ``e`` iff ``B ∪ {e}`` is independent.
Under the size-sensitive model it costs ``Σ_e (|B_e| + 1) <= n (r + 1) = O(n²)``, where ``B_e`` is
the basis built before ``e`` is examined.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

from icml26.core import check_array
from icml26.matroid.graphic import GraphicMatroid, is_networkx_graph
from icml26.matroid.oracle import IndependenceOracle, check_oracle

__all__ = [
    "check_weights",
    "find_circuit_lightest",
    "greedy_basis",
    "lightest_in_dependent",
    "max_weight_basis",
    "rank",
    "weight_order",
]


def check_weights(weights: object, n: int, *, owner: str) -> np.ndarray:
    """Return ``weights`` as a float64 array of length ``n`` with finite entries.

    The dtype and length checks are the matroid's (one real weight per element); the conversion
    and the finiteness check are core's :func:`~icml26.core.check_array`.

    Raises
    ------
    TypeError
        If ``weights`` is not numeric (bool, int or float).
    ValueError
        If it is not 1-D of length ``n`` or holds NaN/inf.

    Examples
    --------
    >>> check_weights([1, 2.5], 2, owner="demo")
    array([1. , 2.5])
    """
    w = np.asarray(weights)
    if w.dtype.kind not in "biuf":  # strings, objects and complex numbers are not weights
        raise TypeError(
            f"{owner}: weights must be numeric (bool, int or float); got dtype {w.dtype}."
        )
    if w.shape != (n,):
        raise ValueError(
            f"{owner}: weights must have shape ({n},), one per element; got {w.shape}."
        )
    return check_array("weights", w, owner=owner, dtype=np.float64)


def weight_order(weights: np.ndarray) -> np.ndarray:
    """Element ids sorted by decreasing weight, ties broken by increasing id.

    Raises
    ------
    TypeError
        If ``weights`` is not numeric.
    ValueError
        If ``weights`` is not 1-D or holds NaN/inf.

    Examples
    --------
    >>> weight_order(np.array([1.0, 3.0, 1.0])).tolist()
    [1, 0, 2]
    """
    w = np.asarray(weights) if isinstance(weights, np.ndarray | list | tuple) else weights
    if not isinstance(w, np.ndarray) or w.dtype.kind not in "biuf":
        raise TypeError(
            f"weight_order: weights must be a numeric 1-D array; got {type(weights).__name__}."
        )
    return _weight_order(check_array("weights", w, owner="weight_order", ndim=1))


def _weight_order(weights: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(weights.size), -weights))


def _check_elements(elements: object, n: int, *, owner: str, name: str) -> np.ndarray:
    e = np.asarray(elements)
    if e.size == 0:
        return np.zeros(0, dtype=np.int64)
    e = check_array(name, e, owner=owner, ndim=1, dtype=None, finite=False)
    if not np.issubdtype(e.dtype, np.integer):
        raise TypeError(f"{owner}: {name} must hold integer element ids; got dtype {e.dtype}.")
    if e.min() < 0 or e.max() >= n:
        raise ValueError(
            f"{owner}: {name} must hold ids in range(0, {n}); got {e.min()}..{e.max()}."
        )
    if np.unique(e).size != e.size:
        raise ValueError(f"{owner}: {name} must not repeat an element id.")
    return e.astype(np.int64)


def greedy_basis(oracle: IndependenceOracle, order: Sequence[int] | None = None) -> list[int]:
    """Greedy maximal independent subset of ``order`` (default: all elements by id).

    Keeps ``e`` iff ``B ∪ {e}`` is independent; one query of size ``|B| + 1`` per element.

    Parameters
    ----------
    oracle
        The matroid.
    order
        Distinct element ids in the order to scan them.

    Returns
    -------
    list of int
        The kept elements in scan order: a basis of the scanned set.

    Raises
    ------
    TypeError
        If ``oracle`` is not an oracle or ``order`` holds non-integers.
    ValueError
        If ``order`` is not 1-D, holds ids out of range or repeats.

    Examples
    --------
    >>> from icml26.matroid import UniformBlocks
    >>> greedy_basis(UniformBlocks(2, 2, 2), order=[1, 0, 3, 2])
    [1, 3]
    """
    oracle = check_oracle(oracle, owner="greedy_basis")
    if order is None:
        scan = np.arange(oracle.n, dtype=np.int64)
    else:
        scan = _check_elements(order, oracle.n, owner="greedy_basis", name="order")
    buffer = np.empty(scan.size, dtype=np.int64)  # buffer[:size] is B
    size = 0
    for e in scan:
        buffer[size] = e
        if oracle.is_independent(buffer[: size + 1]):
            size += 1
    return buffer[:size].tolist()


def max_weight_basis(
    oracle: IndependenceOracle | nx.Graph, weights: object = None
) -> list[int] | list[tuple]:
    """Maximum-weight basis by the greedy algorithm (A1).

    Scans elements by decreasing weight (ties: smaller id first). With distinct weights the
    result is the unique maximum-weight basis ``G = {e_i : e_i ∉ cl(e_1..e_{i-1})}``. On a graph
    this is Kruskal's maximum spanning forest, found through the forest oracle.

    Parameters
    ----------
    oracle
        The matroid, or an undirected networkx ``Graph`` / ``MultiGraph`` (its graphic matroid,
        :class:`~icml26.matroid.GraphicMatroid`).
    weights
        One finite weight per element. ``None``: a graph's (or a :class:`GraphicMatroid`'s)
        ``weight`` edge attribute, 1 where missing; for other oracles all weights equal (scan
        by id). For a graph a string names another edge attribute.

    Returns
    -------
    list of int, or list of tuple
        The basis, heaviest element first: element ids for an oracle, networkx edges
        ``(u, v, key)`` (``MultiGraph``) or ``(u, v)`` (``Graph``) for a graph.

    Raises
    ------
    TypeError
        If ``oracle`` is neither an oracle nor an undirected networkx graph, or ``weights`` is not
        numeric.
    ValueError
        If ``weights`` has the wrong length or non-finite entries.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> max_weight_basis(UniformMatroid(4, 2), [0.1, 0.9, 0.5, 0.3])
    [1, 2]
    >>> import networkx as nx
    >>> G = nx.MultiGraph([(0, 1, {"weight": 1}), (0, 1, {"weight": 3}), (1, 2), (2, 2)])
    >>> max_weight_basis(G)
    [(0, 1, 1), (1, 2, 0)]
    """
    owner = "max_weight_basis"
    if is_networkx_graph(oracle):
        matroid, w = graph_matroid(oracle, weights)
        return matroid.edges_of(max_weight_basis(matroid, w))
    oracle = check_oracle(oracle, owner=owner)
    if weights is None and isinstance(oracle, GraphicMatroid):
        weights = oracle.weights  # all 1 for a list of pairs: the scan by id
    if weights is None:
        return greedy_basis(oracle)
    w = check_weights(weights, oracle.n, owner=owner)
    return greedy_basis(oracle, _weight_order(w))


def graph_matroid(graph: nx.Graph, weights: object) -> tuple[GraphicMatroid, object]:
    """The graphic matroid of a networkx graph and the weights to use on it.

    ``weights`` None reads the ``weight`` edge attribute, a string reads that attribute, and
    anything else is returned as given (one weight per edge, checked by the caller).

    Raises
    ------
    TypeError, ValueError
        As :class:`GraphicMatroid`.

    Examples
    --------
    >>> import networkx as nx
    >>> M, w = graph_matroid(nx.Graph([(0, 1, {"cost": 4})]), "cost")
    >>> M.edges, w.tolist()
    ([(0, 1)], [4.0])
    """
    attribute = weights if isinstance(weights, str) else "weight"
    matroid = GraphicMatroid(graph, weight=attribute)
    return matroid, matroid.weights if weights is None or isinstance(weights, str) else weights


def rank(oracle: IndependenceOracle, subset: Sequence[int] | None = None) -> int:
    """Rank ``r(X)`` of ``subset`` (default the ground set) as the size of a greedy basis (A2).

    Raises
    ------
    TypeError, ValueError
        As :func:`greedy_basis`.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> rank(UniformMatroid(5, 3)), rank(UniformMatroid(5, 3), [0, 4])
    (3, 2)
    """
    return len(greedy_basis(check_oracle(oracle, owner="rank"), subset))


def find_circuit_lightest(
    oracle: IndependenceOracle, Q: Sequence[int], *, known_dependent: bool = False
) -> int:
    """Lightest element of a circuit inside a dependent list ``Q`` (A5).

    ``Q`` is read as sorted by decreasing weight. Binary search finds the smallest ``j`` with
    ``Q[:j]`` dependent; then ``Q[:j-1]`` is independent, so every circuit of ``Q[:j]`` contains
    ``Q[j-1]``, the lightest element of ``Q[:j]``. ``⌈log2 |Q|⌉`` queries of size ``<= |Q|``.

    Parameters
    ----------
    oracle
        The matroid.
    Q
        Distinct element ids, heaviest first.
    known_dependent
        Skip the (charged) check that ``Q`` itself is dependent.

    Returns
    -------
    int
        The element ``Q[j-1]``.

    Raises
    ------
    ValueError
        If ``Q`` is independent (checked unless ``known_dependent``), or ids are out of range.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> find_circuit_lightest(UniformMatroid(6, 2), [5, 1, 3, 0])
    3
    """
    oracle = check_oracle(oracle, owner="find_circuit_lightest")
    q = _check_elements(Q, oracle.n, owner="find_circuit_lightest", name="Q")
    if not known_dependent and oracle.is_independent(q):
        raise ValueError("find_circuit_lightest: Q must be dependent; got an independent set.")
    return _lightest_in_dependent(oracle, q)


def lightest_in_dependent(oracle: IndependenceOracle, Q: np.ndarray) -> int:
    """The binary search of :func:`find_circuit_lightest` on a list ``Q`` known to be dependent.

    Only the kinds of the arguments are checked (not the ids, nor that ``Q`` is dependent, which
    would cost a query): for an independent ``Q`` the answer is ``Q[-1]``, meaningless.

    Raises
    ------
    TypeError
        If ``oracle`` is not an oracle or ``Q`` is not a 1-D array of integer ids.
    ValueError
        If ``Q`` is empty (the empty set is independent).

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> lightest_in_dependent(UniformMatroid(6, 2), np.array([5, 1, 3, 0]))
    3
    """
    owner = "lightest_in_dependent"
    oracle = check_oracle(oracle, owner=owner)
    q = np.asarray(Q) if isinstance(Q, np.ndarray | list | tuple) else None
    if q is None or q.ndim != 1 or (q.size and not np.issubdtype(q.dtype, np.integer)):
        raise TypeError(f"{owner}: Q must be a 1-D array of integer element ids; got {_kind(Q)}.")
    if q.size == 0:
        raise ValueError(f"{owner}: Q must be a non-empty dependent list; got an empty one.")
    return _lightest_in_dependent(oracle, q)


def _kind(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"dtype {value.dtype}, shape {value.shape}"
    return type(value).__name__


def _lightest_in_dependent(oracle: IndependenceOracle, Q: np.ndarray) -> int:
    low, high = 0, len(Q)  # Q[:low] is independent, Q[:high] is dependent
    while high - low > 1:
        mid = (low + high) // 2
        if oracle.is_independent(Q[:mid]):
            low = mid
        else:
            high = mid
    return int(Q[high - 1])
