"""Llama and Qwen2 (gated MLP, RMSNorm) through from_hf_decoder, on tiny local HF models."""

import pytest
import torch

from icml26.core import seeded_default_init
from icml26.nana import (
    ablate,
    decompose_mlp,
    dla,
    from_hf_decoder,
    from_hf_gpt2,
    mean_coefficients,
    processing_logsoftmax_error,
    reconstruction_errors,
    sca_identity_error,
    subspace_contributions,
)

VOCAB = 61


def _gated(family, seed):
    import transformers

    config_cls, model_cls = {
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
    }[family]
    cfg = config_cls(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
        tie_word_embeddings=False,
    )
    with seeded_default_init(seed):
        model = model_cls(cfg).eval()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():  # non-trivial RMSNorm scales, so that folding them matters
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn(p.shape, generator=g))
    return model


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def gated(request):
    model = _gated(request.param, seed=7)
    return model, from_hf_decoder(model)


@pytest.fixture(scope="module")
def toks():
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, VOCAB, (2, 10), generator=g), torch.randint(
        0, VOCAB, (2, 10), generator=g
    )


def test_gated_adapter_is_exact_and_keeps_the_model_s_log_softmax(gated, toks):
    _, ad = gated
    tokens, targets = toks
    assert ad.kind == "gated" and ad.d_mlp == 48 and ad.n_layers == 2
    # HF's RMSNorm normalises in float32 even in a float64 model: float32 round-off of the norm
    assert processing_logsoftmax_error(ad, tokens) < 1e-5
    errors = reconstruction_errors(ad, tokens)
    assert max(v for (_, side), v in errors.items() if side == "out") < 1e-12
    assert max(v for (_, side), v in errors.items() if side == "in") < 1e-6
    assert sca_identity_error(ad, tokens, targets) < 1e-10


def test_gated_dla_sums_to_the_logit(gated, toks):
    _, ad = gated
    tokens, targets = toks
    parts = dla(ad, tokens, targets)
    logit = ad.logits(tokens).gather(2, targets[..., None])[..., 0]
    assert torch.allclose(sum(parts.values()), logit, atol=1e-10)
    assert not any(name.startswith("attn") for name in parts)  # no attention output bias


def test_gated_direct_ablation_is_minus_the_sca_and_total_matches_the_unembedding(gated, toks):
    _, ad = gated
    tokens, targets = toks
    last = ad.n_layers - 1
    deus = decompose_mlp(ad, last, "out")
    means = mean_coefficients(ad, tokens, {(last, "out"): deus})
    clean = ad.logits(tokens)
    direct = ablate(ad, tokens, [(last, "out", [2], "mean")], ref_means=means, effect="direct")
    cache = ad.run_with_cache(tokens)
    alpha = deus.coefficients(cache.acts[last])[..., 2]
    w = ad.W_U.T[targets]
    expected = -(alpha - means[(last, "out")][2]) * (w @ deus.effectors[2]) / cache.sigma_f
    got = (direct - clean).gather(-1, targets[..., None])[..., 0]
    assert torch.allclose(got, expected, atol=1e-10)
    sca = subspace_contributions(ad, tokens, last, targets, deus)[..., 2]
    assert torch.allclose(sca, alpha * (w @ deus.effectors[2]) / cache.sigma_f, atol=1e-12)
    total = ablate(ad, tokens, [(last, "out", [2], "mean")], ref_means=means, effect="total")
    delta = -(alpha - means[(last, "out")][2])[..., None] * deus.effectors[2]
    assert torch.allclose(total, ad.unembed(cache.resid_final + delta)[0], atol=1e-6)


def test_gated_read_side_ablation_reruns_the_gated_mlp(gated, toks):
    model, ad = gated
    tokens, _ = toks
    units = decompose_mlp(ad, 0, "in")
    direct = ablate(ad, tokens, [(0, "in", [0, 2], "zero")], effect="direct")
    cache = ad.run_with_cache(tokens)
    w = ad.mlp(0)
    sel = units.select([0, 2])
    up = cache.normed[0] @ w.W_in - sel.coefficients(cache.normed[0]) @ sel.effectors
    act = model.model.layers[0].mlp.act_fn
    acts = act(cache.normed[0] @ w.W_gate) * up
    expected = cache.logits + ((acts - cache.acts[0]) @ w.W_out / cache.sigma_f[..., None]) @ ad.W_U
    assert torch.allclose(direct, expected, atol=1e-6)


def test_gated_models_load_through_from_pretrained_and_others_are_refused(tmp_path):
    import transformers

    model = _gated("qwen2", seed=1)
    model.save_pretrained(tmp_path)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    tokens = torch.arange(8)[None]
    a, b = from_hf_decoder(model), from_hf_decoder(loaded)
    assert torch.allclose(a.logits(tokens), b.logits(tokens), atol=1e-12)
    with pytest.raises(TypeError, match="LlamaForCausalLM"):
        from_hf_gpt2(model)  # the GPT-2 constructor stays GPT-2 only, and says what exists
    with pytest.raises(TypeError, match="unsupported model class"):
        from_hf_decoder(model.model)  # the bare decoder has no LM head
    with pytest.raises(TypeError, match="processed"):
        from_hf_decoder(model, processed="yes")
