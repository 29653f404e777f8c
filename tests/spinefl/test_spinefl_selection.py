"""Selection rules (spec §7 items 6, 7, 8, 10): index invariants, the sampling law, histories."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.spinefl import (
    MagnitudeSelector,
    OrderedDropoutSelector,
    RandomSelector,
    RollingSelector,
    SliceableMLP,
    SpineSelector,
    StaticSelector,
    SubmodelServer,
    gumbel_topk,
    sub_width,
)


def test_gumbel_top1_matches_the_weights_chi_square():
    # Item 7: k = 1 picks j with probability s_j / sum s (chi-square over 20 000 draws).
    s = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    rng = np.random.default_rng(0)
    picks = np.array([gumbel_topk(np.log(s), 1, rng)[0] for _ in range(20_000)])
    counts = np.bincount(picks, minlength=s.size)
    p = stats.chisquare(counts, 20_000 * s / s.sum()).pvalue
    assert p > 1e-3


def test_gumbel_topk_equals_successive_sampling_without_replacement():
    # P(first = i, second = j) = s_i / S * s_j / (S - s_i): exact law of the ordered pair.
    s = np.array([1.0, 3.0, 6.0])
    rng = np.random.default_rng(1)
    draws = 30_000
    pairs = [tuple(gumbel_topk(np.log(s), 2, rng)) for _ in range(draws)]
    S = s.sum()
    cells = [(i, j) for i in range(3) for j in range(3) if i != j]
    observed = [sum(p == c for p in pairs) for c in cells]
    expected = [draws * s[i] / S * s[j] / (S - s[i]) for i, j in cells]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_spine_equal_scores_give_uniform_inclusion_in_the_dynamic_portion():
    # Item 7: equal histories => P(j in S) = k / |D| for every dynamic j (within 3 sigma).
    sel = SpineSelector(beta=0.5)
    sel.set_min_widths({"fc": 4})  # backbone {0, 1}
    N, n, draws = 12, 6, 6000
    rng = np.random.default_rng(2)
    hits = np.zeros(N)
    for t in range(draws):
        hits[sel.select("fc", N, n, t, 0, rng)] += 1
    assert np.all(hits[:2] == draws)  # the backbone is always in
    p = (n - 2) / (N - 2)
    sigma = math.sqrt(draws * p * (1 - p))
    assert np.all(np.abs(hits[2:] - draws * p) < 3 * sigma)


def test_higher_history_means_higher_inclusion_and_t0_is_top_k():
    sel = SpineSelector(beta=0.0)
    sel.set_min_widths({"fc": 2})
    N, n = 6, 3
    rng = np.random.default_rng(3)
    sel.select("fc", N, n, 0, 0, rng)  # client 0 inherits G = h0
    sel.client_history_[0]["fc"][:] = [0.05, 0.9, 0.1, 0.6, 0.3, 0.8]
    hits = np.zeros(N)
    for t in range(8000):
        hits[sel.select("fc", N, n, t, 0, rng)] += 1
    order = np.argsort(sel.client_history_[0]["fc"])
    assert np.all(np.diff(hits[order]) > 0)  # monotone in the history
    cold = SpineSelector(beta=0.0, temperature=1e-6)
    cold.set_min_widths({"fc": 2})
    cold.select("fc", N, n, 0, 0, rng)
    cold.client_history_[0]["fc"][:] = sel.client_history_[0]["fc"]
    for seed in range(20):
        chosen = cold.select("fc", N, n, 0, 0, np.random.default_rng(seed))
        assert chosen.tolist() == [1, 3, 5]  # exactly the top-3 by history


def test_same_seed_same_set_different_seed_different_set():
    def draw(seed):
        sel = SpineSelector()
        sel.set_min_widths({"fc": 8})
        return sel.select("fc", 64, 32, 0, 0, np.random.default_rng(seed))

    assert np.array_equal(draw(0), draw(0))
    assert not np.array_equal(draw(0), draw(1))


@pytest.mark.parametrize("backbone_mode", ["prefix", "top_global"])
@pytest.mark.parametrize("scope", ["client", "global"])
def test_index_set_invariants_over_rounds(backbone_mode, scope):
    # Item 6: |S| = n(r), unique, sorted, in range, backbone inside, b <= n(r_min).
    model = SliceableMLP([4, 20, 12, 3])
    sel = SpineSelector(scope=scope, backbone_mode=backbone_mode)
    ratios = [1.0, 0.5, 0.25, 0.25]
    server = SubmodelServer(model, sel, ratios, participation=1.0, seed=0)
    rng = np.random.default_rng(0)
    for t in range(6):
        plan = server.plan_round(t)
        for c, sets in zip(plan.clients, plan.index_sets, strict=True):
            for name, N in model.layer_sizes().items():
                idx = sets[name]
                assert idx.size == sub_width(N, ratios[c])
                assert np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] < N
                backbone = sel.backbone(name, N)
                assert backbone.size == math.floor(0.5 * sub_width(N, 0.25))
                assert np.isin(backbone, idx).all()
        # random reports so that top_global backbones move between rounds
        for name in model.layer_sizes():
            for c, sets in zip(plan.clients, plan.index_sets, strict=True):
                sel.update_history(c, name, sets[name], rng.random(sets[name].size), 10 + c)
        sel.commit_round()


def test_history_ema_global_weighted_mean_and_inheritance():
    # Item 8.
    sel = SpineSelector(gamma=0.5, h0=1.0, beta=0.0)
    sel.set_min_widths({"fc": 1})
    rng = np.random.default_rng(0)
    sel.select("fc", 4, 2, 0, 0, rng)
    sel.select("fc", 4, 2, 0, 1, rng)
    sel.update_history(0, "fc", np.array([0, 1]), np.array([0.2, 0.4]), n_samples=1)
    sel.update_history(1, "fc", np.array([1, 2]), np.array([0.8, 0.0]), n_samples=3)
    np.testing.assert_allclose(sel.client_history_[0]["fc"], [0.6, 0.7, 1.0, 1.0], atol=0)
    np.testing.assert_allclose(sel.client_history_[1]["fc"], [1.0, 0.9, 0.5, 1.0], atol=0)
    assert np.all(sel.global_history_["fc"] == 1.0)  # G changes only at commit_round
    sel.commit_round()
    # unit 1: (1 * 0.4 + 3 * 0.8) / 4 = 0.7 -> 0.5 * 1 + 0.5 * 0.7
    np.testing.assert_allclose(sel.global_history_["fc"], [0.6, 0.85, 0.5, 1.0], atol=1e-15)
    sel.select("fc", 4, 2, 1, 7, rng)  # a new client inherits a copy of G
    np.testing.assert_array_equal(sel.client_history_[7]["fc"], sel.global_history_["fc"])
    assert sel.client_history_[7]["fc"] is not sel.global_history_["fc"]


def test_deploy_indices_are_backbone_plus_top_by_global_history():
    sel = SpineSelector(beta=0.5)
    sel.set_min_widths({"fc": 4})
    sel.select("fc", 8, 4, 0, 0, np.random.default_rng(0))
    sel.global_history_["fc"][:] = [0.0, 0.0, 0.1, 0.9, 0.2, 0.8, 0.3, 0.7]
    assert sel.deploy_indices("fc", 8, 5).tolist() == [0, 1, 3, 5, 7]


def test_fedrolex_covers_every_neuron_n_times_in_n_rounds():
    # Item 10.
    sel = RollingSelector()
    rng = np.random.default_rng(0)
    for N, n in [(10, 3), (7, 7), (16, 4)]:
        hits = np.zeros(N, int)
        for t in range(N):
            hits[sel.select("fc", N, n, t, 0, rng)] += 1
        assert np.all(hits == n)


def test_baseline_rules():
    rng = np.random.default_rng(0)
    assert StaticSelector().select("fc", 9, 4, 3, 2, rng).tolist() == [0, 1, 2, 3]
    assert OrderedDropoutSelector().select("fc", 9, 4, 3, 2, rng).tolist() == [0, 1, 2, 3]
    r = RandomSelector().select("fc", 100, 10, 0, 0, rng)
    assert r.size == 10 and np.all(np.diff(r) > 0)
    mag = MagnitudeSelector()
    mag.observe_weights({"fc": np.array([0.5, 0.1, 0.9, 0.9, 0.2])})
    assert mag.select("fc", 5, 3, 0, 0, rng).tolist() == [0, 2, 3]


def test_magnitude_selector_sees_the_global_row_norms():
    model = SliceableMLP([3, 5, 2])
    rows = torch.tensor([1.0, 3.0, 0.1, 2.0, 0.5])[:, None].expand(5, 3)
    with torch.no_grad():
        model.layers[0].weight.copy_(rows)
    server = SubmodelServer(model, MagnitudeSelector(), [0.4], participation=1.0)
    assert server.plan_round(0).index_sets[0]["layers.0"].tolist() == [1, 3]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"beta": 1.5}, r"beta must be in \[0, 1\]"),
        ({"beta": -0.1}, r"beta must be in \[0, 1\]"),
        ({"temperature": 0.0}, r"temperature must be in \(0, inf\)"),
        ({"gamma": 1.0}, r"gamma must be in \[0, 1\)"),
        ({"eps": 0.0}, r"eps must be in \(0, inf\)"),
        ({"h0": 1.2}, r"h0 must be in \[0, 1\]"),
        ({"scope": "local"}, "scope must be one of 'client', 'global'"),
        ({"backbone_mode": "random"}, "backbone_mode must be one of 'prefix', 'top_global'"),
    ],
)
def test_bad_spine_selector_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SpineSelector(**kwargs)


def test_bad_selection_requests():
    rng = np.random.default_rng(0)
    sel = SpineSelector()
    with pytest.raises(ValueError, match="call set_min_widths first"):
        sel.select("fc", 8, 4, 0, 0, rng)
    sel.set_min_widths({"fc": 4})
    with pytest.raises(ValueError, match="n must be >= the backbone size 2"):
        sel.select("fc", 8, 1, 0, 0, rng)
    with pytest.raises(ValueError, match="n must be <= N = 8"):
        sel.select("fc", 8, 9, 0, 0, rng)
    sel.select("fc", 8, 4, 0, 0, rng)
    with pytest.raises(ValueError, match=r"freq must lie in \[0, 1\]"):
        sel.update_history(0, "fc", np.array([0, 1]), np.array([0.5, 1.5]), 3)
    with pytest.raises(ValueError, match="sorted distinct integers"):
        sel.update_history(0, "fc", np.array([1, 0]), np.array([0.5, 0.5]), 3)
    with pytest.raises(ValueError, match="freq must have shape"):
        sel.update_history(0, "fc", np.array([0, 1]), np.array([0.5]), 3)
    with pytest.raises(ValueError, match="call observe_weights first"):
        MagnitudeSelector().select("fc", 4, 2, 0, 0, rng)
    with pytest.raises(ValueError, match="k must be <= the number of nonzero weights"):
        gumbel_topk(np.array([0.0, -np.inf]), 2, rng)
    with pytest.raises(ValueError, match="finite values or -inf"):
        gumbel_topk(np.array([np.nan, 0.0]), 1, rng)


@pytest.mark.parametrize(
    "selector", [StaticSelector(), RandomSelector(), RollingSelector(), OrderedDropoutSelector()]
)
def test_a_huge_layer_is_refused_before_indexing_it(selector):
    # issue 40's seeded fuzz campaign: N = n = 2**31 allocated 16 GiB in deploy_indices
    with pytest.raises(ValueError, match="N must"):
        selector.deploy_indices("fc", 2**31, 2**31)
