"""Tempered attention: gamma = 1 is SDPA, entropy rises with gamma, the patcher is exact (§7)."""

import itertools

import pytest
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.scale import (
    AttentionTemperature,
    attention_probs,
    scaled_dot_attention,
)
from icml26.scale.model import MultiHeadAttention

G = torch.Generator().manual_seed(0)


def test_gamma_one_equals_sdpa_with_and_without_mask():
    q, k, v = (torch.randn(2, 3, 5, 8, generator=G, dtype=torch.float64) for _ in range(3))
    # float64 softmax-matmul vs the fused reference: round-off ~1e-15, 1e-6 is the spec's bound
    torch.testing.assert_close(
        scaled_dot_attention(q, k, v), F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0
    )
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    torch.testing.assert_close(
        scaled_dot_attention(q, k, v, mask=mask),
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
        atol=1e-6,
        rtol=0,
    )
    # gamma is a rescaled SDPA scale: softmax(q k / (sqrt d gamma))
    torch.testing.assert_close(
        scaled_dot_attention(q, k, v, gamma=1.7),
        F.scaled_dot_product_attention(q, k, v, scale=8**-0.5 / 1.7),
        atol=1e-6,
        rtol=0,
    )


def test_row_entropy_strictly_increases_with_gamma():
    q, k = (
        torch.randn(4, 6, 8, generator=G, dtype=torch.float64),
        torch.randn(4, 9, 8, generator=G, dtype=torch.float64),
    )
    entropies = []
    for gamma in (0.5, 0.8, 1.0, 1.25, 2.0):
        p = attention_probs(q, k, gamma)
        entropies.append(-(p * p.log()).sum(-1))
    for lo, hi in itertools.pairwise(entropies):
        assert bool((hi > lo).all())


def _manual(attn: MultiHeadAttention, x: torch.Tensor, gamma) -> torch.Tensor:
    heads = attn._heads
    y = scaled_dot_attention(
        heads(attn.q_proj(x)), heads(attn.k_proj(x)), heads(attn.v_proj(x)), gamma
    )
    B, _, T, _ = y.shape
    return attn.out_proj(y.transpose(1, 2).reshape(B, T, -1))


def test_patcher_equals_manual_tempered_attention_and_restores():
    attn = MultiHeadAttention(16, 4).double()
    x = torch.randn(3, 7, 16, generator=G, dtype=torch.float64)
    plain = attn(x)[0]
    with AttentionTemperature([attn], gamma=1.6):
        tempered = attn(x)[0]
    torch.testing.assert_close(tempered, _manual(attn, x, 1.6), atol=1e-12, rtol=0)
    torch.testing.assert_close(attn(x)[0], plain, atol=0, rtol=0)  # hooks removed
    per_row = torch.tensor([0.6, 1.0, 1.9], dtype=torch.float64)
    with AttentionTemperature(attn, gamma=1.0) as patch:
        patch.gamma = per_row  # settable inside the block, one value per batch row
        rows = attn(x)[0]
    for i, g in enumerate(per_row.tolist()):
        torch.testing.assert_close(rows[i], _manual(attn, x[i : i + 1], g)[0], atol=1e-12, rtol=0)


def test_patcher_on_hf_vit_and_siglip_attention():
    from transformers import SiglipVisionConfig, SiglipVisionModel, ViTConfig, ViTModel

    vit = (
        ViTModel(
            ViTConfig(
                hidden_size=16,
                num_hidden_layers=1,
                num_attention_heads=2,
                intermediate_size=32,
                image_size=8,
                patch_size=4,
            ),
            add_pooling_layer=False,
        )
        .double()
        .eval()
    )
    sig = (
        SiglipVisionModel(
            SiglipVisionConfig(
                hidden_size=16,
                num_hidden_layers=1,
                num_attention_heads=2,
                intermediate_size=32,
                image_size=8,
                patch_size=4,
            )
        )
        .double()
        .eval()
    )
    pixels = torch.randn(2, 3, 8, 8, generator=G, dtype=torch.float64)
    for model, modules in (
        (vit, [layer.attention for layer in vit.layers]),
        (sig, [layer.self_attn for layer in sig.encoder.layers]),
    ):
        base = model(pixel_values=pixels).last_hidden_state
        with AttentionTemperature(modules, gamma=1.0):
            same = model(pixel_values=pixels).last_hidden_state
        torch.testing.assert_close(same, base, atol=0, rtol=0)
        # gamma scales the logits: equal to dividing the query projection's weights by gamma
        with AttentionTemperature(modules, gamma=2.5):
            tempered = model(pixel_values=pixels).last_hidden_state
        for m in modules:
            q = m.query if hasattr(m, "query") else m.q_proj
            with torch.no_grad():
                q.weight /= 2.5
                q.bias /= 2.5
        torch.testing.assert_close(
            model(pixel_values=pixels).last_hidden_state, tempered, atol=1e-12, rtol=0
        )
        assert not torch.allclose(tempered, base)


def test_bad_input():
    with pytest.raises(TypeError, match="q/k/v"):
        AttentionTemperature([nn.Linear(3, 3)], 1.0)
    with pytest.raises(TypeError, match="modules"):
        AttentionTemperature(3, 1.0)
    with pytest.raises(ValueError, match="gamma"):
        AttentionTemperature([], gamma=0.0)
    q = torch.zeros(1, 2, 4)
    with pytest.raises(ValueError, match="gamma"):
        scaled_dot_attention(q, q, q, gamma=-1.0)
    with pytest.raises(ValueError, match="mask"):
        scaled_dot_attention(q, q, q, mask=torch.zeros(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="q"):
        scaled_dot_attention(torch.tensor([float("nan")] * 4).reshape(1, 1, 4), q, q)
