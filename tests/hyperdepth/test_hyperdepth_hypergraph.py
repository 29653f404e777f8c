"""Spec §7 items 1, 2 and 11: the HGNN propagation, the graph special case, augmentations."""

import numpy as np
import pytest
import torch

from icml26.hyperdepth import Hypergraph, drop_incidence_mask, mask_features


def random_hypergraph(n=30, m=25, seed=0, weighted=True):
    rng = np.random.default_rng(seed)
    edges = [sorted(rng.choice(n, int(rng.integers(2, 7)), replace=False)) for _ in range(m)]
    weights = rng.uniform(0.5, 2.0, m) if weighted else None
    return Hypergraph(n, edges, weights)


def test_propagation_is_symmetric_with_spectrum_in_unit_interval_and_top_eigenvector():
    hg = random_hypergraph().with_self_loops()
    P = hg.propagation_scipy().toarray()
    np.testing.assert_allclose(P, P.T, atol=1e-12)  # float64 round-off
    eigenvalues = np.linalg.eigvalsh(P)
    assert eigenvalues.min() >= -1e-10 and eigenvalues.max() <= 1 + 1e-10
    v = np.sqrt(hg.node_degrees)  # D_v^{1/2} 1 has eigenvalue 1
    np.testing.assert_allclose(P @ v, v, atol=1e-12)
    # Row sums of the random-walk form D_v^-1 H W D_e^-1 H^T are 1.
    H = hg.incidence().toarray()
    walk = np.diag(1 / hg.node_degrees) @ H @ np.diag(hg.weights / hg.edge_sizes) @ H.T
    np.testing.assert_allclose(walk.sum(1), 1.0, atol=1e-12)


def test_torch_propagation_matches_scipy():
    hg = random_hypergraph(seed=1).with_self_loops()
    dense = hg.propagation(torch.float64).to_dense().numpy()
    np.testing.assert_allclose(dense, hg.propagation_scipy().toarray(), atol=1e-15)


def test_view_propagation_matches_the_dense_formula_with_emptied_edges():
    from icml26.hyperdepth.hypergraph import propagation_from_incidence

    hg = random_hypergraph(seed=2).with_self_loops()
    keep = drop_incidence_mask(hg, 0.6, 0)
    node_idx, edge_idx = (a[keep] for a in hg.incidence_pairs)
    H = np.zeros((hg.num_nodes, hg.num_edges))
    H[node_idx, edge_idx] = 1.0
    d_e = H.sum(0)
    assert (d_e == 0).any()  # the zero-inverse convention is exercised
    inv_de = np.divide(1.0, d_e, out=np.zeros_like(d_e), where=d_e > 0)
    left = H / np.sqrt(H @ hg.weights)[:, None]
    expected = left @ np.diag(hg.weights * inv_de) @ left.T
    P = propagation_from_incidence(node_idx, edge_idx, hg.num_nodes, hg.num_edges, hg.weights)
    np.testing.assert_allclose(P.toarray(), expected, atol=1e-15)


def test_two_uniform_hypergraph_is_half_identity_plus_normalised_adjacency():
    rng = np.random.default_rng(3)
    n = 12
    pairs = {tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(30)}
    pairs |= {(i, i + 1) for i in range(n - 1)}  # connected: no isolated node
    hg = Hypergraph(n, [list(p) for p in sorted(pairs)])
    A = np.zeros((n, n))
    for i, j in pairs:
        A[i, j] = A[j, i] = 1
    d = A.sum(1)
    expected = 0.5 * (np.eye(n) + A / np.sqrt(np.outer(d, d)))
    np.testing.assert_allclose(hg.propagation_scipy().toarray(), expected, atol=1e-14)


def test_propagation_equals_dhg_l_hgnn_and_round_trips_through_dhg():
    hg = random_hypergraph(seed=4)
    reference = hg.to_dhg().L_HGNN.to_dense().double().numpy()
    # dhg stores float32: agreement to float32 round-off.
    np.testing.assert_allclose(hg.propagation_scipy().toarray(), reference, atol=1e-6)
    back = Hypergraph.from_dhg(hg.to_dhg())
    assert {tuple(sorted(e)) for e in back.hyperedges} == {tuple(e) for e in hg.hyperedges}


