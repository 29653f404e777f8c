"""Spec §7 items 5, 6: the constructions are exact, keep their margin, and count what they hold."""

import math

import pytest
import torch

from icml26.hybrid_seq import (
    MQAR,
    SelectiveCopying,
    build_ar_hybrid,
    build_sc_hybrid,
    build_sc_slot_ssm,
    count_params,
    evaluate,
    margin_beta,
    min_correct_weight,
    min_state_bits,
    working_memory,
)


def _correct_weight_sc(model, batch):
    """Attention weight on the data position of rank j at each answer slot j (B, k)."""
    ch = model.channels(batch.inputs)
    weights, rank, isdata = ch["attention"], ch["rank"], ch["isdata"]
    rows, cols = torch.nonzero(batch.mask, as_tuple=True)
    out = []
    for r, t in zip(rows.tolist(), cols.tolist(), strict=True):
        j = ch["slot"][r, t]
        s = torch.nonzero((rank[r] == j) & (isdata[r] == 1)).item()
        out.append(float(weights[r, t, s]))
    return torch.tensor(out)


@pytest.mark.parametrize("T_max", [64, 256, 1024])
def test_sc_hybrid_is_exact_with_the_soft_margin(T_max):
    k, V = 8, 16
    task = SelectiveCopying(L=T_max - 1 - k, k=k, n_symbols=V)
    model = build_sc_hybrid(V, max_len=T_max)
    batch = task.sample(10 if T_max == 1024 else 50, generator=T_max)
    pred = model(batch.inputs).argmax(-1)
    assert torch.equal(pred[batch.mask], batch.targets[batch.mask])
    # §2.4: right position weight >= 1 / (1 + e^-2) ≈ 0.881 for every T <= T_max
    assert float(_correct_weight_sc(model, batch).min()) >= 1 / (1 + math.exp(-2))
    # the public margin check agrees with the per-position reference above
    assert min_correct_weight(model, batch) == pytest.approx(
        float(_correct_weight_sc(model, batch).min())
    )
    hard = build_sc_hybrid(V, max_len=T_max, hard=True)
    assert torch.equal(hard(batch.inputs).argmax(-1)[batch.mask], batch.targets[batch.mask])


def test_sc_counter_equals_the_true_rank_at_every_data_position():
    task = SelectiveCopying(L=90, k=10, n_symbols=7)
    model = build_sc_hybrid(7, max_len=101)
    b = task.sample(30, generator=1)
    ch = model.channels(b.inputs)
    isdata = (b.inputs >= 4) & (b.inputs < 11)
    true_rank = isdata.long().cumsum(1)
    assert torch.equal(ch["rank"][isdata].long(), true_rank[isdata])
    marks = b.inputs == 3
    assert torch.equal(ch["slot"][marks].long(), marks.long().cumsum(1)[marks])


@pytest.mark.parametrize("T_max", [64, 256, 1024])
def test_ar_hybrid_is_exact_with_the_soft_margin(T_max):
    task = MQAR(L=T_max, n_kv=16, n_keys=64, n_values=64, n_fillers=32)
    model = build_ar_hybrid(64, 64, max_len=T_max, vocab_size=task.vocab_size)
    b = task.sample(10 if T_max == 1024 else 50, generator=T_max + 1)
    ch = model.channels(b.inputs)
    assert torch.equal(ch["logits"].argmax(-1)[b.mask], b.targets[b.mask])
    # the value right after the queried key in the kv prefix carries >= 0.881 of the weight
    rows, cols = torch.nonzero(b.mask, as_tuple=True)
    keys = b.inputs[rows, cols]
    kv = b.inputs[rows, : 2 * 16 : 2]
    value_pos = 2 * (kv == keys[:, None]).float().argmax(1) + 1
    weight = ch["attention"][rows, cols, value_pos]
    assert float(weight.min()) >= 1 / (1 + math.exp(-2))
    # the public margin check sums every earlier value after the key: at least this weight
    assert min_correct_weight(model, b) >= float(weight.min()) - 1e-6
    # prev channel is the one-hot of the previous key token
    prev = ch["prev"][0, 1:].argmax(-1) + 4
    is_key = (b.inputs[0, :-1] >= 4) & (b.inputs[0, :-1] < 68)
    assert torch.equal(prev[is_key], b.inputs[0, :-1][is_key])


def test_parameters_and_recurrent_state_do_not_depend_on_length():
    sc = [build_sc_hybrid(16, max_len=T) for T in (64, 256, 1024)]
    ar = [build_ar_hybrid(64, 64, max_len=T) for T in (64, 256, 1024)]
    for models in (sc, ar):
        assert len({count_params(m) for m in models}) == 1
        assert len({working_memory(m, 64).recurrent for m in models}) == 1
        per_length = zip(models, (64, 256, 1024), strict=True)
        assert len({working_memory(m, T).recurrent for m, T in per_length}) == 1
    assert working_memory(sc[0], 1000).recurrent == 2  # the two counters
    assert working_memory(ar[0], 1000).recurrent == 64  # one key one-hot in the shift register


