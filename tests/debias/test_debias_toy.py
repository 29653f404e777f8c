"""The toy intent task of spec §5.1 Q2 (and §7.11: the base model learns it)."""

import copy
import random

import numpy as np
import pytest
import torch

from icml26.debias import (
    ToyIntentNet,
    debias_finetune,
    evaluate_toy,
    make_toy_intent_task,
    train_toy_model,
)
from icml26.debias.toy import FILLER0, N_KEYWORDS, PAD, PROMPT_LEN


@pytest.fixture(scope="module")
def systematic():
    task = make_toy_intent_task("systematic", seed=0)
    return task, train_toy_model(task, seed=0)


def test_prompts_follow_the_recipe():
    task = make_toy_intent_task("variance", seed=1, n_train=300, n_test=10)
    tokens, labels = task.train_tokens, task.train_labels
    assert tokens.shape == (300, 16) and torch.all((tokens != PAD).sum(1) == PROMPT_LEN)
    for row, y in zip(tokens, labels, strict=True):
        kw = row[(row >= 2) & (row < 62)]
        classes = ((kw - 2) // N_KEYWORDS).tolist()
        assert len(kw) == 3 and classes.count(int(y)) == 2  # 2 own + 1 other keyword
    # fillers are c·u + s·N(0, I): their mean has norm ≈ c (variance regime c = 1, s = 1.5)
    assert task.filler_embeddings.shape == (12, 32)


def test_base_model_learns_the_clean_task(systematic):
    task, base = systematic
    ev = evaluate_toy(base, task, k=8, seed=0)
    assert ev.clean_acc >= 0.97
    assert ev.pert_acc < ev.clean_acc  # fillers never seen in training hurt


def test_perturbation_appends_one_to_four_fillers(systematic):
    task, _ = systematic
    clean = task.test_tokens[:200]
    pert = task.perturb(task.batch(clean), np.random.default_rng(0))
    assert torch.equal(pert[:, :PROMPT_LEN], clean[:, :PROMPT_LEN])
    added = (pert[:, PROMPT_LEN:] >= FILLER0).sum(1)
    assert added.min() == 1 and added.max() == 4
    one = task.perturb_example(clean[0], random.Random(0))
    assert torch.equal(one[:PROMPT_LEN], clean[0, :PROMPT_LEN])


def test_filler_embeddings_stay_frozen_and_bias_is_1_2_percent(systematic):
    task, base = systematic
    model = copy.deepcopy(base)
    batches = [task.batch(task.train_tokens[i : i + 64]) for i in range(0, 256, 64)]
    log = debias_finetune(model, batches, task.perturb, lr=1e-2, steps=5, params="all")
    assert torch.equal(model.filler_embed, base.filler_embed)  # a buffer: never trained
    log = debias_finetune(copy.deepcopy(base), batches, task.perturb, steps=2, params="bias")
    assert log.n_trainable == 64 + 64 + 4 == 132
    assert log.trainable_fraction == pytest.approx(132 / 10436)  # 122·32 + 2112 + 4160 + 260


def test_gaussian_regime_adds_zero_mean_noise_to_embeddings():
    task = make_toy_intent_task("gaussian", seed=0, n_train=50, n_test=400, sigma=1.0)
    batch = task.batch(task.test_tokens)
    assert torch.equal(batch["noise"], torch.zeros(400, 16, 32))
    pert = task.perturb(batch, np.random.default_rng(0))
    assert torch.equal(pert["tokens"], batch["tokens"])
    noise = pert["noise"]
    assert abs(float(noise.mean())) < 0.01 and float(noise.std()) == pytest.approx(1.0, abs=0.01)
    with pytest.raises(ValueError, match="gaussian regime perturbs embeddings"):
        task.perturb_example(task.test_tokens[0], random.Random(0))


def test_noise_enters_only_through_real_tokens():
    net = ToyIntentNet(torch.zeros(12, 4), seed=0)
    tokens = torch.tensor([[5, 6, PAD, PAD]])
    noise = torch.zeros(1, 4, 4)
    noise[0, 2:] = 100.0  # on padding: masked out
    assert torch.equal(net(tokens, noise), net(tokens))


def test_bias_only_debiasing_helps_in_the_systematic_regime(systematic):
    task, base = systematic
    gen = np.random.default_rng(0)
    perm = gen.permutation(2000)
    batches = [task.batch(task.train_tokens[perm[i : i + 64]]) for i in range(0, 2000, 64)]
    model = copy.deepcopy(base)
    debias_finetune(model, batches, task.perturb, lr=1e-2, steps=150, seed=0)
    before = evaluate_toy(base, task, seed=1)
    after = evaluate_toy(model, task, seed=1, reference=base)
    assert after.pert_acc >= before.pert_acc + 0.02  # D1's per-seed floor
    assert after.output_bias_norm < 0.5 * before.output_bias_norm


def test_bad_regime():
    with pytest.raises(ValueError, match="regime must be one of"):
        make_toy_intent_task("adversarial", seed=0)


def test_train_batches_cover_the_training_set_once_in_a_seeded_order():
    task = make_toy_intent_task("systematic", seed=0, n_train=100, n_test=10)
    batches = task.train_batches(32, seed=3)
    assert [len(b) for b in batches] == [32, 32, 32, 4]
    rows = {tuple(r.tolist()) for b in batches for r in b}
    assert rows == {tuple(r.tolist()) for r in task.train_tokens}  # every prompt exactly once
    again = task.train_batches(32, seed=np.random.default_rng(3))  # an int seeds the same stream
    assert all(torch.equal(a, b) for a, b in zip(batches, again, strict=True))
    gauss = make_toy_intent_task("gaussian", seed=0, n_train=10, n_test=10).train_batches(4)
    assert set(gauss[0]) == {"tokens", "noise"} and not gauss[0]["noise"].any()  # clean inputs


def test_training_reports_progress_and_stops_on_a_non_finite_loss():
    from icml26.core import NonFiniteLossError

    task = make_toy_intent_task("systematic", seed=0, n_train=50, n_test=10)
    seen = []
    train_toy_model(task, epochs=3, progress=lambda *args: seen.append(args))
    assert [(done, total) for done, total, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    # lr 1e30: the first Adam step moves every weight by ~1e30, so the next loss is NaN
    with pytest.raises(NonFiniteLossError, match="train_toy_model: the loss is nan at step 1"):
        train_toy_model(task, epochs=3, lr=1e30)
