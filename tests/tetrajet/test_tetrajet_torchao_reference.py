"""torchao's NVFP4 (``torchao.prototype.mx_formats``) as an independent reference (issue 17).

torchao implements NVIDIA's two-level NVFP4: a per-tensor FP32 scale amax / (6 * 448) and E4M3
scales per 1x16 block, i.e. our ``nvfp4_quantize(x, outer=None)``. The two must agree bit for bit
(packed codes, block scales, tensor scale) except in blocks whose scale falls below the smallest
normal E4M3 value 2^-6, which torchao clamps up to 2^-6 while we keep the subnormal scale (the
format's own rounding, spec §2.1).
"""

import logging
import warnings

import torch

from icml26.tetrajet import nvfp4_quantize

E4M3_MIN_NORMAL = 2.0**-6


def _torchao():
    logging.disable(logging.WARNING)  # torchao logs its missing CUDA extensions on import
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torchao.prototype.mx_formats.nvfp4_tensor import (
                NVFP4Tensor,
                per_tensor_amax_to_scale,
            )
    finally:
        logging.disable(logging.NOTSET)
    return NVFP4Tensor, per_tensor_amax_to_scale


def _data(seed: int) -> torch.Tensor:
    # rows and 16-column groups of very different magnitudes, so that many block scales go
    # subnormal relative to the tensor's amax
    g = torch.Generator().manual_seed(seed)
    rows = torch.rand(192, 1, generator=g) ** 4
    groups = torch.exp(3 * torch.randn(1, 40, generator=g)).repeat_interleave(16, 1)
    return torch.randn(192, 640, generator=g) * rows * groups


def test_per_tensor_nvfp4_is_bit_identical_to_torchao_outside_clamped_blocks():
    NVFP4Tensor, per_tensor_amax_to_scale = _torchao()
    for seed in range(3):
        x = _data(seed)
        scale = per_tensor_amax_to_scale(x.abs().amax())
        theirs = NVFP4Tensor.to_nvfp4(x, per_tensor_scale=scale)
        ours = nvfp4_quantize(x, outer=None)
        assert torch.equal(ours.outer_scales.reshape(()), scale.reshape(()))
        their_scales = theirs.scale.to(torch.float32).reshape(ours.inner_scales.shape)
        normal = ours.inner_scales >= E4M3_MIN_NORMAL  # (192, 40) blocks
        assert 0 < int((~normal).sum()) < normal.numel()  # both cases occur
        assert torch.equal(ours.inner_scales[normal], their_scales[normal])
        assert bool((their_scales[~normal] == E4M3_MIN_NORMAL).all())  # torchao's clamp
        packed = ours.pack()
        their_packed = theirs.qdata.view(torch.uint8).reshape(packed.shape)
        byte_normal = normal.repeat_interleave(8, 1)  # 16 codes per block = 8 bytes
        assert torch.equal(packed[byte_normal], their_packed[byte_normal])


def test_keeping_subnormal_block_scales_is_more_accurate_than_clamping():
    NVFP4Tensor, per_tensor_amax_to_scale = _torchao()
    x = _data(7)
    theirs = NVFP4Tensor.to_nvfp4(x, per_tensor_scale=per_tensor_amax_to_scale(x.abs().amax()))
    ours = nvfp4_quantize(x, outer=None)
    small = (ours.inner_scales < E4M3_MIN_NORMAL).repeat_interleave(16, 1)
    err_ours = (ours.dequantize() - x)[small].norm()
    err_theirs = (theirs.dequantize(torch.float32) - x)[small].norm()
    assert err_ours < err_theirs
