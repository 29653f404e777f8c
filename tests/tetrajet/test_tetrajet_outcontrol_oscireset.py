"""Spec §7.8 (OutControl) and §7.9 (OsciReset, oscillation statistics)."""

import pytest
import torch
from torch import nn

from icml26.tetrajet import (
    NVFP4Linear,
    OsciReset,
    OutlierChannelCalibrator,
    QuantSpec,
    get_recipe,
    oscillation_stats,
    outlier_channel_count,
    quantize_model_,
)


def test_channel_count_rules():
    assert outlier_channel_count(128, 0.1) == 13  # round(12.8)
    assert outlier_channel_count(512, 0.1) == 51  # round(51.2)
    assert outlier_channel_count(128, 0.1, "kernel") == 128  # ceil(12/128)*128 capped at 128
    assert outlier_channel_count(2048, 0.1, "kernel") == 256  # ceil(204/128)*128
    assert outlier_channel_count(100, 0.1, "kernel") == 0  # floor(100/128)*128


def test_calibrator_selects_top_accumulated_norms_on_schedule():
    net = quantize_model_(nn.Sequential(nn.Linear(128, 64)), "tetrajet_v2_mix_fp8", seed=0)
    layer = net[0]
    cal = OutlierChannelCalibrator(net, ratio=0.05, record_start=2, record_iters=3)
    g = torch.Generator().manual_seed(0)
    planted = torch.tensor([5, 17, 60, 61, 90, 127])  # round(0.05*128) = 6 channels
    frozen_at = []
    for t in range(8):
        x = torch.randn(32, 128, generator=g)
        x[:, planted] *= 30
        assert layer.recording == (2 <= t <= 4)  # the forwards of steps 2, 3, 4 are recorded
        net(x)
        if cal.step(t):
            frozen_at.append(t)
    assert frozen_at == [4] and not layer.recording
    assert torch.equal(layer.outlier_channels, planted)
    expected = torch.topk(layer.channel_norms, 6).indices.sort().values
    assert torch.equal(layer.outlier_channels, expected)


def _toy_layer():
    # one FP4 row block per row: column 0 holds the amax 6, so every scale s_O·s_b is ~1
    layer = NVFP4Linear(16, 4, spec=get_recipe("tetrajet_v2_base"), seed=0)
    with torch.no_grad():
        layer.weight.copy_(torch.linspace(-2, 2, 64).reshape(4, 16))
        layer.weight[:, 0] = 6.0
    return layer


def _trajectory(t):
    toggling = 0.74 if t % 2 == 0 else 0.76  # crosses the 0.5|1 edge with steps of 0.02
    drifting = 1.0 + 0.05 * t  # moves steadily through bins
    return toggling, drifting


def test_distance_ratio_resets_toggling_not_drifting_and_touches_nothing_else():
    layer = _toy_layer()
    optimizer = torch.optim.Adam(layer.parameters(), lr=1e-3)
    layer(torch.randn(3, 16)).sum().backward()
    optimizer.step()
    state_before = {
        k: v.clone() for k, v in optimizer.state[layer.weight].items() if torch.is_tensor(v)
    }
    start, period, track = 3, 10, 4
    osc = OsciReset(layer, start_step=start, period=period, track_steps=track, threshold=8.0)
    fired = []
    for t in range(30):
        toggling, drifting = _trajectory(t)
        with torch.no_grad():
            layer.weight[1, 3], layer.weight[2, 5] = toggling, drifting
        before = layer.weight.detach().clone()
        q_now = layer.fp4_weight()[0].dequantize()
        result = osc.step(t)
        if result is None:
            assert torch.equal(layer.weight, before)
            continue
        fired.append(t)
        after = layer.weight.detach()
        assert after[1, 3] == q_now[1, 3] and result["n_reset"] == 1.0  # onto its grid value
        changed = after != before
        changed[1, 3] = False
        assert not changed.any()  # the drifting weight and all others are bit-identical
    assert fired == [start + k * period + track + 1 for k in range(3)]
    for key, value in state_before.items():
        assert torch.equal(optimizer.state[layer.weight][key], value)


