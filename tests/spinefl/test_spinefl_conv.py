"""Issue 50: the channel-sliced conv net, SpineFL's options, mechanism metrics, shipped data."""

import hashlib
import json
from importlib.resources import files

import numpy as np
import pytest
import torch

from icml26.spinefl import (
    SliceableConvNet,
    SliceableMLP,
    SpineSelector,
    extract_submodel,
    load_fashion_mnist_subset,
    sub_width,
)
from icml26.spinefl.mechanism import client_label_sets, selection_overlap
from icml26.spinefl.training import _masked_step


def test_conv_net_has_about_100k_parameters_and_slices_exactly():
    net = SliceableConvNet(seed=1).eval()
    assert 90_000 < sum(p.numel() for p in net.parameters()) < 110_000
    rng = np.random.default_rng(0)
    sets = {
        name: np.sort(rng.choice(N, sub_width(N, 0.25), replace=False))
        for name, N in net.layer_sizes().items()
    }
    sub = extract_submodel(net, sets).eval()
    x = torch.rand(5, 1, 28, 28)
    # the full net with every dropped channel's activation forced to 0 == the sub-net
    handles = []
    for name, act in net.activation_modules().items():
        keep = torch.zeros(net.layer_sizes()[name])
        keep[sets[name]] = 1.0
        handles.append(act.register_forward_hook(lambda m, i, o, k=keep: o * k.view(1, -1, 1, 1)))
    masked = net(x)
    for h in handles:
        h.remove()
    assert torch.allclose(sub(x), masked, atol=1e-5)
    full = extract_submodel(net, {n: np.arange(N) for n, N in net.layer_sizes().items()})
    assert torch.equal(full(x), net(x))


def test_scaler_divides_pooled_features_only_in_training():
    net = SliceableConvNet()
    x = torch.rand(4, 1, 28, 28)
    net.eval()
    ref = net(x)
    net.rate = 0.5
    assert torch.equal(net(x), ref)  # eval: no scaler
    net.train()
    scaled = net(x)
    net.rate = 1.0
    assert not torch.allclose(scaled, net(x))


def test_fjord_masked_units_do_not_move_by_momentum():
    net = SliceableMLP([3, 4, 2])
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    params = dict(net.named_parameters())
    x, y = torch.rand(8, 3), torch.arange(8) % 2
    torch.nn.functional.cross_entropy(net(x), y).backward()
    opt.step()  # full width: every unit now has a momentum buffer
    before = {k: v.detach().clone() for k, v in params.items()}
    opt.zero_grad(set_to_none=False)
    for p in params.values():
        p.grad.zero_()  # no gradient at all: plain momentum would still move every unit
    _masked_step(net, opt, params, {"layers.0": 2}, {"layers.0": 4})
    w = params["layers.0.weight"]
    assert torch.equal(w[2:], before["layers.0.weight"][2:])  # masked rows frozen
    assert not torch.equal(w[:2], before["layers.0.weight"][:2])  # kept rows moved
    assert torch.equal(params["layers.1.weight"][:, 2:], before["layers.1.weight"][:, 2:])
    assert float(opt.state[w]["momentum_buffer"][2:].abs().sum()) == 0.0


def test_rank_normalised_scores_are_far_from_uniform_and_model_scores_are_required():
    sel = SpineSelector(beta=0.0, score_source="model", rank_normalise=True)
    sel.set_min_widths({"l": 4})
    with pytest.raises(ValueError, match="set_client_scores"):
        sel.select("l", 16, 4, 0, 0, np.random.default_rng(0))
    sel.set_client_scores(0, {"l": np.linspace(0.0, 0.01, 16)})  # tiny spread, full ranks
    sel.select("l", 16, 4, 0, 0, np.random.default_rng(0))
    linear_rank_kl = sel.selection_kl_[0][0]
    assert 0.1 < linear_rank_kl < 0.35  # ~ 1 - log 2 for p ∝ rank
    cold = SpineSelector(beta=0.0, score_source="model", temperature=0.1, rank_normalise=True)
    cold.set_min_widths({"l": 4})
    cold.set_client_scores(0, {"l": np.linspace(0.0, 0.01, 16)})
    cold.select("l", 16, 4, 0, 0, np.random.default_rng(0))
    assert cold.selection_kl_[0][0] > linear_rank_kl  # lower T: further from uniform


