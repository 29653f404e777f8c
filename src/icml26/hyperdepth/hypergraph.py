"""Hypergraph structure and the HGNN propagation operator (spec §2.1).

HyperDepth (ICML 2026; arXiv id, paper and code not found — the spec's design is inferred from the
abstract). A hypergraph on ``n`` nodes with ``m`` hyperedges has incidence ``H ∈ {0,1}^{n×m}``,
hyperedge weights ``w`` (``W = diag(w)``), node degrees ``d_v = H w`` and edge sizes ``d_e = Hᵀ1``.
The HGNN propagation (Feng et al. 2019) is::

    P = D_v^{-1/2} H W D_e^{-1} Hᵀ D_v^{-1/2}

symmetric positive semi-definite with spectrum in ``[0, 1]`` and top eigenvector ``D_v^{1/2} 1``;
the normalised Laplacian is ``Δ = I − P``.

Deviations: a node of degree 0 (possible only without self-loops) gets ``D_v^{-1/2} = 0`` (the
pseudo-inverse convention), so its row of ``P`` is zero; every singleton hyperedge counts as a
self-loop (:meth:`Hypergraph.with_self_loops` adds one per node that lacks one, so it is
idempotent) and :meth:`Hypergraph.drop_incidence` never drops it.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, final

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int, numpy_generator
from icml26.core.validation import Seed

if TYPE_CHECKING:
    import scipy.sparse
    import torch

__all__ = ["EXACT_MAX_NODES", "Hypergraph"]

EXACT_MAX_NODES = 12_000  # a dense n×n eigendecomposition beyond this takes minutes and GiBs


def _check_member(node: Any, num_nodes: int, edge: int) -> int:
    if isinstance(node, bool) or not isinstance(node, numbers.Integral):
        raise TypeError(
            f"Hypergraph: hyperedge {edge} has a member of type {type(node).__name__}; "
            "node ids must be integers."
        )
    if not 0 <= node < num_nodes:
        raise ValueError(
            f"Hypergraph: hyperedge {edge} has node id {node}; node ids must lie in "
            f"[0, {num_nodes - 1}] (num_nodes={num_nodes})."
        )
    return int(node)


@final
class Hypergraph:
    """An immutable weighted hypergraph on nodes ``0 … num_nodes − 1``.

    Parameters
    ----------
    num_nodes
        Number of nodes ``n >= 1``.
    hyperedges
        One sequence of distinct node ids per hyperedge; no hyperedge may be empty.
    weights
        Hyperedge weights ``w`` (finite, > 0); all ones by default.

    Raises
    ------
    ValueError
        If ``num_nodes <= 0``, a node id is out of range, a hyperedge is empty or repeats a
        member, or a weight is not finite and positive.

    Examples
    --------
    >>> hg = Hypergraph(4, [[0, 1, 2], [2, 3]])
    >>> hg.num_edges, hg.with_self_loops().num_edges
    (2, 6)
    >>> P = hg.propagation().to_dense()
    >>> bool((P - P.T).abs().max() < 1e-7)
    True
    """

    __slots__ = ("_edge_idx", "_edges", "_looped", "_node_idx", "_weights", "num_nodes")

    def __init__(
        self,
        num_nodes: int,
        hyperedges: Iterable[Sequence[int]],
        weights: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        n = check_positive_int("num_nodes", num_nodes, owner="Hypergraph")
        if isinstance(hyperedges, str | bytes) or not isinstance(hyperedges, Iterable):
            raise TypeError(
                "Hypergraph: hyperedges must be a sequence of node-id sequences; "
                f"got {type(hyperedges).__name__}."
            )
        edges: list[tuple[int, ...]] = []
        for e, members in enumerate(hyperedges):
            if isinstance(members, str | bytes) or not isinstance(members, Iterable):
                raise TypeError(
                    f"Hypergraph: hyperedge {e} must be a sequence of node ids; "
                    f"got {type(members).__name__}."
                )
            edge = tuple(_check_member(v, n, e) for v in members)
            if not edge:
                raise ValueError(
                    f"Hypergraph: hyperedge {e} is empty; every hyperedge needs >= 1 member."
                )
            if len(set(edge)) != len(edge):
                raise ValueError(
                    f"Hypergraph: hyperedge {e} repeats a member {edge}; members must be distinct."
                )
            edges.append(edge)
        if weights is None:
            w = np.ones(len(edges))
        else:
            w = check_array("weights", weights, owner="Hypergraph", shape=(len(edges),))
            if np.any(w <= 0):
                raise ValueError(
                    f"Hypergraph: weights must be finite and > 0; got min {float(w.min())!r}."
                )
            w = w.copy()
        w.setflags(write=False)
        sizes = [len(edge) for edge in edges]
        node_idx = np.fromiter((v for edge in edges for v in edge), dtype=np.int64)
        edge_idx = np.repeat(np.arange(len(edges), dtype=np.int64), sizes)
        for array in (node_idx, edge_idx):
            array.setflags(write=False)
        self.num_nodes = n
        self._edges = tuple(edges)
        self._looped: Hypergraph | None = None  # with_self_loops(), built on first use
        self._node_idx, self._edge_idx, self._weights = node_idx, edge_idx, w

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_weights"):
            raise AttributeError("Hypergraph is immutable; build a new one instead.")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_incidence(
        cls,
        node_idx: Sequence[int] | np.ndarray,
        edge_idx: Sequence[int] | np.ndarray,
        num_nodes: int,
        num_edges: int,
        weights: Sequence[float] | np.ndarray | None = None,
    ) -> Hypergraph:
        """Build from incidence pairs ``(node_idx[j], edge_idx[j])`` (COO form of ``H``).

        Raises
        ------
        ValueError
            If the arrays differ in length, an edge id lies outside ``[0, num_edges)``, or an
            edge id in that range has no member (an empty hyperedge).

        Examples
        --------
        >>> Hypergraph.from_incidence([0, 1, 1, 2], [0, 0, 1, 1], 3, 2).hyperedges
        ((0, 1), (1, 2))
        """
        nodes = check_array("node_idx", node_idx, owner="Hypergraph.from_incidence", ndim=1)
        eids = check_array("edge_idx", edge_idx, owner="Hypergraph.from_incidence", ndim=1)
        if nodes.shape != eids.shape:
            raise ValueError(
                "Hypergraph.from_incidence: node_idx and edge_idx must have the same length; "
                f"got {nodes.shape[0]} and {eids.shape[0]}."
            )
        m = check_positive_int("num_edges", num_edges, owner="Hypergraph.from_incidence")
        if np.any(eids != np.round(eids)) or np.any(nodes != np.round(nodes)):
            raise ValueError("Hypergraph.from_incidence: node and edge ids must be integers.")
        eids_int = eids.astype(np.int64)
        if eids.size and (eids_int.min() < 0 or eids_int.max() >= m):
            raise ValueError(
                f"Hypergraph.from_incidence: edge ids must lie in [0, {m - 1}]; "
                f"got range [{eids_int.min()}, {eids_int.max()}]."
            )
        edges: list[list[int]] = [[] for _ in range(m)]
        for v, e in zip(nodes.astype(np.int64).tolist(), eids_int.tolist(), strict=True):
            edges[e].append(v)
        return cls(num_nodes, edges, weights)

    @classmethod
    def from_dhg(cls, hypergraph: Any) -> Hypergraph:
        """Convert a ``dhg.Hypergraph`` (DeepHypergraph), keeping its hyperedge weights.

        Examples
        --------
        >>> import dhg
        >>> Hypergraph.from_dhg(dhg.Hypergraph(3, [(0, 1), (1, 2)])).hyperedges
        ((0, 1), (1, 2))
        """
        edges, weights = hypergraph.e
        return cls(int(hypergraph.num_v), [list(e) for e in edges], [float(w) for w in weights])

    def to_dhg(self) -> Any:
        """This hypergraph as a ``dhg.Hypergraph`` (needs the ``dhg`` package).

        dhg merges repeated hyperedges, so only a hypergraph without repeats converts exactly.
        """
        from icml26.core import require

        dhg = require("dhg", "hyperdepth", owner="Hypergraph.to_dhg")
        return dhg.Hypergraph(
            self.num_nodes, [list(e) for e in self._edges], e_weight=self._weights.tolist()
        )

    @classmethod
    def from_hypergraphx(cls, hypergraph: Any, *, weighted: bool = True) -> Hypergraph:
        """Convert an undirected ``hypergraphx.Hypergraph``; node ``i`` is its ``i``-th smallest id.

        Parameters
        ----------
        hypergraph
            The hypergraphx object (nodes must be sortable, e.g. integers).
        weighted
            Keep hypergraphx's hyperedge weights (default; an unweighted hypergraphx object holds
            unit weights), or ``False`` for unit weights.

        Examples
        --------
        >>> import hypergraphx
        >>> Hypergraph.from_hypergraphx(hypergraphx.Hypergraph([(10, 20, 30), (30, 40)])).hyperedges
        ((0, 1, 2), (2, 3))
        """
        ids = sorted(hypergraph.get_nodes())
        index = {v: i for i, v in enumerate(ids)}
        edges = [[index[v] for v in edge] for edge in hypergraph.get_edges()]
        if not isinstance(weighted, bool):
            raise TypeError(f"from_hypergraphx: weighted must be a bool; got {weighted!r}.")
        weights = [float(w) for w in hypergraph.get_weights()] if weighted else None
        return cls(len(ids), edges, weights)

    def with_self_loops(self) -> Hypergraph:
        """A copy with a singleton self-loop hyperedge (weight 1) for every node that lacks one.

        TriCL's convention: no node is isolated, so ``D_v`` is invertible. Built once per
        instance (both are immutable; trainers and metrics ask for it several times per fit).
        """
        if self._looped is None:
            object.__setattr__(self, "_looped", self._add_self_loops())
        return self._looped

    def _add_self_loops(self) -> Hypergraph:
        has_loop = {edge[0] for edge in self._edges if len(edge) == 1}
        missing = [v for v in range(self.num_nodes) if v not in has_loop]
        edges = [*self._edges, *([v] for v in missing)]
        weights = np.concatenate([self._weights, np.ones(len(missing))])
        return Hypergraph(self.num_nodes, edges, weights)

    # ------------------------------------------------------------------ views

    @property
    def num_edges(self) -> int:
        """Number of hyperedges ``m``."""
        return len(self._edges)

    @property
    def hyperedges(self) -> tuple[tuple[int, ...], ...]:
        """The hyperedges as tuples of node ids."""
        return self._edges

    @property
    def weights(self) -> np.ndarray:
        """Hyperedge weights ``w``, shape ``(m,)`` (read-only)."""
        return self._weights

    @property
    def incidence_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(node_idx, edge_idx)``: the COO coordinates of the non-zeros of ``H`` (read-only)."""
        return self._node_idx, self._edge_idx

    @property
    def edge_sizes(self) -> np.ndarray:
        """``d_e = Hᵀ 1``, shape ``(m,)``."""
        return np.bincount(self._edge_idx, minlength=self.num_edges).astype(np.float64)

    @property
    def node_degrees(self) -> np.ndarray:
        """``d_v = H w``, shape ``(n,)``."""
        return np.bincount(
            self._node_idx, weights=self._weights[self._edge_idx], minlength=self.num_nodes
        )

    def self_loop_mask(self) -> np.ndarray:
        """Boolean mask over incidences: ``True`` where the membership is a singleton edge's."""
        return self.edge_sizes[self._edge_idx] == 1

    def incidence(self) -> scipy.sparse.csr_matrix:
        """The incidence matrix ``H``, shape ``(n, m)``, as a float64 CSR matrix."""
        import scipy.sparse

        ones = np.ones(self._node_idx.shape[0])
        return scipy.sparse.csr_matrix(
            (ones, (self._node_idx, self._edge_idx)), shape=(self.num_nodes, self.num_edges)
        )

    # ------------------------------------------------------------------ operators

    def propagation_scipy(self) -> scipy.sparse.csr_matrix:
        """``P = D_v^{-1/2} H W D_e^{-1} Hᵀ D_v^{-1/2}`` as a float64 scipy CSR matrix."""
        return propagation_from_incidence(
            self._node_idx, self._edge_idx, self.num_nodes, self.num_edges, self._weights
        )

    def propagation(self, dtype: torch.dtype | None = None) -> torch.Tensor:
        """The HGNN propagation ``P`` as a sparse COO ``torch.Tensor`` (default float32)."""
        return scipy_to_torch(self.propagation_scipy(), dtype)

    def laplacian_eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigenpairs of ``Δ = I − P``: eigenvalues ascending in ``[0, 1]`` and eigenvectors.

        Returns
        -------
        eigenvalues
            Shape ``(n,)``, ascending.
        eigenvectors
            Shape ``(n, n)``, orthonormal columns.

        Raises
        ------
        ValueError
            If ``num_nodes`` exceeds ``EXACT_MAX_NODES`` (a dense decomposition).
        """
        import scipy.linalg

        if self.num_nodes > EXACT_MAX_NODES:
            raise ValueError(
                f"Hypergraph.laplacian_eigh: num_nodes must be <= {EXACT_MAX_NODES} for a dense "
                f"eigendecomposition; got {self.num_nodes} (use mode='poly')."
            )
        P = self.propagation_scipy().toarray()
        laplacian = np.eye(self.num_nodes) - (P + P.T) / 2  # symmetrise round-off
        eigenvalues, eigenvectors = scipy.linalg.eigh(laplacian)
        return eigenvalues, eigenvectors

    def drop_incidence(self, p: float, rng: Seed = None) -> Hypergraph:
        """A view with each node–hyperedge membership dropped with probability ``p``.

        Self-loop memberships (singleton hyperedges) are never dropped; a hyperedge that loses
        all its members is removed, so hyperedge indices of the view may differ (use
        :func:`drop_incidence_mask` to keep them aligned).

        Raises
        ------
        ValueError
            If ``p`` is outside ``[0, 1)``.
        """
        keep = drop_incidence_mask(self, p, rng)
        members: list[list[int]] = [[] for _ in range(self.num_edges)]
        for v, e in zip(self._node_idx[keep].tolist(), self._edge_idx[keep].tolist(), strict=True):
            members[e].append(v)
        used = [e for e, edge in enumerate(members) if edge]
        return Hypergraph(self.num_nodes, [members[e] for e in used], self._weights[used])

    def __repr__(self) -> str:
        return f"Hypergraph(num_nodes={self.num_nodes}, num_edges={self.num_edges})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hypergraph):
            return NotImplemented
        return (
            self.num_nodes == other.num_nodes
            and self._edges == other._edges
            and np.array_equal(self._weights, other._weights)
        )

    def __hash__(self) -> int:
        return hash((self.num_nodes, self._edges, self._weights.tobytes()))


def drop_incidence_mask(hg: Hypergraph, p: float, rng: Seed = None) -> np.ndarray:
    """Boolean keep-mask over ``hg.incidence_pairs``: each non-self-loop kept with prob ``1 − p``.

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1)``.
    """
    if not isinstance(hg, Hypergraph):
        raise TypeError(f"drop_incidence_mask: hg must be a Hypergraph; got {type(hg).__name__}.")
    p = check_in_interval("p", p, low=0.0, high=1.0, closed="left", owner="drop_incidence")
    generator = numpy_generator(rng)
    keep = generator.random(hg.incidence_pairs[0].shape[0]) >= p
    return keep | hg.self_loop_mask()


def propagation_from_incidence(
    node_idx: np.ndarray,
    edge_idx: np.ndarray,
    num_nodes: int,
    num_edges: int,
    weights: np.ndarray,
) -> scipy.sparse.csr_matrix:
    """``D_v^{-1/2} H W D_e^{-1} Hᵀ D_v^{-1/2}`` from incidence pairs (empty edges allowed).

    Zero degrees and zero edge sizes get a zero inverse (pseudo-inverse convention), so a view
    whose hyperedges lost all members keeps their index.
    """
    import scipy.sparse

    H = scipy.sparse.csr_matrix(
        (np.ones(node_idx.shape[0]), (node_idx, edge_idx)), shape=(num_nodes, num_edges)
    )
    d_e = np.asarray(H.sum(axis=0)).ravel()
    d_v = H @ weights
    inv_de = np.divide(1.0, d_e, out=np.zeros_like(d_e), where=d_e > 0)
    inv_sqrt_dv = np.divide(1.0, np.sqrt(d_v), out=np.zeros_like(d_v), where=d_v > 0)
    # The diagonal scalings on H's stored entries (each one product, as with sparse diags,
    # without two sparse products per view): left = D_v^{-1/2} H, right = left W D_e^{-1}.
    rows = np.repeat(np.arange(num_nodes), np.diff(H.indptr))
    left = scipy.sparse.csr_matrix((inv_sqrt_dv[rows], H.indices, H.indptr), shape=H.shape)
    right = scipy.sparse.csr_matrix(
        (left.data * (weights * inv_de)[H.indices], H.indices, H.indptr), shape=H.shape
    )
    return scipy.sparse.csr_matrix(right @ left.T)


def scipy_to_torch(matrix: scipy.sparse.spmatrix, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A scipy sparse matrix as a coalesced sparse COO ``torch.Tensor`` (default float32)."""
    import torch

    coo = matrix.tocsr()
    coo.sum_duplicates()
    coo = coo.tocoo()  # row-major order after sum_duplicates: already coalesced
    indices = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
    values = torch.from_numpy(coo.data).to(dtype or torch.float32)
    return torch.sparse_coo_tensor(
        indices, values, size=coo.shape, is_coalesced=True, check_invariants=False
    )
