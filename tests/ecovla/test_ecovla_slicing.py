"""Spec §7: slicing equals zeroed activations; keep counts; Q/K/V/O alignment; real path."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from icml26.core.weights import seeded_default_init
from icml26.ecovla import (
    LlamaBackboneAdapter,
    SparsityPattern,
    TinyVLA,
    TinyVLAConfig,
    load_vla,
    random_pattern,
    slice_linear,
)


def tiny_llama(tmp_path, n_kv_heads: int) -> LlamaBackboneAdapter:
    """A random tiny Llama saved to a folder and loaded back through the real loader."""
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=n_kv_heads,
        max_position_embeddings=32,
        bos_token_id=None,
        eos_token_id=None,
    )
    with seeded_default_init(0):
        model = LlamaForCausalLM(config)
    model.save_pretrained(tmp_path / f"llama{n_kv_heads}")
    adapter = load_vla(str(tmp_path / f"llama{n_kv_heads}"), dtype="float64")
    return adapter


def masked_reference(adapter, pattern, obs):
    """Dense model whose pruned MLP channels and pruned heads are zeroed before W_down / W_O."""
    d = adapter.dims()
    handles = []
    for i, layer in enumerate(adapter.layers):
        mlp_mask = torch.zeros(d.d_ff, dtype=torch.float64)
        mlp_mask[pattern.mlp[i]] = 1.0
        head_mask = torch.zeros(d.n_heads, d.head_dim, dtype=torch.float64)
        head_mask[pattern.heads[i]] = 1.0
        head_mask = head_mask.reshape(-1)

        def zero_mlp(module, args, mask=mlp_mask):
            return (args[0] * mask,)

        def zero_heads(module, args, mask=head_mask):
            return (args[0] * mask,)

        handles.append(layer.mlp.down_proj.register_forward_pre_hook(zero_mlp))
        handles.append(layer.self_attn.o_proj.register_forward_pre_hook(zero_heads))
    try:
        adapter.install(None)
        return adapter.act(obs)
    finally:
        for h in handles:
            h.remove()


@pytest.mark.parametrize("n_kv_heads", [4, 2])  # plain multi-head and grouped-query attention
@pytest.mark.parametrize("ratio", [0.25, 0.5])
def test_sliced_llama_equals_zeroed_activations(tmp_path, n_kv_heads, ratio):
    adapter = tiny_llama(tmp_path, n_kv_heads)
    assert next(adapter.model.parameters()).dtype == torch.float64
    obs = {"input_ids": torch.arange(1, 11)[None]}
    pattern = random_pattern(adapter, ratio, seed=1)
    expected = masked_reference(adapter, pattern, obs)
    adapter.install(pattern)
    got = adapter.act(obs)
    adapter.install(None)
    # float64, a 2-layer stack: the two computations differ by summation order only
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)
    dense = adapter.act(obs)
    assert (dense - got).abs().max() > 1e-4  # pruning changed the output (not a vacuous check)


@pytest.mark.parametrize("n_kv_heads", [4, 2])
def test_head_slices_keep_q_k_v_o_aligned(tmp_path, n_kv_heads):
    adapter = tiny_llama(tmp_path, n_kv_heads)
    d = adapter.dims()
    heads = torch.tensor([1, 3]) if n_kv_heads == 2 else torch.tensor([0, 2, 3])
    pattern = SparsityPattern(
        tuple(torch.arange(0, d.d_ff, 2) for _ in range(d.n_layers)),
        tuple(heads for _ in range(d.n_layers)),
    )
    adapter.install(pattern)
    hd = d.head_dim
    rows = torch.cat([torch.arange(h * hd, (h + 1) * hd) for h in heads.tolist()])
    for layer, dense in zip(adapter.layers, adapter._state()["originals"], strict=True):
        attn, mlp = layer.self_attn, layer.mlp
        torch.testing.assert_close(attn.q_proj.weight, dense["q_proj"].weight[rows])
        torch.testing.assert_close(attn.o_proj.weight, dense["o_proj"].weight[:, rows])
        if n_kv_heads == 4:  # MHA: head h's own K/V rows go with it
            torch.testing.assert_close(attn.k_proj.weight, dense["k_proj"].weight[rows])
            torch.testing.assert_close(attn.v_proj.weight, dense["v_proj"].weight[rows])
            assert attn.num_key_value_groups == 1
        else:  # GQA: K/V groups intact, one kept query head per group
            assert attn.k_proj is dense["k_proj"] and attn.num_key_value_groups == 1
        keep = torch.arange(0, d.d_ff, 2)
        torch.testing.assert_close(mlp.gate_proj.weight, dense["gate_proj"].weight[keep])
        torch.testing.assert_close(mlp.up_proj.weight, dense["up_proj"].weight[keep])
        torch.testing.assert_close(mlp.down_proj.weight, dense["down_proj"].weight[:, keep])
        assert mlp.down_proj.weight.is_contiguous()  # physically smaller, not a view with a mask
    adapter.install(None)
    for layer, dense in zip(adapter.layers, adapter._state()["originals"], strict=True):
        assert layer.self_attn.q_proj is dense["q_proj"]
        assert layer.self_attn.num_key_value_groups == dense["groups"]


def test_gqa_pattern_with_unequal_groups_is_refused(tmp_path):
    adapter = tiny_llama(tmp_path, 2)
    d = adapter.dims()
    bad = SparsityPattern(
        tuple(torch.arange(d.d_ff) for _ in range(d.n_layers)),
        tuple(torch.tensor([0, 1, 2]) for _ in range(d.n_layers)),
    )
    with pytest.raises(ValueError, match="every KV group must keep the same number"):
        adapter.install(bad)


def tiny_vla() -> TinyVLA:
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, patch=16), seed=3)


def test_tinyvla_slicing_equivalence_and_ratio_zero_is_dense():
    from icml26.ecovla import Shift2DPickPlaceEnv

    model = tiny_vla().double()
    obs, _ = Shift2DPickPlaceEnv(split="train").reset(seed=1)
    pattern = random_pattern(model, 0.4, seed=0)
    d = model.dims()
    assert [len(m) for m in pattern.mlp] == [round(0.6 * d.d_ff)] * d.n_layers  # 38 of 64
    assert [len(h) for h in pattern.heads] == [2] * d.n_layers  # round(0.6 · 4) = 2
    expected = torch.as_tensor(masked_reference(model, pattern, obs))
    model.install(pattern)
    got = torch.as_tensor(model.act(obs))
    model.install(None)
    # float64 internally, float32 output (the env consumes float32 actions)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)
    dense = model.act(obs)
    model.install(model.dense_pattern())  # ratio 0: every channel kept
    torch.testing.assert_close(
        torch.as_tensor(model.act(obs)), torch.as_tensor(dense), rtol=0, atol=1e-6
    )
    model.install(None)


def test_sliced_weights_are_cached_per_pattern():
    model = tiny_vla()
    pattern = random_pattern(model, 0.25, seed=0)
    first = model.sliced(pattern)
    assert model.sliced(random_pattern(model, 0.25, seed=0)) is first  # equal pattern, same copy
    assert model.sliced(random_pattern(model, 0.25, seed=1)) is not first


def test_slice_linear_exact_and_bad_input():
    gen = torch.Generator().manual_seed(0)
    dense = torch.nn.Linear(6, 5, dtype=torch.float64)
    x = torch.randn(3, 6, generator=gen, dtype=torch.float64)
    rows, cols = torch.tensor([0, 3, 4]), torch.tensor([1, 2, 5])
    small = slice_linear(dense, rows=rows, cols=cols)
    x_zeroed = torch.zeros_like(x)
    x_zeroed[:, cols] = x[:, cols]
    torch.testing.assert_close(small(x[:, cols]), dense(x_zeroed)[:, rows], rtol=0, atol=1e-12)
    assert small.weight.data_ptr() != dense.weight.data_ptr()
    with pytest.raises(ValueError, match="rows must not repeat an index"):
        slice_linear(dense, rows=torch.tensor([1, 1]))
    with pytest.raises(ValueError, match=r"cols must be in \[0, 6\)"):
        slice_linear(dense, cols=torch.tensor([0, 6]))
    with pytest.raises(TypeError, match="rows must hold integer indices"):
        slice_linear(dense, rows=torch.tensor([0.0]))
    with pytest.raises(TypeError, match=r"linear must be a torch\.nn\.Linear"):
        slice_linear(torch.nn.Conv1d(1, 1, 1))


def test_pattern_jaccard_and_bad_input():
    a = SparsityPattern((torch.tensor([0, 1]), torch.tensor([2])), (torch.tensor([0]),) * 2)
    assert a.jaccard(a) == 1.0
    b = SparsityPattern((torch.tensor([2, 3]), torch.tensor([2])), (torch.tensor([0]),) * 2)
    assert a.jaccard(b) == pytest.approx((0 + 1 + 1 + 1) / 4)
    with pytest.raises(ValueError, match="mlp and heads must have one entry per layer"):
        SparsityPattern((torch.tensor([0]),), (torch.tensor([0]),) * 2)
    with pytest.raises(ValueError, match=r"mlp\[0\] must not repeat an index"):
        SparsityPattern((torch.tensor([0, 0]),), (torch.tensor([0]),))


@pytest.mark.parametrize("n_kv_heads", [4, 2])
def test_batched_pattern_equals_per_layer_structured_scores(tmp_path, n_kv_heads):
    """The adapter's one-call scoring (cached norms) = Eq. 11 per layer + select_keep."""
    from icml26.ecovla import select_keep, structured_scores

    adapter = tiny_llama(tmp_path, n_kv_heads)
    d = adapter.dims()
    gen = torch.Generator().manual_seed(2)
    mlp = torch.rand(d.n_layers, d.d_ff, generator=gen, dtype=torch.float64)
    attn = torch.rand(d.n_layers, d.n_heads * d.head_dim, generator=gen, dtype=torch.float64)
    pattern = adapter.pattern_from_energy(mlp, attn, 0.5)
    r = d.heads_per_group
    for i, (w_down, w_o) in enumerate(adapter.final_weights()):
        assert (
            pattern.mlp[i].tolist() == select_keep(structured_scores(w_down, mlp[i]), 0.5).tolist()
        )
        heads = structured_scores(w_o, attn[i], "head", head_dim=d.head_dim)
        if r == 1:
            expected = select_keep(heads, 0.5).tolist()
        else:  # one of two heads kept in each KV group
            expected = [
                g * r + int(heads[g * r : (g + 1) * r].argmax()) for g in range(d.n_kv_heads)
            ]
        assert pattern.heads[i].tolist() == expected


def test_load_vla_runs_no_remote_code_unless_asked_and_pinned(tmp_path, monkeypatch):
    import transformers
    from transformers import GPT2Config

    calls = []
    real = transformers.AutoConfig.from_pretrained

    def spy(name, **options):
        calls.append(options)
        return real(name, **options)

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", spy)
    tiny_llama(tmp_path, 4)
    assert calls[-1]["trust_remote_code"] is False and calls[-1]["revision"] is None
    with pytest.raises(ValueError, match="revision"):
        load_vla("some-org/some-vla", trust_remote_code=True)  # refused before any download
    with pytest.raises(TypeError, match="trust_remote_code must be a bool"):
        load_vla(str(tmp_path / "llama4"), trust_remote_code="yes")
    with pytest.raises(TypeError, match="revision"):
        load_vla(str(tmp_path / "llama4"), revision="")
    # the architecture is checked from the config before any weights are built
    GPT2Config(n_layer=1, n_embd=8, n_head=2).save_pretrained(tmp_path / "gpt2")
    with pytest.raises(ValueError, match="Llama-style decoder"):
        load_vla(str(tmp_path / "gpt2"))
