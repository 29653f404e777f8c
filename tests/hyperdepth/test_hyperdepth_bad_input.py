"""Bad input: each case is a ValueError/TypeError that says what is allowed."""

import numpy as np
import pytest
import torch

from icml26.hyperdepth import (
    HyperDepth,
    HyperDepthEncoder,
    HyperGRACE,
    Hypergraph,
    HypergraphData,
    NotFittedError,
    PrototypeTree,
    TriCLLite,
    alignment,
    dendrogram_purity,
    free_energy,
    info_nce,
    knn_hypergraph,
    linear_probe,
    load_hypergraphx,
    make_hierarchical_hypergraph,
    mask_features,
    probe_splits,
    semantic_flattening_index,
    spectral_filters,
    uniformity,
)


@pytest.fixture(scope="module")
def data():
    return make_hierarchical_hypergraph(n_per_fine=8, n_edges=10, dim=3, seed=0)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, [[0]]), "num_nodes must be an integer >= 1"),
        ((3, [[0, 3]]), r"node ids must lie in \[0, 2\]"),
        ((3, [[0, -1]]), r"node ids must lie in \[0, 2\]"),
        ((3, [[]]), "hyperedge 0 is empty"),
        ((3, [[0, 1, 1]]), "members must be distinct"),
        ((3, [[0, 1]], [-1.0]), "weights must be finite and > 0"),
        ((3, [[0, 1]], [np.nan]), "weights must be finite"),
        ((3, [[0, 1]], [np.inf]), "weights must be finite"),
        ((3, [[0, 1]], [1.0, 2.0]), r"weights must have shape \(1,\)"),
    ],
)
def test_bad_hypergraphs(args, match):
    with pytest.raises(ValueError, match=match):
        Hypergraph(*args)


def test_bad_member_types_and_incidence():
    with pytest.raises(TypeError, match="node ids must be integers"):
        Hypergraph(3, [[0, 1.5]])
    with pytest.raises(ValueError, match="same length"):
        Hypergraph.from_incidence([0, 1], [0], 2, 1)
    with pytest.raises(ValueError, match="hyperedge 1 is empty"):
        Hypergraph.from_incidence([0, 1], [0, 0], 2, 2)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan")])
