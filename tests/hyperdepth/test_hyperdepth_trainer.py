"""Trainers: the scikit-learn contract, determinism, embeddings, ablations, gradnorm."""

import numpy as np
import pytest
import torch
from sklearn.base import clone

from icml26.core import NonFiniteLossError
from icml26.hyperdepth import (
    HyperDepth,
    HyperGRACE,
    HypergraphData,
    TriCLLite,
    make_hierarchical_hypergraph,
    raw_features,
)

SMALL = {"dim": 8, "proj_dim": 8, "epochs": 3}
HD_SMALL = {**SMALL, "d_h": 4, "tree": (4, 2)}


@pytest.fixture(scope="module")
def data():
    return make_hierarchical_hypergraph(n_per_fine=8, n_edges=30, dim=5, seed=0)


@pytest.mark.parametrize(
    "model", [HyperDepth(**HD_SMALL), HyperGRACE(**SMALL), TriCLLite(**SMALL)], ids=type
)
def test_fit_is_deterministic_under_a_seed_and_clone_keeps_the_config(model, data):
    a = clone(model).fit(data, seed=3).embed(data)
    b = clone(model).fit(data, seed=3).embed(data)
    c = clone(model).fit(data, seed=4).embed(data)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert clone(model).get_params() == model.get_params()
    assert a.shape == (data.num_nodes, 8) and np.isfinite(a).all()


def test_fit_leaves_global_rng_alone(data):
    before = torch.random.get_rng_state()
    np_before = np.random.get_state()[1].copy()
    HyperDepth(**HD_SMALL).fit(data, seed=0)
    assert torch.equal(before, torch.random.get_rng_state())
    assert np.array_equal(np_before, np.random.get_state()[1])


def test_embedding_parts(data):
    model = HyperDepth(**HD_SMALL, monitor_every=1).fit(data, seed=0)
    low, high = model.embed(data, "low"), model.embed(data, "high")
    np.testing.assert_allclose(model.embed(data, "concat"), np.hstack([low, high]))
    assert {"loss", "con", "hier", "lam", "uniformity", "sfi"} <= set(model.history_[-1])
    assert len(model.history_) == 3


def test_no_gate_fuses_by_sum_and_coupled_uses_one_branch(data):
    nogate = HyperDepth(**HD_SMALL, gate=False).fit(data, seed=0)
    fused = nogate.embed(data)
    np.testing.assert_allclose(fused, nogate.embed(data, "low") + nogate.embed(data, "high"))
    coupled = HyperDepth(**HD_SMALL, decouple=False).fit(data, seed=0)
    np.testing.assert_array_equal(coupled.embed(data, "low"), coupled.embed(data))


def test_zero_lambda_leaves_the_prototypes_at_their_initial_value(data):
    model = HyperDepth(**HD_SMALL, lam=0.0, weight_decay=0.0).initialize(data, seed=0)
    initial = [p.detach().clone() for p in model.tree_.prototypes]
    model.fit(data, seed=0)
    for before, after in zip(initial, model.tree_.prototypes, strict=True):
        torch.testing.assert_close(before, after.detach())


def test_gradnorm_moves_lambda_and_refresh_runs_the_m_step(data):
    model = HyperDepth(**HD_SMALL, balance="gradnorm", refresh_every=1).fit(data, seed=0)
    lams = [h["lam"] for h in model.history_]
    assert lams[0] != 1.0 and all(lam > 0 for lam in lams)


def test_optional_tricl_terms_add_to_the_contrastive_loss(data):
    one_epoch = {**HD_SMALL, "epochs": 1}
    plain = HyperDepth(**one_epoch).fit(data, seed=0).history_[0]["con"]
    extra = HyperDepth(**one_epoch, w_g=1.0, w_m=1.0).fit(data, seed=0)
    assert extra.history_[0]["con"] > plain  # both added terms are positive


def test_raw_features_is_p_squared_x(data):
    P = data.hypergraph.with_self_loops().propagation_scipy().toarray()
    np.testing.assert_allclose(raw_features(data.x, data.hypergraph, 2), P @ P @ data.x, rtol=1e-5)
    np.testing.assert_allclose(raw_features(data.x, data.hypergraph, 0), data.x)


def test_batch_size_covering_all_nodes_changes_nothing(data):
    full = HyperGRACE(**SMALL).fit(data, seed=1).embed(data)
    covering = HyperGRACE(**SMALL, batch_size=data.num_nodes).fit(data, seed=1).embed(data)
    np.testing.assert_array_equal(full, covering)
    model = HyperDepth(**HD_SMALL, batch_size=10).fit(data, seed=1)
    idx = model._batch(data.num_nodes, torch.Generator().manual_seed(0))
    assert idx.shape == (10,) and len(set(idx.tolist())) == 10
    # InfoNCE over 10 nodes is at most log 10 + 2/τ (cosines in [-1, 1]).
    assert all(h["con"] < np.log(10) + 4 for h in model.history_)


def test_fit_reports_progress_once_per_epoch(data):
    seen = []
    model = HyperDepth(**HD_SMALL).fit(
        data, seed=0, progress=lambda done, total, metrics: seen.append((done, total, metrics))
    )
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [m["loss"] for _, _, m in seen] == [h["loss"] for h in model.history_]
    with pytest.raises(TypeError, match="progress must be"):
        HyperGRACE(**SMALL).fit(data, seed=0, progress="yes")


def test_a_non_finite_loss_stops_fit_before_the_update(data):
    # float32 features at 3e38 overflow the first layer: the epoch-1 loss is NaN
    huge = HypergraphData(np.full_like(data.x, 3e38), data.hypergraph, data.y)
    model = HyperGRACE(**SMALL)
    with pytest.raises(NonFiniteLossError, match=r"HyperGRACE.fit: the loss is nan at step 0"):
        model.fit(huge, seed=0)
    fresh = HyperGRACE(**SMALL).initialize(huge, seed=0)
    for a, b in zip(
        model.encoder_.parameters(), fresh.encoder_.parameters(), strict=True
    ):  # no step was taken
        assert torch.equal(a, b)
