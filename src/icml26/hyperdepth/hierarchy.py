"""Depth metrics of a label tree (issue 45): how far an embedding follows the hierarchy.

HyperDepth (ICML 2026; paper not found). The abstract claims that HyperDepth keeps the semantic
hierarchy that instance contrast flattens. Issue 45 asks to measure that where the tree is known:

- :func:`tree_distance_correlation`: the Spearman correlation between the distances of the leaf
  classes' centroids (of the L2-normalised rows) and their distances in the label tree
  (``2 ×`` the number of levels up to their lowest common ancestor);
- :func:`hyperedge_depth`: the *semantic depth* of a hyperedge, the depth of the lowest common
  ancestor of its members in the label tree (0 = the root: members from different top-level
  classes; ``L`` = all members share a leaf class, for ``L`` label levels);
- :func:`hyperedge_depth_recovery`: the Spearman correlation between a hyperedge's semantic
  depth and its tightness in the embedding (minus the mean pairwise distance of its members'
  L2-normalised rows): deep hyperedges should be tight.

Labels are given as ``levels``: one label array per level, from the leaves (finest) to the top
(coarsest); each level must coarsen the one before it (a leaf class sits under one parent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml26.core import check_array
from icml26.hyperdepth.hypergraph import Hypergraph

__all__ = ["hyperedge_depth", "hyperedge_depth_recovery", "tree_distance_correlation"]

MAX_LEVELS = 64


def _normalise(z: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    return z / np.where(norms > 0, norms, 1.0)


def _levels(levels: Any, n: int | None, owner: str) -> np.ndarray:
    """``(L, n)`` integer codes, checked to be nested (each level coarsens the previous)."""
    if isinstance(levels, str | bytes) or not isinstance(levels, Sequence | np.ndarray):
        raise TypeError(
            f"{owner}: levels must be a sequence of label arrays (finest first); "
            f"got {type(levels).__name__}."
        )
    if not 1 <= len(levels) <= MAX_LEVELS:
        raise ValueError(
            f"{owner}: levels must hold 1 to {MAX_LEVELS} label arrays; got {len(levels)}."
        )
    arrays = [np.asarray(level) for level in levels]
    size = arrays[0].shape[0] if arrays[0].ndim == 1 else -1
    for level in arrays:
        if level.ndim != 1 or level.shape[0] != size or (n is not None and size != n):
            raise ValueError(
                f"{owner}: levels must be 1-D label arrays of one length"
                + (f" (one label per row of z, {n})" if n is not None else "")
                + f"; got shapes {[a.shape for a in arrays]}."
            )
        if level.dtype.kind not in "iub":
            raise TypeError(f"{owner}: levels must hold integer labels; got dtype {level.dtype}.")
    codes = np.stack([np.unique(level, return_inverse=True)[1].ravel() for level in arrays])
    for j in range(1, len(codes)):
        pairs = np.unique(codes[j - 1 : j + 1].T, axis=0)
        if len(np.unique(pairs[:, 0])) != len(pairs):
            raise ValueError(
                f"{owner}: levels must be nested: every class of level {j - 1} must sit under one "
                f"class of level {j}."
            )
    return codes


def _spearman(a: np.ndarray, b: np.ndarray, name: str, owner: str) -> float:
    from scipy.stats import spearmanr

    if np.ptp(b) == 0:
        raise ValueError(f"{owner}: {name} takes a single value, so no correlation is defined.")
    if np.ptp(a) == 0:
        return 0.0  # a collapsed embedding follows no tree
    return float(spearmanr(a, b).statistic)


def tree_distance_correlation(z: Any, levels: Sequence[Any]) -> float:
    """Spearman correlation of leaf-centroid distances with label-tree distances (issue 45).

    Rows of ``z`` are L2-normalised and averaged per leaf class (``levels[0]``); two leaves
    whose lowest common ancestor is ``h`` levels up are ``2h`` apart in the tree (siblings 2,
    cousins 4 in a two-level tree; leaves that meet only at the root ``2L``). 1 = the centroid
    geometry orders the leaf pairs exactly as the tree does; about 0 = no relation.

    Parameters
    ----------
    z
        Embedding ``(n, d)``.
    levels
        Label arrays ``(n,)`` from the finest level to the coarsest, each coarsening the last.

    Raises
    ------
    ValueError
        If fewer than three leaf classes exist or all leaf pairs are equally far in the tree,
        ``levels`` are not nested or do not match ``z``.

    Examples
    --------
    >>> z = [[1.0, 0.1], [1.0, -0.1], [-1.0, 0.2], [-1.0, -0.2]]
    >>> round(tree_distance_correlation(z, [[0, 1, 2, 3], [0, 0, 1, 1]]), 3)  # siblings nearest
    0.853
    """
    owner = "tree_distance_correlation"
    z = _normalise(check_array("z", z, owner=owner, ndim=2))
    codes = _levels(levels, z.shape[0], owner)
    leaves, first = np.unique(codes[0], return_index=True)
    if len(leaves) < 3:
        raise ValueError(f"{owner}: levels[0] needs at least 3 leaf classes; got {len(leaves)}.")
    means = np.stack([z[codes[0] == c].mean(axis=0) for c in leaves])
    iu = np.triu_indices(len(leaves), k=1)
    dist = np.linalg.norm(means[iu[0]] - means[iu[1]], axis=1)
    ancestors = codes[:, first]  # (L, leaves)
    shared = ancestors[:, iu[0]] == ancestors[:, iu[1]]  # (L, pairs); level 0 never shared
    height = np.where(shared.any(axis=0), shared.argmax(axis=0), len(codes))
    return _spearman(dist, 2.0 * height, "the tree distance of the leaf pairs (levels)", owner)


def _hyperedges(hyperedges: Any, owner: str) -> list[np.ndarray]:
    if isinstance(hyperedges, Hypergraph):
        return [np.asarray(e, dtype=np.int64) for e in hyperedges.hyperedges]
    if isinstance(hyperedges, str | bytes) or not isinstance(hyperedges, Sequence):
        raise TypeError(
            f"{owner}: hyperedges must be a Hypergraph or a sequence of node-id sequences; "
            f"got {type(hyperedges).__name__}."
        )
    edges = []
    for e, members in enumerate(hyperedges):
        arr = np.asarray(members)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
            raise ValueError(
                f"{owner}: hyperedges[{e}] must be a non-empty sequence of integer node ids; "
                f"got {members!r:.80}."
            )
        edges.append(arr.astype(np.int64))
    if not edges:
        raise ValueError(f"{owner}: hyperedges is empty.")
    return edges


def _check_members(edges: list[np.ndarray], n: int, owner: str) -> None:
    for e, members in enumerate(edges):
        if members.min() < 0 or members.max() >= n:
            raise ValueError(
                f"{owner}: hyperedges[{e}] holds a node id outside [0, {n}); "
                f"got {members.tolist()!r:.80}."
            )


def hyperedge_depth(
    hyperedges: Hypergraph | Sequence[Sequence[int]], levels: Sequence[Any]
) -> np.ndarray:
    """Semantic depth of each hyperedge: the depth of its members' lowest common ancestor.

    Depth counts the levels, from the top, on which all members share a label: 0 = members
    under different top-level classes (the root), ``len(levels)`` = one leaf class.

    Raises
    ------
    ValueError
        If a hyperedge is empty or names a node outside the labels, or ``levels`` are not nested.

    Examples
    --------
    >>> hyperedge_depth([[0, 1], [0, 2], [2, 3], [3]], [[0, 0, 1, 2], [0, 0, 1, 1]])
    array([2, 0, 1, 2])
    """
    owner = "hyperedge_depth"
    edges = _hyperedges(hyperedges, owner)
    codes = _levels(levels, None, owner)
    _check_members(edges, codes.shape[1], owner)
    top_down = codes[::-1]
    depth = np.empty(len(edges), dtype=np.int64)
    for e, members in enumerate(edges):
        agree = (top_down[:, members] == top_down[:, members[:1]]).all(axis=1)
        depth[e] = len(codes) if agree.all() else int(agree.argmin())
    return depth


def hyperedge_depth_recovery(
    z: Any, hyperedges: Hypergraph | Sequence[Sequence[int]], levels: Sequence[Any]
) -> float:
    """Spearman correlation between hyperedges' semantic depth and their tightness in ``z``.

    Tightness is minus the mean pairwise distance of a hyperedge's members' L2-normalised rows;
    hyperedges with one member (self-loops) are left out. 1 = deeper hyperedges are always
    tighter; about 0 = the embedding does not see a hyperedge's depth.

    Raises
    ------
    ValueError
        If no two hyperedges with at least two members differ in depth, a hyperedge names a
        node outside ``z``, or ``levels`` do not match ``z``.

    Examples
    --------
    >>> z = [[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [-1.0, 0.0]]
    >>> hyperedge_depth_recovery(z, [[0, 1], [0, 2], [0, 3]], [[0, 0, 1, 2], [0, 0, 0, 1]])
    1.0
    """
    from scipy.spatial.distance import pdist

    owner = "hyperedge_depth_recovery"
    z = _normalise(check_array("z", z, owner=owner, ndim=2))
    codes = _levels(levels, z.shape[0], owner)
    edges = [e for e in _hyperedges(hyperedges, owner) if len(np.unique(e)) > 1]
    if not edges:
        raise ValueError(f"{owner}: hyperedges has no hyperedge with two distinct members.")
    _check_members(edges, z.shape[0], owner)
    depth = hyperedge_depth(edges, list(codes))
    spread = np.empty(len(edges))
    for e, members in enumerate(edges):
        spread[e] = pdist(z[np.unique(members)]).mean()
    return _spearman(-spread, depth.astype(float), "the depth of the hyperedges (levels)", owner)
