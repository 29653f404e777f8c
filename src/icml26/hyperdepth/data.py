"""Data: the synthetic hierarchical hypergraph, kNN hypergraphs, and real-data loaders (spec §5).

HyperDepth (ICML 2026; paper not found). The synthetic generator (spec §5.1) draws 4 coarse × 3
fine classes with features ``x_i = m_coarse + m_fine + σ ε`` and hyperedges whose members share the
anchor's fine class with probability 0.55, its coarse class (another fine class) with 0.30, and
come from another coarse class with 0.15. Real data: sklearn digits as a kNN hypergraph (each node
with its ``k`` nearest neighbours), the SocioPatterns hypergraphs shipped in ``hypergraphx``'s
wheel (the TriCL pickle format of the standard benchmarks is read by
:mod:`icml26.hyperdepth.tricl_format`).

Deviations: the SocioPatterns nodes have no features, so :func:`load_hypergraphx` gives them a
label-free spectral embedding (the ``dim`` lowest non-trivial eigenvectors of ``Δ`` with
self-loops, scaled by ``√n``) or seeded Gaussian features; High School's coarse label is the
subject stem of the class name (``2BIO1 → BIO``, ``MP*2 → MP``, ``PC* → PC``, ``PSI* → PSI``).
Hyperedge weights (contact counts) are dropped unless ``weighted=True``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml26.core import (
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
    require,
)
from icml26.core.validation import Seed
from icml26.hyperdepth.hypergraph import Hypergraph

__all__ = [
    "HypergraphData",
    "knn_hypergraph",
    "load_digits_hypergraph",
    "load_hypergraphx",
    "make_hierarchical_hypergraph",
    "mask_features",
]

MAX_FEATURES = 4096  # largest feature dimension load_hypergraphx makes
MAX_STD = 1e6  # largest standard deviation of make_hierarchical_hypergraph's features
MAX_CELLS = 2**28  # most nodes x dim (and n_edges x max_size) make_hierarchical_hypergraph makes
HYPERGRAPHX_FILES = {
    "high_school": "tests/test_data/hs/hs.json",
    "workplace": "tests/test_data/workplace/workplace.json",
    "walmart": "tutorials/_example_data/walmart_data/walmart-trips-reduced.txt",
}


def _check_labels(name: str, y: Any, n: int, owner: str) -> np.ndarray | None:
    if y is None:
        return None
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(
            f"{owner}: {name} must have one label per node ({n}); got shape {labels.shape}."
        )
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{owner}: {name} must hold integer labels; got dtype {labels.dtype}.")
    return labels.astype(np.int64)


@dataclass(frozen=True)
class HypergraphData:
    """Node features, a hypergraph and optional labels at two levels.

    Parameters
    ----------
    x
        Node features, shape ``(n, f)`` (float32).
    hypergraph
        The hypergraph on the same ``n`` nodes (without self-loops; trainers add them).
    y
        Fine labels ``(n,)`` or ``None``.
    y_coarse
        Coarse labels ``(n,)`` or ``None``.
    name
        A display name.
    levels
        The whole label tree when it has more than two levels: label arrays ``(n,)`` from the
        leaves (``y``) to the top (``y_coarse``); empty by default (see :attr:`label_levels`).
    """

    x: np.ndarray
    hypergraph: Hypergraph
    y: np.ndarray | None = None
    y_coarse: np.ndarray | None = None
    name: str = "hypergraph"
    levels: tuple[np.ndarray, ...] = ()

    def __post_init__(self) -> None:
        owner = "HypergraphData"
        if not isinstance(self.hypergraph, Hypergraph):
            raise TypeError(
                f"{owner}: hypergraph must be a Hypergraph; got {type(self.hypergraph).__name__}."
            )
        x = check_array("x", self.x, owner=owner, ndim=2, dtype=np.float32)
        n = self.hypergraph.num_nodes
        if x.shape[0] != n:
            raise ValueError(
                f"{owner}: x must have one row per node (num_nodes={n}); got {x.shape[0]} rows."
            )
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", _check_labels("y", self.y, n, owner))
        object.__setattr__(self, "y_coarse", _check_labels("y_coarse", self.y_coarse, n, owner))
        if not isinstance(self.levels, tuple):
            raise TypeError(f"{owner}: levels must be a tuple; got {type(self.levels).__name__}.")
        levels = tuple(_check_labels("levels", level, n, owner) for level in self.levels)
        if levels and (
            self.y is None
            or self.y_coarse is None
            or not np.array_equal(levels[0], self.y)
            or not np.array_equal(levels[-1], self.y_coarse)
        ):
            raise ValueError(f"{owner}: levels must run from y (first) to y_coarse (last).")
        object.__setattr__(self, "levels", levels)

    @property
    def label_levels(self) -> tuple[np.ndarray, ...]:
        """The label tree from the leaves up: ``levels``, else ``(y, y_coarse)``, else ``(y,)``."""
        if self.levels:
            return self.levels
        return tuple(level for level in (self.y, self.y_coarse) if level is not None)

    @property
    def num_nodes(self) -> int:
        """Number of nodes ``n``."""
        return self.hypergraph.num_nodes


def mask_features(x: np.ndarray | Any, p: float, rng: Seed = None) -> Any:
    """Drop each feature column with probability ``p`` (the same mask for all nodes).

    Works on numpy arrays and torch tensors alike; ``p = 0`` returns ``x`` unchanged.

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1)``.
    """
    import torch

    owner = "mask_features"
    p = check_in_interval("p", p, low=0.0, high=1.0, closed="left", owner=owner)
    if not isinstance(x, np.ndarray | torch.Tensor) or x.ndim != 2:
        shape = f" of shape {tuple(x.shape)}" if hasattr(x, "shape") else ""
        raise TypeError(
            f"{owner}: x must be a 2-D numpy array or torch tensor (n, f); "
            f"got {type(x).__name__}{shape}."
        )
    floating = x.is_floating_point() if isinstance(x, torch.Tensor) else x.dtype.kind in "fc"
    if not floating:
        raise TypeError(f"{owner}: x must hold floating features; got dtype {x.dtype}.")
    keep = numpy_generator(rng).random(x.shape[1]) >= p
    if isinstance(x, np.ndarray):
        return x * keep.astype(x.dtype)[None]
    return x * torch.from_numpy(keep).to(x.dtype)[None]


def make_hierarchical_hypergraph(
    n_coarse: int = 4,
    n_fine_per: int = 3,
    n_per_fine: int = 100,
    n_edges: int = 800,
    dim: int = 64,
    seed: Seed = 0,
    *,
    coarse_std: float = 1.0,
    fine_std: float = 0.6,
    sigma: float = 1.5,
    p_fine: float = 0.55,
    p_coarse: float = 0.30,
    min_size: int = 3,
    max_size: int = 8,
) -> HypergraphData:
    """The synthetic two-level hierarchical hypergraph of spec §5.1.

    Each hyperedge lists its anchor first.

    Returns
    -------
    HypergraphData
        ``y`` fine labels (``n_coarse · n_fine_per`` classes), ``y_coarse`` with
        ``y_coarse = y // n_fine_per`` (the fine→coarse map).

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``min_size > max_size``, ``max_size`` exceeds the
        nodes available, the nodes x ``dim`` or ``n_edges x max_size`` exceed ``MAX_CELLS``
        (2^28), ``p_fine + p_coarse > 1``, or a standard deviation is outside ``[0, MAX_STD]``
        (10^6).

    Examples
    --------
    >>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=50, dim=8)
    >>> data.x.shape, data.hypergraph.num_edges, int(data.y.max()) + 1
    ((120, 8), 50, 12)
    """
    owner = "make_hierarchical_hypergraph"
    C = check_positive_int("n_coarse", n_coarse, owner=owner, minimum=2)
    per = check_positive_int("n_fine_per", n_fine_per, owner=owner, minimum=2)
    size = check_positive_int("n_per_fine", n_per_fine, owner=owner)
    m = check_positive_int("n_edges", n_edges, owner=owner)
    dim = check_positive_int("dim", dim, owner=owner)
    lo = check_positive_int("min_size", min_size, owner=owner)
    hi = check_positive_int("max_size", max_size, owner=owner)
    if lo > hi or hi > size:
        raise ValueError(
            f"{owner}: need min_size <= max_size <= n_per_fine; got {lo}, {hi}, {size}."
        )
    n_nodes = C * per * size
    if n_nodes * dim > MAX_CELLS or m * hi > MAX_CELLS:
        raise ValueError(
            f"{owner}: n_coarse * n_fine_per * n_per_fine * dim and n_edges * max_size must be "
            f"at most {MAX_CELLS}; got {n_nodes} * {dim} and {m} * {hi}."
        )
    stds = {"coarse_std": coarse_std, "fine_std": fine_std, "sigma": sigma}
    for name, value in stds.items():
        check_in_interval(name, value, low=0.0, high=MAX_STD, owner=owner)
    check_in_interval("p_fine", p_fine, low=0.0, high=1.0, owner=owner)
    check_in_interval("p_coarse", p_coarse, low=0.0, high=1.0, owner=owner)
    if p_fine + p_coarse > 1:
        raise ValueError(f"{owner}: p_fine + p_coarse must be <= 1; got {p_fine + p_coarse}.")
    rng = numpy_generator(seed)
    n_fine = C * per
    y = np.repeat(np.arange(n_fine), size)  # (n,)
    y_coarse = y // per
    n = y.shape[0]
    # x_i = m_coarse(i) + m_fine(i) + σ ε_i
    m_coarse = coarse_std * rng.standard_normal((C, dim))
    m_fine = fine_std * rng.standard_normal((n_fine, dim))
    x = m_coarse[y_coarse] + m_fine[y] + sigma * rng.standard_normal((n, dim))
    by_fine = [np.flatnonzero(y == f) for f in range(n_fine)]
    by_coarse = [np.flatnonzero(y_coarse == c) for c in range(C)]
    edges = []
    for _ in range(m):
        k = int(rng.integers(lo, hi + 1))
        anchor = int(rng.integers(n))
        f, c = int(y[anchor]), int(y_coarse[anchor])
        members = [anchor]  # the anchor first, then the members in draw order
        while len(members) < k:
            r = rng.random()
            if r < p_fine:
                pool = by_fine[f]
            elif r < p_fine + p_coarse:
                pool = by_coarse[c][y[by_coarse[c]] != f]
            else:
                pool = np.flatnonzero(y_coarse != c)
            draw = int(rng.choice(pool))
            if draw not in members:  # a repeat is redrawn: no duplicates
                members.append(draw)
        edges.append(members)
    return HypergraphData(
        x.astype(np.float32), Hypergraph(n, edges), y, y_coarse, name="synthetic-hierarchical"
    )


def knn_hypergraph(X: np.ndarray, k: int = 10) -> Hypergraph:
    """One hyperedge per node: the node and its ``k`` nearest neighbours (Euclidean).

    The ModelNet40/NTU2012 construction used by hypergraph benchmarks.

    Raises
    ------
    ValueError
        If ``k < 1`` or ``k >= n``.

    Examples
    --------
    >>> X = np.arange(10.0)[:, None]
    >>> knn_hypergraph(X, k=2).hyperedges[0]
    (0, 1, 2)
    """
    from sklearn.neighbors import NearestNeighbors

    X = check_array("X", X, owner="knn_hypergraph", ndim=2)
    k = check_positive_int("k", k, owner="knn_hypergraph")
    n = X.shape[0]
    if k >= n:
        raise ValueError(f"knn_hypergraph: k must be < number of points ({n}); got {k}.")
    _, neighbours = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    edges = []
    for i, row in enumerate(neighbours):
        others = [int(j) for j in row if j != i][:k]  # ties may list i later than first
        edges.append([i, *others])
    return Hypergraph(n, edges)


def load_digits_hypergraph(k: int = 10) -> HypergraphData:
    """sklearn's digits (1,797 × 64 pixels, standardised) as a kNN hypergraph; labels = digit."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = digits.data.astype(np.float64)
    std = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)  # constant pixels stay 0
    return HypergraphData(X.astype(np.float32), knn_hypergraph(X, k), digits.target, name="digits")


