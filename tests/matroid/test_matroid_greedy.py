"""Greedy max-weight basis (A1) against networkx's maximum spanning tree and exhaustive search,
its exact cost, rank closed forms, and the circuit-finding binary search (A5)."""

import itertools

import networkx as nx
import numpy as np
import pytest

from icml26.matroid import (
    CostCounter,
    GraphicMatroid,
    LinearMatroidGF2,
    UniformBlocks,
    UniformMatroid,
    find_circuit_lightest,
    greedy_basis,
    max_weight_basis,
    rank,
    weight_order,
)


@pytest.mark.parametrize("seed", range(5))
def test_max_weight_basis_equals_networkx_maximum_spanning_tree(seed):
    rng = np.random.default_rng(seed)
    G = nx.gnm_random_graph(40, 120, seed=seed)
    edges = list(G.edges())
    weights = rng.permutation(len(edges)).astype(float)  # distinct: the optimum is unique
    for (u, v), w in zip(edges, weights, strict=True):
        G[u][v]["weight"] = w
    T = nx.maximum_spanning_tree(G)
    basis = max_weight_basis(GraphicMatroid(edges), weights)
    assert {frozenset(edges[i]) for i in basis} == {frozenset(e) for e in T.edges()}


def test_max_weight_basis_is_optimal_by_exhaustive_search():
    rng = np.random.default_rng(0)
    M = LinearMatroidGF2(rng.integers(0, 2, (4, 10)))
    w = rng.random(10)
    bases = [S for S in itertools.combinations(range(10), rank(M)) if M.is_independent(list(S))]
    best = max(w[list(S)].sum() for S in bases)
    # Float sums of the same 4 numbers in different orders differ by a few ulps at most.
    assert w[max_weight_basis(M, w)].sum() == pytest.approx(best, rel=1e-12)


def test_greedy_cost_equals_sum_of_basis_sizes_plus_one():
    rng = np.random.default_rng(1)
    M = GraphicMatroid([tuple(rng.integers(0, 30, 2)) for _ in range(200)])
    w = rng.random(M.n)
    C = CostCounter(M)
    basis = max_weight_basis(C, w)
    in_basis = np.isin(weight_order(w), basis)
    sizes_before = np.concatenate([[0], np.cumsum(in_basis)[:-1]])  # |B_e| when e is examined
    assert C.total_cost == int((sizes_before + 1).sum())
    assert C.calls == M.n and C.max_query == int(sizes_before.max()) + 1


def test_uniform_greedy_cost_closed_form():
    for n, r in [(10, 3), (64, 32), (7, 7), (5, 0)]:
        C = CostCounter(UniformMatroid(n, r))
        greedy_basis(C)
        # r(r+1)/2 for the first r elements, then (r+1) for each of the others (r = 0: cost 1 each).
        assert C.total_cost == r * (r + 1) // 2 + (n - r) * (r + 1)


def test_rank_closed_forms():
    assert rank(UniformMatroid(9, 4)) == 4
    assert rank(UniformBlocks(nblocks=7, m=5, c=3)) == 7 * 2
    assert rank(UniformBlocks(nblocks=7, m=5, c=3), subset=[0, 1, 2, 5]) == 3
    assert rank(GraphicMatroid([(0, 0), (1, 2), (2, 1)])) == 1


def test_ties_are_broken_by_smaller_id():
    assert weight_order(np.array([1.0, 2.0, 2.0, 1.0])).tolist() == [1, 2, 0, 3]
    assert max_weight_basis(UniformMatroid(4, 2), [5.0, 5.0, 5.0, 5.0]) == [0, 1]
    assert max_weight_basis(UniformMatroid(4, 2)) == [0, 1]


@pytest.mark.parametrize("seed", range(10))
def test_find_circuit_lightest_returns_lightest_element_of_a_circuit(seed):
    rng = np.random.default_rng(seed)
    M = UniformBlocks(nblocks=6, m=4, c=3)
    Q = rng.choice(M.n, 13, replace=False).tolist()  # 13 > 6 blocks * 2: dependent by pigeonhole
    e = find_circuit_lightest(M, Q)
    j = Q.index(e) + 1
    assert M.is_independent(Q[: j - 1]) and not M.is_independent([*Q[: j - 1], e])
    assert e == Q[j - 1]  # the last, i.e. lightest, element of the prefix Q[:j]
    # The circuit through e inside Q[:j] lies in e's block: that block holds exactly c of Q[:j].
    assert sum(x // 4 == e // 4 for x in Q[:j]) == 3


def test_find_circuit_lightest_uses_log2_many_queries():
    C = CostCounter(UniformMatroid(64, 10))
    find_circuit_lightest(C, list(range(64)), known_dependent=True)
    assert C.calls == 6  # ⌈log2 64⌉


def test_find_circuit_lightest_rejects_independent_sets():
    with pytest.raises(ValueError, match="Q must be dependent"):
        find_circuit_lightest(UniformMatroid(5, 3), [0, 1])
