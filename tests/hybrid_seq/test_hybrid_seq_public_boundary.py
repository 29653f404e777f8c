"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the parameter."""

import pytest
import torch

from icml26.hybrid_seq import (
    ConstructedARHybrid,
    ConstructedSCHybrid,
    ConstructedSlotSSM,
    HybridLM,
    HybridLMConfig,
    TrainConfig,
    build_sc_hybrid,
    margin_beta,
    masked_accuracy,
)
from icml26.hybrid_seq.ssm import MAX_CACHE_NUMBERS


def test_margin_beta_refuses_a_non_positive_length():
    with pytest.raises(ValueError, match="max_len"):
        margin_beta(0)


@pytest.mark.parametrize(
    ("build", "param"),
    [
        (lambda: ConstructedSCHybrid(0, 10, False, 8), "n_symbols"),
        (lambda: ConstructedSCHybrid(4, 10, False, 0), "vocab_size"),
        (lambda: ConstructedARHybrid(2, 2, 10, False, 2**31), "vocab_size"),
        (lambda: ConstructedARHybrid(2, 0, 10, False, 12), "n_values"),
        (lambda: ConstructedSlotSSM(4, 10**12, 8), "k"),
    ],
)
def test_constructed_models_check_their_sizes_before_allocating(build, param):
    with pytest.raises(ValueError, match=param):
        build()


def test_constructed_models_refuse_a_non_bool_hard():
    with pytest.raises(TypeError, match="hard"):
        ConstructedSCHybrid(4, 10, "yes", 8)


def test_step_refuses_a_foreign_cache_and_a_non_tensor_token():
    model = build_sc_hybrid(4, max_len=10)
    with pytest.raises(TypeError, match="cache"):
        model.step(torch.tensor([5]), {"x": 1.0})
    good = model.init_cache(2)
    with pytest.raises(ValueError, match="cache"):
        model.step(torch.tensor([5]), good)  # a cache for a batch of 2, a token batch of 1
    with pytest.raises(TypeError, match="token"):
        model.step([5, 6])
    with pytest.raises(ValueError, match="batch_size"):
        model.init_cache(2**40)


def test_step_after_checks_still_matches_forward():
    model = build_sc_hybrid(4, max_len=12)
    tokens = torch.tensor([[4, 1, 5, 6, 3, 3]])
    full = model(tokens)
    cache = None
    for t in range(tokens.shape[1]):
        logits, cache = model.step(tokens[:, t], cache)
        torch.testing.assert_close(logits, full[:, t])


def test_masked_accuracy_checks_kinds_and_shapes_and_counts_by_hand():
    logits = torch.tensor([[[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]], [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]])
    targets = torch.tensor([[1, 2], [2, 0]])
    mask = torch.tensor([[True, True], [False, True]])
    # by hand: (0,0) right, (0,1) wrong, (1,1) wrong -> 1 of 3
    assert masked_accuracy(logits, targets, mask) == pytest.approx(1 / 3)
    with pytest.raises(TypeError, match="mask"):
        masked_accuracy(logits, targets, mask.float())
    with pytest.raises(ValueError, match="targets"):
        masked_accuracy(logits, targets[:, :1], mask)
    with pytest.raises(TypeError, match="targets"):
        masked_accuracy(logits, targets.float(), mask)
    with pytest.raises(TypeError, match="logits"):
        masked_accuracy(logits.long(), targets, mask)


def test_train_config_refuses_betas_that_are_not_a_pair():
    with pytest.raises(TypeError, match="betas"):
        TrainConfig(steps=1, lr=1e-3, betas=0)


def test_hf_config_is_validated_where_it_is_written_and_sizes_are_bounded():
    with pytest.raises(ValueError, match="vocab_size"):
        HybridLMConfig(vocab_size=0)
    with pytest.raises(ValueError, match="d_state"):
        HybridLMConfig(d_state=0)
    with pytest.raises(ValueError, match="d_model"):
        HybridLM(12, 2**31)
    with pytest.raises(TypeError, match="seed"):
        HybridLMConfig(vocab_size=12, d_model=8).build(seed="x")


def test_hybrid_lm_init_cache_bounds_the_whole_model_cache():
    # the bound counts every block (and the step's residual and logits), not each block alone
    eight = HybridLM(vocab_size=16, d_model=8, pattern="S" * 8, n_heads=1)
    per_block = sum(eight.memory_layout()[0][:2])  # SSM state + conv cache of one block
    per_sequence = 8 * per_block + 8 + 16
    batch = MAX_CACHE_NUMBERS // per_sequence + 1  # one number over the whole-model bound
    assert batch * per_block <= MAX_CACHE_NUMBERS  # each block's own cap would let it through
    with pytest.raises(
        ValueError, match=rf"HybridLM.init_cache: batch_size must be at most {batch - 1} "
    ):
        eight.init_cache(batch)
    with pytest.raises(ValueError, match="batch_size"):
        HybridLM(vocab_size=16, d_model=8, pattern="A", n_heads=1).init_cache(2**40)
    cache = eight.init_cache(2)  # a small batch still streams and matches forward
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
    full = eight(tokens)
    for t in range(tokens.shape[1]):
        logits, cache = eight.step(tokens[:, t], cache)
        torch.testing.assert_close(logits, full[:, t], rtol=1e-4, atol=1e-5)