def test_slot_writer_is_exact_with_k_times_v_state():
    k, V = 8, 16
    model = build_sc_slot_ssm(V, k)
    for L in (50, 500):
        task = SelectiveCopying(L=L, k=k, n_symbols=V)
        assert evaluate(model, task, n=100, seed=L)[L] == (1.0, 1.0)
    wm = working_memory(model, 1000)
    assert wm.ssm_state == 2 + k * V and wm.kv_cache == 0
    assert wm.ssm_state * 32 >= min_state_bits(SelectiveCopying(L=64, k=k, n_symbols=V))


@pytest.mark.parametrize(
    "build",
    [
        lambda: build_sc_hybrid(6, max_len=60),
        lambda: build_sc_hybrid(6, max_len=60, hard=True),
        lambda: build_sc_slot_ssm(6, 5),
    ],
)
def test_sc_streaming_step_equals_forward(build):
    model = build()
    b = SelectiveCopying(L=40, k=5, n_symbols=6).sample(4, generator=2)
    full = model(b.inputs)
    cache, steps = None, []
    for t in range(b.inputs.shape[1]):
        logits, cache = model.step(b.inputs[:, t], cache)
        steps.append(logits)
    torch.testing.assert_close(torch.stack(steps, 1), full, rtol=0, atol=1e-6)


def test_ar_streaming_step_equals_forward():
    task = MQAR(L=48, n_kv=6, n_keys=12, n_values=12, n_fillers=4)
    model = build_ar_hybrid(12, 12, max_len=48, vocab_size=task.vocab_size)
    b = task.sample(3, generator=3)
    cache, steps = None, []
    for t in range(48):
        logits, cache = model.step(b.inputs[:, t], cache)
        steps.append(logits)
    torch.testing.assert_close(torch.stack(steps, 1), model(b.inputs), rtol=0, atol=1e-6)


def test_min_state_bits_closed_forms():
    assert min_state_bits(SelectiveCopying(L=64, k=8, n_symbols=16)) == 8 * 4
    iid = MQAR(L=64, n_kv=4, n_keys=8, n_values=10, n_fillers=2, values_iid=True)
    assert math.isclose(min_state_bits(iid), 4 * math.log2(10))
    perm = MQAR(L=64, n_kv=4, n_keys=8, n_values=10, n_fillers=2)
    assert math.isclose(min_state_bits(perm), math.log2(10 * 9 * 8 * 7))
    # the bound grows linearly in n_kv while the constructed hybrid's state does not move
    bounds = [min_state_bits(MQAR(128, n, 64, 64, 8)) for n in (4, 8, 16)]
    assert bounds[0] < bounds[1] < bounds[2]


def test_margin_beta_gives_the_bound():
    for T in (2, 64, 1024):
        beta = margin_beta(T)
        assert 1 / (1 + (T - 1) * math.exp(-beta)) >= 1 / (1 + math.exp(-2))


def test_builders_reject_bad_input():
    with pytest.raises(ValueError, match="max_len must be an integer >= 1"):
        build_sc_hybrid(4, max_len=0)
    with pytest.raises(ValueError, match="n_symbols must be an integer >= 1"):
        build_sc_hybrid(0, max_len=10)
    with pytest.raises(ValueError, match="max_len must be an integer >= 1"):
        build_ar_hybrid(4, 4, max_len=0)
    with pytest.raises(ValueError, match="vocab_size must be >= 12"):
        build_ar_hybrid(4, 4, max_len=8, vocab_size=5)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        build_sc_slot_ssm(4, 0)
    model = build_sc_hybrid(4, max_len=10)
    with pytest.raises(ValueError, match=r"exact up to max_len=10; got a sequence of length 11"):
        model(torch.ones(1, 11, dtype=torch.long))
    with pytest.raises(ValueError, match="0 is PAD"):
        model(torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="min_state_bits: task must be"):
        min_state_bits("SC")


def test_min_correct_weight_rejects_bad_input():
    task = SelectiveCopying(L=20, k=3, n_symbols=5)
    batch = task.sample(4, generator=0)
    with pytest.raises(TypeError, match="model must be a ConstructedSCHybrid"):
        min_correct_weight(build_sc_slot_ssm(5, 3), batch)
    with pytest.raises(TypeError, match="batch must be a Batch"):
        min_correct_weight(build_sc_hybrid(5, max_len=32), batch.inputs)
    unscored = type(batch)(batch.inputs, batch.targets, torch.zeros_like(batch.mask))
    with pytest.raises(ValueError, match=r"batch\.mask must score at least one position"):
        min_correct_weight(build_sc_hybrid(5, max_len=32), unscored)
