"""Spec §7 item 4: generator invariants, Zoology's layout, determinism, the χ² gap test."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.hybrid_seq import MQAR, InductionHead, PlainCopying, SelectiveCopying
from icml26.hybrid_seq.tasks import MARK, NOISE, PAD, SEP


def test_selective_copying_layout_and_targets():
    task = SelectiveCopying(L=40, k=6, n_symbols=10)
    b = task.sample(200, generator=0)
    assert b.inputs.shape == (200, 40 + 1 + 6) and task.seq_len == 47
    context = b.inputs[:, :40]
    is_data = (context >= 4) & (context < 14)
    assert torch.equal(is_data.sum(1), torch.full((200,), 6))  # exactly k data tokens
    assert bool(((context == NOISE) | is_data).all())
    assert torch.equal(b.inputs[:, 40], torch.full((200,), SEP))
    assert bool((b.inputs[:, 41:] == MARK).all())
    # mask covers exactly the k answer slots, targets = the data in context order
    assert bool(b.mask[:, 41:].all()) and not bool(b.mask[:, :41].any())
    for row in range(200):
        assert torch.equal(b.targets[row, 41:], context[row][is_data[row]])
    assert bool((b.targets[~b.mask] == PAD).all()) and not bool((b.inputs == PAD).any())


def test_selective_copying_options():
    tf = SelectiveCopying(L=20, k=4, n_symbols=5, teacher_forcing=True).sample(50, generator=1)
    assert bool((tf.inputs[:, 21] == MARK).all())
    assert torch.equal(tf.inputs[:, 22:], tf.targets[:, 21:24])  # MARK j>1 = answer j-1
    noisy = SelectiveCopying(L=200, k=2, n_symbols=5, noise_tokens=4)
    ids = noisy.sample(20, generator=2).inputs[:, :200]
    noise_ids = set(noisy.noise_ids().tolist())
    assert noise_ids == {NOISE, 9, 10, 11} and noisy.vocab_size == 12
    assert set(ids[(ids < 4) | (ids >= 9)].tolist()) == noise_ids  # all 4 noise ids occur
    ranged = SelectiveCopying(L=30, k=5, n_symbols=5, k_range=(2, 5))
    rb = ranged.sample(300, generator=3)
    counts = rb.mask.sum(1)
    assert set(counts.tolist()) == {2, 3, 4, 5}
    data = ((rb.inputs[:, :30] >= 4) & (rb.inputs[:, :30] < 9)).sum(1)
    assert torch.equal(data, counts)
    reserved = SelectiveCopying(L=10, k=2, n_symbols=5, n_noise_ids=4)
    assert reserved.vocab_size == 12 and set(reserved.noise_ids().tolist()) == {NOISE}


def test_mqar_invariants_in_disjoint_mode():
    task = MQAR(L=64, n_kv=8, n_keys=20, n_values=30, n_fillers=6)
    b = task.sample(300, generator=4)
    keys, values = b.inputs[:, 0:16:2], b.inputs[:, 1:16:2]
    assert bool(((keys >= 4) & (keys < 24)).all()) and bool(((values >= 24) & (values < 54)).all())
    for row in range(300):
        k, v = keys[row].tolist(), values[row].tolist()
        assert len(set(k)) == 8 and len(set(v)) == 8  # without replacement
        region = b.inputs[row, 16:]
        query_pos = torch.nonzero(b.mask[row]).flatten()
        assert len(query_pos) == 8 and bool(((query_pos - 16) % 2 == 0).all())
        queried = b.inputs[row, query_pos].tolist()
        assert sorted(queried) == sorted(k)  # every key queried exactly once
        lookup = dict(zip(k, v, strict=True))
        assert b.targets[row, query_pos].tolist() == [lookup[q] for q in queried]
        others = region[~b.mask[row, 16:]]
        assert bool(((others >= 54) & (others < 60)).all())  # no key id elsewhere: fillers
    assert task.vocab_size == 60


def test_same_seed_gives_identical_batches_and_seeds_differ():
    for task in (SelectiveCopying(L=30, k=4, n_symbols=6), MQAR(32, 4, 8, 8, 4)):
        a, b = task.sample(16, generator=7), task.sample(16, generator=7)
        c = task.sample(16, generator=8)
        assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
        assert not torch.equal(a.inputs, c.inputs)


def test_uniform_gaps_pass_a_chi_square_test():
    task = MQAR(L=128, n_kv=4, n_keys=16, n_values=16, n_fillers=4, power_a=1.0)
    b = task.sample(3000, generator=11)
    offsets = torch.nonzero(b.mask)[:, 1] - 2 * task.n_kv  # 2 (g - 1)
    gaps = (offsets // 2).numpy()
    observed = np.bincount(gaps, minlength=task.n_slots)
    assert observed.sum() == 3000 * 4
    # each gap's marginal is uniform over {1..S} (symmetry of sampling without replacement)
    assert stats.chisquare(observed).pvalue > 1e-3


def test_power_law_gaps_follow_the_zoology_weights():
    task = MQAR(L=66, n_kv=1, n_keys=4, n_values=4, n_fillers=2, power_a=0.01)
    p = task.gap_probabilities().numpy()
    g = np.arange(1, task.n_slots + 1)
    np.testing.assert_allclose(p, g**-0.99 / np.sum(g**-0.99), rtol=1e-12)
    b = task.sample(20000, generator=12)
    gaps = ((torch.nonzero(b.mask)[:, 1] - 2) // 2).numpy()
    observed = np.bincount(gaps, minlength=task.n_slots)
    # single query: the gap is one draw from p; goodness of fit on the five likeliest gaps
    expected = 20000 * p
    top = np.append(observed[:5], observed[5:].sum())
    exp_top = np.append(expected[:5], expected[5:].sum())
    assert stats.chisquare(top, exp_top).pvalue > 1e-3


def test_zoology_compat_reproduces_zoologys_layout():
    # Zoology with V = 40: keys 1..19 (V // 2 - 1 ids, 0 excluded), values 20..39
    task = MQAR(L=32, n_kv=4, n_keys=19, n_values=20, n_fillers=1, zoology_compat=True)
    assert task.vocab_size == 40 and task.first_key == 1 and task.first_value == 20
    b = task.sample(100, generator=5)
    keys, values = b.inputs[:, 0:8:2], b.inputs[:, 1:8:2]
    assert bool(((keys >= 1) & (keys < 20)).all()) and bool(((values >= 20) & (values < 40)).all())
    assert bool((b.inputs >= 1).all()) and bool((b.inputs < 40).all())
    q = torch.nonzero(b.mask[0]).flatten()
    assert sorted(b.inputs[0, q].tolist()) == sorted(keys[0].tolist())


def test_tasks_reject_bad_input():
    with pytest.raises(ValueError, match=r"k must be in \[1, L=5\]"):
        SelectiveCopying(L=5, k=6, n_symbols=4)
    with pytest.raises(ValueError, match="n_symbols must be an integer >= 1"):
        SelectiveCopying(L=5, k=2, n_symbols=0)
    with pytest.raises(ValueError, match="k_range must be"):
        SelectiveCopying(L=9, k=4, n_symbols=3, k_range=(2, 3))
    with pytest.raises(ValueError, match="k_range must be a pair"):  # issue 40's fuzz campaign
        SelectiveCopying(L=9, k=4, n_symbols=3, k_range=[])
    with pytest.raises(ValueError, match=r"n_kv must be in \[1, L/4=7\]"):
        MQAR(L=30, n_kv=8, n_keys=16, n_values=16, n_fillers=4)
    with pytest.raises(ValueError, match="query region L - 2·n_kv must be even"):
        MQAR(L=31, n_kv=4, n_keys=16, n_values=16, n_fillers=4)
    with pytest.raises(ValueError, match="zoology_compat needs vocab V"):
        MQAR(L=64, n_kv=4, n_keys=15, n_values=16, n_fillers=1, zoology_compat=True)
    with pytest.raises(ValueError, match="n_values must be n_keys \\+ 1"):
        MQAR(L=16, n_kv=2, n_keys=15, n_values=15, n_fillers=1, zoology_compat=True)
    with pytest.raises(ValueError, match="power_a must be in"):
        MQAR(L=16, n_kv=2, n_keys=4, n_values=4, n_fillers=1, power_a=0.0)
    with pytest.raises(ValueError, match="filler_offset \\+ n_fillers must be <= n_filler_ids"):
        MQAR(L=16, n_kv=2, n_keys=4, n_values=4, n_fillers=4, filler_offset=1)
    with pytest.raises(ValueError, match=r"batch_size must be an integer in \[1, "):
        MQAR(16, 2, 4, 4, 1).sample(0)
    assert math.isclose(MQAR(16, 2, 4, 4, 1).gap_probabilities().sum().item(), 1.0)


@pytest.mark.parametrize(
    "task",
    [
        SelectiveCopying(L=8, k=2, n_symbols=4),
        MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4),
        PlainCopying(L=4, n_symbols=3),
        InductionHead(L=6, n_symbols=4),
    ],
    ids=lambda t: type(t).__name__,
)
def test_sample_refuses_a_batch_too_large_to_allocate(task):
    from icml26.hybrid_seq.tasks import MAX_SAMPLE_NUMBERS

    largest = MAX_SAMPLE_NUMBERS // task.seq_len
    with pytest.raises(ValueError, match="batch_size"):
        task.sample(largest + 1, generator=0)
    assert task.sample(2, generator=0).inputs.shape == (2, task.seq_len)
