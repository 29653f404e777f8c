"""GraphicMatroid on networkx graphs: the `weight` attribute, edges (u, v, key), and agreement
with networkx's own `maximum_spanning_tree` on multigraphs with loops and parallel edges."""

import networkx as nx
import numpy as np
import pytest

from icml26.matroid import (
    CostCounter,
    GraphicMatroid,
    bounded_circuit_max_weight_basis,
    max_weight_basis,
    rank,
)


def random_multigraph(rng, *, integer_weights: bool) -> nx.MultiGraph:
    """Random multigraph: isolated vertices, loops, parallel edges, some edges without weight."""
    n_vertices = int(rng.integers(2, 12))
    G = nx.MultiGraph()
    G.add_nodes_from(range(n_vertices))
    for _ in range(int(rng.integers(0, 3 * n_vertices))):
        u, v = (int(x) for x in rng.integers(0, n_vertices, 2))
        if rng.uniform() < 0.15:
            v = u  # loop
        if rng.uniform() < 0.1:
            G.add_edge(u, v)  # no weight attribute: weighs 1 in both libraries
        else:
            w = int(rng.integers(-5, 6)) if integer_weights else float(rng.normal())
            G.add_edge(u, v, weight=w)
        if rng.uniform() < 0.2:
            G.add_edge(u, v, weight=float(rng.normal()))  # a parallel copy
    return G


def total_weight(G: nx.MultiGraph, edges) -> float:
    return sum(G.edges[e].get("weight", 1) for e in edges)


def is_spanning_forest(G: nx.MultiGraph, edges) -> bool:
    F = nx.MultiGraph()
    F.add_nodes_from(G)
    F.add_edges_from(edges)
    # a forest whose components are G's components: |F| = |V| - c(G) edges and no cycle
    same_components = nx.number_connected_components(F) == nx.number_connected_components(G)
    return nx.is_forest(F) and same_components


