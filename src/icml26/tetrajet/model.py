"""Decoder LMs for the reproduction: a tiny GPT (spec §5) and the real HF OLMo2 path (spec §2.6).

The GPT's block Linears (qkv, attention output, MLP up, MLP down) have no bias and are the ones
:func:`~icml26.tetrajet.convert.quantize_model_` converts; embeddings and the untied LM head stay
FP32, as do LayerNorms and the attention core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from icml26.core import (
    Seed,
    check_one_of,
    check_positive_int,
    check_tensor,
    normal_init_,
    require,
    seeded_default_init,
)

__all__ = ["OLMO2_SIZES", "GPTConfig", "TinyGPT", "olmo2_model"]


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of :class:`TinyGPT` (defaults: spec §5)."""

    vocab_size: int = 128
    context: int = 128
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    d_mlp: int = 512

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context", "d_model", "n_layers", "n_heads", "d_mlp"):
            check_positive_int(name, getattr(self, name), owner="GPTConfig")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"GPTConfig: d_model must be a multiple of n_heads={self.n_heads}; "
                f"got {self.d_model!r} (int)."
            )


class _Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_heads = cfg.n_heads
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.ln_mlp = nn.LayerNorm(cfg.d_model)
        self.up = nn.Linear(cfg.d_model, cfg.d_mlp, bias=False)
        self.down = nn.Linear(cfg.d_mlp, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln_attn(x)).split(d, dim=-1)  # each (batch, T, d_model)
        heads = [z.view(b, t, self.n_heads, -1).transpose(1, 2) for z in (q, k, v)]
        att = nn.functional.scaled_dot_product_attention(*heads, is_causal=True)  # (b, h, T, dh)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(nn.functional.gelu(self.up(self.ln_mlp(x))))


class TinyGPT(nn.Module):
    """Pre-LN GPT decoder with learned positions and an untied head.

    Parameters
    ----------
    config
        Sizes.
    seed
        Seed of the initialisation: every weight matrix (embeddings, Linears) from N(0, 0.02²)
        by :func:`icml26.core.normal_init_`; LayerNorms start at weight 1, bias 0.

    Examples
    --------
    >>> net = TinyGPT(GPTConfig(vocab_size=10, context=8, d_model=16, n_heads=2, d_mlp=32), seed=0)
    >>> net(torch.zeros(2, 8, dtype=torch.long)).shape
    torch.Size([2, 8, 10])
    """

    def __init__(self, config: GPTConfig, *, seed: Seed = None) -> None:
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"TinyGPT: config must be a GPTConfig; got {type(config).__name__}.")
        self.config = config
        # torch's default draws are all overwritten by normal_init_ below (every weight matrix;
        # LayerNorms start at 1 and 0): a fixed seed only keeps them off the global RNG.
        with seeded_default_init(0):
            self.tok = nn.Embedding(config.vocab_size, config.d_model)
            self.pos = nn.Embedding(config.context, config.d_model)
            self.blocks = nn.ModuleList(_Block(config) for _ in range(config.n_layers))
            self.ln_f = nn.LayerNorm(config.d_model)
            self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        normal_init_(self, std=0.02, seed=seed)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, T, vocab)`` of token ids ``(batch, T)``."""
        check_tensor("idx", idx, owner="TinyGPT", ndim=2, floating=False)
        if idx.is_floating_point() or idx.is_complex() or idx.dtype == torch.bool:
            raise TypeError(f"TinyGPT: idx must hold integer token ids; got {idx.dtype}.")
        if idx.shape[1] > self.config.context:
            raise ValueError(
                f"TinyGPT: idx must have at most context={self.config.context} positions; got "
                f"{idx.shape[1]}."
            )
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.config.vocab_size):
            raise ValueError(
                f"TinyGPT: idx must hold ids in [0, {self.config.vocab_size}); got "
                f"[{int(idx.min())}, {int(idx.max())}]."
            )
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


OLMO2_SIZES: dict[str, dict[str, int]] = {
    "70M": {"hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8, "mlp_ratio": 4},
    "150M": {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "mlp_ratio": 4,
    },
    "370M": {
        "hidden_size": 1024,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "mlp_ratio": 8,
    },
}
"""The paper's OLMo2 sizes (spec §2.6)."""


def olmo2_model(
    size: str = "70M", *, vocab_size: int = 100_278, context: int = 4096, **overrides: Any
) -> nn.Module:
    """An untrained HF ``Olmo2ForCausalLM`` of one of the paper's sizes (real-scale path).

    The SwiGLU intermediate size is ``mlp_ratio·d/2`` (OLMo's fused up/gate projection of width
    ``mlp_ratio·d``, an inferred reading); RoPE θ = 5e5, no biases, untied embeddings.
    ``overrides`` go to ``Olmo2Config`` (tests shrink it).

    Raises
    ------
    ValueError
        For an unknown size.
    MissingExtraError
        Without ``transformers`` (an ``ImportError`` naming ``pip install 'icml26[all]'``; the
        ``tetrajet`` extra does not install it).

    Examples
    --------
    >>> net = olmo2_model("70M", vocab_size=256, hidden_size=128, num_hidden_layers=1,
    ...                   num_attention_heads=2, intermediate_size=256)
    >>> type(net).__name__
    'Olmo2ForCausalLM'
    """
    check_one_of("size", size, tuple(OLMO2_SIZES), owner="olmo2_model")
    vocab_size = check_positive_int("vocab_size", vocab_size, owner="olmo2_model", maximum=2**20)
    context = check_positive_int("context", context, owner="olmo2_model", maximum=2**17)
    # No extra of its own installs transformers; `all` does (through the `cpo` extra).
    transformers = require("transformers", "tetrajet-hf", owner="olmo2_model")
    sizes = dict(OLMO2_SIZES[size])
    ratio = sizes.pop("mlp_ratio")
    settings: dict[str, Any] = {
        **sizes,
        "intermediate_size": ratio * sizes["hidden_size"] // 2,
        "vocab_size": vocab_size,
        "max_position_embeddings": context,
        "rope_theta": 500_000.0,
        "attention_bias": False,
        "tie_word_embeddings": False,
        "pad_token_id": None,
        "bos_token_id": None,
        "eos_token_id": None,
    }
    settings.update(overrides)
    return transformers.Olmo2ForCausalLM(transformers.Olmo2Config(**settings))
