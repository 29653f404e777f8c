"""Regressions for the fuzz findings of issue 16: each kind of bad input is refused at the public
boundary with a message that names the parameter, before anything large is allocated."""

import dataclasses

import pytest
import torch

from icml26.cpo import (
    TinyCausalLM,
    make_arith_preference_task,
    make_bandit_problem,
    policy_metrics,
    policy_preference_accuracy,
    soft_margin_ranking_loss,
    tiny_lm_metrics,
    train_sft,
    train_tabular,
    true_pairs,
)

PROBLEM = make_bandit_problem(n_prompts=4, n_responses=3, seed=0)
TASK = make_arith_preference_task(n_numbers=5, seed=0)


def lm(vocab=TASK.vocab_size):
    return TinyCausalLM(vocab, d_model=8, n_layers=1, n_heads=2, seed=0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: true_pairs(None), "true_pairs: problem must be a BanditProblem"),
        (lambda: policy_metrics(None, PROBLEM.ref_logits), "problem must be a BanditProblem"),
        (lambda: policy_metrics(PROBLEM, [[0.0]]), "logits must be a torch.Tensor"),
        (lambda: train_tabular("p", "dpo"), "train_tabular: problem must be a BanditProblem"),
        (lambda: train_sft(None, TASK), "train_sft: model must be a torch Module"),
        (lambda: train_sft(lm(), None), "train_sft: task must be an ArithPreferenceTask"),
        (lambda: tiny_lm_metrics(lm(), lm(), None), "task must be an ArithPreferenceTask"),
        (lambda: TASK.is_violated([1, 2]), "types must be a torch.Tensor"),
        (lambda: lm()(torch.zeros(1, 2)), "tokens must be an integer tensor"),
        (lambda: soft_margin_ranking_loss(None, torch.zeros(2)), "delta must be a torch.Tensor"),
        (lambda: soft_margin_ranking_loss(torch.zeros(2), 0.0), "target must be a torch.Tensor"),
        (
            lambda: dataclasses.replace(PROBLEM, chosen=PROBLEM.chosen.double()),
            "chosen must be an integer tensor",
        ),
    ],
)
def test_wrong_kinds_are_type_errors_naming_the_parameter(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # Token ids outside the vocabulary and over-long sequences: the embedding's IndexError.
        (lambda: lm()(torch.full((3, 2), TASK.vocab_size)), r"tokens must hold ids in range"),
        (lambda: lm()(torch.zeros(1, 17, dtype=torch.long)), "tokens must have 1 to max_len"),
        (lambda: lm()(torch.zeros(1, 0, dtype=torch.long)), "tokens must have 1 to max_len"),
        (lambda: train_sft(lm(vocab=7), TASK), "model must have vocab_size = task.vocab_size"),
        (lambda: policy_metrics(PROBLEM, torch.zeros(4, 2)), "logits must have shape"),
        (lambda: soft_margin_ranking_loss(torch.zeros(3), torch.zeros(2)), "target must broad"),
        (lambda: policy_preference_accuracy(torch.zeros(0)), "delta_pi needs at least one pair"),
        (
            lambda: dataclasses.replace(PROBLEM, rejected=PROBLEM.rejected + 3),
            r"rejected must hold ids in range\(0, 3\)",
        ),
        (
            lambda: dataclasses.replace(TASK, test_prompts=TASK.test_prompts[:0]),
            "test_prompts must hold at least one prompt",
        ),
    ],
)
def test_bad_values_are_value_errors_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: make_bandit_problem(n_prompts=2**31), r"n_prompts must be an integer in \[1, "),
        (lambda: make_bandit_problem(n_prompts=10**6, n_responses=100), "preference rows"),
        (lambda: make_arith_preference_task(n_numbers=10**12), r"n_numbers must be an integer"),
        (lambda: make_arith_preference_task(n_numbers=999, n_types=999), "prompts"),
        (lambda: TinyCausalLM(2**31), r"vocab_size must be an integer in \[1, 131072\]"),
        (lambda: TinyCausalLM(10, n_layers=10**12), r"n_layers must be an integer in \[1, 64\]"),
        (lambda: train_sft(lm(), TASK, steps=2**31), r"steps must be an integer in \[1, 1000000\]"),
        (lambda: train_tabular(PROBLEM, "dpo", steps=2**31), r"steps must be an integer in"),
        (lambda: train_sft(lm(), TASK, batch_size=10**12), r"batch_size must be an integer in"),
    ],
)
def test_huge_sizes_are_refused_before_allocation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_valid_calls_are_unchanged():
    # The validated problem and task still satisfy their defining identities.
    x, win, lose = true_pairs(PROBLEM)
    assert x.numel() == 4 * 3  # every unordered pair of 3 responses, per prompt
    assert bool((PROBLEM.reward[x, win] >= PROBLEM.reward[x, lose]).all())
    assert policy_metrics(PROBLEM, PROBLEM.ref_logits)["kl"] == 0.0
    assert TASK.is_violated(TASK.violated_types).all()
    # softplus(-β(δ - t)) broadcasts t against δ as before: at δ = t the loss is log 2.
    loss = soft_margin_ranking_loss(torch.zeros(2, 3), torch.zeros(3), beta=1.0)
    assert torch.allclose(loss, torch.full((2, 3), 2.0).log())
    assert tiny_lm_metrics(lm(), lm(), TASK)["frac_in_U"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"ignore_index": None}, TypeError, "ignore_index must be an int"),
        ({"ignore_index": True}, TypeError, "ignore_index must be an int"),
        ({"ignore_index": 1.5}, TypeError, "ignore_index must be an int"),
        ({"average": "yes"}, TypeError, "average must be a bool"),
        ({"ignore_index": 0}, ValueError, r"token ids in \[0, 4\)"),  # -100 is then scored
    ],
)
def test_sequence_logps_refuses_bad_ignore_index_and_labels(kwargs, error, match):
    """Issue 40: ignore_index=None used to crash deep inside (IndexError from gather)."""
    from icml26.cpo import sequence_logps

    logits, labels = torch.zeros(1, 3, 4), torch.tensor([[-100, -100, 3]])
    with pytest.raises(error, match=match):
        sequence_logps(logits, labels, **kwargs)
    with pytest.raises(ValueError, match=r"token ids in \[0, 4\)"):
        sequence_logps(logits, torch.tensor([[-100, 2, 7]]))


@pytest.mark.parametrize(
    ("module", "presets", "field", "value", "match"),
    [
        ("bandit", "BANDIT_PRESETS", "lr", 0.0, r"lr must be in \(0, 10\]"),
        ("bandit", "BANDIT_PRESETS", "baselines", ("x",), "baselines must be distinct values"),
        ("kl_matched", "KL_PRESETS", "dpo_betas", (-1.0,), "dpo_betas must be in"),
        ("tiny_lm", "TINY_LM_PRESETS", "methods", ("dpo",), "must include 'dpo' and 'smooth'"),
        ("tiny_lm", "TINY_LM_PRESETS", "n_heads", 0, r"n_heads must be an integer in \[1, 64\]"),
        ("tiny_lm", "TINY_LM_PRESETS", "sft_steps", True, "sft_steps must be int"),
    ],
)
def test_experiment_configs_refuse_bad_fields(module, presets, field, value, match):
    """Issue 40: a bad --set fails when the CLI builds the config (exit 2), naming the field."""
    import importlib

    config = getattr(importlib.import_module(f"icml26.cpo.experiments.{module}"), presets)["quick"]
    with pytest.raises((ValueError, TypeError), match=match):
        dataclasses.replace(config, **{field: value})
