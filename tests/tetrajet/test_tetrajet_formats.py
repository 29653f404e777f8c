"""Spec §7.1-7.6: E2M1, E4M3, double-block scales, idempotence, SR, RHT; bad inputs."""

import ml_dtypes
import numpy as np
import pytest
import torch
from scipy.linalg import hadamard

from icml26.core import torch_threads
from icml26.tetrajet import (
    E2M1_VALUES,
    cast_e4m3,
    e8m0_scale,
    hadamard16,
    mxfp8_fake_quant,
    nvfp4_fake_quant,
    nvfp4_quantize,
    random_signs,
    rht16,
    round_e2m1,
)

GRID = torch.tensor(E2M1_VALUES)
SIGNED_GRID = torch.cat([-GRID.flip(0), GRID])


@pytest.fixture(autouse=True)
def _one_thread():
    # Element-wise fake quantization on small tensors: OpenMP sync on the shared 2-core machine
    # costs more than it saves (measured ~10x), so these tests run single-threaded.
    with torch_threads(1):
        yield


def test_all_16_codes_decode_to_the_table_and_pack_low_nibble_first():
    x = torch.cat([GRID, -GRID]).reshape(1, 16)  # scale 1: block amax 6 gives s_b = 448
    qt = nvfp4_quantize(x, outer=None)
    assert qt.codes[0].tolist() == list(range(16))  # -0 is code 8 (sign bit kept)
    assert torch.equal(qt.dequantize().abs(), x.abs())
    packed = qt.pack()[0]
    assert packed[0] == (0 | (1 << 4)) and packed[4] == (8 | (9 << 4))


def test_rtn_fixes_grid_values_ties_to_even_and_saturates():
    assert torch.equal(round_e2m1(SIGNED_GRID), SIGNED_GRID)
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5, 1e9, -5.0])
    assert round_e2m1(ties).tolist() == [0, 1, 1, 2, 2, 4, 4, 6, 6, -4]


