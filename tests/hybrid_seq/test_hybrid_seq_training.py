"""Spec §7 item 8 (learning sanity, scaled down to test size) and the training API."""

import math

import pytest
import torch

from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    SelectiveCopying,
    SSMConfig,
    TrainConfig,
    build_sc_hybrid,
    evaluate,
    train,
)


def test_hybrid_learns_mqar_where_one_attention_layer_cannot():
    """The smoke run's thresholds on a smaller MQAR(L=16, n_kv=3): an induction head needs the
    SSM's shift; one attention layer stays near a guess among the 3 values in context."""
    task = MQAR(L=16, n_kv=3, n_keys=8, n_values=8, n_fillers=4)
    cfg = TrainConfig(steps=150, lr=1e-2, batch_size=32, warmup=20, seed=1)
    acc = {}
    for pattern, d, pos in (("SA", 16, None), ("A", 32, "rope")):
        model = HybridLM(
            task.vocab_size,
            d,
            pattern=pattern,
            pos_enc=pos,
            ssm=SSMConfig(d_state=4),
            scan="sequential",
            seed=0,
        )
        history = train(model, task, cfg)
        assert history.loss[-1] < history.loss[0]
        acc[pattern] = evaluate(model, task, n=500, seed=2)[16][0]
    assert acc["SA"] >= 0.80
    assert acc["SA"] >= acc["A"] + 0.30


def test_schedule_and_history():
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    model = HybridLM(task.vocab_size, 8, pattern="M", seed=0)
    cfg = TrainConfig(steps=10, lr=1e-2, batch_size=4, warmup=3, seed=0)
    hist = train(model, task, cfg)
    assert hist.lr[:3] == pytest.approx([1e-2 / 3, 2e-2 / 3, 1e-2])  # linear warm-up
    assert hist.lr[-1] == pytest.approx(1e-3)  # cosine down to 10 % of the peak
    assert all(0.0 <= a <= 1.0 for a in hist.accuracy) and len(hist.loss) == 10
    # same seeds, same model: training is reproducible
    again = train(HybridLM(task.vocab_size, 8, pattern="M", seed=0), task, cfg)
    assert again.loss == hist.loss


def test_weight_decay_skips_norms_biases_and_ssm_parameters():
    from icml26.hybrid_seq.training import _param_groups

    model = HybridLM(12, 16, pattern="SA", n_heads=2, pos_enc="learned", max_len=8)
    decay, no_decay = _param_groups(model, 0.1)
    names = {id(p): n for n, p in model.named_parameters()}
    decayed = {names[id(p)] for p in decay["params"]}
    assert not any(n.endswith(("A_log", ".D", "bias")) or "norm" in n for n in decayed)
    assert "position_table.weight" not in decayed and "head.weight" in decayed
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0


def test_evaluate_reports_token_and_sequence_accuracy_and_na_lengths():
    task = SelectiveCopying(L=20, k=3, n_symbols=5)
    assert evaluate(build_sc_hybrid(5, max_len=200), task, n=40, lengths=[20, 150]) == {
        20: (1.0, 1.0),
        150: (1.0, 1.0),
    }
    learned = HybridLM(task.vocab_size, 8, pattern="A", pos_enc="learned", max_len=24)
    result = evaluate(learned, task, n=20, lengths=[20, 21, 40])
    assert not math.isnan(result[20][0]) and math.isnan(result[21][0]) and math.isnan(result[40][1])
    # an untrained model: token accuracy >= sequence accuracy
    token, seq = evaluate(HybridLM(task.vocab_size, 8, seed=3), task, n=50)[20]
    assert 0.0 <= seq <= token <= 1.0


def test_training_rejects_bad_input():
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        TrainConfig(steps=0, lr=1e-3)
    with pytest.raises(ValueError, match=r"lr must be in \(0, inf\)"):
        TrainConfig(steps=5, lr=-1.0)
    with pytest.raises(ValueError, match="the task's vocab_size 24 must be <= the model's 10"):
        train(HybridLM(10, 8), task, TrainConfig(steps=1, lr=1e-3))
    with pytest.raises(TypeError, match="cfg must be a TrainConfig"):
        train(HybridLM(24, 8), task, {"steps": 1})
    with pytest.raises(TypeError, match="model must be a HybridLM"):
        evaluate(torch.nn.Linear(2, 2), task)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        evaluate(HybridLM(24, 8), task, n=0)
