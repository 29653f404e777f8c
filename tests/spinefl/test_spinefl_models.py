"""Slicing (spec §7 items 1, 2, 6): exact sub-networks, full-width identity, index invariants."""

import numpy as np
import pytest
import torch

from icml26.spinefl import (
    SliceableCNN,
    SliceableMLP,
    extract_submodel,
    sub_width,
    submodel_param_index,
)


def _random_sets(model, rng, ratio=0.5):
    return {
        name: np.sort(rng.choice(N, sub_width(N, ratio), replace=False))
        for name, N in model.layer_sizes().items()
    }


def _masked_logits(model, x, index_sets):
    """Full-model logits with every hidden unit outside S forced to zero after its ReLU."""
    handles = []
    for name, module in model.activation_modules().items():
        mask = torch.zeros(model.layer_sizes()[name], dtype=x.dtype)
        mask[torch.as_tensor(index_sets[name])] = 1.0

        def hook(mod, inp, out, mask=mask):
            return out * mask.view((1, -1) + (1,) * (out.dim() - 2))

        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            return model(x)
    finally:
        for h in handles:
            h.remove()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mlp_submodel_equals_masked_full_model(seed):
    # Item 1: zeroed units contribute nothing downstream, so the sliced net is the masked net.
    model = SliceableMLP([7, 12, 9, 4], seed=seed).double()
    rng = np.random.default_rng(seed)
    sets = _random_sets(model, rng, ratio=0.4)
    x = torch.randn(16, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        sub_logits = extract_submodel(model, sets)(x)
    # float64 round-off of two orderings of the same sums: far below the spec's 1e-6
    torch.testing.assert_close(sub_logits, _masked_logits(model, x, sets), atol=1e-12, rtol=0)


@pytest.mark.parametrize("norm", ["sbn", "none"])
def test_cnn_submodel_equals_masked_full_model(norm):
    # Static BN normalises each channel by its own batch statistics, so masking after the
    # ReLU and slicing agree channel by channel; the flatten keeps j * (H W) + p columns.
    model = SliceableCNN(image_size=8, channels=(6, 5), hidden=7, norm=norm, seed=3).double()
    sets = _random_sets(model, np.random.default_rng(3), ratio=0.5)
    x = torch.randn(10, 1, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    model.eval()
    with torch.no_grad():
        sub_logits = extract_submodel(model, sets)(x)
    torch.testing.assert_close(sub_logits, _masked_logits(model, x, sets), atol=1e-10, rtol=0)


@pytest.mark.parametrize(
    "model",
    [SliceableMLP([5, 8, 6, 3]), SliceableCNN(image_size=4, channels=(3, 4), hidden=5)],
)
def test_full_width_extraction_is_identity(model):
    # Item 2: S = all indices reproduces every tensor exactly (a copy, not a view).
    full = {name: np.arange(N) for name, N in model.layer_sizes().items()}
    sub = extract_submodel(model, full)
    for (name, p), (name2, q) in zip(model.named_parameters(), sub.named_parameters(), strict=True):
        assert name == name2
        assert torch.equal(p, q)
        assert p.data_ptr() != q.data_ptr()


def test_param_index_links_consecutive_layers():
    # Item 6: layer l+1's input indices are layer l's output indices; classes are never pruned.
    model = SliceableMLP([4, 10, 8, 3])
    sets = {"layers.0": np.array([1, 4, 9]), "layers.1": np.array([0, 2, 5, 7])}
    index = submodel_param_index(model, sets)
    assert np.array_equal(index["layers.0.weight"][0], sets["layers.0"])
    assert np.array_equal(index["layers.0.weight"][1], np.arange(4))
    assert np.array_equal(index["layers.1.weight"][1], sets["layers.0"])
    assert np.array_equal(index["layers.1.weight"][0], sets["layers.1"])
    assert np.array_equal(index["layers.2.weight"][0], np.arange(3))
    assert np.array_equal(index["layers.2.weight"][1], sets["layers.1"])


def test_cnn_flatten_index_is_channel_major():
    model = SliceableCNN(image_size=4, channels=(3, 4), hidden=5)  # 2x2 positions after pooling
    sets = {"convs.0": np.array([0, 2]), "convs.1": np.array([1, 3]), "fc.0": np.array([4])}
    cols = submodel_param_index(model, sets)["fc.0.weight"][1]
    assert cols.tolist() == [4, 5, 6, 7, 12, 13, 14, 15]


def test_sub_width_rounding():
    assert [sub_width(256, r) for r in (1.0, 0.5, 0.25, 1 / 16)] == [256, 128, 64, 16]
    assert sub_width(30, 0.1) == 3  # 0.1 * 30 is 3.0000000000000004 in floating point
    assert sub_width(3, 0.01) == 1


def test_submodel_is_a_copy_and_leaves_global_untouched():
    model = SliceableMLP([3, 6, 2])
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sub = extract_submodel(model, {"layers.0": np.array([0, 3])})
    with torch.no_grad():
        for p in sub.parameters():
            p.add_(1.0)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k])


@pytest.mark.parametrize(
    ("sets", "match"),
    [
        ({"layers.0": np.array([2, 1])}, "sorted and without duplicates"),
        ({"layers.0": np.array([1, 1])}, "sorted and without duplicates"),
        ({"layers.0": np.array([0, 6])}, r"range\(0, 6\)"),
        ({"layers.0": np.array([-1, 2])}, r"range\(0, 6\)"),
        ({"layers.0": np.array([], dtype=int)}, "non-empty 1-D integer"),
        ({"layers.0": np.array([0.0, 1.0])}, "non-empty 1-D integer"),
        ({}, "missing"),
        ({"layers.0": np.array([0]), "layers.9": np.array([0])}, "unknown"),
    ],
)
def test_bad_index_sets(sets, match):
    model = SliceableMLP([3, 6, 2])
    with pytest.raises(ValueError, match=match):
        extract_submodel(model, sets)
    with pytest.raises(ValueError, match="index_sets"):
        submodel_param_index(model, sets)


def test_bad_model_arguments():
    with pytest.raises(ValueError, match="at least 3 sizes"):
        SliceableMLP([3, 2])
    with pytest.raises(ValueError, match="dims"):
        SliceableMLP([3, 0, 2])
    with pytest.raises(ValueError, match="image_size must be even"):
        SliceableCNN(image_size=7)
    with pytest.raises(ValueError, match="norm must be one of 'sbn', 'none'"):
        SliceableCNN(norm="gn")
    with pytest.raises(TypeError, match="AbstractSliceableModel"):
        extract_submodel(torch.nn.Linear(2, 2), {})
    with pytest.raises(ValueError, match=r"ratio must be in \(0, 1\]"):
        sub_width(10, 1.5)
    with pytest.raises(ValueError, match=r"ratio must be in \(0, 1\]"):
        sub_width(10, 0.0)


def test_same_seed_same_init_and_global_rng_untouched():
    state = torch.random.get_rng_state()
    a, b = SliceableMLP([3, 5, 2], seed=4), SliceableMLP([3, 5, 2], seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    c = SliceableMLP([3, 5, 2], seed=5)
    assert not torch.equal(a.layers[0].weight, c.layers[0].weight)
