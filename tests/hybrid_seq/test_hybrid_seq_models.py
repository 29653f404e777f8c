"""Spec §7 items 3, 6, 7: exact causality, cached = full attention, accounting, bad input."""

import math

import pytest
import torch
from torch import nn

from icml26.hybrid_seq import HybridLM, SSMConfig, count_params, working_memory
from icml26.hybrid_seq.models import AttentionBlock, MLPBlock, SSMBlock, apply_rope

VOCAB = 11


def _tokens(B: int, T: int, seed: int) -> torch.Tensor:
    return torch.randint(1, VOCAB, (B, T), generator=torch.Generator().manual_seed(seed))


def _blocks():
    return {
        "A": AttentionBlock(8, 2, 2, rope=False),
        "A-rope": AttentionBlock(8, 2, 2, rope=True),
        "S": SSMBlock(8, SSMConfig(d_state=4), scan="parallel", backend="torch", seed=0),
        "M": MLPBlock(8, 2),
    }


@pytest.mark.parametrize("kind", ["A", "A-rope", "S", "M"])
def test_every_block_is_exactly_causal(kind):
    block = _blocks()[kind]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 12, 8, generator=g)
    y = block(x)
    for t in (0, 5, 10):
        x2 = x.clone()
        x2[:, t + 1 :] = torch.randn(2, 11 - t, 8, generator=g) * 10
        assert torch.equal(block(x2)[:, : t + 1], y[:, : t + 1])  # bit-exact, not approximate


@pytest.mark.parametrize(
    ("pattern", "pos_enc"),
    [("SA", "none"), ("AS", "learned"), ("AA", "rope"), ("SS", "sinusoidal"), ("SMA", "rope")],
)
def test_hybrid_lm_is_exactly_causal(pattern, pos_enc):
    model = HybridLM(VOCAB, 8, pattern=pattern, n_heads=2, pos_enc=pos_enc, max_len=32, seed=1)
    x = _tokens(2, 16, seed=2)
    logits = model(x)
    assert logits.shape == (2, 16, VOCAB)
    x2 = x.clone()
    x2[:, 9:] = _tokens(2, 7, seed=3)
    assert torch.equal(model(x2)[:, :9], logits[:, :9])


@pytest.mark.parametrize(
    ("pattern", "pos_enc"),
    [("SA", "none"), ("AA", "rope"), ("AA", "learned"), ("SS", "none"), ("SMAS", "sinusoidal")],
)
def test_streaming_step_equals_the_full_forward(pattern, pos_enc):
    """KV-cached attention and the recurrent Mamba step give the full-sequence logits."""
    model = HybridLM(VOCAB, 16, pattern=pattern, n_heads=2, pos_enc=pos_enc, max_len=40, seed=4)
    x = _tokens(3, 21, seed=5)
    with torch.no_grad():
        full = model(x)
        cache, steps = None, []
        for t in range(x.shape[1]):
            logits, cache = model.step(x[:, t], cache)
            steps.append(logits)
    # float32, O(1) activations through <= 4 blocks: round-off well under 1e-5
    torch.testing.assert_close(torch.stack(steps, 1), full, rtol=0, atol=1e-5)
    assert cache.position == 21


def test_cached_attention_keeps_two_d_numbers_per_token():
    model = HybridLM(VOCAB, 16, pattern="AA", n_heads=4, seed=0)
    cache = None
    for t in range(7):
        _, cache = model.step(torch.tensor([1 + t % 5]), cache)
    numbers = sum(c.k.numel() + c.v.numel() for c in cache.layers)
    assert numbers == working_memory(model, 7).kv_cache == 2 * 7 * 16 * 2


def test_rope_is_a_rotation_and_relative():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 1, 1, 8, generator=g), torch.randn(1, 1, 1, 8, generator=g)
    pos = torch.tensor([3])
    assert math.isclose(apply_rope(q, pos).norm().item(), q.norm().item(), rel_tol=1e-6)
    # <R_m q, R_n k> depends on m - n only
    a = (apply_rope(q, torch.tensor([5])) * apply_rope(k, torch.tensor([2]))).sum()
    b = (apply_rope(q, torch.tensor([13])) * apply_rope(k, torch.tensor([10]))).sum()
    assert math.isclose(a.item(), b.item(), rel_tol=1e-5)


