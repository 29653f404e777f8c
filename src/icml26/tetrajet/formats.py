"""Number formats of TetraJet-v2 (arXiv:2510.27527, §2.1): E2M1, E4M3, E8M0, NVFP4, MXFP8, RHT.

All quantizers are simulated ("fake-quantized") in the input's floating dtype: they return the
dequantized values q·s_b·s_O, which is the exact equivalent of the low-precision GEMM whose
128-chunk partial products are scaled in FP32.

Padding rule: a quantization axis whose length is not a multiple of the block (``outer`` if given,
else ``inner``) is zero-padded at its end before blocking and cropped afterwards. Zeros never raise
a block's amax and quantize to 0, so the real elements are quantized exactly as in a padded GEMM.

Non-finite inputs: the public quantizers raise ``ValueError`` on NaN/inf. Inside layers
(:mod:`icml26.tetrajet.linear`) a NaN propagates, so a diverged loss shows it.

Deviations: stochastic rounding draws u ~ U[0, 1) and rounds up iff u < (y - g_lo)/(g_hi - g_lo),
which has the kernel recipe's distribution (spec §2.1) but keeps exact grid points unchanged with
probability one.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import torch

from icml26.core import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    torch_generator,
)

__all__ = [
    "E2M1_VALUES",
    "E4M3_MAX",
    "NVFP4Tensor",
    "bin_width",
    "cast_e4m3",
    "e8m0_scale",
    "hadamard16",
    "mxfp8_fake_quant",
    "nvfp4_fake_quant",
    "nvfp4_quantize",
    "random_signs",
    "rht16",
    "round_e2m1",
]

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
"""Magnitudes of the E2M1 codes 0..7 (bit 3 of a code is the sign)."""
E2M1_MAX = 6.0
E4M3_MAX = 448.0
"""Largest finite E4M3 ("fn") value."""
E4M3_MIN_SUBNORMAL = 2.0**-9
ROUNDINGS = ("rtn", "sr")
SCALE_ROUNDINGS = ("nearest", "up")
MAX_BLOCK = 2**16  # largest block / chunk length (and random_signs count) accepted


def _check_axis(x: torch.Tensor, axis: int, owner: str) -> int:
    if x.dim() == 0:
        raise ValueError(f"{owner}: x must have at least one dimension; got a 0-d tensor.")
    if isinstance(axis, bool) or not isinstance(axis, int) or not -x.dim() <= axis < x.dim():
        raise ValueError(
            f"{owner}: axis must be an integer in [{-x.dim()}, {x.dim() - 1}]; got {axis!r}."
        )
    return axis % x.dim()


def round_e2m1(
    y: torch.Tensor,
    rounding: str = "rtn",
    *,
    generator: Seed = None,
    noise: torch.Tensor | None = None,
) -> torch.Tensor:
    """Round already-scaled values onto the E2M1 grid {0, ±0.5, ..., ±6}, saturating at ±6.

    RTN picks the nearest grid value with ties to the even mantissa (0.25→0, 0.75→1, 2.5→2,
    5→4). SR picks g_hi with probability (|y| - g_lo)/(g_hi - g_lo), so E[SR(y)] = y for |y| ≤ 6.

    Parameters
    ----------
    y
        Scaled values (float tensor).
    rounding
        ``"rtn"`` or ``"sr"``.
    generator
        Seed of the SR draws (ignored for RTN).
    noise
        Optional U[0, 1) draws of ``y``'s shape that replace the generator (tests pin them).

    Returns
    -------
    torch.Tensor
        Grid values, same shape and dtype as ``y``.

    Raises
    ------
    TypeError
        If ``y`` is not a floating-point tensor.
    ValueError
        If ``rounding`` is unknown or ``y`` holds NaN/inf.

    Examples
    --------
    >>> round_e2m1(torch.tensor([0.25, 0.75, 2.5, 5.0, 7.0])).tolist()
    [0.0, 1.0, 2.0, 4.0, 6.0]
    """
    check_tensor("y", y, owner="round_e2m1", finite=True)
    check_one_of("rounding", rounding, ROUNDINGS, owner="round_e2m1")
    if noise is not None:
        check_tensor("noise", noise, owner="round_e2m1", shape=tuple(y.shape), finite=True)
    return _round_e2m1(y, rounding, generator, noise)


def _grid_gap(a: torch.Tensor) -> torch.Tensor:
    # Spacing of the E2M1 grid around magnitude a: 0.5 on [0, 2], 1 on (2, 4], 2 on (4, 6].
    return torch.where(a <= 2, 0.5, torch.where(a <= 4, 1.0, 2.0)).to(a.dtype)


# IEEE layouts for the bit-level rounding: (integer view, mantissa bits, exponent bias, exp bits)
_FLOAT_LAYOUT = {
    torch.float64: (torch.int64, 52, 1023, 11),
    torch.float32: (torch.int32, 23, 127, 8),
    torch.bfloat16: (torch.int16, 7, 127, 8),
    torch.float16: (torch.int16, 10, 15, 5),
}


def _exponent_field(a: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """The biased-exponent bits of ``a`` (sign ignored), as integers (in ``out`` if given)."""
    int_type, mantissa, _, exp_bits = _FLOAT_LAYOUT[a.dtype]
    return torch.bitwise_and(a.view(int_type), ((1 << exp_bits) - 1) << mantissa, out=out)


def _rtn_e2m1(y: torch.Tensor) -> torch.Tensor:
    """RTN onto the signed E2M1 grid with ties to even, by the magic-number trick (bit-exact).

    The grid spacing around |y| <= 6 is gap = max(0.5, 2^(floor(log2 |y|) - 1)); adding
    M = 1.5 gap 2^p (p mantissa bits) makes the float sum's unit in the last place equal gap, so
    (y + M) - M is y rounded to a multiple of gap, half to even in the hardware's RNE. 1.5 keeps
    y + M inside one binade for either sign. Matches the where/round formula on every input.
    """
    if y.dtype not in _FLOAT_LAYOUT:
        a = y.abs().clamp(max=E2M1_MAX)
        gap = _grid_gap(a)
        return torch.copysign(torch.round(a / gap) * gap, y)
    return _rtn_e2m1_(y.clamp(-E2M1_MAX, E2M1_MAX))


def _rtn_e2m1_(y: torch.Tensor) -> torch.Tensor:
    """:func:`_rtn_e2m1` of a layout dtype in place (``y`` owned by the caller, overwritten)."""
    int_type, mantissa, bias, _ = _FLOAT_LAYOUT[y.dtype]
    half = 1 << (mantissa - 1)  # the 0.5 of 1.5
    yc = y.clamp_(-E2M1_MAX, E2M1_MAX)
    pooled = not (torch.is_grad_enabled() and y.requires_grad)
    field = _scratch("gap", y.shape, int_type, y.device) if pooled else None
    # biased exponent of M = exponent of |y| - 1 + mantissa, at least that of 0.5 * 2^mantissa
    magic = _exponent_field(yc, out=field).add_(((mantissa - 1) << mantissa) + half)
    magic = magic.clamp_min_(((bias + mantissa - 1) << mantissa) + half).view(y.dtype)
    return yc.add_(magic).sub_(magic)


def _sr_e2m1(y: torch.Tensor, generator: Seed, noise: torch.Tensor | None) -> torch.Tensor:
    """SR onto the E2M1 grid: g_lo + gap * (u < (|y| - g_lo) / gap), with y's sign."""
    return _sr_magnitude_(y.abs(), y, generator, noise)


