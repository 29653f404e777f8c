"""Attention with a temperature gamma, and a patcher that sets it on existing modules (spec §2.3).

SCALE tempers every self-attention of the vision encoder(s) at step t:
softmax(Q K^T / (sqrt(d_head) * gamma_t)) V. gamma > 1 flattens the attention (explore the scene),
gamma < 1 sharpens it (exploit).

:class:`AttentionTemperature` divides the output of each module's query projection by gamma with
a forward hook. Since softmax((Q/gamma) K^T / sqrt(d)) is softmax(Q K^T / (sqrt(d) gamma)), this
is the tempered attention exactly, and it also holds for fused kernels (SDPA, flash), which ignore
an edited ``scale`` attribute: that is why the official code needs a manual attention path, and
this hook does not. Rotary embeddings are linear in Q, so scaling before them is the same. Where a
query norm follows the projection (timm ``qk_norm=True``) the hook sits on the norm's output.

Deviation: the hook replaces the official code's manual attention forward; the two are equal
(tested against :func:`scaled_dot_attention` on our ViT and on HF ``ViTAttention`` /
``SiglipAttention``). timm's fused ``qkv`` layout is supported but untested (timm does not run on
this CPU-only machine).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

from icml26.core.validation import check_in_interval, check_tensor

__all__ = ["AttentionTemperature", "attention_probs", "scaled_dot_attention"]

_EXPECTED = (
    "an nn.Module exposing q/k/v projections: q_proj/k_proj/v_proj (HF CLIP/SigLIP/Llama, "
    "TinyARVLA, HF ViT), query/key/value (HF ViT/DINOv2 before transformers 5) or a fused "
    "qkv Linear (timm Attention)"
)


def _gamma_tensor(gamma: float | torch.Tensor, owner: str) -> float | torch.Tensor:
    """Validate gamma: a positive finite float, or a 1-D tensor of them (one per batch row)."""
    if isinstance(gamma, torch.Tensor):
        check_tensor("gamma", gamma, owner=owner, finite=True)
        if gamma.ndim > 1:
            raise ValueError(f"{owner}: gamma must be a float or a 1-D tensor; got {gamma.ndim}-D.")
        if not bool(torch.all(gamma > 0)):
            raise ValueError(f"{owner}: gamma must be > 0 everywhere.")
        return gamma
    value = check_in_interval("gamma", gamma, low=0.0, closed="neither", owner=owner)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: gamma must be finite; got {value!r}.")
    return value


def _logits(
    q: torch.Tensor,
    k: torch.Tensor,
    gamma: float | torch.Tensor,
    mask: torch.Tensor | None,
    owner: str,
) -> torch.Tensor:
    for name, t in (("q", q), ("k", k)):
        check_tensor(name, t, owner=owner, finite=True)
        if t.ndim < 2:
            raise ValueError(
                f"{owner}: {name} must be at least 2-D (..., tokens, d); got {t.ndim}-D."
            )
    if q.shape[-1] != k.shape[-1] or q.shape[-1] == 0:
        raise ValueError(
            f"{owner}: q and k must share a non-zero last dim; got {q.shape[-1]} and {k.shape[-1]}."
        )
    gamma = _gamma_tensor(gamma, owner)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., Tq, Tk)
    if isinstance(gamma, torch.Tensor):
        if gamma.ndim == 1 and (scores.ndim < 3 or gamma.shape[0] not in (1, scores.shape[0])):
            raise ValueError(
                f"{owner}: a 1-D gamma needs one value per batch row ({scores.shape[0]}); "
                f"got {gamma.shape[0]}."
            )
        gamma = gamma.to(scores.dtype).reshape(-1, *([1] * (scores.ndim - 1)))
    scores = scores / gamma
    if mask is None:
        return scores
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{owner}: mask must be a torch.Tensor or None; got {type(mask).__name__}.")
    try:
        mask = torch.broadcast_to(mask, scores.shape)
    except RuntimeError:
        raise ValueError(
            f"{owner}: mask of shape {tuple(mask.shape)} does not broadcast to the scores "
            f"{tuple(scores.shape)}."
        ) from None
    if mask.dtype == torch.bool:
        if scores.numel() and not bool(mask.any(dim=-1).all()):
            raise ValueError(f"{owner}: mask leaves a query row with no key to attend to.")
        return scores.masked_fill(~mask, -math.inf)
    check_tensor("mask", mask, owner=owner)
    if torch.isnan(mask).any() or (mask == math.inf).any():
        raise ValueError(f"{owner}: an additive mask must hold finite values or -inf.")
    if scores.numel() and not bool(torch.isfinite(mask).any(dim=-1).all()):
        raise ValueError(f"{owner}: mask leaves a query row with no key to attend to.")
    return scores + mask.to(scores.dtype)


def attention_probs(
    q: torch.Tensor,
    k: torch.Tensor,
    gamma: float | torch.Tensor = 1.0,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The attention weights softmax(q k^T / (sqrt(d) gamma) + mask), shape ``(..., Tq, Tk)``.

    Examples
    --------
    >>> q = k = torch.eye(2)
    >>> attention_probs(q, k, gamma=1e6).round(decimals=3).tolist()  # very hot: uniform rows
    [[0.5, 0.5], [0.5, 0.5]]
    """
    return torch.softmax(_logits(q, k, gamma, mask, "attention_probs"), dim=-1)


