"""Issue 45 item 3: depth metrics on constructed embeddings — an embedding built to follow the
label tree scores high, the same rows shuffled score about 0, so a wrong sign is caught."""

import numpy as np
import pytest

from icml26.hyperdepth import (
    Hypergraph,
    hyperedge_depth,
    hyperedge_depth_recovery,
    tree_distance_correlation,
)


def three_level_tree(seed=0, per_leaf=10):
    """2 top classes x 2 middle x 3 leaves; leaf offsets shrink with depth (tree embedding)."""
    rng = np.random.default_rng(seed)
    z, leaf, mid, top = [], [], [], []
    for t in range(2):
        c_top = 4.0 * rng.standard_normal(16)
        for m in range(2):
            c_mid = c_top + 1.5 * rng.standard_normal(16)
            for f in range(3):
                c_leaf = c_mid + 0.5 * rng.standard_normal(16)
                z.append(c_leaf + 0.05 * rng.standard_normal((per_leaf, 16)))
                leaf += [6 * t + 3 * m + f] * per_leaf
                mid += [2 * t + m] * per_leaf
                top += [t] * per_leaf
    return np.concatenate(z), [np.array(leaf), np.array(mid), np.array(top)]


def edges_of_every_depth(levels, seed=0, n_edges=120):
    """Hyperedges of 4 members drawn under an ancestor of depth 0 (root) to 3 (one leaf)."""
    rng = np.random.default_rng(seed)
    top_down = levels[::-1]
    edges = []
    for e in range(n_edges):
        depth = e % 4
        anchor = rng.integers(len(levels[0]))
        pool = np.arange(len(levels[0]))
        for level in top_down[:depth]:
            pool = pool[level[pool] == level[anchor]]
        edges.append([int(anchor), *rng.choice(pool, 3, replace=False).tolist()])
    return edges


def test_tree_distance_correlation_sign():
    z, levels = three_level_tree()
    assert tree_distance_correlation(z, levels) > 0.8
    shuffled = np.random.default_rng(1).permutation(z)
    assert abs(tree_distance_correlation(shuffled, levels)) < 0.3
    # an anti-tree embedding (siblings far, cousins near) scores negative
    anti = np.eye(4)[[0, 1, 2, 3, 0, 1, 2, 3] * 3]
    fine = np.repeat(np.arange(6), 4)
    assert tree_distance_correlation(anti + 0.01, [np.arange(24), fine, fine // 3]) < 0


def test_tree_distance_correlation_two_levels_by_hand():
    # siblings 0.2 apart, cousins ~2 apart: every sibling pair is nearer than every cousin pair
    z = [[1.0, 0.1], [1.0, -0.1], [-1.0, 0.1], [-1.0, -0.1]]
    rho = tree_distance_correlation(z, [[0, 1, 2, 3], [0, 0, 1, 1]])
    # pairs (01, 02, 03, 12, 13, 23): distance ranks 1.5, 3.5, 5.5, 5.5, 3.5, 1.5 (sibling pairs
    # tied, then the two cousin distances), tree ranks 1.5, 4.5 x 4, 1.5
    dist_ranks = [1.5, 3.5, 5.5, 5.5, 3.5, 1.5]
    tree_ranks = [1.5, 4.5, 4.5, 4.5, 4.5, 1.5]
    assert rho == pytest.approx(np.corrcoef(dist_ranks, tree_ranks)[0, 1], abs=1e-12)


def test_hyperedge_depth_by_hand():
    levels = [np.array([0, 0, 1, 2, 3]), np.array([0, 0, 0, 1, 1])]
    edges = [[0, 1], [0, 2], [0, 3], [3, 4], [4]]
    assert hyperedge_depth(edges, levels).tolist() == [2, 1, 0, 1, 2]
    assert hyperedge_depth(Hypergraph(5, edges), levels).tolist() == [2, 1, 0, 1, 2]


def test_hyperedge_depth_counts_the_drawn_depth():
    _, levels = three_level_tree()
    edges = edges_of_every_depth(levels)
    depth = hyperedge_depth(edges, levels)
    drawn = np.arange(len(edges)) % 4
    assert (depth >= drawn).all()  # members drawn under a depth-d ancestor share at least it
    assert np.mean(depth == drawn) > 0.7


def test_hyperedge_depth_recovery_sign():
    z, levels = three_level_tree()
    edges = edges_of_every_depth(levels)
    assert hyperedge_depth_recovery(z, edges, levels) > 0.7
    shuffled = np.random.default_rng(2).permutation(z)
    assert abs(hyperedge_depth_recovery(shuffled, edges, levels)) < 0.25


def test_bad_input_is_named():
    z, levels = three_level_tree()
    with pytest.raises(ValueError, match="levels"):
        tree_distance_correlation(z, [levels[0], levels[0] % 2, levels[0] % 3])  # not nested
    with pytest.raises(ValueError, match="levels"):
        tree_distance_correlation(z, [levels[0][:5]])
    with pytest.raises(ValueError, match="levels"):
        tree_distance_correlation(z, [levels[0]])  # one level: every pair equally far
    with pytest.raises(TypeError, match="levels"):
        tree_distance_correlation(z, "abc")
    with pytest.raises(ValueError, match="hyperedges"):
        hyperedge_depth([[0, 999]], levels)
    with pytest.raises(ValueError, match="hyperedges"):
        hyperedge_depth([[]], levels)
    with pytest.raises(ValueError, match="hyperedges"):
        hyperedge_depth_recovery(z, [[0], [1]], levels)
    with pytest.raises(ValueError, match="levels"):
        hyperedge_depth_recovery(z, [[0, 1], [2, 3]], levels)  # both depth 3: nothing to rank