@pytest.mark.parametrize("seed", range(40))
def test_max_weight_basis_of_a_multigraph_matches_networkx_maximum_spanning_tree(seed):
    rng = np.random.default_rng(seed)
    # integer weights: many ties, so only the total weight is unique
    G = random_multigraph(rng, integer_weights=seed % 2 == 0)
    ours = max_weight_basis(G)
    reference = list(nx.maximum_spanning_tree(G).edges(keys=True))
    assert all(len(e) == 3 and G.has_edge(*e) for e in ours)
    assert len(set(ours)) == len(ours)
    assert is_spanning_forest(G, ours)
    assert len(ours) == len(reference) == G.number_of_nodes() - nx.number_connected_components(G)
    # float64 sums of the same few numbers in different orders: 1e-9 covers the rounding
    assert total_weight(G, ours) == pytest.approx(total_weight(G, reference), abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_with_distinct_weights_the_forest_is_networkx_forest_edge_for_edge(seed):
    rng = np.random.default_rng(100 + seed)
    G = nx.MultiGraph()
    for w in rng.permutation(60).astype(float):  # distinct weights: the max forest is unique
        G.add_edge(*(int(x) for x in rng.integers(0, 15, 2)), weight=w)
    reference = {(frozenset(e[:2]), e[2]) for e in nx.maximum_spanning_tree(G).edges(keys=True)}
    assert {(frozenset(e[:2]), e[2]) for e in max_weight_basis(G)} == reference


def test_a_simple_graph_gives_pairs_and_reads_the_weight_attribute():
    G = nx.Graph()
    G.add_weighted_edges_from([("a", "b", 1.0), ("b", "c", 2.0), ("a", "c", 3.0)])
    assert max_weight_basis(G) == [("a", "c"), ("b", "c")]
    M = GraphicMatroid(G)
    assert M.edges == list(G.edges()) and M.weights.tolist() == [1.0, 3.0, 2.0]
    assert rank(M) == 2


def test_other_weight_attribute_and_explicit_weights():
    G = nx.MultiGraph([(0, 1, {"cost": 5.0, "weight": 0.0}), (0, 1, {"cost": 1.0, "weight": 9.0})])
    assert max_weight_basis(G, "cost") == [(0, 1, 0)]
    assert max_weight_basis(G) == [(0, 1, 1)]
    assert max_weight_basis(G, [0.0, -1.0]) == [(0, 1, 0)]  # one weight per edge, keys order
    assert GraphicMatroid(G, weight=None).weights.tolist() == [1.0, 1.0]


def test_matroid_from_graph_uses_its_weights_and_maps_ids_to_edges():
    G = random_multigraph(np.random.default_rng(7), integer_weights=False)
    M = GraphicMatroid(G)
    ids = max_weight_basis(M)  # an oracle still gives ids; None means the graph's weights
    assert M.edges_of(ids) == max_weight_basis(G)
    counter = CostCounter(M)  # a wrapped oracle: the weights are passed explicitly
    assert max_weight_basis(counter, M.weights) == ids
    assert M.vertices == list(G.nodes) and M.n == G.number_of_edges()
    assert M.edges == list(G.edges(keys=True))


def test_pairs_keep_their_old_meaning():
    M = GraphicMatroid([(0, 1), (1, 2), (0, 2), (0, 1)])
    assert M.weights.tolist() == [1.0] * 4 and M.edges == [(0, 1), (1, 2), (0, 2), (0, 1)]
    assert max_weight_basis(M) == [0, 1]  # equal weights: scan by id, as before


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: GraphicMatroid(nx.DiGraph([(0, 1)])), TypeError, "undirected"),
        (lambda: max_weight_basis(nx.MultiDiGraph([(0, 1)])), TypeError, "undirected"),
        (lambda: GraphicMatroid(nx.Graph([(0, 1, {"weight": "x"})])), TypeError, "weight"),
        (lambda: GraphicMatroid(nx.Graph([(0, 1, {"weight": np.nan})])), ValueError, "weight"),
        (lambda: GraphicMatroid(nx.Graph([(0, 1, {"weight": True})])), TypeError, "weight"),
        (lambda: GraphicMatroid(nx.path_graph(3), weight=3), TypeError, "weight"),
        (lambda: max_weight_basis(nx.path_graph(3), [1.0]), ValueError, "weights"),
        (lambda: GraphicMatroid.from_networkx([(0, 1)]), TypeError, "graph"),
        (lambda: GraphicMatroid([(0, 1)]).edges_of([2]), ValueError, "elements"),
        (lambda: GraphicMatroid([(0, 1)]).edges_of([0.5]), TypeError, "elements"),
    ],
)
def test_bad_graph_input_is_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("seed", range(5))
def test_bounded_circuit_basis_of_a_triangle_multigraph_is_networkx_forest(seed):
    rng = np.random.default_rng(200 + seed)
    G = nx.MultiGraph()
    for t in range(40):  # disjoint triangles with doubled edges and loops: every cycle <= 3 edges
        a, b, c = 3 * t, 3 * t + 1, 3 * t + 2
        for u, v in [(a, b), (b, c), (c, a), (a, b), (c, c)]:
            G.add_edge(u, v, weight=float(rng.normal()))
    ours = bounded_circuit_max_weight_basis(G, None, 3, seed=seed)
    assert ours == max_weight_basis(G)  # Las Vegas: always the greedy basis
    reference = list(nx.maximum_spanning_tree(G).edges(keys=True))
    assert is_spanning_forest(G, ours)
    # continuous weights: distinct almost surely, so the forests coincide edge for edge
    key = {(frozenset(e[:2]), e[2]) for e in reference}
    assert {(frozenset(e[:2]), e[2]) for e in ours} == key
    M = GraphicMatroid(G)
    assert bounded_circuit_max_weight_basis(M, None, 3, seed=seed) == max_weight_basis(M)
