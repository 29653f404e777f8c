"""The Mamba-2 mixer (spec §5 ``--ssm mamba2``): equal to transformers' ``Mamba2Mixer`` (its
chunked-SSD PyTorch path) with copied weights, forward and gradients; the three scans agree;
cache continuation, exact causality, closed-form accounting; HybridLM integration; bad input."""

import pytest
import torch

from icml26.hybrid_seq import (
    HybridLM,
    HybridLMConfig,
    Mamba2Block,
    Mamba2Config,
    count_params,
    working_memory,
)

D = 16


def _block(G=1, N=8, P=4, scan="sequential", seed=1):
    block = Mamba2Block(D, Mamba2Config(d_state=N, head_dim=P, n_groups=G), scan=scan, seed=seed)
    with torch.no_grad():  # move the structured parameters off their initial values
        gen = torch.Generator().manual_seed(seed)
        block.A_log.copy_(torch.randn(block.n_heads, generator=gen))
        block.D.copy_(torch.randn(block.n_heads, generator=gen))
        block.norm_weight.copy_(1 + 0.3 * torch.randn(block.d_inner, generator=gen))
    return block


def _hf_mixer(block):
    transformers = pytest.importorskip("transformers")
    from transformers.models.mamba2.modeling_mamba2 import Mamba2Mixer

    cfg = transformers.Mamba2Config(
        num_heads=block.n_heads,
        head_dim=block.head_dim,
        hidden_size=D,
        state_size=block.d_state,
        expand=block.config.expand,
        n_groups=block.n_groups,
        conv_kernel=block.config.d_conv,
        use_bias=False,
        use_conv_bias=True,
        chunk_size=8,  # several chunks per test sequence
        layer_norm_epsilon=block.config.norm_eps,
        num_hidden_layers=1,
        time_step_limit=(0.0, float("inf")),
    )
    mixer = Mamba2Mixer(cfg, 0).eval()
    with torch.no_grad():
        for name in ("in_proj.weight", "conv1d.weight", "conv1d.bias", "out_proj.weight"):
            mixer.get_parameter(name).copy_(block.get_parameter(name))
        for name in ("dt_bias", "A_log", "D"):
            getattr(mixer, name).copy_(getattr(block, name))
        mixer.norm.weight.copy_(block.norm_weight)
    return mixer


@pytest.mark.parametrize("G", [1, 2])
def test_matches_transformers_mamba2_mixer_forward_and_gradients(G):
    block = _block(G=G)
    mixer = _hf_mixer(block)
    u = torch.randn(3, 21, D, generator=torch.Generator().manual_seed(2), requires_grad=True)
    ours, ref = block(u), mixer(u)
    assert torch.allclose(ours, ref, atol=1e-5, rtol=1e-5)
    w = torch.randn_like(ours)
    (g_ours,) = torch.autograd.grad((ours * w).sum(), u)
    (g_ref,) = torch.autograd.grad((ref * w).sum(), u)
    assert torch.allclose(g_ours, g_ref, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(("batch", "T"), [(1, 1), (3, 7), (2, 33)])
def test_sequential_parallel_and_step_agree(batch, T):
    seq, par = _block(G=2, scan="sequential"), _block(G=2, scan="parallel")
    u = torch.randn(batch, T, D, generator=torch.Generator().manual_seed(T))
    out_s, cache_s = seq.prefill(u)
    out_p, cache_p = par.prefill(u)
    cache, outs = seq.init_cache(batch), []
    for t in range(T):
        o, cache = seq.step(u[:, t], cache)
        outs.append(o)
    out_r = torch.stack(outs, dim=1)
    for out, c in ((out_p, cache_p), (out_r, cache)):
        assert torch.allclose(out, out_s, atol=1e-5)
        assert torch.allclose(c.h, cache_s.h, atol=1e-5)
        assert torch.allclose(c.conv, cache_s.conv, atol=1e-6)  # in_proj outputs: matmul rounding


def test_prefill_continues_a_cache_and_is_causal():
    block = _block()
    u = torch.randn(2, 12, D, generator=torch.Generator().manual_seed(5))
    full, cache_full = block.prefill(u)
    first, cache = block.prefill(u[:, :5])
    second, cache = block.prefill(u[:, 5:], cache)
    assert torch.allclose(torch.cat([first, second], 1), full, atol=1e-5)
    assert torch.allclose(cache.h, cache_full.h, atol=1e-5)
    changed = u.clone()
    changed[:, 7:] = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(6))
    assert torch.equal(block(changed)[:, :7], full[:, :7])  # positions <= 6 untouched, exactly


