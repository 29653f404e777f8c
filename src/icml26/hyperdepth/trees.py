"""Data sets with a known label tree for the depth claims of issue 45.

HyperDepth (ICML 2026; paper not found). Issue 45 asks to measure depth where the hierarchy is:

- :func:`make_tree_hypergraph`: a controlled synthetic hierarchy of any number of levels (three
  by default: 2 × 2 × 3 leaves) whose hyperedges *draw their depth*: each hyperedge first draws
  the depth ``d`` of its members' common ancestor (0 = root … ``L`` = one leaf), then an anchor,
  then its other members among the nodes under the anchor's ancestor at depth ``d``; node
  features add one Gaussian mean per level of the node's path plus noise;
- :func:`load_fmnist_hypergraph`: Fashion-MNIST as a kNN hypergraph with the coarse/fine tree
  :data:`FMNIST_COARSE` fixed here before any run (tops, footwear, lower body / one-piece, bag),
  read from the balanced subset that ``icml26.spinefl`` ships (its public loader, untouched).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icml26.core import check_in_interval, check_positive_int, numpy_generator
from icml26.core.validation import Seed
from icml26.hyperdepth.data import MAX_STD, HypergraphData, knn_hypergraph
from icml26.hyperdepth.hypergraph import Hypergraph

__all__ = ["FMNIST_COARSE", "load_fmnist_hypergraph", "make_tree_hypergraph"]

MAX_TREE_NODES = 10**6  # nodes make_tree_hypergraph builds
MAX_LEVELS = 8
# Fashion-MNIST classes 0-9: T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt,
# Sneaker, Bag, Ankle boot -> 0 tops, 1 footwear, 2 lower body / one-piece, 3 bag.
FMNIST_COARSE = (0, 2, 0, 2, 0, 1, 0, 1, 3, 1)
FMNIST_COARSE_NAMES = ("tops", "footwear", "lower body / one-piece", "bag")


def make_tree_hypergraph(
    branching: Sequence[int] = (2, 2, 3),
    n_per_leaf: int = 25,
    n_edges: int = 400,
    dim: int = 64,
    seed: Seed = 0,
    *,
    stds: Sequence[float] = (1.0, 0.8, 0.6),
    sigma: float = 1.5,
    depth_probs: Sequence[float] | None = None,
    min_size: int = 3,
    max_size: int = 8,
) -> HypergraphData:
    """A synthetic label tree whose hyperedges draw the depth of their common ancestor.

    ``branching[l]`` children per node at level ``l`` (top first); leaf ``f``'s nodes have
    features ``x_i = Σ_l m_l(ancestor_l(i)) + σ ε``, ``m_l ~ N(0, stds[l]² I)``. A hyperedge
    draws its size in ``[min_size, max_size]``, a depth ``d`` with ``depth_probs`` (uniform over
    ``0..L`` by default), an anchor, then distinct members under the anchor's depth-``d``
    ancestor (the anchor first). Its semantic depth is ``≥ d`` (members may share more).

    Returns
    -------
    HypergraphData
        ``y`` = leaf, ``y_coarse`` = top level, ``levels`` = every level from the leaves up.

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``stds`` does not have one entry per level,
        ``depth_probs`` is not a distribution over ``L + 1`` depths, or a leaf has fewer than
        ``max_size`` nodes.

    Examples
    --------
    >>> data = make_tree_hypergraph(n_per_leaf=8, n_edges=20, dim=4)
    >>> data.x.shape, [int(level.max()) + 1 for level in data.levels]
    ((96, 4), [12, 4, 2])
    """
    owner = "make_tree_hypergraph"
    if isinstance(branching, str | bytes) or not isinstance(branching, Sequence):
        raise TypeError(f"{owner}: branching must be a sequence of ints; got {branching!r:.60}.")
    if not 2 <= len(branching) <= MAX_LEVELS:
        raise ValueError(
            f"{owner}: branching needs 2 to {MAX_LEVELS} levels; got {len(branching)}."
        )
    fan = [
        check_positive_int("branching", b, owner=owner, minimum=2, maximum=MAX_TREE_NODES)
        for b in branching
    ]
    per = check_positive_int("n_per_leaf", n_per_leaf, owner=owner, maximum=MAX_TREE_NODES)
    n_leaves = int(np.prod(np.asarray(fan, dtype=float)))
    if n_leaves * per > MAX_TREE_NODES:
        raise ValueError(
            f"{owner}: {n_leaves} leaves x n_per_leaf {per} exceed {MAX_TREE_NODES} nodes."
        )
    m = check_positive_int("n_edges", n_edges, owner=owner, maximum=MAX_TREE_NODES)
    dim = check_positive_int("dim", dim, owner=owner, maximum=4096)
    lo = check_positive_int("min_size", min_size, owner=owner)
    hi = check_positive_int("max_size", max_size, owner=owner)
    if lo > hi or hi > per:
        raise ValueError(
            f"{owner}: need min_size <= max_size <= n_per_leaf; got {lo}, {hi}, {per}."
        )
    if isinstance(stds, str | bytes) or not isinstance(stds, Sequence) or len(stds) != len(fan):
        raise ValueError(f"{owner}: stds needs one standard deviation per level ({len(fan)}).")
    for value in (*stds, sigma):
        check_in_interval("stds", value, low=0.0, high=MAX_STD, owner=owner)
    L = len(fan)
    probs = np.full(L + 1, 1.0 / (L + 1)) if depth_probs is None else np.asarray(depth_probs, float)
    if probs.shape != (L + 1,) or not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(
            f"{owner}: depth_probs needs {L + 1} non-negative numbers; got {depth_probs!r:.60}."
        )
    if not np.isclose(probs.sum(), 1.0):
        raise ValueError(f"{owner}: depth_probs must sum to 1; got {probs.sum()}.")
    rng = numpy_generator(seed)
    leaf = np.repeat(np.arange(n_leaves), per)  # (n,)
    sizes = np.cumprod(fan)  # classes per level, top first
    top_down = [leaf // (n_leaves // int(k)) for k in sizes]  # level l label, l = 0 top
    x = sigma * rng.standard_normal((leaf.size, dim))
    for level, std in zip(top_down, stds, strict=True):
        x += (std * rng.standard_normal((int(level.max()) + 1, dim)))[level]
    groups = [{} for _ in range(L + 1)]  # depth d -> label -> nodes under it
    groups[0] = {0: np.arange(leaf.size)}
    for d, level in enumerate(top_down, start=1):
        groups[d] = {int(c): np.flatnonzero(level == c) for c in np.unique(level)}
    edges = []
    for _ in range(m):
        k = int(rng.integers(lo, hi + 1))
        depth = int(rng.choice(L + 1, p=probs / probs.sum()))
        anchor = int(rng.integers(leaf.size))
        pool = groups[depth][0 if depth == 0 else int(top_down[depth - 1][anchor])]
        others = rng.choice(pool[pool != anchor], k - 1, replace=False)
        edges.append([anchor, *(int(v) for v in others)])
    levels = tuple(top_down[::-1])
    return HypergraphData(
        x.astype(np.float32),
        Hypergraph(leaf.size, edges),
        levels[0],
        levels[-1],
        name="synthetic-tree",
        levels=levels,
    )


def load_fmnist_hypergraph(
    n_per_class: int = 100, k: int = 10, dim: int = 64, seed: Seed = 0
) -> HypergraphData:
    """Fashion-MNIST as a kNN hypergraph with the fixed coarse tree :data:`FMNIST_COARSE`.

    A seeded balanced draw of ``n_per_class`` training images per class from the subset shipped
    with ``icml26.spinefl`` (1,200 per class), pixels standardised, PCA to ``dim`` features
    (fitted on the drawn images only; no labels used), one hyperedge per node with its ``k``
    nearest neighbours in that PCA space.

    Raises
    ------
    ValueError
        If ``n_per_class`` is outside ``[2, 1200]``, ``k >= n`` or ``dim > min(n, 784)``.

    Examples
    --------
    >>> data = load_fmnist_hypergraph(n_per_class=5, k=3, dim=8)
    >>> data.x.shape, sorted(set(data.y_coarse.tolist()))
    ((50, 8), [0, 1, 2, 3])
    """
    from sklearn.decomposition import PCA

    from icml26.spinefl.data import load_fashion_mnist_subset

    owner = "load_fmnist_hypergraph"
    per = check_positive_int("n_per_class", n_per_class, owner=owner, minimum=2, maximum=1200)
    k = check_positive_int("k", k, owner=owner, maximum=10 * per - 1)
    dim = check_positive_int("dim", dim, owner=owner, maximum=min(10 * per, 784))
    images, labels = load_fashion_mnist_subset()[:2]
    rng = numpy_generator(seed)
    keep = np.sort(
        np.concatenate(
            [rng.choice(np.flatnonzero(labels == c), per, replace=False) for c in range(10)]
        )
    )
    pixels = images[keep].reshape(len(keep), -1).astype(np.float64)
    std = pixels.std(axis=0)
    pixels = (pixels - pixels.mean(axis=0)) / np.where(std > 0, std, 1.0)
    x = PCA(n_components=dim, random_state=int(rng.integers(2**31 - 1))).fit_transform(pixels)
    y = labels[keep]
    coarse = np.asarray(FMNIST_COARSE)[y]
    return HypergraphData(x.astype(np.float32), knn_hypergraph(x, k), y, coarse, name="fmnist-knn")
