"""Benjamini–Hochberg, cycle breaking and the scores (§7.6, §7.7)."""

import itertools

import networkx as nx
import numpy as np
import pytest
from sklearn import metrics
from statsmodels.stats import multitest

from icml26.powerlaw_cd import benjamini_hochberg, f1_tnr, find_cycle, is_dag, make_acyclic


@pytest.mark.parametrize("seed", range(30))
def test_bh_matches_statsmodels_multipletests(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = np.where(rng.uniform(size=m) < 0.3, rng.uniform(0, 0.01, m), rng.uniform(size=m))
    p = np.round(p, 3)  # ties
    alpha = float(rng.choice([0.01, 0.05, 0.2]))
    expected = multitest.multipletests(p, alpha=alpha, method="fdr_bh")[0]
    np.testing.assert_array_equal(benjamini_hochberg(p, alpha), expected)


def test_bh_ignores_nan_entries():
    p = np.array([[np.nan, 0.001], [0.04, np.nan]])
    assert benjamini_hochberg(p, 0.05).tolist() == [[False, True], [True, False]]


def _random_graph(rng, n):
    A = (rng.uniform(size=(n, n)) < 0.35).astype(int)
    np.fill_diagonal(A, 0)
    cycle = rng.permutation(n)[: int(rng.integers(2, n + 1))]  # plant a cycle
    for a, b in itertools.pairwise([*cycle, cycle[0]]):
        A[a, b] = 1
    return A


@pytest.mark.parametrize("seed", range(25))
def test_make_acyclic_removes_only_max_p_edges_of_cycles(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    A = _random_graph(rng, n)
    P = rng.uniform(size=(n, n))
    P[rng.uniform(size=(n, n)) < 0.1] = np.nan  # NaN counts as 1
    out = make_acyclic(A, P)
    assert nx.is_directed_acyclic_graph(nx.DiGraph(out))
    assert np.all(out <= A)
    Pn = np.where(np.isnan(P), 1.0, P)
    cycles = list(nx.simple_cycles(nx.DiGraph(A)))
    for a, b in zip(*np.nonzero(A - out), strict=True):
        # the removed edge is the largest-p edge of some cycle of the input graph
        assert any(
            (a, b) in (edges := list(itertools.pairwise([*c, c[0]])))
            and Pn[a, b] == max(Pn[e] for e in edges)
            for c in cycles
        )


def test_make_acyclic_leaves_a_dag_unchanged():
    A = np.triu(np.ones((5, 5), dtype=int), k=1)
    np.testing.assert_array_equal(make_acyclic(A, np.random.default_rng(0).uniform(size=(5, 5))), A)


@pytest.mark.parametrize("seed", range(20))
def test_find_cycle_and_is_dag_agree_with_networkx(seed):
    rng = np.random.default_rng(seed)
    A = (rng.uniform(size=(5, 5)) < 0.25).astype(int)
    np.fill_diagonal(A, 0)
    cycle = find_cycle(A)
    assert is_dag(A) == nx.is_directed_acyclic_graph(nx.DiGraph(A)) == (cycle is None)
    if cycle is not None:
        assert all(A[e] for e in cycle) and cycle[0][0] == cycle[-1][1]


def test_f1_tnr_counts():
    truth = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    est = np.array([[0, 1, 0], [1, 0, 1], [1, 0, 0]])
    # TP=2, FP=2, FN=1, TN=1 over the 6 off-diagonal entries
    assert f1_tnr(truth, est) == (pytest.approx(4 / 7), pytest.approx(1 / 3))


def test_f1_matches_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(20):
        t, e = rng.integers(0, 2, (2, 4, 4))
        off = ~np.eye(4, dtype=bool)
        f1, tnr = f1_tnr(t, e)
        assert f1 == pytest.approx(metrics.f1_score(t[off], e[off], zero_division=0))
        assert tnr == pytest.approx(metrics.recall_score(1 - t[off], 1 - e[off], zero_division=0))