def test_laplacian_eigenpairs_reconstruct_identity_minus_p():
    hg = random_hypergraph(seed=5).with_self_loops()
    lam, U = hg.laplacian_eigh()
    assert np.all(np.diff(lam) >= -1e-12) and abs(lam[0]) < 1e-10
    L = U @ np.diag(lam) @ U.T
    np.testing.assert_allclose(
        L, np.eye(hg.num_nodes) - hg.propagation_scipy().toarray(), atol=1e-12
    )


def test_from_incidence_and_self_loops():
    hg = Hypergraph.from_incidence([0, 1, 2, 2, 3], [0, 0, 0, 1, 1], 5, 2)
    assert hg.hyperedges == ((0, 1, 2), (2, 3))
    loops = hg.with_self_loops()
    assert loops.num_edges == 2 + 5
    assert loops.with_self_loops() == loops  # idempotent: every node already has a loop
    assert loops.self_loop_mask().sum() == 5


def test_hypergraph_is_immutable():
    hg = Hypergraph(3, [[0, 1]])
    with pytest.raises(AttributeError, match="immutable"):
        hg.num_nodes = 4
    with pytest.raises(ValueError, match="read-only"):
        hg.weights[0] = 2.0


def test_drop_rate_zero_is_the_identity():
    hg = random_hypergraph(seed=6).with_self_loops()
    assert hg.drop_incidence(0.0, 0) == hg
    x = np.random.default_rng(0).standard_normal((hg.num_nodes, 5))
    np.testing.assert_array_equal(mask_features(x, 0.0, 0), x)


def test_incidence_dropping_rate_and_self_loops_kept():
    hg = random_hypergraph(n=200, m=400, seed=7).with_self_loops()
    loops = hg.self_loop_mask()
    keep = np.stack([drop_incidence_mask(hg, 0.3, s) for s in range(20)])
    assert keep[:, loops].all()  # self-loops are never dropped
    dropped = 1 - keep[:, ~loops].mean()
    # ~ 20 × 1,600 Bernoulli(0.3) draws: standard error ≈ 0.0026, so 0.015 is ~6 sigma.
    assert abs(dropped - 0.3) < 0.015
    view = hg.drop_incidence(0.3, 0)
    assert all(len(e) >= 1 for e in view.hyperedges)
    assert view.with_self_loops().num_edges == view.num_edges  # every loop survived


def test_feature_masking_drops_whole_columns_at_rate_p():
    x = np.ones((10, 4000))
    masked = mask_features(x, 0.25, 0)
    assert np.all((masked == 0).all(0) | (masked == 1).all(0))  # one mask for all nodes
    # 4,000 columns: standard error 0.0068, tolerance ~4 sigma.
    assert abs((masked[0] == 0).mean() - 0.25) < 0.03
    xt = torch.ones(3, 8, dtype=torch.float64)
    assert mask_features(xt, 0.5, 0).dtype == torch.float64


def test_self_loops_are_built_once_and_equal_a_fresh_build():
    """Issue 51: with_self_loops() is cached per instance; the cached graph is the one a fresh
    build gives (same hyperedges, weights and incidences) and it is immutable too."""
    hg = Hypergraph(5, [[0, 1, 2], [3], [2, 4]], weights=[2.0, 1.0, 0.5])
    looped = hg.with_self_loops()
    assert hg.with_self_loops() is looped
    fresh = Hypergraph(5, [[0, 1, 2], [3], [2, 4], [0], [1], [2], [4]], [2.0, 1.0, 0.5, 1, 1, 1, 1])
    assert looped.hyperedges == fresh.hyperedges
    np.testing.assert_array_equal(looped.weights, fresh.weights)
    for a, b in zip(looped.incidence_pairs, fresh.incidence_pairs, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(AttributeError, match="immutable"):
        looped._looped = None
