"""ROC-AUC, cross-entropy and the analytic multiply-add count of the predict step."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from icml26.taco import (
    TACOConfig,
    TACOModel,
    benchmark_inference,
    cross_entropy_nats,
    predict_macs,
    roc_auc,
)


def _softmax(logits):
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_roc_auc_equals_scikit_learn_when_every_class_is_present():
    rng = np.random.default_rng(0)
    proba = _softmax(rng.standard_normal((60, 4))).astype(np.float32)
    y = np.arange(60) % 4
    assert roc_auc(y, proba) == roc_auc_score(y, proba, multi_class="ovr", labels=range(4))
    assert roc_auc(y % 2, proba[:, :2]) == roc_auc_score(y % 2, proba[:, 1])


def test_roc_auc_averages_over_the_present_classes_where_scikit_learn_gives_nan():
    rng = np.random.default_rng(1)
    proba = _softmax(rng.standard_normal((30, 4)))
    y = np.arange(30) % 3  # class 3 never occurs
    expected = np.mean([roc_auc_score(y == c, proba[:, c]) for c in range(3)])
    assert roc_auc(y, proba) == pytest.approx(expected, rel=1e-15)
    with pytest.warns(Warning):
        assert np.isnan(roc_auc_score(y, proba, multi_class="ovr", labels=range(4)))


def test_cross_entropy_is_the_mean_negative_log_probability_with_a_floor():
    proba = np.array([[0.25, 0.75], [1.0, 0.0]])
    # row 0: -log 0.75; row 1: p(y=1) = 0 is floored at 1e-12
    expected = (-np.log(0.75) - np.log(1e-12)) / 2
    assert cross_entropy_nats(np.array([1, 1]), proba) == pytest.approx(expected, rel=1e-15)
    assert cross_entropy_nats(np.array([0]), np.array([[0.5, 0.5]])) == pytest.approx(np.log(2))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: roc_auc(np.zeros(3), np.full((3, 2), 0.5)), "at least two classes"),
        (lambda: roc_auc(np.array([0, 2]), np.full((2, 2), 0.5)), "y must hold class indices"),
        (lambda: roc_auc(np.array([0, 1]), np.full((3, 2), 0.5)), "one row per sample"),
        (lambda: roc_auc(np.array([0, 1]), np.full((2, 1), 0.5)), "proba must have >= 2"),
        (lambda: cross_entropy_nats(np.array([0, 1]), np.full((2, 2), np.nan)), "proba"),
    ],
)
def test_bad_scores_inputs_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_predict_macs_counts_projections_mlp_and_both_attentions():
    config = TACOConfig.small(emsize=8, nhead=2, nlayers=2)  # g = 2
    # 5 features -> 3 groups + the label token: C = 4 tokens per row
    C, E = 4, 8
    per_token = 16 * E * E + 2 * C * E
    expected = 2 * (7 * C * per_token + 2 * 7 * 11 * C * E)
    assert predict_macs(7, 11, 5, config) == expected
    # row attention is linear in the context: the difference of two contexts is exact
    assert predict_macs(7, 21, 5, config) - predict_macs(7, 11, 5, config) == 2 * 2 * 7 * 10 * C * E


def test_benchmark_inference_counts_every_test_batch():
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2))
    (cost,) = benchmark_inference(model, 100, (10.0,), n_test=25, batch_size=10, repeats=1)
    config, K = model.config, cost.n_latents
    batches = (10, 10, 5)
    assert cost.macs_pot == sum(predict_macs(100 + b, 100, 10, config) for b in batches)
    assert cost.macs_pot_cache == sum(predict_macs(b, 100, 10, config) for b in batches)
    assert cost.macs_taco == sum(predict_macs(K + b, K, 10, config) for b in batches)
    assert cost.macs_compress == predict_macs(100 + K, 100, 10, config)
    ticks = iter(range(1000))
    (timed,) = benchmark_inference(
        model, 100, (10.0,), n_test=25, batch_size=10, repeats=3, clock=lambda: next(ticks)
    )
    assert timed.time_pot == timed.time_taco == timed.time_compress == 1  # one tick per call
    assert timed.rounds_pot == timed.rounds_pot_cache == timed.rounds_taco == (1, 1, 1)
