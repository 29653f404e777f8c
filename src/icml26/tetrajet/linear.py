"""The NVFP4 linear layer of TetraJet-v2 (arXiv:2510.27527, §2.2-§2.3) as one autograd Function.

Y = X̂ Ŵᵀ with six quantizers (ids as in the official config):
Q1 X along K (RTN), Q2 W along K (RTN); dX = Q3(R dY) Q4(R Ŵᵀ)ᵀ along M; dW = Q5(R dYᵀ) Q6(R X̂ᵀ)ᵀ
along N, with R a fresh 16-point random Hadamard transform per GEMM and SR in Q3-Q6. Every switch
of :class:`QuantSpec` turns this one implementation into one of the recipes R0-R5.

Outlier channels (OutControl): the channels C chosen by
:class:`~icml26.tetrajet.outcontrol.OutlierChannelCalibrator` are quantized to MXFP8 in the forward
and in their weight-gradient GEMM (RTN, no RHT, blocks along N); dX uses the assembled Ŵ on the
full K.

Padding: tokens are zero-padded to a multiple of ``QuantSpec.token_multiple`` (128) and K, M to a
multiple of 16 (the RHT chunk); zero rows/columns change neither the product nor any block scale.

Deviations: the tensors saved for backward are X̂ and Ŵ (fake-quantized, the same memory as X, W
in emulation); the official kernel saves their re-quantized FP4 copies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from icml26.core import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    seeded_default_init,
    torch_generator,
)
from icml26.tetrajet.formats import (
    MAX_BLOCK,
    ROUNDINGS,
    SCALE_ROUNDINGS,
    NVFP4Tensor,
    _mxfp8_fake,
    _nvfp4_fake,
    _nvfp4_fake_2d,
    _rht16,
    _rotation,
    nvfp4_quantize,
    random_signs,
)

__all__ = ["NVFP4Conv1D", "NVFP4Linear", "QuantSpec", "quantized_linear"]


@dataclass(frozen=True)
class QuantSpec:
    """Switches of the quantized linear layer; the recipes R0-R5 are instances of it.

    Parameters
    ----------
    name
        Display name.
    quantize
        Six booleans enabling Q1 (X fwd), Q2 (W fwd), Q3 (dY for dX), Q4 (W for dX),
        Q5 (dY for dW), Q6 (X for dW); a disabled quantizer is the identity.
    inner, outer
        NVFP4 block sizes; ``outer=None`` is the standard per-tensor FP32 scale.
    weight_2d
        NVIDIA's 16x16 weight tiles (per-tensor scale); the dX GEMM then reuses Ŵ as is.
    backward_rounding
        Rounding of the gradient quantizers Q3 and Q5: ``"sr"`` (unbiased) or ``"rtn"``.
    operand_rounding
        Rounding of Q4 and Q6, which re-quantize the forward operands (Ŵ, X̂ or the raw W, X)
        for the backward GEMMs; ``None`` (default) follows ``backward_rounding``. NVIDIA's
        recipe rounds only gradients stochastically: ``"rtn"`` there.
    scale_round
        E4M3 rounding of s_b: ``"nearest"`` (official; elements may clip at 6, a small bias)
        or ``"up"`` (no clipping).
    rht_dgrad, rht_wgrad
        Random Hadamard transform on the dX / dW GEMM.
    aligned_weight, aligned_activation
        Q4 / Q6 re-quantize the dequantized forward Ŵ / X̂ (True) or the raw W / X (False).
    outlier_ratio
        Share of input channels kept in MXFP8 once calibrated (0 disables OutControl).
    oscireset
        Whether training applies OsciReset (read by the training loop, not by the layer).
    token_multiple
        Tokens are zero-padded to a multiple of this (128: one outer block along N).
    high_precision_last_blocks
        Transformer blocks, counted from the last, that the training loop keeps in full
        precision (NVIDIA's published recipe; read by the training loop, not by the layer).
    high_precision_final_fraction
        Final share of the training steps the loop runs in full precision (NVIDIA: 0.1).

    Examples
    --------
    >>> QuantSpec(name="fwd-only", quantize=(True, True, False, False, False, False)).enabled
    True
    """

    name: str = "custom"
    quantize: tuple[bool, bool, bool, bool, bool, bool] = (True,) * 6
    inner: int = 16
    outer: int | None = 128
    weight_2d: bool = False
    backward_rounding: str = "sr"
    operand_rounding: str | None = None
    scale_round: str = "nearest"
    rht_dgrad: bool = True
    rht_wgrad: bool = True
    aligned_weight: bool = True
    aligned_activation: bool = True
    outlier_ratio: float = 0.0
    oscireset: bool = False
    token_multiple: int = 128
    high_precision_last_blocks: int = 0
    high_precision_final_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"QuantSpec: name must be a str; got {self.name!r}.")
        owner = f"QuantSpec {self.name!r}"
        quantize = self.quantize
        if not (
            isinstance(quantize, tuple | list)
            and len(quantize) == 6
            and all(isinstance(q, bool) for q in quantize)
        ):
            raise ValueError(f"{owner}: quantize must be six booleans; got {quantize!r}.")
        object.__setattr__(self, "quantize", tuple(quantize))
        for flag in ("weight_2d", "rht_dgrad", "rht_wgrad", "aligned_weight",
                     "aligned_activation", "oscireset"):  # fmt: skip
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{owner}: {flag} must be a bool; got {getattr(self, flag)!r}.")
        check_positive_int("inner", self.inner, owner=owner, maximum=MAX_BLOCK)
        if self.inner % 16:
            raise ValueError(f"{owner}: inner must be a multiple of 16; got {self.inner!r} (int).")
        if self.outer is not None:
            check_positive_int("outer", self.outer, owner=owner, maximum=MAX_BLOCK)
            if self.outer % self.inner:
                raise ValueError(
                    f"{owner}: outer must be a multiple of inner; got {self.outer!r} (int)."
                )
        check_one_of("backward_rounding", self.backward_rounding, ROUNDINGS, owner=owner)
        if self.operand_rounding is None:
            object.__setattr__(self, "operand_rounding", self.backward_rounding)
        check_one_of("operand_rounding", self.operand_rounding, ROUNDINGS, owner=owner)
        check_one_of("scale_round", self.scale_round, SCALE_ROUNDINGS, owner=owner)
        check_in_interval("outlier_ratio", self.outlier_ratio, low=0.0, high=1.0, owner=owner)
        check_positive_int(
            "high_precision_last_blocks", self.high_precision_last_blocks, owner=owner,
            minimum=0, maximum=2**16,
        )  # fmt: skip
        check_in_interval(
            "high_precision_final_fraction", self.high_precision_final_fraction, low=0.0,
            high=1.0, owner=owner,
        )  # fmt: skip
        if self.weight_2d and self.outlier_ratio > 0:
            raise ValueError(
                f"{owner}: outlier_ratio > 0 needs 1x16 weight blocks; got weight_2d=True and "
                f"outlier_ratio={self.outlier_ratio!r}."
            )
        check_positive_int("token_multiple", self.token_multiple, owner=owner, maximum=MAX_BLOCK)
        if self.token_multiple % 16:
            raise ValueError(
                f"{owner}: token_multiple must be a multiple of 16; got {self.token_multiple!r}."
            )

    @property
    def enabled(self) -> bool:
        """Whether any quantizer is on (``False`` is exact FP32)."""
        return any(self.quantize)


def _pad(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    extra_rows, extra_cols = -x.shape[0] % rows, -x.shape[1] % cols
    if not (extra_rows or extra_cols):
        return x
    return nn.functional.pad(x, (0, extra_cols, 0, extra_rows))


def _fp4(
    x: torch.Tensor,
    axis: int,
    spec: QuantSpec,
    rounding: str,
    g: torch.Generator | None,
    overwrite: bool = False,
) -> torch.Tensor:
    # overwrite: x is this layer's temporary (an RHT output), so x̂ may take its storage
    return _nvfp4_fake(x, axis, spec.inner, spec.outer, rounding, spec.scale_round, g, overwrite)


def _regular_channels(k: int, outliers: torch.Tensor) -> torch.Tensor:
    """Indices of the K channels outside ``outliers`` (the FP4 ones), in order."""
    keep = torch.ones(k, dtype=torch.bool, device=outliers.device)
    keep[outliers] = False
    return keep.nonzero().squeeze(1)


def _quantized_weight(
    w: torch.Tensor, spec: QuantSpec, regular: torch.Tensor, outliers: torch.Tensor
) -> torch.Tensor:
    """Q2(W): NVFP4 along K over the regular channels, MXFP8 over the outlier channels."""
    if not spec.quantize[1]:
        return w
    if spec.weight_2d:
        return _nvfp4_fake_2d(w)
    if not outliers.numel():
        return _fp4(w, 1, spec, "rtn", None)
    out = torch.empty_like(w)
    # index_select / index_copy_: the same values as w[:, idx] and out[:, idx] = ..., but
    # measured 15x and 4x faster than advanced indexing along dim 1 on CPU
    out.index_copy_(1, regular, _fp4(w.index_select(1, regular), 1, spec, "rtn", None))
    out.index_copy_(1, outliers, _mxfp8_fake(w.index_select(1, outliers), 1))
    return out


class _QuantizedLinearFn(torch.autograd.Function):
    """y = Q1(X) Q2(W)ᵀ; with outlier channels C, y = Q1(X_R) Q2(W_R)ᵀ + Q8(X_C) Q8(W_C)ᵀ.

    The outlier case keeps the activation's two channel groups as separate, compact operands
    (two GEMMs instead of one over re-assembled columns): X is the large operand, and scattering
    its columns back cost more than the split GEMM (same values up to summation order).
    """

    @staticmethod
    def forward(
        ctx: Any,
        x: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        spec: QuantSpec,
        generator: torch.Generator,
        outliers: torch.Tensor,
    ) -> torch.Tensor:
        n_tokens, (m, k) = x.shape[0], weight.shape
        x_p = _pad(x, spec.token_multiple, 16)  # (N_pad, K_pad)
        w_p = _pad(weight, 16, 16)  # (M_pad, K_pad)
        q1 = spec.quantize[0]
        regular = _regular_channels(x_p.shape[1], outliers) if outliers.numel() else outliers
        w_hat = _quantized_weight(w_p, spec, regular, outliers)
        if outliers.numel():
            x_r, x_c = x_p.index_select(1, regular), x_p.index_select(1, outliers)
            x_r_hat = _fp4(x_r, 1, spec, "rtn", None) if q1 else x_r
            x_c_hat = _mxfp8_fake(x_c, 1) if q1 else x_c
            y = torch.addmm(
                x_r_hat @ w_hat.index_select(1, regular).T,
                x_c_hat,
                w_hat.index_select(1, outliers).T,
            )
        else:
            x_r, x_c = x_p, x_p[:, :0]
            x_r_hat, x_c_hat = (_fp4(x_p, 1, spec, "rtn", None) if q1 else x_p), x_c
            y = x_r_hat @ w_hat.T  # (N_pad, M_pad)
        ctx.save_for_backward(
            x_r_hat if spec.aligned_activation else x_r,  # the regular channels (all without C)
            x_c_hat if spec.aligned_activation else x_c,  # the outlier channels
            w_hat if spec.aligned_weight else w_p,
            regular,
            outliers,
        )
        ctx.spec, ctx.generator, ctx.shape = spec, generator, (n_tokens, m, k)
        ctx.has_bias = bias is not None
        y = y[:n_tokens, :m]
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx: Any, grad_y: torch.Tensor) -> tuple[Any, ...]:
        e, x_c, w_s, regular, outliers = ctx.saved_tensors
        spec, g, (n_tokens, m, k) = ctx.spec, ctx.generator, ctx.shape
        _, q2, q3, q4, q5, q6 = spec.quantize
        rounding = spec.backward_rounding  # the gradients dY (Q3, Q5)
        operand_rounding = spec.operand_rounding  # the forward operands re-quantized (Q4, Q6)
        dy = _pad(grad_y, spec.token_multiple, 16)  # (N_pad, M_pad)

        # dX = Q3(R dY) Q4(R Ŵᵀ)ᵀ, contraction over M.
        reuse_weight = spec.weight_2d and q2  # Q4 is the forward's Ŵ: nothing to draw
        sr_draws = (q3 and rounding == "sr") or (
            q4 and not reuse_weight and operand_rounding == "sr"
        )
        grad_x = None
        # an input without gradient (the toy's data) skips dX unless its SR draws must be
        # taken from the stream; its RHT signs are drawn either way, so dW is unchanged
        if ctx.needs_input_grad[0] or sr_draws:
            a, b = dy, w_s
            if spec.rht_dgrad:
                rotation = _rotation(random_signs(g), dy.dtype, dy.device)
                a, b = _rht16(a, rotation, 1), _rht16(b, rotation, 0)
            owned = spec.rht_dgrad  # a and b are fresh RHT outputs
            a = _fp4(a, 1, spec, rounding, g, owned) if q3 else a
            if q4 and not reuse_weight:
                b = _fp4(b, 0, spec, operand_rounding, g, owned)
            grad_x = (a @ b)[:n_tokens, :k]  # (N, K)
        elif spec.rht_dgrad:
            random_signs(g)

        # dW = Q5(R dYᵀ) Q6(R X̂ᵀ)ᵀ, contraction over N; outlier channels take the MXFP8 path.
        c = dy
        if spec.rht_wgrad:
            rotation = _rotation(random_signs(g), dy.dtype, dy.device)
            c, e = _rht16(c, rotation, 0), _rht16(e, rotation, 0)
        owned = spec.rht_wgrad
        c = _fp4(c, 0, spec, rounding, g, owned) if q5 else c
        e = _fp4(e, 0, spec, operand_rounding, g, owned) if q6 else e
        if not outliers.numel():
            grad_w = c.T @ e
        else:
            grad_w = dy.new_empty(dy.shape[1], w_s.shape[1])
            grad_w.index_copy_(1, regular, c.T @ e)
            c8 = _mxfp8_fake(dy, 0) if q5 else dy
            e8 = _mxfp8_fake(x_c, 0) if q6 else x_c
            grad_w.index_copy_(1, outliers, c8.T @ e8)
        grad_b = grad_y.sum(0) if ctx.has_bias else None
        return grad_x, grad_w[:m, :k], grad_b, None, None, None


def quantized_linear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    spec: QuantSpec,
    generator: torch.Generator | None = None,
    outlier_channels: torch.Tensor | None = None,
) -> torch.Tensor:
    """Fake-quantized y = x Wᵀ + b with the six quantizers of ``spec`` (forward and backward).

    Parameters
    ----------
    x
        Input of shape ``(..., K)`` (float).
    weight
        ``(M, K)`` master weight.
    bias
        Optional ``(M,)`` bias (kept in full precision).
    spec
        The recipe's switches.
    generator
        The ``torch.Generator`` of the SR draws and RHT signs of the backward pass, advanced by
        every call, so successive calls draw fresh rounding; ``None`` draws fresh OS entropy.
        An int is refused: seeding inside the call would repeat the same draws on every step of
        a training loop. :class:`NVFP4Linear` keeps one generator per layer.
    outlier_channels
        Indices of the input channels kept in MXFP8 (empty or ``None``: pure FP4).

    Returns
    -------
    torch.Tensor
        ``(..., M)``.

    Raises
    ------
    TypeError
        If ``x``/``weight`` are not float tensors, ``spec`` is not a QuantSpec or
        ``generator`` is neither a ``torch.Generator`` nor ``None``.
    ValueError
        If the shapes do not match.

    Examples
    --------
    >>> x, w = torch.randn(4, 128), torch.randn(256, 128, requires_grad=True)
    >>> g = torch.Generator().manual_seed(0)
    >>> quantized_linear(x, w, spec=QuantSpec(), generator=g).sum().backward()
    >>> w.grad.shape
    torch.Size([256, 128])
    """
    owner = "quantized_linear"
    check_tensor("x", x, owner=owner)
    check_tensor("weight", weight, owner=owner)
    if not isinstance(spec, QuantSpec):
        raise TypeError(f"{owner}: spec must be a QuantSpec; got {type(spec).__name__}.")
    if weight.dim() != 2 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"{owner}: x.shape[-1] must equal weight.shape[1]; got x {tuple(x.shape)} and "
            f"weight {tuple(weight.shape)}."
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"{owner}: generator must be a torch.Generator or None (an int would re-seed the same "
            f"draws on every call); got {type(generator).__name__}."
        )
    if not spec.enabled or x.shape[:-1].numel() == 0:  # FP32, or an empty batch: nothing to round
        return nn.functional.linear(x, weight, bias)
    outliers = torch.zeros(0, dtype=torch.long) if outlier_channels is None else outlier_channels
    if spec.weight_2d and outliers.numel():
        # 16x16 weight blocks would straddle the columns the outlier channels take out.
        raise ValueError(
            f"{owner}: outlier_channels need 1x16 weight blocks; got a spec with weight_2d=True "
            f"and {outliers.numel()} outlier channels."
        )
    flat = x.reshape(-1, x.shape[-1])
    gen = torch_generator(generator)
    y = _QuantizedLinearFn.apply(flat, weight, bias, spec, gen, outliers.long())
    return y.reshape(*x.shape[:-1], weight.shape[0])


class NVFP4Linear(nn.Module):
    """Drop-in ``nn.Linear`` whose three GEMMs are fake-quantized per a :class:`QuantSpec`.

    Parameters
    ----------
    in_features, out_features
        K and M.
    bias
        Whether to add a (full-precision) bias.
    spec
        The recipe's switches.
    seed
        Seed of the initial weight (``nn.Linear``'s default initialisation) and of this layer's
        SR draws and RHT signs.

    Attributes
    ----------
    outlier_channels
        Buffer of MXFP8 channel indices (empty until calibrated).
    channel_norms
        Buffer accumulating Σ‖X[:, c]‖₂ while ``recording`` is on.

    Examples
    --------
    >>> layer = NVFP4Linear(128, 256, spec=QuantSpec(), seed=0)
    >>> layer(torch.randn(2, 3, 128)).shape
    torch.Size([2, 3, 256])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = False,
        *,
        spec: QuantSpec,
        seed: Seed = None,
    ) -> None:
        super().__init__()
        self.in_features = check_positive_int("in_features", in_features, owner="NVFP4Linear")
        self.out_features = check_positive_int("out_features", out_features, owner="NVFP4Linear")
        if not isinstance(spec, QuantSpec):
            raise TypeError(f"NVFP4Linear: spec must be a QuantSpec; got {type(spec).__name__}.")
        self.spec = spec
        self.generator = torch_generator(seed)
        # nn.Linear's default initialisation, drawn from `seed` instead of the global RNG.
        with seeded_default_init(seed):
            reference = nn.Linear(in_features, out_features, bias=bias)
        self.weight = nn.Parameter(reference.weight.detach().clone())
        self.bias = nn.Parameter(reference.bias.detach().clone()) if bias else None
        self.register_buffer("outlier_channels", torch.zeros(0, dtype=torch.long))
        self.register_buffer("channel_norms", torch.zeros(in_features))
        self.recording = False

    @classmethod
    def from_linear(cls, linear: nn.Linear, spec: QuantSpec, seed: Seed = None) -> NVFP4Linear:
        """A quantized copy of ``linear`` (same weight and bias values)."""
        layer = cls(
            linear.in_features, linear.out_features, linear.bias is not None, spec=spec, seed=seed
        )
        with torch.no_grad():
            layer.weight.copy_(linear.weight)
            if linear.bias is not None:
                layer.bias.copy_(linear.bias)
        return layer.to(linear.weight.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """y = quantized_linear(x, W, b) under this layer's spec and calibrated channels."""
        if self.recording:
            self.channel_norms += x.detach().reshape(-1, self.in_features).norm(dim=0)
        return quantized_linear(
            x,
            self.weight,
            self.bias,
            spec=self.spec,
            generator=self.generator,
            outlier_channels=self.outlier_channels,
        )

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        # A calibrated layer's MXFP8 channel list has its own length: take the saved one's.
        channels = state_dict.get(prefix + "outlier_channels")
        if channels is not None:
            self.outlier_channels = torch.empty_like(channels, device=self.weight.device)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def fp4_weight(self) -> tuple[NVFP4Tensor, torch.Tensor]:
        """The forward RTN quantization Q2 of the FP4 weight columns, and those column indices.

        Raises
        ------
        ValueError
            For NVIDIA-style 16x16 weight tiles (the 1x16 grid of OsciReset does not apply).
        """
        if self.spec.weight_2d:
            raise ValueError("NVFP4Linear: fp4_weight needs 1x16 weight blocks; got weight_2d.")
        keep = torch.ones(self.in_features, dtype=torch.bool, device=self.weight.device)
        keep[self.outlier_channels] = False
        columns = keep.nonzero().squeeze(1)
        w = self.weight.detach()[:, columns]
        return nvfp4_quantize(w, 1, self.spec.inner, self.spec.outer, "rtn"), columns

    def extra_repr(self) -> str:
        """Sizes, recipe name and number of MXFP8 channels."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, spec={self.spec.name!r}, "
            f"fp8_channels={self.outlier_channels.numel()}"
        )


class NVFP4Conv1D(NVFP4Linear):
    """NVFP4Linear in place of transformers' ``Conv1D`` (GPT-2's attention and MLP layers).

    It computes ``x @ W + b`` as ``Conv1D`` does and keeps ``Conv1D``'s weight layout
    ``(in_features, out_features)`` in state dicts, so a quantized GPT-2 saves to the usual HF
    checkpoint, and ``from_pretrained`` + :func:`~icml26.tetrajet.quantize_model_` with the same
    recipe and seed + ``load_state_dict(saved, strict=False)`` (for calibrated MXFP8 channels)
    restores it. Inside, the weight is stored ``(out, in)`` like every NVFP4Linear.

    Examples
    --------
    >>> from transformers.pytorch_utils import Conv1D
    >>> conv = Conv1D(32, 16)  # nf=32 outputs, nx=16 inputs
    >>> layer = NVFP4Conv1D.from_conv1d(conv, QuantSpec(quantize=(False,) * 6), seed=0)
    >>> x = torch.randn(2, 16)
    >>> bool(torch.allclose(layer(x), conv(x), atol=1e-6))
    True
    >>> tuple(layer.state_dict()["weight"].shape)  # Conv1D's layout
    (16, 32)
    """

    @classmethod
    def from_conv1d(cls, conv: nn.Module, spec: QuantSpec, seed: Seed = None) -> NVFP4Conv1D:
        """A quantized copy of a transformers ``Conv1D`` (same weight and bias values)."""
        in_features, out_features = conv.weight.shape
        layer = cls(in_features, out_features, True, spec=spec, seed=seed)
        with torch.no_grad():
            layer.weight.copy_(conv.weight.T)
            layer.bias.copy_(conv.bias)
        return layer.to(conv.weight.device)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"] = destination[prefix + "weight"].T.contiguous()

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        weight = state_dict.get(prefix + "weight")
        if weight is not None:
            state_dict[prefix + "weight"] = weight.T
        super()._load_from_state_dict(state_dict, prefix, *args)