def _hypergraphx_file(relative: str) -> Path:
    import importlib.metadata

    require("hypergraphx", "hyperdepth", owner="load_hypergraphx")
    for file in importlib.metadata.files("hypergraphx") or ():
        if str(file).replace("\\", "/") == relative:
            return Path(str(file.locate()))
    raise FileNotFoundError(f"load_hypergraphx: {relative} is not in the installed hypergraphx.")


def spectral_features(hg: Hypergraph, dim: int) -> np.ndarray:
    """Label-free node features: the ``dim`` lowest non-trivial eigenvectors of ``Δ`` × ``√n``."""
    _eigenvalues, eigenvectors = hg.with_self_loops().laplacian_eigh()
    columns = eigenvectors[:, 1 : dim + 1] * np.sqrt(hg.num_nodes)
    if columns.shape[1] < dim:
        columns = np.pad(columns, ((0, 0), (0, dim - columns.shape[1])))
    return columns.astype(np.float32)


def _subject_stem(label: str) -> str:
    return re.sub(r"[\d*]", "", label)


def load_hypergraphx(
    name: str = "high_school",
    *,
    features: str | None = None,
    dim: int = 32,
    weighted: bool = False,
    seed: Seed = 0,
) -> HypergraphData:
    """A SocioPatterns / Walmart hypergraph from the ``hypergraphx`` wheel (no download).

    Parameters
    ----------
    name
        ``"high_school"`` (327 nodes, 9 classes, coarse = subject stem), ``"workplace"`` (92
        nodes, 5 departments) or ``"walmart"`` (57,910 nodes, no labels).
    features
        ``"laplacian"`` (label-free spectral embedding; default for the labelled sets) or
        ``"random"`` (seeded N(0, 1); default for Walmart, too large for a dense eigensolver).
    dim
        Feature dimension (at most ``MAX_FEATURES`` = 4096).
    weighted
        Keep hypergraphx's hyperedge weights (High School: contact counts).
    seed
        Seed of the random features.
    """
    owner = "load_hypergraphx"
    check_one_of("name", name, tuple(HYPERGRAPHX_FILES), owner=owner)
    default = "random" if name == "walmart" else "laplacian"
    features = check_one_of("features", features or default, ("laplacian", "random"), owner=owner)
    dim = check_positive_int("dim", dim, owner=owner, maximum=MAX_FEATURES)
    path = _hypergraphx_file(HYPERGRAPHX_FILES[name])
    y = y_coarse = None
    if name == "walmart":
        lines = path.read_text().split("\n")
        raw_edges = [[int(t) for t in line.split()] for line in lines if line.strip()]
        ids = sorted({v for edge in raw_edges for v in edge})
    else:
        from hypergraphx.readwrite import load_hypergraph

        hgx = load_hypergraph(str(path))
        ids = sorted(hgx.get_nodes())
        hg = Hypergraph.from_hypergraphx(hgx, weighted=weighted)
        classes = [str(hgx.get_node_metadata(v)["class"]) for v in ids]
        names = sorted(set(classes))
        y = np.array([names.index(c) for c in classes])
        if name == "high_school":
            stems = [_subject_stem(c) for c in classes]
            y_coarse = np.array([sorted(set(stems)).index(s) for s in stems])
    if name == "walmart":
        index = {v: i for i, v in enumerate(ids)}
        hg = Hypergraph(len(ids), [[index[v] for v in edge] for edge in raw_edges])
    if features == "laplacian":
        x = spectral_features(hg, dim)
    else:
        x = numpy_generator(seed).standard_normal((hg.num_nodes, dim)).astype(np.float32)
    return HypergraphData(x, hg, y, y_coarse, name=name)
