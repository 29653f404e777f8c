"""The fused quantize-dequantize paths (issue 47, item 6) against plain formulas, bit for bit.

The references below follow the spec's formulas step by step (pad, move the axis last, block
maxima, s_O, E4M3 s_b by the float8 cast, divide, round with torch.round / floor, rescale) and
draw the SR noise as the padded tensor's shape from the same generator, so equal outputs and
equal generator states afterwards mean the same values from the same random stream. Every
recipe's layer is compared with a reference layer built from them (no outlier channels: their
MXFP8 path is tested in test_tetrajet_linear.py).
"""

import pytest
import torch
from torch import nn

from icml26.core import torch_threads
from icml26.tetrajet import RECIPES, get_recipe, quantized_linear, random_signs, rht16
from icml26.tetrajet.formats import _nvfp4_fake, nvfp4_fake_quant, nvfp4_quantize

E4M3_GRID = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).to(torch.float64)
E4M3_GRID = E4M3_GRID[torch.isfinite(E4M3_GRID) & (E4M3_GRID >= 0)].unique()  # sorted, 0..448


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield


def _reference_fake(x, axis, inner, outer, rounding, scale_round, generator):
    length, chunk = x.shape[axis], outer or inner
    padded = nn.functional.pad(x.movedim(axis, -1), (0, -length % chunk)).movedim(-1, axis)
    if rounding == "sr":  # the noise is drawn in the padded tensor's shape
        noise = torch.rand(padded.shape, generator=generator, dtype=x.dtype)
    v = padded.movedim(axis, -1)
    blocks = v.reshape(*v.shape[:-1], -1, inner)  # (..., nb, inner)
    amax_b = blocks.abs().amax(-1)
    if outer is None:
        s_outer = amax_b.amax() / (6 * 448) * torch.ones_like(amax_b)
    else:
        per = outer // inner
        s_outer = amax_b.reshape(*amax_b.shape[:-1], -1, per).amax(-1) / (6 * 448)
        s_outer = s_outer.repeat_interleave(per, -1)
    s_outer = torch.where(s_outer == 0, 1.0, s_outer)
    target = torch.clamp(amax_b / (6 * s_outer), max=448)
    if scale_round == "up":  # the smallest E4M3 value >= target
        grid = E4M3_GRID.to(x.dtype)
        s_b = grid[torch.searchsorted(grid, target.contiguous())]
    else:
        s_b = target.float().to(torch.float8_e4m3fn).to(x.dtype)
    if rounding == "sr":
        s_b = torch.where(s_b == 0, 2.0**-9, s_b)
    scale = (s_outer * s_b)[..., None]
    y = torch.where(scale > 0, blocks / torch.where(scale > 0, scale, 1.0), 0.0)
    a = y.abs().clamp(max=6)
    if rounding == "rtn":  # grid spacing 0.5 / 1 / 2; torch.round is half to even
        gap = torch.where(a <= 2, 0.5, torch.where(a <= 4, 1.0, 2.0)).to(x.dtype)
        q = torch.round(a / gap) * gap
    else:  # up with probability (a - g_lo) / (g_hi - g_lo)
        gap = torch.where(a < 2, 0.5, torch.where(a < 4, 1.0, 2.0)).to(x.dtype)
        u = noise.movedim(axis, -1).reshape(blocks.shape)
        low = torch.floor(a / gap)
        q = (low + (u < a / gap - low).to(x.dtype)) * gap
    out = (torch.copysign(q, y) * scale).reshape(v.shape)[..., :length]
    return out.movedim(-1, axis)