def test_accounting_closed_forms():
    N, P, G, E, K = 8, 4, 2, 2, 4
    block = _block(G=G, N=N, P=P)
    ED, H = E * D, E * D // P
    conv_dim = ED + 2 * G * N
    expected = (
        D * (ED + conv_dim + H)  # in_proj: z, xBC, dt
        + conv_dim * K
        + conv_dim  # depthwise conv and its bias
        + 3 * H  # dt_bias, A_log, D
        + ED  # gated-norm gain
        + ED * D  # out_proj
    )
    assert count_params(block) == expected == sum(p.numel() for p in block.parameters())
    assert block.state_numbers() == (ED * N, conv_dim * (K - 1))
    model = HybridLM(12, D, pattern="SA", ssm=Mamba2Config(d_state=N, head_dim=P, n_groups=G))
    for T in (16, 256):
        wm = working_memory(model, seq_len=T)
        assert (wm.ssm_state, wm.conv_cache, wm.kv_cache) == (ED * N, conv_dim * (K - 1), 2 * T * D)


def test_hybrid_lm_with_mamba2_streams_like_its_forward_pass():
    model = HybridLM(12, D, pattern="SAS", ssm=Mamba2Config(d_state=4, head_dim=8), seed=3)
    assert model.ssm_backend == "torch" and model.config_dict()["ssm"]["kind"] == "mamba2"
    x = torch.randint(4, 12, (2, 9), generator=torch.Generator().manual_seed(7))
    full = model(x)
    cache, outs = None, []
    for t in range(9):
        logits, cache = model.step(x[:, t], cache)
        outs.append(logits)
    assert torch.allclose(torch.stack(outs, 1), full, atol=1e-5)
    assert HybridLM(12, D, pattern="SA").config_dict()["ssm"]["kind"] == "mamba1"


def test_mamba2_rejects_bad_input():
    with pytest.raises(ValueError, match=r"head_dim must divide E·D = 32; got 5"):
        Mamba2Block(D, Mamba2Config(head_dim=5))
    with pytest.raises(ValueError, match=r"n_groups must divide the number of heads H = 2"):
        Mamba2Block(D, Mamba2Config(head_dim=16, n_groups=3))
    with pytest.raises(TypeError, match="config must be a Mamba2Config"):
        Mamba2Block(D, config={"d_state": 4})
    with pytest.raises(ValueError, match=r"d_state must be an integer in \[1, 1024\]"):
        Mamba2Config(d_state=0)
    with pytest.raises(ValueError, match="ssm_backend must be 'torch' or 'auto'"):
        HybridLM(12, D, ssm=Mamba2Config(head_dim=8), ssm_backend="mamba_ssm")
    with pytest.raises(TypeError, match="ssm must be an SSMConfig or Mamba2Config"):
        HybridLM(12, D, ssm="mamba2")
    block = _block()
    with pytest.raises(ValueError, match="cache must hold h"):
        block.step(torch.zeros(2, D), block.init_cache(3))
    with pytest.raises(ValueError, match="u must have shape"):
        block(torch.zeros(1, 4, D + 1))
    model = HybridLM(12, D, ssm=Mamba2Config(head_dim=8))
    with pytest.raises(ValueError, match="model must have Mamba-1 S blocks"):
        HybridLMConfig.from_hybrid_lm(model)