def _mamba_params(d: int, cfg: SSMConfig) -> int:
    ed, n, r, kc = cfg.expand * d, cfg.d_state, math.ceil(d / 16), cfg.d_conv
    # in_proj + conv (w, b) + x_proj + dt_proj (w, b) + A_log + D + out_proj
    return d * 2 * ed + ed * kc + ed + ed * (r + 2 * n) + r * ed + ed + ed * n + ed + ed * d


@pytest.mark.parametrize("pattern", ["SA", "AAAA", "SS", "M", "SASA"])
@pytest.mark.parametrize("d", [16, 32])
def test_count_params_matches_the_closed_form(pattern, d):
    cfg = SSMConfig()
    model = HybridLM(VOCAB, d, pattern=pattern, n_heads=d // 16, ssm=cfg, mlp_ratio=2)
    mlp = d * 2 * d + 2 * d + 2 * d * d + d
    per_block = {
        "A": 2 * d + 3 * d * d + d * d + mlp,  # 2 norms, qkv, out, MLP
        "S": d + _mamba_params(d, cfg),  # norm + mixer
        "M": d + mlp,
    }
    expected = VOCAB * d + sum(per_block[c] for c in pattern) + d + d * VOCAB
    assert count_params(model) == expected == sum(p.numel() for p in model.parameters())


def test_learned_positions_add_their_table():
    a = HybridLM(VOCAB, 16, pattern="A", pos_enc="learned", max_len=50)
    b = HybridLM(VOCAB, 16, pattern="A", pos_enc="rope")
    assert count_params(a) - count_params(b) == 50 * 16


def test_working_memory_ssm_is_constant_and_attention_linear_in_t():
    cfg = SSMConfig(d_state=16, expand=2, d_conv=4)
    model = HybridLM(VOCAB, 32, pattern="SASS", n_heads=2, ssm=cfg)
    for T in (1, 64, 4096):
        wm = working_memory(model, T, bits=16)
        assert wm.ssm_state == 3 * 64 * 16 and wm.conv_cache == 3 * 64 * 3  # ED·N, ED·(d_conv-1)
        assert wm.kv_cache == 2 * T * 32  # one attention layer
        assert wm.bits == 16 * (wm.ssm_state + wm.conv_cache + wm.kv_cache)
    assert working_memory(model, 100, n_attendable=10).selective_kv == 2 * 10 * 32
    assert working_memory(HybridLM(VOCAB, 8, pattern="M"), 99).total == 0


def test_zero_output_projections_reduce_the_model_to_embedding_then_head():
    """The 'no blocks' limit: every residual branch off, logits = head(norm(embed(x)))."""
    model = HybridLM(VOCAB, 16, pattern="SAM", n_heads=2, seed=0)
    with torch.no_grad():
        for block in model.blocks:
            for name, p in block.named_parameters():
                if name.endswith(("out_proj.weight", "attn.out.weight", "fc2.weight", "fc2.bias")):
                    p.zero_()
    x = _tokens(2, 9, seed=1)
    expected = model.head(model.norm_f(model.embedding(x)))
    assert torch.equal(model(x), expected)


def test_default_positional_encoding_follows_the_spec():
    assert HybridLM(VOCAB, 8, pattern="AA").pos_enc == "rope"
    assert HybridLM(VOCAB, 8, pattern="SA").pos_enc == "none"
    assert HybridLM(VOCAB, 8, pattern="SA").ssm_backend == "torch"  # no mamba_ssm on CPU CI


def test_sequential_and_parallel_scans_give_the_same_model():
    x = _tokens(2, 30, seed=7)
    par = HybridLM(VOCAB, 16, pattern="SS", scan="parallel", seed=3)
    seq = HybridLM(VOCAB, 16, pattern="SS", scan="sequential", seed=3)
    torch.testing.assert_close(par(x), seq(x), rtol=0, atol=1e-5)


def test_hybrid_lm_rejects_bad_input():
    with pytest.raises(ValueError, match=r"pattern must be a non-empty string of the letters A"):
        HybridLM(VOCAB, 8, pattern="")
    with pytest.raises(ValueError, match=r"A \(attention \+ MLP\), S \(Mamba SSM\), M \(MLP\).*"):
        HybridLM(VOCAB, 8, pattern="SAX")
    with pytest.raises(ValueError, match="d_model must be divisible by n_heads=3"):
        HybridLM(VOCAB, 8, pattern="A", n_heads=3)
    with pytest.raises(ValueError, match="pos_enc must be one of 'none', 'learned'"):
        HybridLM(VOCAB, 8, pos_enc="alibi")
    with pytest.raises(ValueError, match="scan must be one of 'sequential', 'parallel'"):
        HybridLM(VOCAB, 8, scan="blelloch")
    with pytest.raises(ValueError, match="ssm_backend must be one of"):
        HybridLM(VOCAB, 8, ssm_backend="triton")
    model = HybridLM(VOCAB, 8, pattern="A", pos_enc="learned", max_len=10)
    with pytest.raises(ValueError, match=r"max_len=10 positions; got a sequence of length 11"):
        model(_tokens(1, 11, seed=0))
    with pytest.raises(ValueError, match="0 is PAD, never an input"):
        model(torch.tensor([[1, 0, 2]]))
    with pytest.raises(ValueError, match=r"token ids in \[1, vocab_size - 1 = 10\]"):
        model(torch.tensor([[1, 11]]))
    with pytest.raises(TypeError, match="integer token ids"):
        model(torch.zeros(1, 3))
    with pytest.raises(TypeError, match=r"count_params: model must be a torch nn\.Module"):
        count_params("model")
    with pytest.raises(TypeError, match="working_memory: model must be a HybridLM"):
        working_memory(nn.Linear(2, 2), 5)
    with pytest.raises(ValueError, match=r"n_attendable must be in \[0, seq_len=5\]"):
        working_memory(model, 5, n_attendable=6)


@pytest.mark.parametrize("pattern", ["SA", "AA", "SS"])
def test_greedy_generate_through_the_state_equals_argmax_of_full_forward(pattern):
    """Issue 49: generate() streams through step(); greedy must match recomputing the whole
    prefix with forward() at every new token."""
    model = HybridLM(20, 16, pattern=pattern, n_heads=2, seed=1).eval()
    prompt = torch.tensor([[3, 7, 1, 9], [2, 2, 5, 11]])
    out = model.generate(prompt, max_new_tokens=6)
    assert out.shape == (2, 10) and torch.equal(out[:, :4], prompt)
    seq = prompt
    for _ in range(6):
        logits = model(seq)[:, -1]
        logits[:, 0] = -float("inf")
        seq = torch.cat([seq, logits.argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, seq)


def test_sampling_is_seeded_and_top_k_one_is_greedy():
    model = HybridLM(20, 16, pattern="SA", n_heads=2, seed=1).eval()
    prompt = torch.tensor([[3, 7, 1]])
    draw = [
        model.generate(prompt, 8, do_sample=True, generator=torch.Generator().manual_seed(4))
        for _ in range(2)
    ]
    assert torch.equal(draw[0], draw[1]) and (draw[0] > 0).all()  # never PAD
    top1 = model.generate(prompt, 8, do_sample=True, top_k=1, temperature=0.5)
    assert torch.equal(top1, model.generate(prompt, 8))


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"max_new_tokens": -1}, ValueError), ({"temperature": 0.0}, ValueError),
     ({"temperature": float("nan")}, ValueError), ({"top_k": 0}, ValueError),
     ({"top_k": 21}, ValueError), ({"do_sample": 1}, TypeError),
     ({"generator": 3}, TypeError)],
)  # fmt: skip
def test_generate_refuses_bad_arguments_by_name(kwargs, error):
    model = HybridLM(20, 16, pattern="SA", n_heads=2, seed=1)
    args = {"max_new_tokens": 2} | kwargs
    with pytest.raises(error, match="generate"):
        model.generate(torch.tensor([[3, 7]]), **args)
    with pytest.raises(ValueError, match="input_ids"):
        model.generate(torch.zeros(1, 0, dtype=torch.long), 2)
