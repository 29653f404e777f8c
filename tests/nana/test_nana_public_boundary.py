"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the parameter."""

import pytest
import torch

from icml26.nana import (
    DEUSet,
    MLPModelAdapter,
    PlantedMLP,
    Transcoder,
    ablate,
    coverage_size,
    decompose_mlp,
    decompose_model,
    deu_set_from_matrix,
    dla,
    effector_tokens,
    encode_texts,
    evaluate_loss,
    mean_coefficients,
    neuron_basis,
    next_token_prompts,
    planted_mlp,
    strip_markdown,
    subspace_contributions,
    tiny_gpt2_config,
    token_coherence,
    train_bpe_tokenizer,
    train_transcoder,
    transcoder_splice,
    unigram_entropy,
)


@pytest.mark.parametrize(
    "call",
    [
        lambda: decompose_mlp(None, 0),
        lambda: decompose_model(None),
        lambda: neuron_basis(None, 0),
        lambda: dla(None, torch.tensor([1]), torch.tensor([2])),
        lambda: ablate(None, torch.tensor([1]), []),
        lambda: mean_coefficients(None, torch.tensor([1]), {}),
    ],
)
def test_every_adapter_function_names_a_missing_adapter(call):
    with pytest.raises(TypeError, match="adapter"):
        call()


def test_unit_sets_are_checked_where_they_are_built_and_used(adapter, tokens, targets):
    with pytest.raises(ValueError, match="detectors"):
        DEUSet(0, "out", torch.zeros(()), torch.zeros(1), torch.zeros(1, 2), torch.zeros(2))
    with pytest.raises(ValueError, match="W"):
        deu_set_from_matrix(torch.zeros(()), torch.zeros(()))
    deus = decompose_mlp(adapter, 0)
    with pytest.raises(ValueError, match="acts"):
        deus.coefficients(torch.zeros(()))
    with pytest.raises(ValueError, match="units"):
        deus.select([10**6])
    with pytest.raises(TypeError, match="deus"):
        subspace_contributions(adapter, tokens, 0, targets, None)
    small = deu_set_from_matrix(
        torch.eye(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    )
    with pytest.raises(ValueError, match="deus"):
        effector_tokens(small, adapter)  # width 3 is not the adapter's d_model


def test_energy_of_a_zero_matrix_is_zero_not_nan():
    deus = deu_set_from_matrix(torch.zeros(3, 2, dtype=torch.float64), torch.zeros(2))
    assert deus.energy().tolist() == [0.0]
    W = torch.diag(torch.tensor([3.0, 4.0], dtype=torch.float64))
    # σ = (4, 3): shares 16/25 and 9/25
    assert deu_set_from_matrix(W, torch.zeros(2)).energy().tolist() == pytest.approx([0.64, 0.36])


def test_sizes_are_bounded_before_allocating():
    with pytest.raises(ValueError, match="d_model"):
        Transcoder(10**12, 26)
    with pytest.raises(ValueError, match="d_model"):
        planted_mlp(d_model=2**31, d_mlp=2**31)
    with pytest.raises(ValueError, match="vocab_size"):
        tiny_gpt2_config(2**31)
    with pytest.raises(TypeError, match="vocab_size"):
        tiny_gpt2_config(1.5)


def test_transcoder_inputs_and_splice_are_checked():
    tc = Transcoder(4, 8, seed=0)
    with pytest.raises(ValueError, match="normed"):
        tc(torch.zeros(3, 5))
    with pytest.raises(TypeError, match="transcoder"):
        transcoder_splice(object())
    with pytest.raises(TypeError, match="latents"):
        transcoder_splice(tc, 2.5)
    with pytest.raises(ValueError, match="latents"):
        transcoder_splice(tc, [8])
    with pytest.raises(TypeError, match="inputs"):
        train_transcoder(None, torch.zeros(3, 2))


def test_planted_model_record_and_adapter_are_checked():
    with pytest.raises(ValueError, match="u"):
        PlantedMLP(torch.nn.Identity(), torch.zeros(()), *(torch.zeros(1),) * 4)
    p = planted_mlp()
    with pytest.raises(ValueError, match="n_sequences"):
        p.crafted_inputs(10**12, 8)
    with pytest.raises(TypeError, match="layers"):
        MLPModelAdapter(
            kind="gpt2", model=torch.nn.Identity(), layers=None, W_U=torch.zeros(2, 3),
            b_U=torch.zeros(3), W_E=torch.zeros(3, 2), processed=False, has_lm_head=True,
            n_heads=1, n_positions=4, ln_f=None, ln_eps=1e-5,
        )  # fmt: skip


def test_text_helpers_check_kinds_and_empty_inputs():
    with pytest.raises(TypeError, match="text"):
        strip_markdown(None)
    with pytest.raises(TypeError, match="tokenizer"):
        encode_texts(None, ["a"])
    with pytest.raises(TypeError, match="texts"):
        train_bpe_tokenizer(["a", 0], vocab_size=300)
    with pytest.raises(TypeError, match="stream"):
        unigram_entropy(torch.zeros(3), 4)
    with pytest.raises(ValueError, match="stream"):
        unigram_entropy(torch.tensor([5]), 4)
    # two of id 0 and two of id 1: log 2 nats
    assert unigram_entropy(torch.tensor([0, 1, 0, 1]), 4) == pytest.approx(0.6931471805599453)
    with pytest.raises(TypeError, match="stream"):
        next_token_prompts(object(), 3, 4)
    with pytest.raises(TypeError, match="model"):
        evaluate_loss(-1.0, torch.arange(10))
    with pytest.raises(ValueError, match="token_ids"):
        token_coherence([], torch.zeros(4, 2))
    with pytest.raises(ValueError, match="contributions"):
        coverage_size(torch.tensor([1.0, float("nan")]))


def test_load_gpt2_refuses_an_unknown_name_before_any_lookup():
    from icml26.nana import load_gpt2

    with pytest.raises(FileNotFoundError, match="name_or_dir"):
        load_gpt2("x", allow_hub=True)  # neither a folder, a GPT-2 name nor an org/name id
