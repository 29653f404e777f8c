"""Taxonomy counts and paths; SRCC/PLCC against scipy and their invariances; VQA accuracy."""

import numpy as np
import pytest
from scipy import stats

from icml26.unipercept import (
    Taxonomy,
    VQAItem,
    make_iaa_proxy,
    make_iqa_vqa,
    make_ista,
    parse_choice,
    vqa_accuracy,
    vr_metrics,
)


def test_counts_are_computed_from_the_enumerated_table():
    tax = Taxonomy.load_default()
    assert tax.counts() == {"domains": 3, "categories": 16, "criteria": 44}
    assert [len(tax.categories(d)) for d in tax.domains] == [8, 3, 5]
    assert sum(len(tax.criteria(c)) for c in tax.categories("IAA")) == 31
    abbreviations = [c.abbreviation for c in tax.all_categories]
    assert len(set(abbreviations)) == len(abbreviations)


def test_every_generated_vqa_item_is_on_a_valid_path():
    tax = Taxonomy.load_default()
    items = (make_iqa_vqa(6, seed=0, size=16) + make_ista(8, seed=0, size=16, task="vqa")
             + make_iaa_proxy(4, seed=0, size=16, task="vqa"))  # fmt: skip
    assert all(tax.contains(it.domain, it.category, it.criterion) for it in items)
    assert {it.domain for it in items} == {"IAA", "IQA", "ISTA"}


def test_invalid_path_is_refused():
    with pytest.raises(ValueError, match="taxonomy path"):
        VQAItem(np.zeros((8, 8, 3), np.float32), "IQA", "Physical Structure", "Base Morphology",
                "What", "?", ("a", "b"), "A")  # fmt: skip


def test_srcc_plcc_equal_scipy_on_random_data():
    rng = np.random.default_rng(0)
    p, g = rng.uniform(0, 100, 200), rng.uniform(0, 100, 200)
    m = vr_metrics(p, g)
    assert m["srcc"] == pytest.approx(stats.spearmanr(p, g).statistic, abs=1e-12)
    assert m["plcc"] == pytest.approx(stats.pearsonr(p, g).statistic, abs=1e-12)
    assert m["mean"] == pytest.approx((m["srcc"] + m["plcc"]) / 2, abs=1e-15)


def test_invariances_and_the_perfect_predictor():
    rng = np.random.default_rng(1)
    g = rng.uniform(0, 100, 100)
    p = g + rng.normal(0, 10, 100)
    base = vr_metrics(p, g)
    assert vr_metrics(np.exp(p / 20), g)["srcc"] == pytest.approx(base["srcc"], abs=1e-12)
    assert vr_metrics(3 * p + 7, g)["plcc"] == pytest.approx(base["plcc"], abs=1e-12)
    perfect = vr_metrics(g, g)
    assert perfect["srcc"] == pytest.approx(1.0) and perfect["plcc"] == pytest.approx(1.0)


def test_logistic_plcc_is_at_least_raw_plcc_on_a_sigmoid_relation():
    x = np.linspace(-3, 3, 80)
    g = 100 / (1 + np.exp(-2 * x))
    assert vr_metrics(x, g, logistic=True)["plcc"] > vr_metrics(x, g)["plcc"]


def test_parse_choice_and_grouped_accuracy():
    assert parse_choice(" b) …") == "B"
    items = make_iqa_vqa(6, seed=0, size=16)
    preds = [it.answer if i % 2 == 0 else "Z" for i, it in enumerate(items)]
    acc = vqa_accuracy(items, preds, by=("category",))
    assert acc["overall"] == pytest.approx(0.5)
    expected = {}
    for i, it in enumerate(items):
        expected.setdefault(it.category, []).append(i % 2 == 0)
    assert acc["category"] == {k: pytest.approx(np.mean(v)) for k, v in expected.items()}


def test_metric_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        vr_metrics(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="at least 2"):
        vr_metrics(np.zeros(1), np.zeros(1))
    # fuzz campaign 3: two points reached scipy's curve_fit, and 'yes' passed as a bool
    with pytest.raises(ValueError, match="at least 4 values for the 4-parameter logistic"):
        vr_metrics(np.array([0.0, 1.0]), np.array([0.0, 1.0]), logistic=True)
    with pytest.raises(TypeError, match="logistic must be a bool"):
        vr_metrics(np.array([0.0, 1.0]), np.array([0.0, 1.0]), logistic="yes")
    with pytest.raises(ValueError, match="one reply per item"):
        vqa_accuracy(make_iqa_vqa(2, seed=0, size=16), ["A"])
