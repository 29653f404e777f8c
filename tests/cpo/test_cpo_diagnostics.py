"""sequence_logps against a hand loop, and the failure-mode diagnostics (spec §7.8, §7.10)."""

import math

import pytest
import torch

from icml26.cpo import (
    assumption_violated,
    frac_in_undesirable,
    policy_preference_accuracy,
    sequence_logps,
    undesirable_mask,
)


def hand_loop(logits, labels, average):
    out = []
    for b in range(labels.shape[0]):
        total, count = 0.0, 0
        for pos in range(1, labels.shape[1]):
            if labels[b, pos] != -100:
                total += float(torch.log_softmax(logits[b, pos - 1], -1)[labels[b, pos]])
                count += 1
        out.append(total / count if average else total)
    return torch.tensor(out, dtype=torch.float64)


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 5, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 5, (3, 7), generator=g)
    labels[0, :3] = -100  # prompt
    labels[1, :2] = -100
    labels[1, 5:] = -100  # right padding
    labels[2, :5] = -100
    return logits, labels


@pytest.mark.parametrize("average", [True, False])
def test_sequence_logps_equals_hand_loop(batch, average):
    logits, labels = batch
    got = sequence_logps(logits, labels, average=average)
    assert torch.allclose(got, hand_loop(logits, labels, average), atol=1e-12)  # float64


def test_average_is_sum_over_count(batch):
    logits, labels = batch
    counts = (labels[:, 1:] != -100).sum(1)
    summed = sequence_logps(logits, labels, average=False)
    assert torch.allclose(sequence_logps(logits, labels), summed / counts, atol=1e-12)


def test_masked_positions_do_not_matter(batch):
    logits, labels = batch
    scrambled = logits.clone()
    scrambled[1, 5:] = 1e3  # logits after the last scored token predict nothing scored
    assert torch.equal(sequence_logps(logits, labels), sequence_logps(scrambled, labels))


def test_left_and_right_padding_agree():
    g = torch.Generator().manual_seed(1)
    seq_logits = torch.randn(4, 6, dtype=torch.float64, generator=g)  # one real sequence of 4
    seq_labels = torch.tensor([-100, 2, 5, 1])
    pad = 3
    right_logits = torch.cat([seq_logits, torch.randn(pad, 6, dtype=torch.float64, generator=g)])
    right_labels = torch.cat([seq_labels, torch.full((pad,), -100)])
    left_logits = torch.cat([torch.randn(pad, 6, dtype=torch.float64, generator=g), seq_logits])
    left_labels = torch.cat([torch.full((pad,), -100), seq_labels])
    right = sequence_logps(right_logits[None], right_labels[None])
    left = sequence_logps(left_logits[None], left_labels[None])
    assert torch.allclose(left, right, atol=1e-12)  # same terms, float64


def test_uniform_logits_give_minus_log_vocab():
    labels = torch.tensor([[-100, 1, 2, 3]])
    assert float(sequence_logps(torch.zeros(1, 4, 8), labels)) == pytest.approx(-math.log(8))


def test_labels_without_response_tokens_are_refused():
    labels = torch.tensor([[-100, 1, 2], [-100, -100, -100]])
    with pytest.raises(ValueError, match=r"at least one response token.*rows \[1\]"):
        sequence_logps(torch.zeros(2, 3, 4), labels)
    only_first = torch.tensor([[1, -100, -100]])  # the first token is never predicted
    with pytest.raises(ValueError, match="at least one response token"):
        sequence_logps(torch.zeros(1, 3, 4), only_first)


def test_sequence_logps_shapes_are_checked():
    with pytest.raises(ValueError, match=r"labels must have shape \(2, 3\); got \(2, 4\)"):
        sequence_logps(torch.zeros(2, 3, 4), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"logits must be 3-D; got shape \(2, 3\)"):
        sequence_logps(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match=r"labels must be a torch\.Tensor; got list"):
        sequence_logps(torch.zeros(1, 2, 4), [[1, 2]])


def test_undesirable_mask_truth_table():
    delta_ref = torch.tensor([-1.0, -1.0, -1.0, -1.0, -1.0, 0.5, 0.5])
    delta_pi = torch.tensor([-0.5, -1.0, -2.0, 0.0, 0.3, 0.2, -0.2])
    expected = [True, False, False, False, False, False, False]
    assert undesirable_mask(delta_pi, delta_ref).tolist() == expected
    assert frac_in_undesirable(delta_pi, delta_ref) == pytest.approx(1 / 7)
    weights = torch.tensor([3.0, 1, 1, 1, 1, 1, 1])
    assert frac_in_undesirable(delta_pi, delta_ref, weights) == pytest.approx(3 / 9)


def test_undesirable_atol_ignores_unmoved_pairs():
    delta_ref = torch.tensor([-1.0, -1.0], dtype=torch.float64)
    delta_pi = torch.tensor([-1.0 + 1e-9, -0.5], dtype=torch.float64)
    assert undesirable_mask(delta_pi, delta_ref).tolist() == [True, True]
    assert undesirable_mask(delta_pi, delta_ref, atol=1e-6).tolist() == [False, True]


def test_policy_accuracy_and_assumption():
    assert policy_preference_accuracy(torch.tensor([1.0, -1.0, 0.0, 2.0])) == 0.5
    # δ_ref + Δr/β ≤ 0 with β = 1: -3 + 2, -1 + 2, -1 + 0.5, 0 + 0
    got = assumption_violated(
        torch.tensor([-3.0, -1.0, -1.0, 0.0]), torch.tensor([2.0, 2.0, 0.5, 0.0]), beta=1.0
    )
    assert got.tolist() == [True, False, True, True]
    assert assumption_violated(torch.tensor([-1.0]), torch.tensor([0.5]), beta=0.25).tolist() == [
        False
    ]


def test_diagnostics_bad_inputs():
    with pytest.raises(ValueError, match="delta_ref must have the shape of delta_pi"):
        undesirable_mask(torch.zeros(3), torch.zeros(2))
    with pytest.raises(ValueError, match="delta_pi needs at least one pair"):
        policy_preference_accuracy(torch.zeros(0))
    with pytest.raises(ValueError, match="weights must be non-negative"):
        frac_in_undesirable(torch.zeros(2), torch.zeros(2), weights=torch.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"assumption_violated: beta must be in \(0, inf\)"):
        assumption_violated(torch.zeros(1), torch.zeros(1), beta=0.0)