def _sr_magnitude_(
    a: torch.Tensor,
    sign: torch.Tensor,
    generator: Seed,
    noise: torch.Tensor | None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """SR of the magnitudes ``a`` (overwritten) onto the E2M1 grid, with the signs of ``sign``.

    ratio = min(a, 6)/gap, low = floor(ratio), up = (ratio - low > u) as 0/1, then
    (low + up)·gap with the sign copied (exact: gap is a power of two). The gap, the draws and
    the floor live in per-thread scratch buffers unless autograd records ``a``; the result is
    written to ``out`` (which may be ``sign`` itself) or to a new tensor.
    """
    pooled = not (torch.is_grad_enabled() and a.requires_grad)
    a = a.clamp_(max=E2M1_MAX)
    if a.dtype in _FLOAT_LAYOUT:
        # gap = max(0.5, 2^(floor(log2 a) - 1)) from the exponent bits: exact powers of two
        int_type, mantissa, bias, _ = _FLOAT_LAYOUT[a.dtype]
        field = _scratch("gap", a.shape, int_type, a.device) if pooled else None
        gap = _exponent_field(a, out=field).sub_(1 << mantissa).clamp_min_((bias - 1) << mantissa)
        gap = gap.view(a.dtype)
    else:
        gap = _grid_gap(a)
    if noise is None:
        draws = _scratch("noise", a.shape, a.dtype, a.device) if pooled else None
        gen = torch_generator(generator)
        noise = torch.rand(a.shape, generator=gen, dtype=a.dtype, out=draws)
    ratio = a.div_(gap)  # exact: gap is a power of two
    floor_buffer = _scratch("low", a.shape, a.dtype, a.device) if pooled else None
    low = torch.floor(ratio, out=floor_buffer)
    up = ratio.sub_(low).gt_(noise)  # 1 iff u < the fractional part in [0, 1)
    grid = low.add_(up).mul_(gap)
    if out is None:  # grid is this call's own tensor unless it lives in a scratch buffer
        return grid.copysign_(sign) if floor_buffer is None else torch.copysign(grid, sign)
    return torch.copysign(grid, sign, out=out)


_SCRATCH_MIN = 1 << 15  # elements; smaller temporaries are allocated by their operation
_SCRATCH_MAX = 1 << 24  # elements; larger temporaries are allocated per call
_POOL_MAX = 1 << 17  # elements; larger innermost-axis block maxima use pairwise maxima


class _Scratch(threading.local):
    """Per-thread temporaries of the quantizers, reused across calls (one buffer per slot)."""

    def __init__(self) -> None:
        self.buffers: dict[tuple[str, torch.dtype, torch.device, bool], torch.Tensor] = {}


_SCRATCH = _Scratch()


def _scratch(
    slot: str, shape: torch.Size, dtype: torch.dtype, device: torch.device
) -> torch.Tensor | None:
    """An uninitialised tensor of ``shape`` backed by this thread's buffer for ``slot``.

    Fresh multi-megabyte allocations cost page faults on every call (measured: four of them
    double the time of four element-wise passes); a quantizer's temporaries are dead before it
    returns, so each slot keeps its largest buffer. Tensors above ``_SCRATCH_MAX`` elements
    are allocated per call so that emulating a large model does not pin several copies. Below
    ``_SCRATCH_MIN`` elements it returns ``None`` (``out=None``: the operation allocates):
    a small allocation costs less than the buffer bookkeeping.
    """
    n = math.prod(shape)
    if n < _SCRATCH_MIN:
        return None
    if n > _SCRATCH_MAX:
        return torch.empty(shape, dtype=dtype, device=device)
    # a buffer made under torch.inference_mode() is an inference tensor that cannot be written
    # outside it: each mode keeps its own buffers
    key = (slot, dtype, device, torch.is_inference_mode_enabled())
    buffer = _SCRATCH.buffers.get(key)
    if buffer is None or buffer.numel() < n:
        buffer = torch.empty(n, dtype=dtype, device=device)
        _SCRATCH.buffers[key] = buffer
    return buffer[:n].view(shape)


def _round_e2m1(
    y: torch.Tensor,
    rounding: str,
    generator: Seed,
    noise: torch.Tensor | None,
) -> torch.Tensor:
    if rounding == "rtn":
        return _rtn_e2m1(y)
    return _sr_e2m1(y, generator, noise)


def cast_e4m3(x: torch.Tensor) -> torch.Tensor:
    """Round to the nearest E4M3 ("fn") value (ties to even) after clamping to [-448, 448].

    The clamp matters: PyTorch's cast is non-saturating and turns overflow into NaN.

    Parameters
    ----------
    x
        Float tensor.

    Returns
    -------
    torch.Tensor
        E4M3 values in ``x``'s dtype.

    Raises
    ------
    TypeError
        If ``x`` is not a floating-point tensor.
    ValueError
        If ``x`` holds NaN/inf.

    Examples
    --------
    >>> cast_e4m3(torch.tensor([1000.0, 0.3, 17.0])).tolist()
    [448.0, 0.3125, 16.0]
    """
    check_tensor("x", x, owner="cast_e4m3", finite=True)
    return _cast_e4m3(x)


def _cast_e4m3(x: torch.Tensor) -> torch.Tensor:
    """Clamp to ±448 and round to E4M3, ties to even; float32 by :func:`_magic_e4m3_`."""
    clamped = x.clamp(-E4M3_MAX, E4M3_MAX)
    if x.dtype != torch.float32:
        return clamped.to(torch.float8_e4m3fn).to(x.dtype)
    return _magic_e4m3_(clamped).copysign_(x)  # the cast keeps the sign of a zero result


def _magic_e4m3_(x: torch.Tensor) -> torch.Tensor:
    """Float32 values in [-448, 448] (overwritten) rounded to E4M3 by the magic-number trick.

    E4M3 spacing is gap = 2^(max(e, -6) - 3) for 2^e <= |x| < 2^(e+1) (subnormals below 2^-6):
    with M = 1.5·gap·2^23, (x + M) - M is x rounded to a multiple of gap, half to even, as the
    float8 cast does (equal, up to the sign of zero, on every float32 in [-448, 448]). Float32
    only: the cast through torch.float8_e4m3fn runs element by element, ~5-20x slower; other
    dtypes keep the cast (torch casts float64 through float32, rounding twice: ~2 in 10^7
    values differ from a single rounding, which this trick would not reproduce).
    """
    int_type, mantissa, bias, _ = _FLOAT_LAYOUT[x.dtype]
    pooled = not (torch.is_grad_enabled() and x.requires_grad)
    field = _scratch("e4m3", x.shape, int_type, x.device) if pooled else None
    exponent = _exponent_field(x, out=field).clamp_min_((bias - 6) << mantissa)
    magic = exponent.add_(((mantissa - 3) << mantissa) + (1 << (mantissa - 1))).view(x.dtype)
    return x.add_(magic).sub_(magic)


def _cast_e4m3_up(x: torch.Tensor) -> torch.Tensor:
    # Smallest E4M3 value >= x for x in [0, 448]: positive E4M3 bit patterns are monotone.
    bits = x.to(torch.float8_e4m3fn).view(torch.uint8)
    below = bits.view(torch.float8_e4m3fn).to(x.dtype) < x
    return (bits + below.to(torch.uint8)).view(torch.float8_e4m3fn).to(x.dtype)


def e8m0_scale(amax: torch.Tensor, element_max: float = E4M3_MAX) -> torch.Tensor:
    """MX block scale 2^ceil(log2(amax / element_max)), rounded up so nothing overflows.

    Parameters
    ----------
    amax
        Block absolute maxima (float tensor, >= 0). A zero block gets scale 1.
    element_max
        Largest element value (448 for E4M3 elements, 6 for E2M1).

    Returns
    -------
    torch.Tensor
        Powers of two 2^e with e clamped to the E8M0 range [-127, 127].

    Examples
    --------
    >>> e8m0_scale(torch.tensor([448.0, 449.0, 0.0])).tolist()
    [1.0, 2.0, 1.0]
    """
    check_tensor("amax", amax, owner="e8m0_scale", finite=True)
    if bool((amax < 0).any()):
        raise ValueError("e8m0_scale: amax must be >= 0.")
    element_max = check_in_interval(
        "element_max", element_max, low=0.0, high=1e30, closed="right", owner="e8m0_scale"
    )
    return _e8m0(amax, element_max)


def _e8m0(amax: torch.Tensor, element_max: float) -> torch.Tensor:
    # NaN amax (inside a layer) gives scale 1, so the NaN reaches the output
    exponent = torch.ceil(torch.log2(amax / element_max)).clamp(-127, 127)
    return torch.where(amax > 0, torch.exp2(exponent), torch.ones_like(amax))


def hadamard16(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The 16x16 Sylvester Hadamard matrix H₁₆ (entries ±1, H Hᵀ = 16 I).

    Examples
    --------
    >>> h = hadamard16()
    >>> bool(torch.equal(h @ h.T, 16 * torch.eye(16)))
    True
    """
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"hadamard16: dtype must be a floating torch.dtype; got {dtype!r}.")
    h = torch.ones(1, 1, dtype=dtype)
    for _ in range(4):
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


def random_signs(seed: Seed = None, n: int = 16) -> torch.Tensor:
    """``n`` independent random signs d ∈ {±1}ⁿ (float32).

    Examples
    --------
    >>> set(random_signs(0).tolist()) <= {-1.0, 1.0}
    True
    """
    n = check_positive_int("n", n, owner="random_signs", maximum=MAX_BLOCK)
    bits = torch.randint(0, 2, (n,), generator=torch_generator(seed))
    return (2 * bits - 1).to(torch.float32)


def rht16(x: torch.Tensor, signs: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Random Hadamard transform: every 16-chunk v along ``axis`` becomes H₁₆(d ⊙ v)/4.

    R = diag(d) H₁₆ / 4 is orthogonal, so rotating both GEMM operands along their shared axis
    leaves the exact product unchanged: (A R)(B R)ᵀ = A Bᵀ.

    Parameters
    ----------
    x
        Float tensor whose ``axis`` length is a multiple of 16.
    signs
        The 16 signs d (±1), shared by both operands of one GEMM.
    axis
        The contraction axis.

    Returns
    -------
    torch.Tensor
        The rotated tensor, same shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` or ``signs`` is not a floating-point tensor.
    ValueError
        If ``x`` holds NaN/inf, the axis length is not a multiple of 16 or ``signs`` is not 16
        values of ±1.

    Examples
    --------
    >>> a, b, d = torch.randn(4, 32), torch.randn(5, 32), random_signs(0)
    >>> bool(torch.allclose(rht16(a, d) @ rht16(b, d).T, a @ b.T, atol=1e-5))
    True
    """
    check_tensor("x", x, owner="rht16", finite=True)
    check_tensor("signs", signs, owner="rht16")
    axis = _check_axis(x, axis, "rht16")
    if x.shape[axis] % 16:
        raise ValueError(
            f"rht16: x.shape[axis] must be a multiple of 16; got {x.shape[axis]} (int)."
        )
    if signs.shape != (16,) or not bool(((signs == 1) | (signs == -1)).all()):
        raise ValueError(f"rht16: signs must be 16 values of ±1; got shape {tuple(signs.shape)}.")
    return _rht16(x, _rotation(signs, x.dtype, x.device), axis)


@functools.lru_cache(maxsize=8)
def _hadamard16_over_4(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return hadamard16(dtype).to(device) / 4


def _rotation(signs: torch.Tensor, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """R = D H₁₆ / 4 for the signs d, built once for both operands of a GEMM."""
    return signs.to(dtype=dtype, device=device)[:, None] * _hadamard16_over_4(dtype, device)


def _rht16(x: torch.Tensor, rotation: torch.Tensor, axis: int) -> torch.Tensor:
    """Every 16-chunk v of ``axis`` becomes v R (R from :func:`_rotation`, x's dtype)."""
    axis = axis % x.dim()
    chunks = _block_view(x.contiguous(), axis, 16)  # (pre, n_chunks, 16, post)
    pre, n, _, post = chunks.shape
    if post == 1:  # chunks along the last axis: one GEMM (pre * n, 16) @ R
        return (chunks.view(pre * n, 16) @ rotation).view(x.shape)
    # a leading axis: R^T applied to every (16, post) slab, no transpose copy
    return torch.matmul(rotation.T, chunks.view(pre * n, 16, post)).view(x.shape)


def _pad_last(x: torch.Tensor, multiple: int) -> torch.Tensor:
    extra = -x.shape[-1] % multiple
    return torch.nn.functional.pad(x, (0, extra)) if extra else x


def _pad_axis(x: torch.Tensor, axis: int, multiple: int) -> torch.Tensor:
    extra = -x.shape[axis] % multiple
    if not extra:
        return x
    pad = [0, 0] * (x.dim() - 1 - axis) + [0, extra]
    return torch.nn.functional.pad(x, pad)


def _block_view(x: torch.Tensor, axis: int, block: int) -> torch.Tensor:
    """x (contiguous, ``axis`` length a multiple of ``block``) as (pre, n_blocks, block, post)."""
    pre = x.shape[:axis].numel()
    post = x.shape[axis + 1 :].numel()
    return x.view(pre, x.shape[axis] // block, block, post)


def _block_parts(
    x: torch.Tensor,
    axis: int,
    inner: int,
    outer: int | None,
    rounding: str,
    scale_round: str,
    generator: Seed,
    overwrite: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, s_O s_b, s_b and s_O of x, blocks along ``axis`` (padded to the block length).

    ``overwrite=True`` writes q into x's storage (a caller's temporary, e.g. an RHT output)
    instead of a new tensor; ignored when autograd records x.

    Works in place of a transpose: x is viewed as (pre, n_blocks, inner, post) and every block
    statistic reduces over dim 2, so a quantization along a leading axis copies nothing.
    Returns q of that 4-d shape and the scales of shape (pre, n_blocks, post); s_O is
    (pre, n_outer, post), or (1, 1, 1) for the per-tensor scale.

    A last outer chunk that ``axis`` fills only partly is quantized as if zero-padded (the
    module's padding rule) without padding x: its missing blocks enter the chunk statistics
    as zero block maxima, and SR draws noise for the padded layout (the same stream, and the
    same draw for each element, as a padded x) of which the missing blocks' share is unused.
    """
    blocks = _block_view(x.contiguous(), axis, inner)  # (pre, nb, inner, post)
    pooled = not (torch.is_grad_enabled() and blocks.requires_grad)
    magnitude = None  # SR needs |x| anyway (it rounds magnitudes); RTN rounds signed values
    if rounding == "sr":
        shape, dtype = blocks.shape, blocks.dtype
        buffer = _scratch("magnitude", shape, dtype, blocks.device) if pooled else None
        magnitude = torch.abs(blocks, out=buffer)
    amax_b = _block_amax(blocks, magnitude)  # (pre, nb, post)
    pre, nb, post = amax_b.shape
    # Scales on (pre, n_outer, per, post) views: each chunk's s_O broadcasts over its `per`
    # inner blocks (no repeated copy); the per-tensor scale is the case n_outer = 1, per = nb.
    per = nb if outer is None else outer // inner
    nb_padded = -(-nb // per) * per
    if nb_padded != nb:  # the partial last chunk's missing blocks: amax 0
        amax_b = torch.nn.functional.pad(amax_b, (0, 0, 0, nb_padded - nb))
    amax_b = amax_b.view(pre, nb_padded // per, per, post)
    # standard NVFP4 (outer=None): one FP32 scale per tensor, s_T = amax/(6·448)
    amax_o = amax_b.amax().reshape(1, 1, 1, 1) if outer is None else amax_b.amax(2, keepdim=True)
    s_outer = amax_o / (E2M1_MAX * E4M3_MAX)
    s_outer.masked_fill_(s_outer == 0, 1.0)
    target = torch.div(amax_b, E2M1_MAX * s_outer).clamp_(max=E4M3_MAX)
    if scale_round == "up":
        s_b = _cast_e4m3_up(target)
    elif target.dtype == torch.float32:
        s_b = _magic_e4m3_(target)  # target is this call's temporary
    else:
        s_b = _cast_e4m3(target)
    if rounding == "sr":  # a zero s_b becomes the smallest subnormal, 2^-9
        s_b = s_b.clamp_min(E4M3_MIN_SUBNORMAL)
    scale = (s_outer * s_b).view(pre, nb_padded, post)[:, :nb]
    # a zero scale divides by inf: those blocks become 0 (the RTN path's q = 0)
    safe = torch.where(scale > 0, scale, torch.inf)[:, :, None, :]
    out = blocks if overwrite and pooled else None
    if magnitude is not None:  # |x|/s = |x/s| exactly; the sign comes back from x
        noise_shape = (pre, nb_padded, inner, post)
        draws = _scratch("noise", noise_shape, x.dtype, x.device) if pooled else None
        gen = torch_generator(generator)
        noise = torch.rand(noise_shape, generator=gen, dtype=x.dtype, out=draws)
        noise = noise.to(x.device)[:, :nb]
        q = _sr_magnitude_(magnitude.div_(safe), blocks, None, noise, out=out)
    elif blocks.dtype in _FLOAT_LAYOUT:
        q = _rtn_e2m1_(torch.div(blocks, safe, out=out))
    else:
        q = _rtn_e2m1(blocks / safe)
    s_outer = s_outer.view(1, 1, 1) if outer is None else s_outer.view(pre, -1, post)
    return q, scale, s_b.view(pre, nb_padded, post)[:, :nb], s_outer


def _block_amax(blocks: torch.Tensor, magnitude: torch.Tensor | None) -> torch.Tensor:
    """max |x| over dim 2 of (pre, nb, inner, post) blocks; ``magnitude`` is |blocks| if known.

    Reducing an outer dim (post > 1) is fast; along the innermost, contiguous axis torch's
    reduction runs ~20x slower per element, so there the blocks are reduced by ``max_pool1d``
    (one call, NaN-propagating) or, above ``_POOL_MAX`` elements where that is slower, halved
    by element-wise maxima of their two halves until odd, then reduced (all exact).
    """
    if blocks.shape[3] > 1 and magnitude is None:
        # max(amax, -amin): two read-only reductions, no |x| temporary; abs_ turns the -0 of an
        # all-zero block into +0, as the other paths give
        return torch.maximum(blocks.amax(2), blocks.amin(2).neg_()).abs_()
    pooled = not (torch.is_grad_enabled() and blocks.requires_grad)
    if magnitude is None:  # RTN: |x| only for the maxima, in the slot SR keeps for |x|
        shape, dtype, device = blocks.shape, blocks.dtype, blocks.device
        buffer = _scratch("magnitude", shape, dtype, device) if pooled else None
        magnitude = torch.abs(blocks, out=buffer)
    if blocks.shape[3] > 1:
        return magnitude.amax(2)
    pre, nb, inner, _ = magnitude.shape
    if magnitude.numel() <= _POOL_MAX:
        return torch.nn.functional.max_pool1d(magnitude.view(1, 1, -1), inner).view(pre, nb, 1)
    m = magnitude[..., 0]  # (pre, nb, inner)
    while m.shape[2] > 1 and m.shape[2] % 2 == 0:
        half = m.shape[2] // 2
        first = pooled and half * 2 == inner  # later halves are small, and would alias it
        buffer = _scratch("halves", (pre, nb, half), m.dtype, m.device) if first else None
        m = torch.maximum(m[:, :, :half], m[:, :, half:], out=buffer)
    return m.amax(2, keepdim=True)  # (pre, nb, 1)


def _expand_scales(
    s_b: torch.Tensor, s_outer: torch.Tensor, inner: int, outer: int | None
) -> torch.Tensor:
    """s_O·s_b per element, shape ``(*s_b.shape[:-1], n_blocks·inner)``."""
    flat = s_b.reshape(-1, s_b.shape[-1])  # (R, L/inner)
    if outer is None:
        s_outer_b = s_outer.expand_as(flat)
    else:
        s_outer_b = s_outer.repeat_interleave(outer // inner, -1)
    return (s_outer_b * flat).repeat_interleave(inner, -1).reshape(*s_b.shape[:-1], -1)


def _codes(q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """E2M1 codes (uint8, bit 3 = sign of x) of grid values q: 2|q| = 0..4, 6, 8, 12 -> 0..7."""
    twice = q.mul(2).abs_().to(torch.uint8)
    high = (twice >> 1).add_(2).sub_((twice > 8).to(torch.uint8))
    magnitude = torch.where(twice > 4, high, twice)
    return magnitude.bitwise_or_(torch.signbit(x).to(torch.uint8) << 3)


@dataclass(frozen=True)
class NVFP4Tensor:
    """An NVFP4-quantized tensor: E2M1 codes, E4M3 block scales and FP32 outer scales.

    Stored with the quantization axis last and zero-padded to a multiple of the chunk length.

    Attributes
    ----------
    codes
        uint8 nibbles (bit 3 = sign, bits 0-2 index :data:`E2M1_VALUES`), shape ``(..., L_pad)``.
    inner_scales
        E4M3 scales s_b, shape ``(..., L_pad / inner)``.
    outer_scales
        FP32 scales s_O: shape ``(R, L_pad / outer)`` over the flattened leading rows, or
        ``(1, 1)`` for the per-tensor scale.
    shape, axis, inner, outer
        Original shape, quantization axis and block sizes.
    """

    codes: torch.Tensor
    inner_scales: torch.Tensor
    outer_scales: torch.Tensor
    shape: tuple[int, ...]
    axis: int
    inner: int
    outer: int | None

    def __post_init__(self) -> None:
        owner = "NVFP4Tensor"
        check_tensor("codes", self.codes, owner=owner, floating=False)
        if self.codes.dtype != torch.uint8 or self.codes.dim() < 1:
            raise TypeError(
                f"{owner}: codes must be a uint8 tensor of rank >= 1; got {self.codes!r}."
            )
        if bool((self.codes > 15).any()):
            raise ValueError(f"{owner}: codes must be nibbles in [0, 15].")
        check_tensor("inner_scales", self.inner_scales, owner=owner, finite=True)
        check_tensor("outer_scales", self.outer_scales, owner=owner, finite=True, ndim=2)
        if not isinstance(self.shape, tuple) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in self.shape
        ):
            raise TypeError(f"{owner}: shape must be a tuple of sizes; got {self.shape!r}.")
        if isinstance(self.axis, bool) or not isinstance(self.axis, int):
            raise TypeError(f"{owner}: axis must be an int; got {self.axis!r}.")
        if not 0 <= self.axis < len(self.shape):
            raise ValueError(f"{owner}: axis must index shape {self.shape}; got {self.axis!r}.")
        _check_blocks(self.inner, self.outer, owner)
        length = self.codes.shape[-1]
        chunk = self.outer or self.inner
        rows = self.codes.shape[:-1].numel()
        if (
            length % chunk
            or length < self.shape[self.axis]
            or length - self.shape[self.axis] >= chunk
            or rows * self.shape[self.axis] != math.prod(self.shape)
            or self.codes.dim() != len(self.shape)
        ):
            raise ValueError(
                f"{owner}: codes of shape {tuple(self.codes.shape)} do not hold a tensor of shape "
                f"{self.shape} quantized along axis {self.axis} in chunks of {chunk}."
            )
        if tuple(self.inner_scales.shape) != (*self.codes.shape[:-1], length // self.inner):
            raise ValueError(
                f"{owner}: inner_scales must have shape "
                f"{(*self.codes.shape[:-1], length // self.inner)}; got "
                f"{tuple(self.inner_scales.shape)}."
            )
        expected = (1, 1) if self.outer is None else (rows, length // self.outer)
        if tuple(self.outer_scales.shape) != expected:
            raise ValueError(
                f"{owner}: outer_scales must have shape {expected}; got "
                f"{tuple(self.outer_scales.shape)}."
            )

    def element_scales(self) -> torch.Tensor:
        """s_O·s_b broadcast to every element, in the original layout (shape ``self.shape``)."""
        if self.codes.numel() == 0:
            return self.inner_scales.new_zeros(self.shape)
        scales = _expand_scales(self.inner_scales, self.outer_scales, self.inner, self.outer)
        return scales[..., : self.shape[self.axis]].movedim(-1, self.axis)

    def grid_values(self) -> torch.Tensor:
        """The E2M1 values q (before scaling), in the original layout."""
        table = torch.tensor(E2M1_VALUES, dtype=self.inner_scales.dtype)
        q = table[(self.codes & 7).long()] * torch.where(self.codes >= 8, -1.0, 1.0)
        return q[..., : self.shape[self.axis]].movedim(-1, self.axis)

    def dequantize(self) -> torch.Tensor:
        """x̂ = q·s_b·s_O in the original shape and layout."""
        return self.grid_values() * self.element_scales()

    def pack(self) -> torch.Tensor:
        """Two codes per byte along the (padded) last axis, the first element in the low nibble."""
        pairs = self.codes.reshape(*self.codes.shape[:-1], -1, 2)
        return pairs[..., 0] | (pairs[..., 1] << 4)


def _check_blocks(inner: int, outer: int | None, owner: str) -> None:
    check_positive_int("inner", inner, owner=owner, maximum=MAX_BLOCK)
    if inner % 2:
        raise ValueError(f"{owner}: inner must be an even integer; got {inner!r} (int).")
    if outer is not None:
        check_positive_int("outer", outer, owner=owner, maximum=MAX_BLOCK)
        if outer % inner:
            raise ValueError(f"{owner}: outer must be a multiple of inner={inner}; got {outer!r}.")


def nvfp4_quantize(
    x: torch.Tensor,
    axis: int = -1,
    inner: int = 16,
    outer: int | None = 128,
    rounding: str = "rtn",
    scale_round: str = "nearest",
    generator: Seed = None,
) -> NVFP4Tensor:
    """Quantize to (double-block) NVFP4 along ``axis``.

    For each ``outer``-chunk O: s_O = amax_O/(448·6) (1 if 0); for each ``inner``-block b ⊂ O:
    s_b = E4M3(min(amax_b/(6·s_O), 448)); q = E2M1(x/(s_O·s_b)); x̂ = q·s_b·s_O. ``outer=None``
    uses one per-tensor FP32 scale (standard NVFP4). In the SR path a zero s_b becomes 2⁻⁹; in
    the RTN path a zero scale gives q = 0.

    Parameters
    ----------
    x
        Finite float tensor.
    axis
        Quantization (contraction) axis; a length that is not a multiple of the chunk is
        zero-padded (see the module docstring).
    inner, outer
        Block sizes (16 and 128 by default, the official TetraJet-v2 setting).
    rounding
        ``"rtn"`` (ties to even) or ``"sr"`` (stochastic, unbiased).
    scale_round
        ``"nearest"`` (official) or ``"up"`` (s_b rounded up: no clipping at 6).
    generator
        Seed of the SR draws.

    Returns
    -------
    NVFP4Tensor

    Raises
    ------
    TypeError
        If ``x`` is not a floating-point tensor.
    ValueError
        On non-finite entries, unknown options, or invalid block sizes.

    Examples
    --------
    >>> x = torch.randn(4, 256, generator=torch.Generator().manual_seed(0))
    >>> qt = nvfp4_quantize(x)
    >>> float((qt.dequantize() - x).abs().max()) < 0.5 * float(x.abs().max())
    True
    """
    owner = "nvfp4_quantize"
    check_tensor("x", x, owner=owner, finite=True)
    _check_blocks(inner, outer, owner)
    check_one_of("rounding", rounding, ROUNDINGS, owner=owner)
    check_one_of("scale_round", scale_round, SCALE_ROUNDINGS, owner=owner)
    axis = _check_axis(x, axis, owner)
    if x.numel() == 0:  # nothing to quantize: empty codes and scales of the padded layout
        moved = x.movedim(axis, -1)
        length = -moved.shape[-1] % (outer or inner) + moved.shape[-1]
        rows = moved.shape[:-1]
        codes = torch.zeros(*rows, length, dtype=torch.uint8, device=x.device)
        inner_scales = x.new_zeros(*rows, length // inner)
        outer_scales = (
            x.new_ones(1, 1) if outer is None else x.new_ones(rows.numel(), length // outer)
        )
        return NVFP4Tensor(codes, inner_scales, outer_scales, tuple(x.shape), axis, inner, outer)
    moved = _pad_last(x.movedim(axis, -1), outer or inner).contiguous()
    last = moved.dim() - 1
    q, _, s_b, s_outer = _block_parts(moved, last, inner, outer, rounding, scale_round, generator)
    codes = _codes(q, _block_view(moved, last, inner)).reshape(moved.shape)
    inner_scales = s_b.reshape(*moved.shape[:-1], -1)
    outer_scales = s_outer.reshape(1, 1) if outer is None else s_outer.reshape(-1, s_outer.shape[1])
    return NVFP4Tensor(codes, inner_scales, outer_scales, tuple(x.shape), axis, inner, outer)


def _nvfp4_fake(
    x: torch.Tensor,
    axis: int,
    inner: int,
    outer: int | None,
    rounding: str,
    scale_round: str,
    generator: Seed,
    overwrite: bool = False,
) -> torch.Tensor:
    """x̂ of x; ``overwrite=True`` may reuse x's storage (x is the caller's temporary)."""
    length = x.shape[axis]
    padded = _pad_axis(x, axis, inner)  # a partial outer chunk needs no padding
    overwrite = overwrite or padded is not x  # a padded copy is ours
    q, scale, _, _ = _block_parts(
        padded, axis, inner, outer, rounding, scale_round, generator, overwrite
    )
    out = q.mul_(scale[:, :, None, :]).view(padded.shape)
    return out.narrow(axis, 0, length) if padded.shape[axis] != length else out


def nvfp4_fake_quant(
    x: torch.Tensor,
    axis: int = -1,
    inner: int = 16,
    outer: int | None = 128,
    rounding: str = "rtn",
    scale_round: str = "nearest",
    generator: Seed = None,
) -> torch.Tensor:
    """Quantize-dequantize: ``nvfp4_quantize(x, ...).dequantize()`` without building codes.

    Parameters, Raises
        As :func:`nvfp4_quantize`.

    Returns
    -------
    torch.Tensor
        x̂, same shape and dtype as ``x``.

    Examples
    --------
    >>> x = torch.randn(2, 128)
    >>> bool(torch.equal(nvfp4_fake_quant(x), nvfp4_quantize(x).dequantize()))
    True
    """
    owner = "nvfp4_fake_quant"
    check_tensor("x", x, owner=owner, finite=True)
    _check_blocks(inner, outer, owner)
    check_one_of("rounding", rounding, ROUNDINGS, owner=owner)
    check_one_of("scale_round", scale_round, SCALE_ROUNDINGS, owner=owner)
    axis = _check_axis(x, axis, owner)
    if x.numel() == 0:
        return x.clone()
    return _nvfp4_fake(x, axis, inner, outer, rounding, scale_round, generator)


def _nvfp4_fake_2d(w: torch.Tensor, tile: int = 16) -> torch.Tensor:
    """NVIDIA-style weights: one E4M3 scale per 16x16 tile, a per-tensor FP32 scale, RTN."""
    m, k = w.shape
    tiles = w.reshape(m // tile, tile, k // tile, tile)
    amax_t = tiles.abs().amax((1, 3), keepdim=True)
    s_tensor = amax_t.amax() / (E2M1_MAX * E4M3_MAX)  # = max |w|
    s_tensor = torch.where(s_tensor == 0, torch.ones_like(s_tensor), s_tensor)
    scale = s_tensor * _cast_e4m3(torch.clamp(amax_t / (E2M1_MAX * s_tensor), max=E4M3_MAX))
    y = torch.where(scale > 0, tiles / torch.where(scale > 0, scale, 1.0), 0.0)
    return (_round_e2m1(y, "rtn", None, None) * scale).reshape(m, k)


def mxfp8_fake_quant(x: torch.Tensor, axis: int = -1, block: int = 32) -> torch.Tensor:
    """MXFP8 (E4M3) quantize-dequantize along ``axis``: 32-blocks, E8M0 scale rounded up, RTN.

    Parameters
    ----------
    x
        Finite float tensor (axis length zero-padded to a multiple of ``block``).
    axis
        Block axis.
    block
        Block size (32 in the OCP MX spec).

    Returns
    -------
    torch.Tensor
        x̂ = E4M3(x/s)·s with s = 2^ceil(log2(amax_b/448)).

    Raises
    ------
    TypeError, ValueError
        For non-float tensors, non-finite entries or a non-positive block.

    Examples
    --------
    >>> x = torch.tensor([[1.0, 3.0, 17.0, 500.0]])
    >>> mxfp8_fake_quant(x, block=4).tolist()
    [[1.0, 3.0, 16.0, 512.0]]
    """
    owner = "mxfp8_fake_quant"
    check_tensor("x", x, owner=owner, finite=True)
    check_positive_int("block", block, owner=owner, maximum=MAX_BLOCK)
    axis = _check_axis(x, axis, owner)
    if x.numel() == 0:
        return x.clone()
    return _mxfp8_fake(x, axis, block)


def _mxfp8_fake(x: torch.Tensor, axis: int, block: int = 32) -> torch.Tensor:
    # blocks along `axis` in place of a transpose, as the NVFP4 path: (pre, nb, block, post)
    length = x.shape[axis]
    padded = _pad_axis(x, axis, block)
    blocks = _block_view(padded.contiguous(), axis, block)
    scale = _e8m0(_block_amax(blocks, None)[:, :, None, :], E4M3_MAX)
    q = blocks / scale
    if q.dtype == torch.float32:  # _cast_e4m3 in place: one full-size temporary, not three
        q = _magic_e4m3_(q.clamp_(-E4M3_MAX, E4M3_MAX)).copysign_(blocks)
    else:
        q = _cast_e4m3(q)
    out = q.mul_(scale).view(padded.shape)
    return out.narrow(axis, 0, length) if padded.shape[axis] != length else out


def bin_width(grid_magnitude: torch.Tensor) -> torch.Tensor:
    """Width β(|g|) of the RTN bin around an E2M1 grid magnitude (spec §2.4; |g| = 6 gets 2)."""
    check_tensor("grid_magnitude", grid_magnitude, owner="bin_width", finite=True)
    return _bin_width(grid_magnitude)


def _bin_width(grid_magnitude: torch.Tensor) -> torch.Tensor:
    # NaN (an MXFP8 column's missing FP4 scale, in the training loop's tracking) stays NaN
    edges = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=grid_magnitude.dtype)
    widths = torch.tensor([0.5, 0.5, 0.5, 0.5, 0.75, 1.0, 1.5, 2.0], dtype=grid_magnitude.dtype)
    return widths[torch.bucketize(grid_magnitude, edges)]