def _reference_2d(w):  # NVIDIA's 16x16 weight tiles with a per-tensor scale, RTN
    m, k = w.shape
    tiles = w.reshape(m // 16, 16, k // 16, 16)
    s_tensor = w.abs().amax() / (6 * 448)
    s_tensor = torch.where(s_tensor == 0, 1.0, s_tensor)
    amax_t = tiles.abs().amax((1, 3), keepdim=True)
    s_b = torch.clamp(amax_t / (6 * s_tensor), max=448).to(torch.float8_e4m3fn).to(w.dtype)
    scale = s_tensor * s_b
    y = torch.where(scale > 0, tiles / torch.where(scale > 0, scale, 1.0), 0.0)
    a = y.abs().clamp(max=6)
    gap = torch.where(a <= 2, 0.5, torch.where(a <= 4, 1.0, 2.0))
    return (torch.copysign(torch.round(a / gap) * gap, y) * scale).reshape(m, k)


def _values(shape, kind, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    if kind == "heavy-tailed":
        x = x * torch.exp(3 * torch.randn(shape, generator=g))
    elif kind == "zero blocks":
        x.view(-1)[: x.numel() // 3] = 0
    elif kind == "tiny":
        x = x * 1e-39  # subnormal block maxima and scales
    return x


@pytest.mark.parametrize("shape", [(64, 256), (40, 200), (3, 48, 136), (256, 64)])
@pytest.mark.parametrize("kind", ["normal", "heavy-tailed", "zero blocks", "tiny"])
@pytest.mark.parametrize("outer", [None, 128, 32])
@pytest.mark.parametrize("rounding", ["rtn", "sr"])
def test_fused_fake_quant_equals_the_plain_formulas_and_draws_the_same_stream(
    shape, kind, outer, rounding
):
    x = _values(shape, kind, seed=len(shape) * 1000 + shape[-1])
    for dtype in (torch.float32, torch.float64):
        xd = x.to(dtype)
        for axis in range(xd.dim()):
            for scale_round in ("nearest", "up"):
                args = (axis, 16, outer, rounding, scale_round)
                g_ref, g_new, g_own = (torch.Generator().manual_seed(axis) for _ in range(3))
                reference = _reference_fake(xd, *args, g_ref)
                assert torch.equal(nvfp4_fake_quant(xd, *args, g_new), reference)
                # the in-place path (a layer's RHT output) and the codes path agree too
                assert torch.equal(_nvfp4_fake(xd.clone(), *args, g_own, True), reference)
                for g in (g_new, g_own):
                    assert torch.equal(g.get_state(), g_ref.get_state())
                if rounding == "rtn" or axis == xd.dim() - 1:  # codes draw in moved layout
                    codes = nvfp4_quantize(xd, *args, torch.Generator().manual_seed(axis))
                    assert torch.equal(codes.dequantize(), reference)


@pytest.mark.parametrize("rounding", ["rtn", "sr"])
def test_large_tensors_take_the_buffered_paths_with_the_same_results(rounding):
    # above 2^17 elements the block maxima along the last axis are pairwise maxima, and the
    # temporaries live in reused per-thread buffers: two calls in a row must both match
    x = _values((600, 1040), "heavy-tailed", seed=17)
    for axis in (0, 1):
        for outer in (None, 128):
            for seed in (0, 1):
                args = (axis, 16, outer, rounding, "nearest")
                g_ref, g_new = (
                    torch.Generator().manual_seed(seed),
                    torch.Generator().manual_seed(seed),
                )
                reference = _reference_fake(x, *args, g_ref)
                assert torch.equal(nvfp4_fake_quant(x, *args, g_new), reference)
                assert torch.equal(g_new.get_state(), g_ref.get_state())


def _reference_layer(x, w, dy, spec, generator):
    """y, dX, dW of the recipe's layer (no outlier channels) from the plain quantizers."""
    q1, q2, q3, q4, q5, q6 = spec.quantize

    def fp4(t, axis, rounding):
        return _reference_fake(t, axis, spec.inner, spec.outer, rounding, spec.scale_round,
                               generator)  # fmt: skip

    n, k = x.shape
    xp = nn.functional.pad(x, (0, -k % 16, 0, -n % spec.token_multiple))
    wp = nn.functional.pad(w, (0, -k % 16, 0, -w.shape[0] % 16))
    x_hat = fp4(xp, 1, "rtn") if q1 else xp
    w_hat = (_reference_2d(wp) if spec.weight_2d else fp4(wp, 1, "rtn")) if q2 else wp
    y = (x_hat @ w_hat.T)[:n, : w.shape[0]]
    dyp = nn.functional.pad(dy, (0, -dy.shape[1] % 16, 0, -n % spec.token_multiple))
    a, b = dyp, w_hat if spec.aligned_weight else wp
    if spec.rht_dgrad:
        signs = random_signs(generator)
        a, b = rht16(a, signs, 1), rht16(b, signs, 0)
    a = fp4(a, 1, spec.backward_rounding) if q3 else a
    b = fp4(b, 0, spec.operand_rounding) if q4 and not (spec.weight_2d and q2) else b
    dx = (a @ b)[:n, :k]
    c, e = dyp, x_hat if spec.aligned_activation else xp
    if spec.rht_wgrad:
        signs = random_signs(generator)
        c, e = rht16(c, signs, 0), rht16(e, signs, 0)
    c = fp4(c, 0, spec.backward_rounding) if q5 else c
    e = fp4(e, 0, spec.operand_rounding) if q6 else e
    return y, dx, (c.T @ e)[: w.shape[0], :k]


@pytest.mark.parametrize("recipe", list(RECIPES))
@pytest.mark.parametrize(("n", "k", "m"), [(300, 128, 256), (256, 64, 192), (40, 48, 80)])
def test_every_recipe_layer_equals_the_reference_layer_bit_for_bit(recipe, n, k, m):
    spec = get_recipe(recipe)
    g = torch.Generator().manual_seed(n + k + m)
    x = torch.randn(n, k, generator=g, requires_grad=True)
    w = torch.randn(m, k, generator=g, requires_grad=True)
    dy = torch.randn(n, m, generator=g)
    g_layer, g_ref = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    y = quantized_linear(x, w, spec=spec, generator=g_layer)
    y.backward(dy)
    if not spec.enabled:
        assert torch.equal(y, x @ w.T)
        return
    y_ref, dx_ref, dw_ref = _reference_layer(x.detach(), w.detach(), dy, spec, g_ref)
    assert torch.equal(y, y_ref)
    assert torch.equal(x.grad, dx_ref)
    assert torch.equal(w.grad, dw_ref)
    assert torch.equal(g_layer.get_state(), g_ref.get_state())


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_an_input_without_gradient_skips_dx_but_not_its_draws(recipe):
    # the toy's data need no dX: the layer skips that GEMM when it draws no SR noise for it,
    # and still draws its RHT signs, so dW and the generator's stream are unchanged
    g = torch.Generator().manual_seed(3)
    x, w, dy = (torch.randn(shape, generator=g) for shape in ((256, 128), (64, 128), (256, 64)))
    grads, states = [], []
    for needs_grad in (True, False):
        weight = w.clone().requires_grad_()
        gen = torch.Generator().manual_seed(5)
        quantized_linear(x.clone().requires_grad_(needs_grad), weight, spec=get_recipe(recipe),
                         generator=gen).backward(dy)  # fmt: skip
        grads.append(weight.grad)
        states.append(gen.get_state())
    assert torch.equal(grads[0], grads[1])
    assert torch.equal(states[0], states[1])