def test_rtn_agrees_with_ml_dtypes_on_1e5_inputs():
    y = torch.rand(100_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y = y * 12 - 6
    oracle = y.numpy().astype(ml_dtypes.float4_e2m1fn).astype(np.float64)
    assert torch.equal(round_e2m1(y), torch.from_numpy(oracle))


def test_e4m3_agrees_with_ml_dtypes_never_nan_and_keeps_zero():
    z = torch.randn(100_000, generator=torch.Generator().manual_seed(1)) * 300
    oracle = np.clip(z.numpy(), -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert torch.equal(cast_e4m3(z), torch.from_numpy(oracle))
    big = cast_e4m3(torch.tensor([1e6, -1e6, 0.0, 2.0**-10]))
    assert big.tolist() == [448.0, -448.0, 0.0, 0.0]  # 2^-10 is below half the min subnormal


def _chunked(x, n):
    return x.reshape(x.shape[0], -1, n)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_double_block_scales(dtype):
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(32, 512, generator=g) * torch.rand(32, 512, generator=g) ** 4 * 50).to(dtype)
    x[0, :128] = 0  # an all-zero chunk
    qt = nvfp4_quantize(x)
    chunk_scale_max = _chunked(qt.inner_scales, 8).amax(-1)
    nonzero = _chunked(x, 128).abs().amax(-1) > 0
    assert (chunk_scale_max[nonzero] == 448).all() and (qt.inner_scales[0, :8] == 0).all()
    x_hat = qt.dequantize()
    # the chunk amax element: q = 6 with s_b = 448, off only by the rounding of s_O (a few ulp)
    amax, amax_hat = _chunked(x, 128).abs().amax(-1), _chunked(x_hat, 128).abs().amax(-1)
    torch.testing.assert_close(amax_hat, amax, rtol=4 * torch.finfo(dtype).eps, atol=0)
    assert (qt.grid_values().abs() <= 6).all()
    # normal s_b: E4M3 rounding moves s_b by <= 1/16 relative, so the block amax by < 1/16
    s_b = qt.inner_scales
    normal = s_b >= 2.0**-6
    blocks, blocks_hat = _chunked(x, 16).abs().amax(-1), _chunked(x_hat, 16).abs().amax(-1)
    rel = ((blocks_hat - blocks).abs() / blocks)[normal]
    assert rel.max() <= 1 / 16 + 1e-6  # 1e-6: fp32 rounding of the scale product


def test_scale_round_up_never_clips():
    x = torch.randn(16, 256, generator=torch.Generator().manual_seed(3))
    qt = nvfp4_quantize(x, scale_round="up")
    y = x / qt.element_scales()
    assert y.abs().max() <= 6 * (1 + 1e-6)  # 1e-6: fp32 division


def test_rtn_idempotent_on_dequantized_tensor():
    x = torch.randn(16, 384, generator=torch.Generator().manual_seed(4)) * 7
    for outer in (128, None):
        first = nvfp4_quantize(x, outer=outer)
        again = nvfp4_quantize(first.dequantize(), outer=outer)
        assert torch.equal(again.codes, first.codes)
        assert torch.equal(again.inner_scales, first.inner_scales)
        # s_O is recomputed from the rounded product 6·448·s_O: equal up to one ulp
        torch.testing.assert_close(again.dequantize(), first.dequantize(), rtol=2.5e-7, atol=0)


def test_padding_rule_matches_explicit_zero_padding():
    x = torch.randn(3, 200, generator=torch.Generator().manual_seed(5))
    padded = torch.nn.functional.pad(x, (0, 56))
    assert torch.equal(nvfp4_fake_quant(x), nvfp4_fake_quant(padded)[:, :200])
    assert torch.equal(nvfp4_fake_quant(x.T, axis=0), nvfp4_fake_quant(x).T)


def test_sr_unbiased_adjacent_and_exact_on_grid():
    points = torch.tensor([0.1, 0.3, 0.6, 1.1, 1.9, 2.2, 2.7, 3.9, 4.5, 5.5, -0.4, -4.8])
    n = 100_000
    y = points.repeat(n, 1)
    q = round_e2m1(y, "sr", generator=6)
    mean = q.mean(0)
    lo = torch.tensor([0, 0, 0.5, 1, 1.5, 2, 2, 3, 4, 4, -0.5, -6])
    hi = torch.tensor([0.5, 0.5, 1, 1.5, 2, 3, 3, 4, 6, 6, 0, -4])
    gap = (hi - lo).abs()
    p_up = (points - lo) / (hi - lo)
    sigma = gap * torch.sqrt(p_up * (1 - p_up) / n)
    assert ((mean - points).abs() < 4 * sigma).all()  # 4 sigma: a false alarm is ~1e-4
    assert ((q == lo) | (q == hi)).all()
    assert torch.equal(round_e2m1(SIGNED_GRID.repeat(1000, 1), "sr", generator=7),
                       SIGNED_GRID.repeat(1000, 1))  # fmt: skip


def test_sr_pinned_noise_follows_the_threshold_formula():
    y = torch.tensor([1.2, 1.2, 5.0, 5.0])
    noise = torch.tensor([0.39, 0.41, 0.49, 0.51])  # P(up) = 0.4 and 0.5
    assert round_e2m1(y, "sr", noise=noise).tolist() == [1.5, 1.0, 6.0, 4.0]


def test_rht_orthogonal_sylvester_and_preserves_products():
    h = hadamard16(torch.float64)
    assert torch.equal(h, torch.from_numpy(hadamard(16).astype(np.float64)))
    d = random_signs(8).double()
    r = d[:, None] * h / 4
    torch.testing.assert_close(r.T @ r, torch.eye(16, dtype=torch.float64), rtol=0, atol=1e-15)
    g = torch.Generator().manual_seed(9)
    a, b = torch.randn(20, 64, generator=g), torch.randn(30, 64, generator=g)
    torch.testing.assert_close(rht16(a, d) @ rht16(b, d).T, a @ b.T, rtol=0, atol=1e-4)  # fp32
    a64, b64 = a.double(), b.double()
    err = (rht16(a64, d) @ rht16(b64, d).T - a64 @ b64.T).abs().max()
    assert err < 1e-12  # fp64 round-off of 64-term sums
    assert torch.equal(rht16(a.T.contiguous(), d.float(), axis=0).T, rht16(a, d.float()))


def test_mxfp8_and_e8m0():
    assert e8m0_scale(torch.tensor([448.0, 449.0, 1.0, 0.0])).tolist() == [1.0, 2.0, 2.0**-8, 1.0]
    x = torch.randn(4, 96, generator=torch.Generator().manual_seed(10)) * 1000
    x_hat = mxfp8_fake_quant(x)
    assert (x_hat.abs() <= _chunked(x, 32).abs().amax(-1).repeat_interleave(32, -1) * 9 / 8).all()
    assert torch.equal(mxfp8_fake_quant(x_hat), x_hat)  # E8M0 scales are exact powers of two


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: nvfp4_quantize(torch.ones(4, 16, dtype=torch.int32)), TypeError, "floating"),
        (lambda: nvfp4_quantize(torch.tensor([1.0, float("nan")])), ValueError, "finite"),
        (lambda: nvfp4_fake_quant(torch.tensor([float("inf")])), ValueError, "finite"),
        (lambda: mxfp8_fake_quant(torch.tensor([float("nan")])), ValueError, "finite"),
        (lambda: nvfp4_quantize(torch.ones(16), rounding="up"), ValueError, "rounding"),
        (lambda: nvfp4_quantize(torch.ones(16), outer=100), ValueError, "multiple of inner"),
        (lambda: nvfp4_quantize(torch.ones(16), scale_round="down"), ValueError, "scale_round"),
        (lambda: rht16(torch.ones(2, 24), random_signs(0)), ValueError, "multiple of 16"),
        (lambda: rht16(torch.ones(2, 16), torch.ones(8)), ValueError, "16 values"),
        (lambda: round_e2m1([1.0]), TypeError, "must be a torch.Tensor"),
        (lambda: nvfp4_quantize(torch.ones(4, 16), axis=2), ValueError, "axis must be"),
        (lambda: nvfp4_fake_quant(torch.tensor(1.0)), ValueError, "at least one dimension"),
    ],
)
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_public_quantizers_refuse_nan_as_documented():
    # issue 17 (fuzz): cast_e4m3, round_e2m1 and rht16 passed NaN through although the docs
    # promise ValueError from the public quantizers
    bad = torch.tensor([0.5, float("nan"), 1.0] + [0.0] * 13)
    with pytest.raises(ValueError, match="x must be finite"):
        cast_e4m3(bad)
    with pytest.raises(ValueError, match="y must be finite"):
        round_e2m1(bad)
    with pytest.raises(ValueError, match="x must be finite"):
        rht16(bad[None], random_signs(0))
    with pytest.raises(ValueError, match="x must have at least one dimension"):
        rht16(torch.tensor(1.0), random_signs(0))


def test_empty_inputs_quantize_to_empty_outputs():
    x = torch.empty(0, 256)
    assert nvfp4_fake_quant(x).shape == (0, 256)
    qt = nvfp4_quantize(x)
    assert qt.dequantize().shape == (0, 256) and qt.codes.shape == (0, 256)