def test_drop_rates_outside_unit_interval(p):
    hg = Hypergraph(3, [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        hg.drop_incidence(p, 0)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        mask_features(np.ones((3, 2)), p, 0)
    with pytest.raises(ValueError, match=r"p_e must be in \[0, 1\)"):
        HyperDepth(p_e=p)


@pytest.mark.parametrize("cutoff", [0.0, -0.5, 1.01])
def test_cutoff_outside_half_open_interval(cutoff):
    hg = Hypergraph(3, [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"cutoff must be in \(0, 1\]"):
        spectral_filters(hg, "exact", cutoff=cutoff)
    with pytest.raises(ValueError, match=r"cutoff must be in \(0, 1\]"):
        HyperDepthEncoder(3, cutoff=cutoff)


def test_filter_order_and_mode():
    hg = Hypergraph(3, [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"K must be an integer in \[1, 1000\]"):
        spectral_filters(hg, K=0)
    with pytest.raises(ValueError, match="mode must be one of 'poly', 'exact'"):
        spectral_filters(hg, mode="cheb")
    with pytest.raises(ValueError, match=r"K must be an integer in \[1, 1000\]"):
        HyperDepth(K=0)


@pytest.mark.parametrize("sizes", [(4, 4), (4, 8), (6, 4), (), (16, 4, 3)])
def test_tree_sizes_must_decrease_and_divide(sizes):
    with pytest.raises(ValueError, match="sizes must be"):
        PrototypeTree(3, sizes=sizes)
    with pytest.raises(ValueError, match="tree must be"):  # the parameter's own name
        HyperDepth(tree=sizes)


def test_feature_rows_must_match_nodes(data):
    with pytest.raises(ValueError, match="one row per node"):
        HypergraphData(np.ones((5, 2)), Hypergraph(4, [[0, 1]]))
    enc = HyperDepthEncoder(3, dim=4, seed=0)
    with pytest.raises(ValueError, match="one row per node"):
        enc(torch.ones(5, 3), data.hypergraph)
    with pytest.raises(ValueError, match=r"x must have shape \(any, 3\)"):
        enc(torch.ones(data.num_nodes, 2), data.hypergraph)


def test_embed_before_fit_names_fit(data):
    for model in (HyperDepth(), HyperGRACE(), TriCLLite()):
        with pytest.raises(NotFittedError, match=r"call fit\(data\) before embed"):
            model.embed(data)
    assert issubclass(NotFittedError, ValueError)


def test_embed_checks_part_and_feature_width(data):
    model = HyperDepth(dim=4, proj_dim=4, d_h=4, tree=(4, 2), epochs=1).fit(data, seed=0)
    with pytest.raises(ValueError, match="part must be one of 'fused', 'low', 'high', 'concat'"):
        model.embed(data, "middle")
    other = HypergraphData(np.ones((data.num_nodes, 7)), data.hypergraph)
    with pytest.raises(ValueError, match="must have 3 feature columns"):
        model.embed(other)
    with pytest.raises(TypeError, match="data must be a HypergraphData"):
        model.fit(data.x)


def test_label_arrays_of_the_wrong_length(data):
    z = np.random.default_rng(0).standard_normal((data.num_nodes, 3))
    with pytest.raises(ValueError, match="one label per row of z"):
        linear_probe(z, data.y[:-1])
    for Cs in ((), (0.0,), (float("nan"),)):  # issue 40: Cs=() crashed with an IndexError
        with pytest.raises(ValueError, match="Cs"):
            linear_probe(z, data.y, Cs=Cs)
    with pytest.raises(ValueError, match="one label per row of z"):
        semantic_flattening_index(z, data.y, data.y_coarse[:-2])
    with pytest.raises(ValueError, match="one label per row of z"):
        dendrogram_purity(z, data.y[1:])
    with pytest.raises(ValueError, match="one label per node"):
        HypergraphData(data.x, data.hypergraph, y=data.y[:-1])


def test_sfi_needs_sibling_and_cousin_pairs():
    z = np.random.default_rng(0).standard_normal((6, 2))
    with pytest.raises(ValueError, match="needs sibling pairs"):
        semantic_flattening_index(z, [0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2])  # no siblings
    with pytest.raises(ValueError, match="needs sibling pairs"):
        semantic_flattening_index(z, [0, 0, 1, 1, 2, 2], [0] * 6)  # no cousins


def test_other_bad_parameters():
    with pytest.raises(ValueError, match=r"tau must be in \(0, 1e\+06\]"):
        free_energy(torch.zeros(3), 0.0)
    with pytest.raises(ValueError, match="h2 must have shape"):
        info_nce(torch.ones(3, 2), torch.ones(4, 2))
    with pytest.raises(ValueError, match="info_nce: h1 and h2 have no rows"):  # was NaN
        info_nce(torch.ones(0, 2), torch.ones(0, 2))
    with pytest.raises(ValueError, match="alignment: z1 and z2 have no rows"):  # was NaN
        alignment(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="must be at most 268435456"):  # was 192 GiB (campaign 7)
        make_hierarchical_hypergraph(4, 3, 2**31, dim=10**12, max_size=2**31)
    with pytest.raises(ValueError, match="train_ratio \\+ val_ratio must be < 1"):
        probe_splits(100, train_ratio=0.6, val_ratio=0.5)
    with pytest.raises(ValueError, match="k must be < number of points"):
        knn_hypergraph(np.ones((3, 2)), k=3)
    with pytest.raises(ValueError, match="z needs at least 2 rows"):
        uniformity([[1.0, 0.0]])
    with pytest.raises(ValueError, match="name must be one of"):
        load_hypergraphx("karate")
    with pytest.raises(ValueError, match="balance must be one of 'fixed', 'gradnorm'"):
        HyperDepth(balance="auto")
    with pytest.raises(ValueError, match=r"lr must be in \(0, inf\)"):
        HyperGRACE(lr=0.0)
