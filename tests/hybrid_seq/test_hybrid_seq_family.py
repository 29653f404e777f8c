"""The optional task-family members (plain copying, single induction head) and the SC
noise-id OOD shift (spec §2.1, §2.5 item 7): exact layout, answers recomputed by brute force
from the inputs alone, the sampling distributions the docstrings state (χ² tests), seeding,
and bad input."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.hybrid_seq import (
    HybridLM,
    InductionHead,
    PlainCopying,
    SelectiveCopying,
    build_sc_hybrid,
    evaluate,
    evaluate_shift,
    min_state_bits,
    noise_shift_tasks,
)
from icml26.hybrid_seq.tasks import MARK, NOISE, PAD, SEP

P_MIN = 1e-3  # a correct sampler fails one of these χ² tests with probability ~1e-3 each


def _uniform_p(values: torch.Tensor, n_cells: int) -> float:
    counts = np.bincount(values.flatten().numpy(), minlength=n_cells)
    assert len(counts) == n_cells  # nothing outside the cells
    return float(stats.chisquare(counts).pvalue)


# --- plain copying ------------------------------------------------------------------------------


def test_plain_copying_layout_and_answers_are_the_string():
    task = PlainCopying(L=12, n_symbols=5)
    b = task.sample(300, generator=0)
    assert b.inputs.shape == (300, 25) == (300, task.seq_len) and task.vocab_size == 9
    string = b.inputs[:, :12]
    assert bool(((string >= 4) & (string < 9)).all())
    assert bool((b.inputs[:, 12] == SEP).all()) and bool((b.inputs[:, 13:] == MARK).all())
    assert not bool(b.mask[:, :13].any()) and bool(b.mask[:, 13:].all())
    assert torch.equal(b.targets[:, 13:], string)  # target at MARK j = x_j
    assert bool((b.targets[~b.mask] == PAD).all()) and not bool((b.inputs == PAD).any())


def test_plain_copying_teacher_forcing_feeds_the_previous_answer():
    b = PlainCopying(L=7, n_symbols=3, teacher_forcing=True).sample(50, generator=1)
    assert bool((b.inputs[:, 8] == MARK).all())
    assert torch.equal(b.inputs[:, 9:], b.targets[:, 8:-1])  # slot j > 1 holds x_{j-1}
    assert torch.equal(b.targets[:, 8:], b.inputs[:, :7])


def test_plain_copying_string_is_iid_uniform():
    V = 6
    b = PlainCopying(L=10, n_symbols=V).sample(4000, generator=2)
    s = b.inputs[:, :10] - 4
    assert _uniform_p(s, V) > P_MIN  # marginal
    assert _uniform_p(s[:, 3] * V + s[:, 4], V * V) > P_MIN  # neighbouring pair: independent


def test_plain_copying_state_bound_and_seeding():
    assert min_state_bits(PlainCopying(L=20, n_symbols=8)) == 60.0  # L·log2 V
    task = PlainCopying(L=9, n_symbols=4)
    a, b, c = task.sample(8, generator=3), task.sample(8, generator=3), task.sample(8, generator=4)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, c.inputs)


def test_plain_copying_rejects_bad_input():
    with pytest.raises(ValueError, match="PlainCopying: L must be an integer >= 1"):
        PlainCopying(L=0, n_symbols=3)
    with pytest.raises(ValueError, match="PlainCopying: n_symbols must be an integer >= 1"):
        PlainCopying(L=3, n_symbols=0)
    with pytest.raises(TypeError, match="teacher_forcing must be a bool"):
        PlainCopying(L=3, n_symbols=2, teacher_forcing=1)
    with pytest.raises(ValueError, match=r"batch_size must be an integer in \[1, "):
        PlainCopying(L=3, n_symbols=2).sample(0)


# --- single induction head ----------------------------------------------------------------------


def _brute_force_induction(row: list[int]) -> tuple[int, int]:
    """(position of the query's unique earlier occurrence, the token after it), from inputs only."""
    query, context = row[-1], row[:-1]
    hits = [s for s, tok in enumerate(context) if tok == query]
    assert len(hits) == 1, f"the query occurs {len(hits)} times in the context"
    assert hits[0] + 1 < len(context)  # the answer is inside the context
    return hits[0], context[hits[0] + 1]


def test_induction_head_target_is_determined_by_the_input():
    task = InductionHead(L=15, n_symbols=5)
    b = task.sample(500, generator=5)
    assert b.inputs.shape == (500, 16) == (500, task.seq_len) and task.vocab_size == 9
    assert bool(((b.inputs >= 4) & (b.inputs < 9)).all())
    assert not bool(b.mask[:, :-1].any()) and bool(b.mask[:, -1].all())
    assert bool((b.targets[:, :-1] == PAD).all())
    for row in range(500):
        _, answer = _brute_force_induction(b.inputs[row].tolist())
        assert int(b.targets[row, -1]) == answer != int(b.inputs[row, -1])  # b != a


def test_induction_head_distributions():
    L, V, n = 9, 4, 6000
    b = InductionHead(L=L, n_symbols=V).sample(n, generator=6)
    rows = [b.inputs[r].tolist() for r in range(n)]
    found = [_brute_force_induction(row) for row in rows]
    a = b.inputs[:, -1] - 4
    p = torch.tensor([pos for pos, _ in found])
    ans = b.targets[:, -1] - 4
    assert _uniform_p(a, V) > P_MIN  # trigger uniform over the V symbols
    assert _uniform_p(p, L - 1) > P_MIN  # its position uniform in [0, L - 2]
    # b uniform over the V - 1 symbols != a: its rank among them
    assert _uniform_p(ans - (ans > a).long(), V - 1) > P_MIN
    # every other context position: uniform over the symbols != a
    ranks = []
    for r, (pos, _) in enumerate(found):
        trig = int(a[r])
        for s, tok in enumerate(rows[r][:-1]):
            if s not in (pos, pos + 1):
                ranks.append(tok - 4 - int(tok - 4 > trig))
    assert _uniform_p(torch.tensor(ranks), V - 1) > P_MIN


def test_induction_head_smallest_case_and_seeding():
    b = InductionHead(L=2, n_symbols=2).sample(20, generator=7)  # context = a b, query a
    assert torch.equal(b.inputs[:, 0], b.inputs[:, 2]) and torch.equal(
        b.targets[:, 2], b.inputs[:, 1]
    )
    assert bool((b.inputs[:, 0] != b.inputs[:, 1]).all())
    task = InductionHead(L=10, n_symbols=6)
    assert torch.equal(task.sample(8, generator=8).inputs, task.sample(8, generator=8).inputs)
    assert not torch.equal(task.sample(8, generator=8).inputs, task.sample(8, generator=9).inputs)


def test_induction_head_rejects_bad_input():
    with pytest.raises(ValueError, match="InductionHead: L must be an integer >= 2"):
        InductionHead(L=1, n_symbols=4)
    with pytest.raises(ValueError, match="InductionHead: n_symbols must be an integer >= 2"):
        InductionHead(L=5, n_symbols=1)
    with pytest.raises(TypeError, match="L must be an integer"):
        InductionHead(L=5.0, n_symbols=3)
    with pytest.raises(TypeError, match="task must be a SelectiveCopying, PlainCopying or MQAR"):
        min_state_bits(InductionHead(L=5, n_symbols=3))


def test_evaluate_runs_the_new_tasks_at_other_lengths():
    model = HybridLM(vocab_size=9, d_model=8, pattern="SA", seed=0)
    for task in (PlainCopying(L=4, n_symbols=5), InductionHead(L=6, n_symbols=5)):
        res = evaluate(model, task, n=20, lengths=[task.L, 2 * task.L], batch_size=10)
        assert set(res) == {task.L, 2 * task.L}
        assert all(0.0 <= acc <= 1.0 and 0.0 <= seq <= acc for acc, seq in res.values())


# --- SC noise-id OOD shift ----------------------------------------------------------------------


def test_noise_shift_pair_differs_only_in_the_noise_ids():
    train_task, test_task = noise_shift_tasks(L=50, k=5, n_symbols=6)
    assert train_task.vocab_size == test_task.vocab_size == 4 + 6 + 3
    assert (train_task.noise_tokens, test_task.noise_tokens) == (1, 4)
    tr, te = train_task.sample(400, generator=10), test_task.sample(400, generator=10)
    # same seed: identical data positions, data symbols, answer slots, targets and mask
    assert torch.equal(tr.targets, te.targets) and torch.equal(tr.mask, te.mask)
    data = (tr.inputs >= 4) & (tr.inputs < 10)
    assert torch.equal(data, (te.inputs >= 4) & (te.inputs < 10))
    assert torch.equal(tr.inputs[data], te.inputs[data])
    assert torch.equal(tr.inputs[:, 50:], te.inputs[:, 50:])  # SEP and MARKs
    noise = ~data
    noise[:, 50:] = False
    assert bool((tr.inputs[noise] == NOISE).all())  # training never shows the extra ids
    shifted = te.inputs[noise]
    cell = torch.where(shifted == NOISE, 0, shifted - 9)  # NOISE, 10, 11, 12 -> 0..3
    assert _uniform_p(cell, 4) > P_MIN  # test noise uniform over the 4 ids


def test_evaluate_shift_matches_evaluate_and_constructed_hybrid_does_not_drop():
    train_task, test_task = noise_shift_tasks(L=24, k=3, n_symbols=5)
    model = HybridLM(vocab_size=train_task.vocab_size, d_model=8, pattern="SA", seed=1)
    res = evaluate_shift(model, train_task, test_task, n=60, batch_size=25, seed=3)
    iid = evaluate(model, train_task, n=60, batch_size=25, seed=3)[24]
    ood = evaluate(model, test_task, n=60, batch_size=25, seed=3)[24]
    assert (res.iid_acc, res.iid_seq_acc, res.ood_acc, res.ood_seq_acc) == (*iid, *ood)
    assert math.isclose(res.drop, iid[0] - ood[0])
    # the count-then-retrieve construction never looks at which noise id it reads
    for hard in (False, True):
        h = build_sc_hybrid(5, max_len=64, hard=hard, vocab_size=train_task.vocab_size)
        exact = evaluate_shift(h, train_task, test_task, n=100, seed=4)
        assert (exact.iid_acc, exact.ood_acc, exact.ood_seq_acc, exact.drop) == (1.0, 1.0, 1.0, 0.0)


def test_noise_shift_and_evaluate_shift_reject_bad_input():
    with pytest.raises(ValueError, match=r"train_noise must be in \[1, test_noise=2\]"):
        noise_shift_tasks(L=10, k=2, n_symbols=3, train_noise=3, test_noise=2)
    with pytest.raises(ValueError, match="test_noise must be an integer >= 1"):
        noise_shift_tasks(L=10, k=2, n_symbols=3, test_noise=0)
    with pytest.raises(ValueError, match=r"k must be in \[1, L=3\]"):
        noise_shift_tasks(L=3, k=4, n_symbols=3)
    train_task, _ = noise_shift_tasks(L=10, k=2, n_symbols=3)
    model = build_sc_hybrid(3, max_len=64, vocab_size=train_task.vocab_size)
    other = SelectiveCopying(L=10, k=2, n_symbols=3, noise_tokens=2)  # a smaller vocabulary
    with pytest.raises(ValueError, match=r"test_task\.vocab_size must equal"):
        evaluate_shift(model, train_task, other)
    with pytest.raises(TypeError, match="must be the same task type"):
        evaluate_shift(model, train_task, PlainCopying(L=3, n_symbols=3))
    with pytest.raises(TypeError, match="task must be an AbstractTask"):
        evaluate_shift(model, train_task, "sc")


@pytest.mark.parametrize(
    "task",
    [
        PlainCopying(L=3, n_symbols=2),
        InductionHead(L=3, n_symbols=2),
        SelectiveCopying(L=5, k=2, n_symbols=3),
    ],
)
def test_sample_names_a_bad_generator(task):
    owner = type(task).__name__
    with pytest.raises(TypeError, match=rf"{owner}\.sample: generator must be an int"):
        task.sample(2, generator=2.5)
    with pytest.raises(ValueError, match=rf"{owner}\.sample: generator must be an int seed in"):
        task.sample(2, generator=2**70)
    assert torch.equal(task.sample(3, generator=-1).inputs, task.sample(3, generator=-1).inputs)
