"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the parameter, and the fixed
functions still compute what they did on valid input (checked by hand)."""

import numpy as np
import pytest
import torch

from icml26.hyperdepth import (
    HyperDepth,
    Hypergraph,
    PolyFilter,
    ProjectorFilter,
    PrototypeTree,
    drop_incidence_mask,
    edge_means,
    evaluate_embedding,
    gibbs,
    group_info_nce,
    load_hypergraphx,
    load_tricl_format,
    make_view,
    mask_features,
    membership_loss,
    projection_head,
    spectral_filters,
)


def test_filters_check_operator_order_flag_and_signal():
    P = torch.eye(3)
    with pytest.raises(TypeError, match="propagation"):
        PolyFilter(2.5, 2, high=False)
    with pytest.raises(ValueError, match="K"):
        PolyFilter(P, 2**31, high=False)
    with pytest.raises(TypeError, match="high"):
        PolyFilter(P, 2, high="yes")
    with pytest.raises(ValueError, match="basis"):
        ProjectorFilter(torch.zeros(()), 0.0, high=False)
    with pytest.raises(ValueError, match="z"):
        PolyFilter(P, 2, high=False)(torch.zeros(4, 2))
    with pytest.raises(TypeError, match="hg"):
        spectral_filters(None)
    with pytest.raises(TypeError, match="dtype"):
        spectral_filters(Hypergraph(3, [[0, 1, 2]]), dtype=torch.int8)


def test_filter_matrix_in_another_dtype_is_the_operator_by_hand():
    # P = the 2-cycle swap; P^2 = I, so F_L = I and F_H = 0, whatever the dtype asked for
    P = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    low = PolyFilter(P, 2, high=False).matrix(torch.float64)
    assert low.dtype == torch.float64 and torch.equal(low, torch.eye(2, dtype=torch.float64))
    assert not PolyFilter(P, 2, high=True).matrix().any()


def test_objectives_check_shapes_kinds_and_incidences():
    z = torch.tensor([[1.0, 0.0], [3.0, 2.0], [5.0, 4.0]])
    node, edge = torch.tensor([0, 1, 1, 2]), torch.tensor([0, 0, 1, 1])
    means, counts = edge_means(z, node, edge, 3)
    # by hand: edge 0 = mean(z0, z1), edge 1 = mean(z1, z2), edge 2 empty -> 0
    assert means.tolist() == [[2.0, 1.0], [4.0, 3.0], [0.0, 0.0]] and counts.tolist() == [2, 2, 0]
    with pytest.raises(ValueError, match="z"):
        edge_means(torch.zeros(()), node, edge, 3)
    with pytest.raises(ValueError, match="edge_idx"):
        edge_means(z, node, edge, 1)
    with pytest.raises(TypeError, match="node_idx"):
        edge_means(z, node.float(), edge, 3)
    with pytest.raises(TypeError, match="e1"):
        group_info_nce(None, z, torch.ones(3, dtype=torch.bool))
    with pytest.raises(TypeError, match="keep"):
        group_info_nce(z, z, torch.ones(3))
    with pytest.raises(ValueError, match="z_nodes"):
        membership_loss(torch.zeros(()), z, node, edge, torch.eye(2))
    with pytest.raises(ValueError, match="node_idx"):
        membership_loss(z, z, node[:0], edge[:0], torch.eye(2))


def test_gibbs_refuses_a_zero_temperature_instead_of_returning_nan():
    with pytest.raises(ValueError, match="tau"):
        gibbs(torch.tensor([1.0, 2.0]), 0.0)
    q = gibbs(torch.tensor([0.0, np.log(3.0)], dtype=torch.float64), 1.0)
    assert q.tolist() == pytest.approx([0.75, 0.25])  # softmax(0, -log 3) = (3, 1) / 4


def test_prototype_tree_checks_level_points_and_posteriors():
    tree = PrototypeTree(2, sizes=(4, 2))
    with pytest.raises(ValueError, match="level"):
        tree.parents(10**12)
    assert tree.parents(0).tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="u"):
        tree.init_from(torch.zeros(0, 2))
    with pytest.raises(ValueError, match="u"):
        tree.energy(torch.zeros(0, 2))
    with pytest.raises(ValueError, match="q"):
        tree.energy(torch.zeros(3, 2), q=[torch.zeros(3, 4)])
    with pytest.raises(ValueError, match="sizes"):
        PrototypeTree(2**20, sizes=(2**10, 2))
    u = torch.randn(5, 2, generator=torch.Generator().manual_seed(0))
    assert [tuple(q.shape) for q in tree(u)] == [(5, 4), (5, 2)]


def test_data_and_view_functions_check_their_inputs():
    hg = Hypergraph(3, [[0, 1, 2]])
    with pytest.raises(TypeError, match="x"):
        mask_features(np.zeros(()), 0.0)
    with pytest.raises(TypeError, match="x"):
        mask_features(np.zeros((2, 3), dtype=np.int64), 0.0)
    with pytest.raises(TypeError, match="hg"):
        drop_incidence_mask(None, 0.0)
    with pytest.raises(TypeError, match="hg"):
        make_view(torch.zeros(3, 2), None, 0.0, 0.0, 0)
    with pytest.raises(ValueError, match="x"):
        make_view(torch.zeros(4, 2), hg, 0.0, 0.0, 0)
    with pytest.raises(TypeError, match="root"):
        load_tricl_format(None, "cora")
    with pytest.raises(ValueError, match="dim"):
        load_hypergraphx("workplace", dim=2**31)
    with pytest.raises(ValueError, match="proj_dim"):
        projection_head(4, 2**31)


def test_evaluate_embedding_names_its_own_parameters():
    with pytest.raises(ValueError, match="z"):
        evaluate_embedding(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="y_coarse"):
        evaluate_embedding(np.zeros((4, 2)), np.zeros(4), np.zeros(3))


def test_losses_before_initialize_and_with_junk_say_what_to_do():
    model = HyperDepth(dim=8, proj_dim=8, d_h=4, epochs=1)
    with pytest.raises(ValueError, match="outputs"):
        model.losses([], [])
    with pytest.raises(ValueError, match="dim"):
        HyperDepth(dim=2**31)


def test_losses_after_initialize_checks_outputs_and_views():
    from icml26.hyperdepth import make_hierarchical_hypergraph

    data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=40, dim=4)
    model = HyperDepth(dim=8, proj_dim=8, d_h=4, epochs=1).initialize(data, seed=0)
    with pytest.raises(TypeError, match="outputs"):
        model.losses([1, 2], [])


def test_fuzz_campaign_findings_are_refused_by_name():
    # issue 40's seeded campaign (ICML26_FUZZ_EXAMPLES=48 ICML26_FUZZ_SEED=20261207)
    import torch

    from icml26.hyperdepth import HyperDepthEncoder, probe_splits

    encoder = HyperDepthEncoder(4, dim=8, seed=0)
    with pytest.raises(TypeError, match="graph"):
        encoder(torch.zeros(3, 4), "")
    with pytest.raises(TypeError, match="filters"):
        encoder.propagate(torch.zeros(3, 8), torch.zeros(3, 8), ())
    with pytest.raises(ValueError, match="n must"):
        probe_splits(10**12)  # refused before a 10^12-long permutation is drawn


def test_second_fuzz_campaign_findings_are_refused_by_name():
    # issue 40's second seeded campaign (ICML26_FUZZ_EXAMPLES=48 ICML26_FUZZ_SEED=7)
    import torch

    from icml26.hyperdepth import free_energy, make_hierarchical_hypergraph

    with pytest.raises(ValueError, match="tau"):
        free_energy(torch.tensor([-2.0]), 1e300)  # -tau log K was NaN in float32
    with pytest.raises(ValueError, match="dist"):
        free_energy(torch.tensor(-2.0), 1.0)  # nothing on the last axis
    with pytest.raises(ValueError, match="coarse_std"):
        make_hierarchical_hypergraph(n_per_fine=10, n_edges=20, dim=4, coarse_std=float("inf"))
    with pytest.raises(ValueError, match="basis"):
        ProjectorFilter(torch.tensor([[3.75, float("inf")], [0.0, 1.0]]), 0.0, high=False)
