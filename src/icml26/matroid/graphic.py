"""Graphic matroid of a multigraph: edges are elements, forests are the independent sets."""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, final

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

from icml26.matroid.oracle import AbstractMatroid

__all__ = ["GraphicMatroid"]


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
        Sequence of ``(u, v)`` pairs of hashable vertex labels; repeats are parallel edges,
        ``(u, u)`` is a loop.

    Attributes
    ----------
    vertices
        The distinct vertex labels, in order of first appearance.
    endpoints
        Integer array of shape ``(n, 2)``: the vertex indices of every edge.

    Raises
    ------
    TypeError
        If ``edges`` is not a sequence or a vertex label is not hashable.
    ValueError
        If an edge is not a pair.

    Example
    -------
    >>> G = GraphicMatroid([(0, 1), (1, 2), (0, 2), (0, 1)])
    >>> G.is_independent([0, 1]), G.is_independent([0, 1, 2]), G.is_independent([0, 3])
    (True, False, False)
    """

    def __init__(self, edges: Sequence[tuple[Hashable, Hashable]]) -> None:
        owner = "GraphicMatroid"
        if isinstance(edges, str | bytes) or not isinstance(edges, Iterable):
            raise TypeError(
                f"{owner}: edges must be a sequence of (u, v) pairs; got {type(edges).__name__}."
            )
        index: dict[Hashable, int] = {}
        pairs = []
        for i, edge in enumerate(edges):
            pair = isinstance(edge, Sequence | np.ndarray) and not isinstance(edge, str | bytes)
            if not pair or len(edge) != 2:
                raise ValueError(f"{owner}: edge {i} of edges must be a pair (u, v); got {edge!r}.")
            if not all(isinstance(u, Hashable) for u in edge):
                raise TypeError(f"{owner}: edge {i} of edges must hold hashable vertex labels.")
            pairs.append([index.setdefault(u, len(index)) for u in edge])
        self.vertices = list(index)
        self.endpoints = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self._init_ground_set(len(pairs), name="edges")
        self._label = np.zeros(len(index), dtype=np.int64)

    @classmethod
    def from_networkx(cls, graph: Any) -> GraphicMatroid:
        """Graphic matroid of a networkx (multi)graph; element ``i`` is ``list(graph.edges())[i]``.

        Example
        -------
        >>> import networkx as nx
        >>> GraphicMatroid.from_networkx(nx.cycle_graph(4)).n
        4
        """
        return cls(list(graph.edges()))

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

        Example
        -------
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
