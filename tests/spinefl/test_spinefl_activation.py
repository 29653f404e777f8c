"""Firing frequencies (spec §7 item 9)."""

import numpy as np
import pytest
import torch

from icml26.spinefl import ActivationRecorder, SliceableCNN, SliceableMLP


def test_frequencies_extremes():
    net = SliceableMLP([3, 4, 5, 2]).double()
    with torch.no_grad():
        net.layers[0].weight.zero_()
        net.layers[0].bias.fill_(1.0)  # every pre-activation positive: always fires
        net.layers[1].bias.fill_(-1e6)  # never fires
    with ActivationRecorder(net) as rec:
        net(torch.randn(7, 3, dtype=torch.float64))
    f = rec.frequencies()
    assert np.all(f["layers.0"] == 1.0)
    assert np.all(f["layers.1"] == 0.0)


def test_counts_aggregate_over_unequal_batches():
    net = SliceableMLP([2, 6, 2], seed=1).double()
    x = torch.randn(23, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with ActivationRecorder(net) as rec:
        for part in torch.split(x, [10, 3, 9, 1]):
            net(part)
    with torch.no_grad():
        reference = (torch.relu(net.layers[0](x)) > 0).double().mean(0).numpy()
    assert rec.n_samples == 23
    np.testing.assert_allclose(rec.frequencies()["layers.0"], reference, atol=1e-15)
    assert np.all((rec.frequencies()["layers.0"] >= 0) & (rec.frequencies()["layers.0"] <= 1))


def test_conv_channels_count_the_fraction_of_firing_positions():
    net = SliceableCNN(image_size=4, channels=(2, 3), hidden=4, norm="none").double()
    with torch.no_grad():
        for p in net.convs[0].parameters():
            p.zero_()
        net.convs[0].weight[0, 0, 1, 1] = 1.0  # channel 0 copies the input: fires where x > 0
    x = torch.zeros(2, 1, 4, 4, dtype=torch.float64)
    x[0, 0, :2] = 1.0  # 8 of 16 positions positive
    x[1, 0, 0, 0] = 1.0  # 1 of 16
    with ActivationRecorder(net) as rec:
        net(x)
    np.testing.assert_allclose(rec.frequencies()["convs.0"], [(8 / 16 + 1 / 16) / 2, 0.0])


def test_hooks_are_removed_and_threshold_validated():
    net = SliceableMLP([2, 3, 2])
    with ActivationRecorder(net) as rec:
        net(torch.zeros(1, 2))
    net(torch.zeros(4, 2))
    assert rec.n_samples == 1
    with pytest.raises(TypeError, match="AbstractSliceableModel"):
        ActivationRecorder(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="threshold must be in"):
        ActivationRecorder(net, threshold=float("nan"))
