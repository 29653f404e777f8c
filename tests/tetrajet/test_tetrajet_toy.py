"""The oscillation toy (spec §5 C3): its construction, and its loop against the plain STE loop."""

import pytest
import torch

from icml26.core import torch_threads, warmup_cosine_lr
from icml26.tetrajet import (
    E2M1_VALUES,
    NVFP4Linear,
    OscillationToy,
    OsciReset,
    QuantSpec,
    bin_width,
    oscillation_stats,
    oscillation_toy_problem,
    train_oscillation_toy,
)


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # small element-wise tensors: one thread is faster (see other tests)
        yield


def test_free_optima_lie_strictly_between_grid_points_and_blocks_have_amax_six():
    toy = oscillation_toy_problem(64, 128, seed=4)
    grid = torch.tensor(E2M1_VALUES)
    free = ~toy.fixed
    assert toy.fixed.tolist() == [i % 16 == 0 for i in range(64)]
    assert bool((toy.w_star[toy.fixed] == 6.0).all()) and bool((toy.w_init[toy.fixed] == 6.0).all())
    mag = toy.w_star[free].abs()
    lo = grid[torch.searchsorted(grid, mag) - 1]
    hi = grid[torch.searchsorted(grid, mag)]
    # 0.1 + 0.8 u of the way from g_lo to g_hi: never on a grid point, never past g_hi = 4
    assert bool(((mag - lo) >= 0.1 * (hi - lo) - 1e-6).all() and ((hi - mag) > 0).all())
    assert float(mag.max()) < 4.0
    assert bool((toy.w_init[free].abs() <= 5.5).all())
    torch.testing.assert_close(toy.y, toy.x @ toy.w_star, rtol=0, atol=0)
    again = oscillation_toy_problem(64, 128, seed=4)
    assert torch.equal(again.x, toy.x) and torch.equal(again.w_init, toy.w_init)


def _reference(toy: OscillationToy, steps: int, reset: bool) -> tuple[float, float]:
    """The STE loop as the experiment wrote it before the move: Adam, gradient zeroed by hand."""
    spec = QuantSpec(name="toy-ste", quantize=(False, True, False, False, False, False))
    layer = NVFP4Linear(toy.dim, 1, spec=spec, seed=0)
    with torch.no_grad():
        layer.weight.copy_(toy.w_init[None])
    optimizer = torch.optim.Adam(layer.parameters(), lr=1e-2)
    osc = (
        OsciReset(layer, start_step=round(0.6 * steps), period=10, track_steps=4) if reset else None
    )
    history_w, history_q = [], []
    for t in range(steps):
        optimizer.param_groups[0]["lr"] = warmup_cosine_lr(
            t, total_steps=steps, peak_lr=1e-2, warmup_steps=0, final_lr=1e-3
        )
        loss = 0.5 * ((layer(toy.x)[:, 0] - toy.y) ** 2).mean()
        loss.backward()
        layer.weight.grad[:, toy.fixed] = 0.0
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if osc is not None:
            osc.step(t)
        if t >= steps - steps // 5:
            qt, _ = layer.fp4_weight()
            history_w.append(layer.weight.detach()[0].clone())
            history_q.append(qt.dequantize()[0])
    free, q = ~toy.fixed, history_q[-1]
    stats = oscillation_stats(
        torch.stack(history_w)[:, free], torch.stack(history_q)[:, free], bin_width(q.abs())[free]
    )
    return stats["fraction"], float(0.5 * ((q - toy.w_star)[free] ** 2).sum())


@pytest.mark.parametrize("reset", [False, True])
def test_training_equals_the_plain_adam_ste_loop_bit_for_bit(reset):
    # AdamW without weight decay is Adam, and a gradient hook zeroes what the loop zeroed.
    toy = oscillation_toy_problem(32, 64, seed=2)
    seen = []
    result = train_oscillation_toy(
        toy, steps=60, oscireset=reset, osc_period=10, osc_track_steps=4,
        progress=lambda done, total, metrics: seen.append((done, total)),
    )  # fmt: skip
    assert (result.oscillation_fraction, result.quantized_loss) == _reference(toy, 60, reset)
    assert seen == [(t + 1, 60) for t in range(60)]


def test_plain_and_reset_trained_from_one_shared_prefix_equal_their_own_loops_bit_for_bit():
    """tetrajet.oscillation_toy trains the steps before OsciReset's start once and copies the run
    (weights, Adam state, rounding stream): both results equal the reference loop's, and the
    reset run really differs from the plain one (its branch is not the plain run's state)."""
    from icml26.tetrajet.toy import _train_toys

    toy = oscillation_toy_problem(32, 64, seed=2)
    seen = []
    plain, reset = _train_toys(
        toy, (False, True), steps=60, lr=1e-2, final_lr_fraction=0.1, osc_start_fraction=0.6,
        osc_period=10, osc_track_steps=4, osc_threshold=8.0,
        progress=lambda done, total, metrics: seen.append((done, total)),
    )  # fmt: skip
    expected = [_reference(toy, 60, False), _reference(toy, 60, True)]
    assert [(r.oscillation_fraction, r.quantized_loss) for r in (plain, reset)] == expected
    assert expected[0] != expected[1]
    assert seen == [(t + 1, 36 + 24 + 24) for t in range(36 + 24 + 24)]


def test_bad_input_names_the_parameter():
    toy = oscillation_toy_problem(16, 8, seed=0)
    with pytest.raises(ValueError, match="dim"):
        oscillation_toy_problem(24, 8)
    with pytest.raises(TypeError, match="problem"):
        train_oscillation_toy(toy.x)
    with pytest.raises(ValueError, match="steps"):
        train_oscillation_toy(toy, steps=5)
    with pytest.raises(ValueError, match="osc_track_steps"):
        train_oscillation_toy(toy, steps=20, oscireset=True, osc_period=5, osc_track_steps=4)
    with pytest.raises(ValueError, match="n_samples"):
        oscillation_toy_problem(2**20, 2**10)
    with pytest.raises(ValueError, match="w_star"):
        OscillationToy(toy.w_star[:8], toy.fixed[:8], toy.x[:, :8], toy.y, toy.w_init[:8])
    with pytest.raises(ValueError, match="y"):
        OscillationToy(toy.w_star, toy.fixed, toy.x, toy.y[:3], toy.w_init)