def test_nested_backbone_scales_with_the_clients_own_width():
    sel = SpineSelector(beta=0.5, backbone_rule="nested")
    sel.set_min_widths({"l": 2})
    s = sel.select("l", 32, 16, 0, 0, np.random.default_rng(0))
    assert set(range(8)) <= set(s.tolist())  # floor(0.5 * 16) = 8, not floor(0.5 * 2) = 1
    with pytest.raises(ValueError, match="backbone_rule"):
        SpineSelector(backbone_rule="top")


def test_overlap_is_higher_for_label_sharing_clients_when_scores_follow_labels():
    sel = SpineSelector(beta=0.0, score_source="model")
    sel.set_min_widths({"l": 4})
    by_label = {0: np.r_[np.ones(8), np.zeros(8)], 1: np.r_[np.zeros(8), np.ones(8)]}
    labels = [0, 0, 1, 1]
    for c, k in enumerate(labels):
        sel.set_client_scores(c, {"l": by_label[k]})
    sets = client_label_sets([np.full(10, k) for k in labels])
    out = selection_overlap(sel, {"l": 16}, [0.25] * 4, sets)
    assert out["overlap_shared"] == 1.0 and out["overlap_disjoint"] == 0.0
    assert out["specificity_per_client"] == [1.0] * 4
    # scores that ignore labels: no specificity
    for c in range(4):
        sel.set_client_scores(c, {"l": by_label[0]})
    same = selection_overlap(sel, {"l": 16}, [0.25] * 4, sets)
    assert same["specificity_per_client"] == [0.0] * 4


def test_shipped_fashion_mnist_subset_is_balanced_and_recorded():
    Xtr, ytr, _Xva, yva, _Xte, yte = load_fashion_mnist_subset()
    assert Xtr.shape == (12_000, 1, 28, 28) and Xtr.dtype == np.float32
    assert np.bincount(ytr).tolist() == [1200] * 10
    assert np.bincount(yva).tolist() == [200] * 10 and np.bincount(yte).tolist() == [200] * 10
    folder = files("icml26.spinefl") / "data"
    record = json.loads((folder / "fashion_mnist_subset.json").read_text())
    assert len(record["source_sha256"]) == 4 and "default_rng(20261207)" in record["rng"]
    assert "MIT" in (folder / "FASHION_MNIST_LICENSE").read_text()
    with np.load(str(folder / "fashion_mnist_subset.npz")) as raw:
        assert raw["x_train"].dtype == np.uint8
        assert len(set(raw["train_index"]) & set(raw["val_index"])) == 0  # val held out
    digest = hashlib.sha256((folder / "fashion_mnist_subset.npz").read_bytes()).hexdigest()
    assert len(digest) == 64


def test_config_validation_refuses_bad_fields():
    from dataclasses import replace

    from icml26.spinefl import load_synthetic
    from icml26.spinefl.conv_testbed import ConvRecipe
    from icml26.spinefl.experiments.common import CompareConfig
    from icml26.spinefl.experiments.fmnist_conv import ConvConfig

    with pytest.raises(ValueError, match="n_classes"):
        load_synthetic(0, n_classes=0)
    for config, bad in (
        (CompareConfig(), {"rounds": -5}),
        (CompareConfig(), {"gamma": 2}),
        (CompareConfig(), {"methods": ("nope",)}),
        (ConvConfig(), {"n_seeds": 0}),
        (ConvConfig(), {"mode": "x"}),
        (ConvConfig(), {"methods": ("HeteroFL",)}),
        (ConvConfig(), {"methods": ("SpineFL", "SpineFL-no-backbone")}),
    ):
        with pytest.raises(ValueError):
            replace(config, **bad)
    with pytest.raises(ValueError, match="clip"):
        ConvRecipe(clip=0.0)
