"""Spec §7 item 8 (learning sanity, scaled down to test size) and the training API."""

import math

import pytest
import torch

from icml26.core import NonFiniteLossError
from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    SelectiveCopying,
    SSMConfig,
    TrainConfig,
    build_sc_hybrid,
    evaluate,
    train,
    train_lr_search,
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


def test_train_reports_progress_and_stops_on_a_non_finite_loss():
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    cfg = TrainConfig(steps=3, lr=1e-3, batch_size=4, warmup=1)
    seen = []
    hist = train(
        HybridLM(task.vocab_size, 8, seed=0), task, cfg, progress=lambda *a: seen.append(a)
    )
    assert [(done, total) for done, total, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [m["loss"] for _, _, m in seen] == hist.loss
    broken = HybridLM(task.vocab_size, 8, seed=0)
    with torch.no_grad():
        broken.head.weight.fill_(math.nan)
    with pytest.raises(NonFiniteLossError, match="train: the loss is nan at step 0"):
        train(broken, task, cfg)


def test_lr_search_keeps_the_best_validation_run_and_matches_separate_runs():
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    cfg = TrainConfig(steps=20, lr=1.0, batch_size=16, warmup=2, seed=3)

    def make_model():
        return HybridLM(task.vocab_size, 16, pattern="SA", seed=0)

    seen = []
    report = lambda *a: seen.append(a)  # noqa: E731
    lrs = (1e-4, 1e-2)
    best = train_lr_search(make_model, task, cfg, lrs, n_val=64, val_seed=5, progress=report)
    assert [done for done, _, _ in seen] == list(range(1, 41)) and seen[-1][1] == 40
    expected = {}
    for lr in (1e-4, 1e-2):
        model = make_model()
        train(model, task, TrainConfig(steps=20, lr=lr, batch_size=16, warmup=2, seed=3))
        expected[lr] = evaluate(model, task, n=64, seed=5)[16][0]
    assert best.val_acc_by_lr == expected
    assert best.lr == max(expected, key=expected.get) and best.val_acc == expected[best.lr]
    again = evaluate(best.model, task, n=64, seed=5)[16][0]
    assert again == best.val_acc


def test_lr_search_rejects_bad_input():
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    cfg = TrainConfig(steps=1, lr=1e-3, batch_size=4, warmup=0)
    make = lambda: HybridLM(task.vocab_size, 8, seed=0)  # noqa: E731
    with pytest.raises(TypeError, match="make_model must be a callable that builds a fresh model"):
        train_lr_search(HybridLM(24, 8), task, cfg, (1e-3,))
    with pytest.raises(ValueError, match="lrs must hold 1 to 64 learning rates"):
        train_lr_search(make, task, cfg, ())
    with pytest.raises(ValueError, match=r"lrs\[1\] must be in \(0, inf\)"):
        train_lr_search(make, task, cfg, (1e-3, 0.0))
    with pytest.raises(TypeError, match="model must be a HybridLM"):
        train_lr_search(lambda: torch.nn.Linear(2, 2), task, cfg, (1e-3,))
