"""Issue 45 item 4: the three-level synthetic tree whose hyperedges draw their depth, and
Fashion-MNIST with its fixed coarse tree."""

import numpy as np
import pytest

from icml26.hyperdepth import (
    FMNIST_COARSE,
    HypergraphData,
    hyperedge_depth,
    load_fmnist_hypergraph,
    make_tree_hypergraph,
    raw_features,
    tree_distance_correlation,
)


def test_tree_levels_are_nested_and_balanced():
    data = make_tree_hypergraph(n_per_leaf=10, n_edges=50, dim=8, seed=0)
    leaf, mid, top = data.levels
    assert data.label_levels == data.levels
    assert np.array_equal(leaf, data.y) and np.array_equal(top, data.y_coarse)
    assert np.bincount(leaf).tolist() == [10] * 12
    for child, parent in ((leaf, mid), (mid, top)):
        assert all(len(np.unique(parent[child == c])) == 1 for c in np.unique(child))
    assert [len(np.unique(level)) for level in data.levels] == [12, 4, 2]


def test_hyperedges_draw_their_depth():
    data = make_tree_hypergraph(n_per_leaf=25, n_edges=800, dim=8, seed=1)
    depth = hyperedge_depth(data.hypergraph, data.levels)
    shares = np.bincount(depth, minlength=4) / len(depth)
    # uniform draws over depths 0..3; a drawn depth can only rise (members may share more)
    assert shares[3] >= 0.2 and min(shares) > 0.1
    sizes = data.hypergraph.edge_sizes
    assert sizes.min() >= 3 and sizes.max() <= 8
    assert all(len(set(e)) == len(e) for e in data.hypergraph.hyperedges)
    only_deep = make_tree_hypergraph(n_per_leaf=25, n_edges=100, dim=8, depth_probs=(0, 0, 0, 1))
    assert (hyperedge_depth(only_deep.hypergraph, only_deep.levels) == 3).all()
    again = make_tree_hypergraph(n_per_leaf=25, n_edges=800, dim=8, seed=1)
    assert again.hypergraph == data.hypergraph and np.array_equal(again.x, data.x)


def test_tree_features_follow_the_tree():
    data = make_tree_hypergraph(n_per_leaf=25, n_edges=400, dim=64, seed=0)
    assert tree_distance_correlation(data.x, data.levels) > 0.5
    smoothed = raw_features(data.x, data.hypergraph, 2)
    assert tree_distance_correlation(smoothed, data.levels) > 0.5


def test_tree_generator_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="stds"):
        make_tree_hypergraph(stds=(1.0, 1.0))
    with pytest.raises(ValueError, match="depth_probs"):
        make_tree_hypergraph(depth_probs=(0.5, 0.5))
    with pytest.raises(ValueError, match="max_size"):
        make_tree_hypergraph(n_per_leaf=4)
    with pytest.raises(ValueError, match="branching"):
        make_tree_hypergraph(branching=(3,))
    with pytest.raises(ValueError, match="levels"):
        data = make_tree_hypergraph(n_per_leaf=8, n_edges=5, dim=2)
        HypergraphData(data.x, data.hypergraph, data.y, data.y_coarse, levels=(data.y_coarse,))


def test_fmnist_tree_is_the_fixed_one():
    # 0 T-shirt, 2 Pullover, 4 Coat, 6 Shirt: tops; 5 Sandal, 7 Sneaker, 9 Ankle boot: footwear;
    # 1 Trouser, 3 Dress: lower body / one-piece; 8 Bag alone
    assert FMNIST_COARSE == (0, 2, 0, 2, 0, 1, 0, 1, 3, 1)
    data = load_fmnist_hypergraph(n_per_class=20, k=5, dim=16, seed=0)
    assert np.bincount(data.y).tolist() == [20] * 10
    assert np.array_equal(data.y_coarse, np.asarray(FMNIST_COARSE)[data.y])
    assert data.hypergraph.num_edges == 200 and data.x.shape == (200, 16)
    again = load_fmnist_hypergraph(n_per_class=20, k=5, dim=16, seed=0)
    assert np.array_equal(again.x, data.x)
    with pytest.raises(ValueError, match="n_per_class"):
        load_fmnist_hypergraph(n_per_class=5000)
