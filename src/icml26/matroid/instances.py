"""Random instances of the paper's experiments (spec §5, E1–E4): matroids with distinct weights.

Banihashem, HajiAghayi, JafariRaviz, Mittal, *Matroid Algorithms Under Size-Sensitive Independence
Oracles*, ICML 2026 (arXiv:2605.00201). The bounded-circuit algorithm needs matroids whose circuits
have at most ``c`` elements (E1/E2: blocks of uniform matroids, disjoint-triangle multigraphs);
partition size is compared on small matroids of five families (E3); greedy's cost is measured on
random graphs (E4).

Every generator takes ``seed`` (an int, a ``numpy.random.Generator`` that it draws from, or None)
and takes ``(n, seed)`` first, so ``functools.partial(uniform_blocks_instance, c=2, m=2)`` is a
``make_instance(n, rng)`` for :func:`~icml26.matroid.run_scaling_experiment`.

Deviations: the test beds are ours (the paper has no experiments); sizes, multiplicities and
family parameters follow the spec author's prototype.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from icml26.core import Seed, check_in_interval, check_one_of, check_positive_int, numpy_generator
from icml26.matroid.families import (
    LinearMatroidGF2,
    PartitionMatroid,
    TransversalMatroid,
    UniformBlocks,
    UniformMatroid,
)
from icml26.matroid.oracle import MAX_GROUND_SET, IndependenceOracle

if TYPE_CHECKING:
    from icml26.matroid.graphic import GraphicMatroid

__all__ = [
    "MAX_GNP_VERTICES",
    "MAX_SMALL_MATROID",
    "SMALL_FAMILIES",
    "gnp_graphic_instance",
    "random_small_matroid",
    "triangles_instance",
    "uniform_blocks_instance",
]

SMALL_FAMILIES = ("uniform", "partition", "graphic", "linear_gf2", "transversal")
MAX_SMALL_MATROID = 1000  # random_small_matroid: a GF(2) matrix of up to n/2 + 2 rows × n columns
MAX_GNP_VERTICES = 10**4  # gnp_graphic_instance: networkx's G(n, p) visits all n²/2 vertex pairs


def _weights(matroid: IndependenceOracle, rng: np.random.Generator) -> np.ndarray:
    """Distinct weights: a random permutation of ``0, …, n-1`` as float64."""
    return rng.permutation(matroid.n).astype(np.float64)


def uniform_blocks_instance(
    n: int, seed: Seed = None, *, c: int = 2, m: int = 2
) -> tuple[UniformBlocks, np.ndarray]:
    """``UniformBlocks(n // m, m, c)`` (circuits of exactly ``c`` elements) with distinct weights.

    Parameters
    ----------
    n
        About the ground-set size: ``n // m`` blocks of ``m`` elements (at least one block).
    seed
        Randomness of the weights (a random permutation of ``0, …, n-1``).
    c, m
        Circuit size and block size, ``2 <= c <= m`` (E1: c = 2, m = 2; E2: c = 3, m = 4).

    Returns
    -------
    (UniformBlocks, ndarray)
        The matroid and its float64 weights.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not an integer in ``[m, MAX_GROUND_SET]`` or ``c``/``m`` are out of range.

    Examples
    --------
    >>> matroid, weights = uniform_blocks_instance(8, seed=0, c=2, m=2)
    >>> matroid.n, sorted(weights.tolist()) == list(range(8))
    (8, True)
    """
    owner = "uniform_blocks_instance"
    m = check_positive_int("m", m, owner=owner, maximum=MAX_GROUND_SET)
    n = check_positive_int("n", n, owner=owner, minimum=m, maximum=MAX_GROUND_SET)
    matroid = UniformBlocks(nblocks=n // m, m=m, c=c)
    return matroid, _weights(matroid, numpy_generator(seed))


def triangles_instance(n: int, seed: Seed = None) -> tuple[GraphicMatroid, np.ndarray]:
    """Disjoint triangles, each edge with multiplicity uniform in {1, 2, 3}, distinct weights.

    ``max(1, n // 6)`` triangles, so about ``n`` edges. The circuits are parallel pairs and
    triangles: ``c = 3``.

    Parameters
    ----------
    n
        About the number of edges, at most ``MAX_GROUND_SET``.
    seed
        Randomness of the multiplicities, then of the weights.

    Returns
    -------
    (GraphicMatroid, ndarray)
        The matroid and its float64 weights (a random permutation of ``0, …, n-1``).

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not a positive integer up to ``MAX_GROUND_SET``.

    Examples
    --------
    >>> matroid, weights = triangles_instance(12, seed=0)
    >>> len(matroid.vertices), 6 <= matroid.n <= 18
    (6, True)
    """
    from icml26.matroid.graphic import GraphicMatroid

    n = check_positive_int("n", n, owner="triangles_instance", maximum=MAX_GROUND_SET)
    rng = numpy_generator(seed)
    edges = []
    for t in range(max(1, n // 6)):
        a, b, c = 3 * t, 3 * t + 1, 3 * t + 2
        for u, v in ((a, b), (b, c), (a, c)):
            edges += [(u, v)] * int(rng.integers(1, 4))
    matroid = GraphicMatroid(edges)
    return matroid, _weights(matroid, rng)


def random_small_matroid(family: str, n: int, seed: Seed = None) -> IndependenceOracle:
    """A random matroid of ``family`` on ``n`` elements (the E3 test bed).

    - ``"uniform"``: ``U_{r,n}``, r uniform in 1..n;
    - ``"partition"``: up to ``n // 2 + 1`` parts, capacities in 0..3;
    - ``"graphic"``: ``n`` random edges (loops and parallels allowed) on 3 to ``n // 2`` vertices;
    - ``"linear_gf2"``: columns of a random binary matrix with 2 to ``n // 2 + 2`` rows;
    - ``"transversal"``: ``n // 2`` random sets of 1 to 5 elements.

    Parameters
    ----------
    family
        One of :data:`SMALL_FAMILIES`.
    n
        Ground-set size, 1 to ``MAX_SMALL_MATROID``.
    seed
        Randomness of the matroid.

    Returns
    -------
    IndependenceOracle
        The matroid.

    Raises
    ------
    TypeError, ValueError
        If ``family`` is unknown or ``n`` is not an integer in range.

    Examples
    --------
    >>> [random_small_matroid(f, 10, seed=0).n for f in SMALL_FAMILIES]
    [10, 10, 10, 10, 10]
    """
    owner = "random_small_matroid"
    check_one_of("family", family, SMALL_FAMILIES, owner=owner)
    n = check_positive_int("n", n, owner=owner, maximum=MAX_SMALL_MATROID)
    rng = numpy_generator(seed)
    if family == "uniform":
        return UniformMatroid(n, int(rng.integers(1, n + 1)))
    if family == "partition":
        parts = int(rng.integers(1, n // 2 + 2))
        return PartitionMatroid(rng.integers(0, parts, n), rng.integers(0, 4, parts))
    if family == "graphic":
        from icml26.matroid.graphic import GraphicMatroid

        vertices = int(rng.integers(3, max(4, n // 2)))
        return GraphicMatroid([tuple(rng.integers(0, vertices, 2)) for _ in range(n)])
    if family == "linear_gf2":
        return LinearMatroidGF2(rng.integers(0, 2, (int(rng.integers(2, n // 2 + 3)), n)))
    sets = [
        rng.choice(n, int(rng.integers(1, min(n, 5) + 1)), replace=False) for _ in range(n // 2)
    ]
    return TransversalMatroid(n, sets)


def gnp_graphic_instance(
    n_vertices: int, seed: Seed = None, *, mean_degree: float = 8.0
) -> tuple[GraphicMatroid, np.ndarray]:
    """The graphic matroid of an Erdős–Rényi graph G(n_v, p), p = mean_degree / (n_v - 1).

    The graph is ``networkx.gnp_random_graph(n_v, p, seed=s)`` with ``s`` drawn from ``seed``;
    the weights are then uniform in [0, 1). With ``mean_degree = 8``, n ≈ 4 n_v edges and
    r ≈ n_v - 1 (E4: n and r both grow).

    Parameters
    ----------
    n_vertices
        Vertices n_v, 2 to ``MAX_GNP_VERTICES``.
    seed
        Randomness of the graph, then of the weights.
    mean_degree
        Expected degree, in ``[0, n_vertices - 1]``.

    Returns
    -------
    (GraphicMatroid, ndarray)
        The matroid (edges in networkx's order) and its float64 weights.

    Raises
    ------
    TypeError, ValueError
        If ``n_vertices`` or ``mean_degree`` is out of range.

    Examples
    --------
    >>> matroid, weights = gnp_graphic_instance(50, seed=0)
    >>> len(matroid.vertices), len(weights) == matroid.n
    (50, True)
    """
    import networkx as nx

    from icml26.matroid.graphic import GraphicMatroid

    owner = "gnp_graphic_instance"
    n_vertices = check_positive_int(
        "n_vertices", n_vertices, owner=owner, minimum=2, maximum=MAX_GNP_VERTICES
    )
    mean_degree = check_in_interval(
        "mean_degree", mean_degree, low=0.0, high=n_vertices - 1, owner=owner
    )
    rng = numpy_generator(seed)
    p = mean_degree / (n_vertices - 1)
    graph = nx.gnp_random_graph(n_vertices, p, seed=int(rng.integers(2**31)))
    matroid = GraphicMatroid.from_networkx(graph)
    return matroid, rng.random(matroid.n)
