"""Spec §7 item 10 (generator), kNN hypergraphs and the real-data loaders."""

import numpy as np

from icml26.hyperdepth import (
    Hypergraph,
    knn_hypergraph,
    load_digits_hypergraph,
    load_hypergraphx,
    make_hierarchical_hypergraph,
)


def test_generator_structure_and_member_rates():
    data = make_hierarchical_hypergraph(n_per_fine=50, n_edges=600, dim=16, seed=0)
    y, yc = data.y, data.y_coarse
    assert data.x.shape == (600, 16)
    fine_to_coarse = {int(f): {int(c) for c in yc[y == f]} for f in np.unique(y)}
    assert all(len(c) == 1 for c in fine_to_coarse.values())  # a tree: one parent per class
    sizes = data.hypergraph.edge_sizes
    assert sizes.min() >= 3 and sizes.max() <= 8
    assert all(len(set(e)) == len(e) for e in data.hypergraph.hyperedges)
    # Members after the anchor (listed first) agree with its fine class w.p. 0.55 and with its
    # coarse class only w.p. 0.30 — up to the redraw of repeats, which removes a little mass
    # from the small fine pool (50 nodes): bands of ±0.03 around the nominal rates.
    anchor_fine, anchor_coarse, member_fine, member_coarse = [], [], [], []
    for edge in data.hypergraph.hyperedges:
        for v in edge[1:]:
            anchor_fine.append(y[edge[0]])
            anchor_coarse.append(yc[edge[0]])
            member_fine.append(y[v])
            member_coarse.append(yc[v])
    same_fine = np.equal(anchor_fine, member_fine)
    same_coarse_only = np.equal(anchor_coarse, member_coarse) & ~same_fine
    assert abs(same_fine.mean() - 0.55) < 0.03
    assert abs(same_coarse_only.mean() - 0.30) < 0.03


def test_generator_is_reproducible():
    a = make_hierarchical_hypergraph(n_per_fine=10, n_edges=30, dim=4, seed=5)
    b = make_hierarchical_hypergraph(n_per_fine=10, n_edges=30, dim=4, seed=5)
    c = make_hierarchical_hypergraph(n_per_fine=10, n_edges=30, dim=4, seed=6)
    assert a.hypergraph == b.hypergraph and np.array_equal(a.x, b.x)
    assert a.hypergraph != c.hypergraph


def test_knn_hypergraph_matches_brute_force():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    hg = knn_hypergraph(X, k=4)
    d = ((X[:, None] - X[None]) ** 2).sum(-1)
    for i, edge in enumerate(hg.hyperedges):
        assert edge[0] == i and len(edge) == 5
        assert set(edge[1:]) == set(np.argsort(d[i])[1:5])


def test_digits_hypergraph():
    data = load_digits_hypergraph(k=10)
    assert data.x.shape == (1797, 64) and data.hypergraph.num_edges == 1797
    assert set(np.unique(data.y)) == set(range(10))
    np.testing.assert_allclose(data.x.mean(0), 0.0, atol=1e-5)


def test_high_school_from_hypergraphx():
    data = load_hypergraphx("high_school", dim=16)
    hg = data.hypergraph
    assert (hg.num_nodes, hg.num_edges) == (327, 7818)
    assert hg.edge_sizes.min() == 2 and hg.edge_sizes.max() == 5
    assert len(np.unique(data.y)) == 9 and len(np.unique(data.y_coarse)) == 4
    for f in np.unique(data.y):  # fine classes nest in their subject
        assert len(np.unique(data.y_coarse[data.y == f])) == 1
    assert data.x.shape == (327, 16)


def test_workplace_and_walmart_from_hypergraphx():
    work = load_hypergraphx("workplace", dim=8)
    assert work.num_nodes == 92 and len(np.unique(work.y)) == 5 and work.y_coarse is None
    walmart = load_hypergraphx("walmart", dim=4)
    assert walmart.num_nodes == 57910 and walmart.y is None
    assert walmart.hypergraph.num_edges == 48482


def test_from_hypergraphx_relabels_sorted_ids_and_keeps_weights_unless_told_not_to():
    # Issue 49, item 9: the weights were dropped unless weighted=True was passed.
    import hypergraphx

    source = hypergraphx.Hypergraph([(10, 20, 30), (30, 40)], weighted=True, weights=[2.0, 3.0])
    hg = Hypergraph.from_hypergraphx(source)
    assert hg.hyperedges == ((0, 1, 2), (2, 3))
    np.testing.assert_array_equal(hg.weights, [2.0, 3.0])
    unit = Hypergraph.from_hypergraphx(source, weighted=False)
    np.testing.assert_array_equal(unit.weights, [1.0, 1.0])
    unweighted = hypergraphx.Hypergraph([(1, 2)])  # holds unit weights
    np.testing.assert_array_equal(Hypergraph.from_hypergraphx(unweighted).weights, [1.0])