def scaled_dot_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    gamma: float | torch.Tensor = 1.0,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Tempered attention softmax(Q K^T / (sqrt(d_head) gamma) + mask) V, computed by hand.

    Parameters
    ----------
    q, k, v
        ``(..., Tq, d)``, ``(..., Tk, d)``, ``(..., Tk, d_v)``.
    gamma
        The temperature: a positive float, or a 1-D tensor with one value per leading batch row.
        gamma = 1 is ordinary attention.
    mask
        ``None``, a boolean tensor (True = may attend) or an additive float tensor (0 / -inf),
        broadcastable to ``(..., Tq, Tk)``; every query row must keep at least one key.

    Returns
    -------
    torch.Tensor
        ``(..., Tq, d_v)``.

    Raises
    ------
    ValueError
        Mismatched shapes, NaN/inf inputs, gamma <= 0, or a mask row with no allowed key.

    Examples
    --------
    >>> q, k, v = torch.ones(1, 2, 4), torch.ones(1, 3, 4), torch.arange(3.0).reshape(1, 3, 1)
    >>> scaled_dot_attention(q, k, v, gamma=2.0).flatten().tolist()
    [1.0, 1.0]
    """
    owner = "scaled_dot_attention"
    logits = _logits(q, k, gamma, mask, owner)
    check_tensor("v", v, owner=owner, finite=True)
    if v.ndim < 2 or v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{owner}: v must have as many tokens as k ({k.shape[-2]}); got shape {tuple(v.shape)}."
        )
    return torch.softmax(logits, dim=-1) @ v


def _query_site(module: Any) -> tuple[nn.Module, str]:
    """The submodule whose output is the query (or the fused qkv), and the layout name."""
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"AttentionTemperature: modules must hold {_EXPECTED}; got {type(module).__name__}."
        )
    q_norm = getattr(module, "q_norm", None)
    has_norm = isinstance(q_norm, nn.Module) and not isinstance(q_norm, nn.Identity)
    if all(isinstance(getattr(module, n, None), nn.Module) for n in ("q_proj", "k_proj", "v_proj")):
        return (q_norm, "q") if has_norm else (module.q_proj, "q")
    if all(isinstance(getattr(module, n, None), nn.Module) for n in ("query", "key", "value")):
        return module.query, "q"
    if isinstance(getattr(module, "qkv", None), nn.Linear):
        return (q_norm, "q") if has_norm else (module.qkv, "qkv")
    raise TypeError(
        f"AttentionTemperature: modules must hold {_EXPECTED}; got a {type(module).__name__} "
        "without them."
    )


class AttentionTemperature:
    """Context manager that runs the given attention modules at temperature ``gamma``.

    Inside the ``with`` block the query of every module is divided by ``gamma`` (a hook on its
    query projection), which is exactly softmax(Q K^T / (sqrt(d) gamma)); leaving the block
    removes the hooks. ``gamma`` may be changed inside the block (read at every forward call),
    and may be a 1-D tensor holding one temperature per batch row (batch-first inputs).

    Parameters
    ----------
    modules
        Attention modules exposing q/k/v projections (``q_proj/k_proj/v_proj``,
        ``query/key/value``, or a fused ``qkv`` Linear), or one such module.
    gamma
        The temperature, > 0 (1 leaves attention unchanged).

    Raises
    ------
    TypeError
        A module without q/k/v projections (the message says what is expected).
    ValueError
        gamma not positive and finite.

    Examples
    --------
    >>> from icml26.scale.model import MultiHeadAttention
    >>> attn = MultiHeadAttention(8, 2)
    >>> x = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(0))
    >>> with AttentionTemperature([attn], gamma=1.0):
    ...     same = torch.allclose(attn(x)[0], attn(x)[0])
    >>> same
    True
    """

    def __init__(self, modules: Iterable[nn.Module] | nn.Module, gamma: float | torch.Tensor = 1.0):
        if isinstance(modules, nn.Module):
            modules = [modules]
        if isinstance(modules, (str, bytes)) or not isinstance(modules, Iterable):
            raise TypeError(
                f"AttentionTemperature: modules must be an iterable of {_EXPECTED}; "
                f"got {type(modules).__name__}."
            )
        self.modules = list(modules)
        self._sites = [_query_site(m) for m in self.modules]
        self.gamma = gamma
        self._handles: list[Any] = []

    @property
    def gamma(self) -> float | torch.Tensor:
        """The temperature applied at the next forward call."""
        return self._gamma

    @gamma.setter
    def gamma(self, value: float | torch.Tensor) -> None:
        self._gamma = _gamma_tensor(value, "AttentionTemperature")

    def _hook(self, layout: str):
        def scale_query(_module: nn.Module, _inputs: Any, out: torch.Tensor) -> torch.Tensor:
            gamma = self._gamma
            if isinstance(gamma, torch.Tensor):
                gamma = gamma.to(out.dtype).reshape(-1, *([1] * (out.ndim - 1)))
            elif gamma == 1.0:
                return out
            if layout == "qkv":  # timm: (B, N, 3 * dim) with q first
                dim = out.shape[-1] // 3
                return torch.cat([out[..., :dim] / gamma, out[..., dim:]], dim=-1)
            return out / gamma

        return scale_query

    def __enter__(self) -> AttentionTemperature:
        self._handles = [site.register_forward_hook(self._hook(lay)) for site, lay in self._sites]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
