"""Standard tool and real path: HybridLM through Hugging Face's PreTrainedModel / Auto* API."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    HybridLMConfig,
    HybridLMForCausalLM,
    TrainConfig,
    train,
)


def test_save_pretrained_then_auto_from_pretrained_gives_the_same_model(tmp_path):
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    model = HybridLM(task.vocab_size, 16, pattern="SA", n_heads=2, seed=0)
    train(model, task, TrainConfig(steps=3, lr=1e-3, batch_size=4, warmup=1))
    wrapped = HybridLMForCausalLM.from_hybrid_lm(model)
    wrapped.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert AutoConfig.from_pretrained(tmp_path).pattern == "SA"
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert isinstance(loaded, HybridLMForCausalLM)
    batch = task.sample(4, generator=1)
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=batch.inputs).logits, model(batch.inputs))


def test_loss_is_the_shifted_next_token_cross_entropy():
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=13, d_model=8, n_heads=1, pattern="AS"))
    ids = torch.randint(0, 13, (2, 9), generator=torch.Generator().manual_seed(0))
    labels = ids.clone()
    labels[0, 4] = -100
    out = lm(input_ids=ids, labels=labels)
    logp = torch.log_softmax(out.logits[:, :-1], dim=-1)
    picked = logp.gather(-1, ids[:, 1:, None])[..., 0]
    keep = labels[:, 1:] != -100
    torch.testing.assert_close(out.loss, -(picked[keep]).mean(), rtol=0, atol=1e-6)


def test_hf_wrapper_rejects_bad_input():
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=10, d_model=8, n_heads=1))
    with pytest.raises(ValueError, match=r"input_ids must be in \[0, 9\]"):
        lm(input_ids=torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match="attention_mask must be all ones"):
        lm(input_ids=torch.tensor([[1, 2]]), attention_mask=torch.tensor([[1, 0]]))
    with pytest.raises(ValueError, match="pattern must be a non-empty string"):
        HybridLMConfig(vocab_size=10, d_model=8, pattern="").build()


def test_hf_generate_is_greedy_decoding_of_the_wrapped_model():
    """Issue 49: transformers' own generate() entry point works on the wrapper; greedy output
    equals the argmax loop over the full prefix, and HybridLM.generate (which streams through
    the recurrent state) agrees where no argmax is id 0."""
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=20, d_model=16, n_heads=1)).eval()
    ids = torch.tensor([[3, 5, 7]])
    out = lm.generate(ids, max_new_tokens=5, do_sample=False)
    seq = ids
    for _ in range(5):
        seq = torch.cat([seq, lm(input_ids=seq).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, seq)
    if (seq[:, 3:] > 0).all():
        assert torch.equal(lm.model.generate(ids, 5), seq)


def _random_mamba(**overrides):
    """A tiny HF Mamba LM with every parameter random (norms, A_log, D, biases included), so a
    weight mapped to the wrong place changes the logits."""
    from transformers import MambaConfig, MambaForCausalLM

    kwargs = {"vocab_size": 37, "hidden_size": 16, "num_hidden_layers": 2, "state_size": 8}
    config = MambaConfig(**{**kwargs, **overrides})
    torch.manual_seed(0)
    hf = MambaForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if name.endswith("A_log"):
                p.copy_(torch.rand_like(p) * 2 - 1)
            elif "norm" in name or name.endswith(".D"):
                p.copy_(1 + 0.5 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn_like(p))
    return hf


@pytest.mark.parametrize(
    "overrides",
    [
        {"tie_word_embeddings": False},
        {"use_conv_bias": False, "expand": 3, "conv_kernel": 3, "time_step_rank": 3},
    ],
)
def test_from_hf_mamba_gives_hf_logits(overrides):
    from icml26.hybrid_seq import from_hf_mamba

    hf = _random_mamba(**overrides)
    ours = from_hf_mamba(hf)
    ids = torch.randint(0, 37, (3, 23), generator=torch.Generator().manual_seed(1))
    ids[0, 0] = 0  # id 0 is an ordinary token in HF vocabularies
    with torch.no_grad():
        want = hf(ids).logits
        got = ours.logits(ids)
    assert want.abs().max() > 1.0  # not a trivially small output
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    wrapped = HybridLMForCausalLM.from_hybrid_lm(ours)  # and through our HF wrapper
    with torch.no_grad():
        torch.testing.assert_close(wrapped(input_ids=ids).logits, want, atol=1e-4, rtol=1e-4)
    # our streaming step (conv and SSM caches) gives the same logits token by token
    cache, steps = None, []
    for t in range(ids.shape[1]):
        logits, cache = ours.step(ids[1:2, t].clamp(min=1), cache)  # step refuses PAD (0)
        steps.append(logits)
    with torch.no_grad():
        want_row = hf(ids[1:2].clamp(min=1)).logits[0]
    torch.testing.assert_close(torch.cat(steps), want_row, atol=1e-4, rtol=1e-4)


def test_from_hf_mamba_backbone_uses_the_tied_embedding_as_head():
    from transformers import MambaModel

    from icml26.hybrid_seq import from_hf_mamba

    hf = _random_mamba()
    backbone = MambaModel(hf.config).eval()
    backbone.load_state_dict(hf.backbone.state_dict())
    ours = from_hf_mamba(backbone)
    ids = torch.randint(0, 37, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        want = backbone(ids).last_hidden_state @ backbone.embeddings.weight.T
        torch.testing.assert_close(ours.logits(ids), want, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"use_bias": True}, "use_bias"),
        ({"hidden_act": "gelu"}, "hidden_act"),
        ({"layer_norm_epsilon": 1e-6}, "layer_norm_epsilon"),
    ],
)
def test_from_hf_mamba_refuses_what_it_cannot_match(overrides, match):
    from icml26.hybrid_seq import from_hf_mamba

    with pytest.raises(ValueError, match=match):
        from_hf_mamba(_random_mamba(**overrides))


def test_from_hf_mamba_refuses_other_architectures_naming_mamba():
    from transformers import GPT2Config, GPT2LMHeadModel

    from icml26.hybrid_seq import from_hf_mamba

    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=11, n_embd=8, n_layer=1, n_head=1))
    with pytest.raises(TypeError, match=r"MambaForCausalLM.*'gpt2'"):
        from_hf_mamba(gpt2)
    with pytest.raises(TypeError, match="MambaForCausalLM"):
        from_hf_mamba(torch.nn.Linear(2, 2))
