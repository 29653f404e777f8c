"""Graphic matroid of a multigraph: edges are elements, forests are the independent sets.

The ground set is a list of edges, given as ``(u, v)`` pairs or as a networkx ``Graph`` /
``MultiGraph`` (whose ``weight`` edge attribute becomes :attr:`GraphicMatroid.weights`).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Hashable, Iterable, Sequence
from typing import final

import networkx as nx
import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

from icml26.matroid.oracle import AbstractMatroid

__all__ = ["GraphicMatroid"]


def is_networkx_graph(value: object) -> bool:
    """Whether ``value`` is a networkx graph (of any kind, directed ones included).

    Examples
    --------
    >>> import networkx as nx
    >>> is_networkx_graph(nx.MultiGraph()), is_networkx_graph([(0, 1)])
    (True, False)
    """
    return isinstance(value, nx.Graph)


@final
class GraphicMatroid(AbstractMatroid):
    """Graphic matroid ``M(G)`` of a multigraph ``G``: element ``i`` is ``edges[i]``.

    A set of edges is independent iff it is a forest (no loop, no parallel pair, no cycle).
    A query relabels the touched vertices into ``range(2|Q|)`` in ``O(|Q|)`` and counts connected
    components (scipy): ``Q`` on ``k`` distinct vertices is a forest iff it has ``k - |Q|``
    components, i.e. iff the relabelled graph on ``2|Q|`` nodes has exactly ``|Q|`` components.

    Parameters
    ----------
    edges
        A networkx ``Graph`` or ``MultiGraph`` (undirected; loops and parallel edges allowed),
        or a sequence of ``(u, v)`` pairs of hashable vertex labels, where repeats are parallel
        edges and ``(u, u)`` is a loop.
    weight
        For a networkx graph: the edge attribute read into :attr:`weights` (an edge without it
        weighs 1, as in networkx); ``None`` gives every edge weight 1. Unused for pairs.

    Attributes
    ----------
    edges
        Element ``i`` as networkx names it: ``(u, v, key)`` for a ``MultiGraph``, ``(u, v)``
        for a ``Graph`` or a sequence of pairs, in the order of ``G.edges(keys=True)`` /
        ``G.edges()``.
    weights
        Float64 array of shape ``(n,)``: the graph's ``weight`` attribute of every edge (all 1
        for pairs). :func:`~icml26.matroid.max_weight_basis` uses it when given no weights.
    vertices
        The distinct vertex labels: ``list(G.nodes)`` for a graph (isolated vertices included),
        else in order of first appearance.
    endpoints
        Integer array of shape ``(n, 2)``: the vertex indices of every edge.

    Raises
    ------
    TypeError
        If ``edges`` is neither a sequence nor an undirected networkx graph, a vertex label is not
        hashable, ``weight`` is not a string or None, or an edge's weight is not a real number.
    ValueError
        If an edge is not a pair, or an edge's weight is NaN or infinite.

    Examples
    --------
    >>> G = GraphicMatroid([(0, 1), (1, 2), (0, 2), (0, 1)])
    >>> G.is_independent([0, 1]), G.is_independent([0, 1, 2]), G.is_independent([0, 3])
    (True, False, False)
    >>> import networkx as nx
    >>> H = nx.MultiGraph([(0, 1, {"weight": 2.0}), (0, 1, {"weight": 5.0}), (1, 1)])
    >>> M = GraphicMatroid(H)
    >>> M.edges, M.weights.tolist()
    ([(0, 1, 0), (0, 1, 1), (1, 1, 0)], [2.0, 5.0, 1.0])
    """

    def __init__(
        self,
        edges: Sequence[tuple[Hashable, Hashable]] | nx.Graph,
        *,
        weight: str | None = "weight",
    ) -> None:
        owner = "GraphicMatroid"
        if weight is not None and not isinstance(weight, str):
            raise TypeError(
                f"{owner}: weight must be an edge attribute name (str) or None; "
                f"got {type(weight).__name__}."
            )
        if is_networkx_graph(edges):
            pairs, index, weights = self._from_graph(edges, weight, owner=owner)
        else:
            pairs, index = self._from_pairs(edges, owner=owner)
            weights = np.ones(len(pairs))
        self.vertices = list(index)
        self.endpoints = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.weights = weights
        self._init_ground_set(len(pairs), name="edges")
        self._label = np.zeros(len(index), dtype=np.int64)

    def _from_pairs(self, edges: object, *, owner: str) -> tuple[list[list[int]], dict]:
        if isinstance(edges, str | bytes) or not isinstance(edges, Iterable):
            raise TypeError(
                f"{owner}: edges must be a sequence of (u, v) pairs or a networkx Graph or "
                f"MultiGraph; got {type(edges).__name__}."
            )
        index: dict[Hashable, int] = {}
        pairs, self.edges = [], []
        for i, edge in enumerate(edges):
            pair = isinstance(edge, Sequence | np.ndarray) and not isinstance(edge, str | bytes)
            if not pair or len(edge) != 2:
                raise ValueError(f"{owner}: edge {i} of edges must be a pair (u, v); got {edge!r}.")
            if not all(isinstance(u, Hashable) for u in edge):
                raise TypeError(f"{owner}: edge {i} of edges must hold hashable vertex labels.")
            pairs.append([index.setdefault(u, len(index)) for u in edge])
            self.edges.append(tuple(edge))
        return pairs, index

    def _from_graph(
        self, graph: nx.Graph, weight: str | None, *, owner: str
    ) -> tuple[list[list[int]], dict, np.ndarray]:
        if graph.is_directed():
            # as networkx's spanning-tree functions: a forest is an undirected notion
            raise TypeError(
                f"{owner}: edges must be an undirected networkx graph; got a "
                f"{type(graph).__name__} (pass edges.to_undirected())."
            )
        index = {u: k for k, u in enumerate(graph.nodes)}
        multi = graph.is_multigraph()
        view = graph.edges(keys=True, data=True) if multi else graph.edges(data=True)
        self.edges, pairs, weights = [], [], []
        for *edge, data in view:
            value = 1.0 if weight is None else data.get(weight, 1.0)
            real = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if not real or not math.isfinite(value):
                error = ValueError if real else TypeError
                raise error(
                    f"{owner}: the weight attribute {weight!r} of edge {tuple(edge)!r} in edges "
                    f"must be a finite real number; got {value!r}."
                )
            self.edges.append(tuple(edge))
            pairs.append([index[edge[0]], index[edge[1]]])
            weights.append(float(value))
        return pairs, index, np.array(weights, dtype=np.float64)

    def edges_of(self, elements: Iterable[int]) -> list[tuple]:
        """The edges (``(u, v, key)`` or ``(u, v)``, see :attr:`edges`) of element ids.

        Raises
        ------
        TypeError
            If ``elements`` is not an iterable of integers.
        ValueError
            If an id is outside ``range(n)``.

        Examples
        --------
        >>> GraphicMatroid([("a", "b"), ("b", "c")]).edges_of([1])
        [('b', 'c')]
        """
        owner = "GraphicMatroid.edges_of"
        if isinstance(elements, str | bytes) or not isinstance(elements, Iterable):
            raise TypeError(f"{owner}: elements must be an iterable of element ids.")
        out = []
        for e in elements:
            if isinstance(e, bool) or not isinstance(e, numbers.Integral):
                raise TypeError(f"{owner}: elements must hold integer ids; got {e!r}.")
            if not 0 <= e < self.n:
                raise ValueError(f"{owner}: elements must be ids in range(0, {self.n}); got {e}.")
            out.append(self.edges[int(e)])
        return out

    @classmethod
    def from_networkx(cls, graph: nx.Graph, *, weight: str | None = "weight") -> GraphicMatroid:
        """Graphic matroid of a networkx (multi)graph: the same as ``GraphicMatroid(graph)``.

        Element ``i`` is ``list(graph.edges(keys=True))[i]`` for a ``MultiGraph``, else
        ``list(graph.edges())[i]``.

        Raises
        ------
        TypeError
            If ``graph`` is not an undirected networkx graph, or as the constructor.

        Examples
        --------
        >>> import networkx as nx
        >>> GraphicMatroid.from_networkx(nx.cycle_graph(4)).n
        4
        """
        if not is_networkx_graph(graph):
            raise TypeError(
                f"GraphicMatroid.from_networkx: graph must be a networkx Graph or MultiGraph; "
                f"got {type(graph).__name__}."
            )
        return cls(graph, weight=weight)

    @classmethod
    def from_edgelist(
        cls, path: str | os.PathLike[str], *, comments: str = "#", delimiter: str | None = None
    ) -> GraphicMatroid:
        """Read an edge-list text file (e.g. SNAP format, ``u v`` per line) with networkx.

        Vertices are read as strings; repeated lines become parallel edges; extra columns are
        ignored.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "g.txt"
        >>> _ = path.write_text("# toy\\n1 2\\n2 3\\n3 1\\n")
        >>> GraphicMatroid.from_edgelist(path).n
        3
        """
        import networkx as nx

        if not os.path.isfile(path):
            raise FileNotFoundError(f"GraphicMatroid.from_edgelist: no such file {str(path)!r}.")
        graph = nx.read_edgelist(
            path, comments=comments, delimiter=delimiter, create_using=nx.MultiGraph, data=False
        )
        return cls.from_networkx(graph)

    def _independent(self, Q: np.ndarray) -> bool:
        if Q.size == 0:
            return True
        ends = self.endpoints[Q]  # (|Q|, 2)
        touched = ends.ravel()
        # Each touched vertex gets one label in range(2|Q|) (the last position that wrote it).
        self._label[touched] = np.arange(touched.size)
        labels = self._label[ends]
        size = touched.size
        adjacency = csr_array(
            (np.ones(Q.size, dtype=np.int8), (labels[:, 0], labels[:, 1])), shape=(size, size)
        )
        components = connected_components(adjacency, directed=False, return_labels=False)
        return int(components) == Q.size
