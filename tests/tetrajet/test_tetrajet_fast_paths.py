"""The speed paths of the quantizers (issue 17) against independent references.

E4M3 block scales by the magic-number trick against ml_dtypes' float8_e4m3fn on every tie and
10⁶ random values; block amax by pairwise maxima against numpy; the per-thread scratch buffers
never leak into results; the in-place (RHT-output) path equals the copying one; autograd inputs
still work.
"""

import ml_dtypes
import numpy as np
import pytest
import torch

from icml26.core import torch_threads
from icml26.tetrajet import nvfp4_fake_quant, nvfp4_quantize
from icml26.tetrajet.formats import _block_amax, _cast_e4m3, _magic_e4m3_, _nvfp4_fake


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield


def _e4m3_oracle(x: torch.Tensor) -> torch.Tensor:
    cast = x.numpy().astype(ml_dtypes.float8_e4m3fn).astype(x.numpy().dtype)
    return torch.from_numpy(cast)


def test_magic_e4m3_equals_ml_dtypes_on_ties_grid_and_random():
    dtype = torch.float32  # the only dtype the trick serves (float64 keeps torch's cast)
    grid = torch.from_numpy(
        np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    )
    grid = grid[torch.isfinite(grid) & (grid >= 0)].sort().values.to(dtype)  # 0 ... 448
    ties = (grid[1:] + grid[:-1]) / 2  # exact midpoints: ties to even
    near = torch.cat([torch.nextafter(ties, grid[1:]), torch.nextafter(ties, grid[:-1])])
    g = torch.Generator().manual_seed(11)
    wide = torch.exp2(torch.rand(500_000, generator=g, dtype=torch.float64) * 22 - 13) * 448 / 2**9
    uniform = torch.rand(500_000, generator=g, dtype=torch.float64) * 448
    x = torch.cat([grid, ties, near, wide.to(dtype).clamp(max=448), uniform.to(dtype)])
    assert torch.equal(_magic_e4m3_(x.clone()), _e4m3_oracle(x))
    # the signed, clamping cast (MXFP8 elements, public cast_e4m3): both signs, beyond ±448,
    # and the sign of a zero result (-2^-11 -> -0, as float8 keeps it)
    signed = torch.cat([x, -x, torch.tensor([500.0, -1e30, -(2.0**-11), -0.0])])
    fast = _cast_e4m3(signed)
    oracle = _e4m3_oracle(signed.clamp(-448, 448))
    assert torch.equal(fast.view(torch.int32), oracle.view(torch.int32))  # bits: signed zeros too


@pytest.mark.parametrize("inner", [16, 6, 18, 32])
def test_block_amax_by_pairwise_maxima_equals_numpy(inner):
    g = torch.Generator().manual_seed(12)
    x = torch.randn(40, 3 * inner, generator=g) * torch.rand(40, 1, generator=g) * 100
    blocks = x.view(1, 40 * 3, inner, 1)  # blocks along the innermost axis: the tree path
    reference = np.abs(x.numpy()).reshape(120, inner).max(axis=1)
    assert np.array_equal(_block_amax(blocks, None)[0, :, 0].numpy(), reference)
    assert np.array_equal(_block_amax(blocks, blocks.abs())[0, :, 0].numpy(), reference)
    nan = blocks.clone()
    nan[0, 5, 3, 0] = torch.nan
    assert torch.isnan(_block_amax(nan, None)[0, 5, 0])


def test_scratch_buffers_never_alias_results():
    g = torch.Generator().manual_seed(13)
    x1, x2 = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g) * 5
    for rounding in ("rtn", "sr"):
        first = nvfp4_fake_quant(x1, rounding=rounding, generator=torch.Generator().manual_seed(1))
        kept = first.clone()
        second = nvfp4_fake_quant(x2, rounding=rounding, generator=torch.Generator().manual_seed(1))
        assert torch.equal(first, kept)  # the second call did not write into the first result
        assert first.data_ptr() != second.data_ptr()
        codes = nvfp4_quantize(x1, rounding=rounding, generator=torch.Generator().manual_seed(1))
        nvfp4_quantize(x2, rounding=rounding, generator=torch.Generator().manual_seed(1))
        assert torch.equal(codes.dequantize(), kept)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rounding", ["rtn", "sr"])
def test_in_place_path_equals_copying_path_and_leaves_nothing_shared(axis, rounding):
    x = torch.randn(256, 384, generator=torch.Generator().manual_seed(14))
    copy = _nvfp4_fake(x, axis, 16, 128, rounding, "nearest", torch.Generator().manual_seed(2))
    assert torch.equal(x, torch.randn(256, 384, generator=torch.Generator().manual_seed(14)))
    owned = x.clone()
    in_place = _nvfp4_fake(owned, axis, 16, 128, rounding, "nearest",
                           torch.Generator().manual_seed(2), True)  # fmt: skip
    assert torch.equal(in_place, copy)


def test_inputs_recorded_by_autograd_still_quantize():
    x = torch.randn(8, 128, generator=torch.Generator().manual_seed(15), requires_grad=True)
    for rounding in ("rtn", "sr"):
        y = nvfp4_fake_quant(x, rounding=rounding, generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            reference = nvfp4_fake_quant(
                x.detach(), rounding=rounding, generator=torch.Generator().manual_seed(3)
            )
        assert y.requires_grad and torch.equal(y.detach(), reference)


def test_scratch_buffers_survive_switching_inference_mode():
    # a buffer made under inference_mode is an inference tensor, unwritable outside it
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(16))
    results = []
    for inference in (True, False, True):
        with torch.inference_mode(inference):
            gen = torch.Generator().manual_seed(4)
            results.append(nvfp4_fake_quant(x, rounding="sr", generator=gen).clone())
            results.append(nvfp4_fake_quant(x).clone())
    assert all(torch.equal(r, results[i % 2]) for i, r in enumerate(results))
