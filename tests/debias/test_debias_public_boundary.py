"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the caller's own parameter."""

import random

import numpy as np
import pytest
import torch
from torch import nn

from icml26.debias import (
    CorrectionHandle,
    LabelTokenClassifier,
    TextClassifier,
    ToyIntentNet,
    add_correction_vectors,
    bias_parameters,
    bias_profile,
    capture_outputs,
    certified_accuracy,
    certify_many,
    char_swap,
    compose,
    evaluate_toy,
    filler,
    freeze_all_but,
    intent_perturbation,
    make_intent_texts,
    make_toy_intent_task,
    masked_mean_pool,
    mean_pool,
    mean_shift_debias,
    module_bias,
    residual_write_modules,
    select_parameters,
)


def test_module_name_lists_are_named_by_the_callers_parameter():
    net = nn.Sequential(nn.Linear(3, 2))
    x = torch.zeros(4, 3)
    with pytest.raises(ValueError, match="module_names"):
        capture_outputs(net, [], x)
    with pytest.raises(ValueError, match="modules"):
        bias_profile(net, x, x[:, None], modules=[])
    with pytest.raises(ValueError, match="module_names"):
        mean_shift_debias(net, x, x[:, None], [])
    with pytest.raises(ValueError, match="module_names"):
        add_correction_vectors(net, [])
    with pytest.raises(TypeError, match="module_names"):
        capture_outputs(net, [0], x)


def test_inputs_the_model_cannot_take_name_the_inputs():
    net = nn.Sequential(nn.Linear(3, 2))
    with pytest.raises(ValueError, match="inputs"):
        capture_outputs(net, ["0"], torch.zeros(4, 5))
    with pytest.raises(ValueError, match="X_pert"):
        bias_profile(net, torch.zeros(4, 3), torch.zeros(4, 2, 5))
    with pytest.raises(TypeError, match="clean_inputs"):
        module_bias(net, "0", {"a": 1.0}, torch.zeros(4, 3))
    with pytest.raises(TypeError, match="reference"):
        module_bias(net, "0", torch.zeros(4, 3), torch.zeros(4, 2, 3), reference=3)


def test_pools_refuse_outputs_without_a_batch_axis():
    with pytest.raises(ValueError, match="output"):
        mean_pool(torch.zeros(()))
    with pytest.raises(TypeError, match="output"):
        masked_mean_pool(None, {})
    h = torch.tensor([[[1.0], [3.0], [100.0]]])
    with pytest.raises(ValueError, match="batch"):
        masked_mean_pool(h, {"attention_mask": torch.ones(1, 2)})
    # integer states are averaged in float64: (1 + 2) / 2 over the middle axis
    assert mean_pool(torch.tensor([[[1], [2]]])).tolist() == [[1.5]]


def test_parameter_helpers_refuse_what_is_not_a_module():
    with pytest.raises(TypeError, match="model"):
        bias_parameters(None)
    with pytest.raises(TypeError, match="model"):
        freeze_all_but(None, [])
    with pytest.raises(TypeError, match="model"):
        select_parameters({}, [])
    net = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="params"):
        freeze_all_but(net, 2.5)
    with pytest.raises(TypeError, match="model"):
        residual_write_modules(None)
    with pytest.raises(ValueError, match="model"):
        residual_write_modules(net)


def test_correction_handle_is_checked_where_it_is_built_and_set():
    with pytest.raises(TypeError, match="names"):
        CorrectionHandle(None, {}, {}, [])
    net = nn.Sequential(nn.Linear(3, 2))
    handle = add_correction_vectors(net, ["0"])
    with pytest.raises(ValueError, match="value"):
        handle.set("0", torch.zeros(3))
    handle.set("0", torch.tensor([1.0, -1.0]))
    x = torch.ones(1, 3)
    by_hand = x @ net[0].weight.T + net[0].bias + torch.tensor([1.0, -1.0])
    torch.testing.assert_close(net(x), by_hand)
    with pytest.raises(ValueError, match="dims"):
        add_correction_vectors(nn.Sequential(nn.ReLU()), ["0"], dims={"0": 2**40})


def test_hf_wrappers_check_their_inputs():
    with pytest.raises(TypeError, match="label_token_ids"):
        LabelTokenClassifier(nn.Linear(4, 4), 0)
    clf = TextClassifier(nn.Identity(), nn.Linear(3, 2))
    with pytest.raises(ValueError, match="texts"):
        clf(None)
    with pytest.raises(ValueError, match="texts"):
        clf(torch.zeros(4, 5))
    with pytest.raises(TypeError, match="head"):
        TextClassifier(nn.Identity(), 3)


def test_perturbations_check_their_word_lists():
    with pytest.raises(TypeError, match="protected"):
        char_swap(0.1, protected=[object()])
    with pytest.raises(TypeError, match="prefixes"):
        filler(None)
    with pytest.raises(ValueError, match="perturbations"):
        compose()
    with pytest.raises(TypeError, match="keywords"):
        intent_perturbation(None)
    with pytest.raises(TypeError, match="keywords must hold strings"):
        intent_perturbation([["jazz"]])  # an unhashable entry, not a deep TypeError
    pert = intent_perturbation(["jazz"], p_case=0.0, p_typo=1.0)
    assert "jazz" in pert("play jazz", random.Random(0))  # the keyword is never edited


def test_sizes_and_sequences_of_certification():
    with pytest.raises(ValueError, match="n"):
        make_intent_texts(10**12)
    with pytest.raises(TypeError, match="xs"):
        certify_many(len, None, None, lambda x, r: x)
    with pytest.raises(TypeError, match="certificates"):
        certified_accuracy(None)


def test_toy_model_and_task_check_tokens_tasks_and_fields():
    task = make_toy_intent_task(seed=0, n_train=10, n_test=5)
    net = ToyIntentNet(task.filler_embeddings, seed=0)
    with pytest.raises(TypeError, match="tokens"):
        net(np.zeros((4, 16), dtype=np.int64))  # a numpy array is not a tensor
    with pytest.raises(TypeError, match="tokens"):
        net(torch.zeros(2, 16))
    with pytest.raises(ValueError, match="tokens"):
        net(torch.full((2, 16), 10**6))
    with pytest.raises(TypeError, match="tokens"):
        task.perturb(0.0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="task"):
        evaluate_toy(net, None)
    with pytest.raises(ValueError, match="regime"):
        type(task)(**{**task.__dict__, "regime": "x"})
    full = torch.full((1, 16), 5)  # no room for the fillers a perturbation appends
    with pytest.raises(ValueError, match="tokens"):
        task.perturbed_copies(full, 2, seed=0)


def test_fuzz_campaign_findings_are_refused_by_name():
    # issue 40's second seeded campaign (ICML26_FUZZ_EXAMPLES=48 ICML26_FUZZ_SEED=7)
    from icml26.debias import make_toy_intent_task, mean_pool

    with pytest.raises(ValueError, match="no positions"):
        mean_pool(torch.zeros(1, 0, 4))  # the mean of nothing was NaN
    with pytest.raises(TypeError, match="_hooks"):
        CorrectionHandle((), {}, {}, [np.zeros(2)])  # remove() crashed on it later
    with pytest.raises(ValueError, match="n_train"):
        make_toy_intent_task(n_train=10**12)  # refused before a 10^12-row table
    from icml26.debias import relu_gaussian_mean

    with pytest.raises(ValueError, match="u must lie"):
        relu_gaussian_mean(1.66e308, 1.0)  # u Φ + s φ overflowed to inf (test_relu_fuzz found it)