def test_distance_ratio_values():
    # toggling: D_Q = 0.5 per step, D_W = 0.02 per step -> rho = 25; drifting: rho ~ 1
    layer = _toy_layer()
    osc = OsciReset(layer, start_step=0, period=20, track_steps=10)
    for t in range(11):
        toggling, drifting = _trajectory(t)
        with torch.no_grad():
            layer.weight[1, 3], layer.weight[2, 5] = toggling, drifting
        osc.step(t)
    track = osc._tracks[0]  # white-box: the accumulators just before the reset step
    rho = track.d_q / track.d_w
    assert rho[1, 3] == pytest.approx(25.0, rel=1e-4)  # 1e-4: fp32 sums of 0.02 steps
    assert rho[2, 5] == pytest.approx(1.0, rel=1e-4)  # 0.5 moved, one 0.5 grid step


def test_memory_efficient_and_bin_edge_detectors_reset_the_edge_weight():
    for detector in ("dist_ratio_memeff", "bin_edge"):
        layer = _toy_layer()
        osc = OsciReset(layer, start_step=0, period=10, track_steps=4, detector=detector)
        results = []
        for t in range(6):
            with torch.no_grad():  # |ℓ - g| = 0.249 > 0.495·β(0.5): beyond the bin-edge threshold
                layer.weight[1, 3] = 0.749 if t % 2 == 0 else 0.751
            q = layer.fp4_weight()[0].dequantize()[1, 3]
            results.append(osc.step(t))
            if results[-1] is not None:
                assert layer.weight[1, 3] == q, detector
        fired = [t for t, r in enumerate(results) if r is not None]
        assert fired == ([0] if detector == "bin_edge" else [5]), detector


def test_oscillation_stats_closed_form():
    steps = 101
    t = torch.arange(steps, dtype=torch.float32)[:, None]
    toggle_w = 0.75 + 0.01 * torch.where(t % 2 == 0, -1.0, 1.0)  # moves 0.02 x 100 = 2 > 0.25
    small_w = 0.75 + 0.001 * torch.where(t % 2 == 0, -1.0, 1.0)  # moves 0.2 < 0.25
    still_w = torch.full((steps, 1), 3.0)
    w = torch.cat([toggle_w, small_w, still_w], 1)
    q = torch.cat([torch.where(w[:, :2] < 0.75, 0.5, 1.0), w[:, 2:]], 1)
    stats = oscillation_stats(w, q, torch.tensor([0.5, 0.5, 1.0]))
    assert stats["fraction"] == pytest.approx(1 / 3)
    assert stats["mean_flips"] == pytest.approx(200 / 3)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: OsciReset(nn.Linear(4, 4), start_step=0), ValueError, "NVFP4Linear"),
        (
            lambda: OsciReset(_toy_layer(), start_step=0, period=5, track_steps=4),
            ValueError,
            "track_steps",
        ),
        (lambda: OsciReset(_toy_layer(), start_step=0, detector="ema"), ValueError, "detector"),
        (lambda: OsciReset(_toy_layer(), start_step=-1), ValueError, "start_step"),
        (lambda: OutlierChannelCalibrator(_toy_layer(), ratio=1.5), ValueError, "ratio"),
        (lambda: outlier_channel_count(128, 0.1, "floor"), ValueError, "rounding"),
        (
            lambda: oscillation_stats(torch.zeros(3, 2), torch.zeros(3, 3), torch.zeros(2)),
            ValueError,
            "shape",
        ),
        (
            lambda: NVFP4Linear(16, 16, spec=QuantSpec(weight_2d=True)).fp4_weight(),
            ValueError,
            "1x16",
        ),
    ],
)
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()
