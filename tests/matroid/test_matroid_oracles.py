"""Oracle axioms (exhaustive on small instances), families against independent references, and
the cost accounting of CostCounter."""

import itertools

import networkx as nx
import numpy as np
import pytest

from icml26.matroid import (
    BudgetExceededError,
    CostCounter,
    DirectSum,
    GraphicMatroid,
    IndependenceOracle,
    LinearMatroidGF2,
    PartitionMatroid,
    TransversalMatroid,
    UniformBlocks,
    UniformMatroid,
)


def random_families(rng, n):
    """One random instance of every family on about n elements."""
    vertices = int(rng.integers(2, 5))
    return {
        "uniform": UniformMatroid(n, int(rng.integers(0, n + 1))),
        "blocks": UniformBlocks(nblocks=2, m=n // 2, c=int(rng.integers(2, n // 2 + 1))),
        "partition": PartitionMatroid(rng.integers(0, 3, n), rng.integers(0, 3, 3)),
        "graphic": GraphicMatroid([tuple(rng.integers(0, vertices, 2)) for _ in range(n)]),
        "linear": LinearMatroidGF2(rng.integers(0, 2, (3, n))),
        "transversal": TransversalMatroid(
            n, [rng.choice(n, int(rng.integers(1, n)), replace=False) for _ in range(3)]
        ),
        "direct_sum": DirectSum(
            [UniformMatroid(3, 1), GraphicMatroid([(0, 1), (1, 2), (0, 2), (0, 0)][: n - 3])]
        ),
    }


def independent_family(M):
    """All independent subsets, by exhaustive enumeration."""
    return {
        frozenset(S)
        for size in range(M.n + 1)
        for S in itertools.combinations(range(M.n), size)
        if M.is_independent(list(S))
    }


@pytest.mark.parametrize("trial", range(6))
def test_matroid_axioms_hold_exhaustively_for_every_family(trial):
    rng = np.random.default_rng(trial)
    for name, M in random_families(rng, n=int(rng.integers(4, 8)) // 2 * 2).items():
        family = independent_family(M)
        assert frozenset() in family, name
        for S in family:  # hereditary
            assert all(S - {e} in family for e in S), name
        for A, B in itertools.product(family, repeat=2):  # augmentation
            if len(A) < len(B):
                assert any(A | {e} in family for e in B - A), name


def forest_reference(edges):
    """Union–find forest test, written independently of the oracle."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for u, v in edges:
        ru, rv = find(u), find(v)
        if ru == rv:
            return False
        parent[ru] = rv
    return True


def test_graphic_oracle_matches_union_find_on_random_multigraphs():
    rng = np.random.default_rng(1)
    for _ in range(30):
        edges = [tuple(int(x) for x in rng.integers(0, 8, 2)) for _ in range(12)]
        M = GraphicMatroid(edges)
        for _ in range(20):
            Q = rng.choice(12, int(rng.integers(0, 13)), replace=False)
            assert M.is_independent(Q) == forest_reference([edges[i] for i in Q])


def test_graphic_rank_is_vertices_minus_components_from_networkx():
    from icml26.matroid import rank

    for seed in range(5):
        G = nx.gnm_random_graph(20, 30, seed=seed)
        M = GraphicMatroid.from_networkx(G)
        touched = G.subgraph({v for e in G.edges() for v in e})
        assert rank(M) == touched.number_of_nodes() - nx.number_connected_components(touched)


def test_linear_gf2_oracle_matches_exhaustive_xor_dependence():
    rng = np.random.default_rng(2)
    A = rng.integers(0, 2, (4, 9))
    M = LinearMatroidGF2(A)
    for size in range(6):
        for Q in itertools.combinations(range(9), size):
            # Dependent over GF(2) iff some non-empty subset of columns sums to zero mod 2.
            dependent = any(
                not (A[:, list(T)].sum(axis=1) % 2).any()
                for t in range(1, size + 1)
                for T in itertools.combinations(Q, t)
            )
            assert M.is_independent(list(Q)) == (not dependent)


def test_transversal_oracle_matches_networkx_bipartite_matching():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, k = 8, int(rng.integers(1, 6))
        sets = [rng.choice(n, int(rng.integers(1, n)), replace=False).tolist() for _ in range(k)]
        M = TransversalMatroid(n, sets)
        for _ in range(10):
            Q = rng.choice(n, int(rng.integers(0, n + 1)), replace=False).tolist()
            B = nx.Graph()
            B.add_nodes_from(("e", e) for e in Q)
            B.add_edges_from((("e", e), ("s", i)) for i, s in enumerate(sets) for e in s if e in Q)
            matching = nx.bipartite.hopcroft_karp_matching(B, top_nodes=[("e", e) for e in Q])
            covered = sum(1 for node in matching if node[0] == "e")
            assert M.is_independent(Q) == (covered == len(Q))


def test_partition_and_direct_sum_match_their_definitions():
    blocks, caps = np.array([0, 1, 1, 2, 2, 2]), np.array([1, 1, 2])
    P = PartitionMatroid(blocks, caps)
    S = DirectSum([UniformMatroid(1, 1), UniformMatroid(2, 1), UniformMatroid(3, 2)])
    for size in range(7):
        for Q in itertools.combinations(range(6), size):
            counts = np.bincount(blocks[list(Q)], minlength=3)
            assert P.is_independent(list(Q)) == bool(np.all(counts <= caps))
            assert S.is_independent(list(Q)) == P.is_independent(list(Q))
    assert DirectSum(*S.parts).n == S.n == 6


def test_uniform_blocks_circuits_have_exactly_c_elements():
    M = UniformBlocks(nblocks=2, m=4, c=3)
    circuits = [
        set(S)
        for size in range(1, 7)
        for S in itertools.combinations(range(8), size)
        if not M.is_independent(list(S))
        and all(M.is_independent(list(T)) for T in itertools.combinations(S, size - 1))
    ]
    assert circuits and all(len(C) == 3 and len({e // 4 for e in C}) == 1 for C in circuits)


def test_queries_may_be_lists_tuples_arrays_or_sets():
    M = GraphicMatroid([(0, 1), (1, 2), (2, 0)])
    C = CostCounter(M, cache=True)
    for Q in ([0, 1], (0, 1), np.array([1, 0]), {0, 1}, frozenset({1, 0})):
        assert M.is_independent(Q) and C.is_independent(Q)
    assert not M.is_independent({0, 1, 2})
    assert C.cache_hits == 4  # the same set five times, charged every time
    assert C.total_cost == 10


def test_families_satisfy_the_protocol():
    for M in random_families(np.random.default_rng(0), 6).values():
        assert isinstance(M, IndependenceOracle)
    assert isinstance(CostCounter(UniformMatroid(3, 1)), IndependenceOracle)


# ------------------------------------------------------------------ cost accounting


def test_cost_counter_charges_max_one_size_and_tracks_calls():
    C = CostCounter(UniformMatroid(10, 4))
    for Q in ([], [0], [1, 2, 3], list(range(7))):
        C.is_independent(Q)
    assert (C.total_cost, C.calls, C.max_query) == (1 + 1 + 3 + 7, 4, 7)
    C.reset()
    assert (C.total_cost, C.calls, C.max_query) == (0, 0, 0)


def test_cost_counter_custom_cost_and_nested_counters_agree():
    inner = CostCounter(UniformMatroid(10, 4), cost_fn=lambda s: s**2)
    outer = CostCounter(inner)
    outer.is_independent([0, 1, 2])
    outer.is_independent([])
    assert inner.total_cost == 9 + 0 and outer.total_cost == 3 + 1
    assert inner.calls == outer.calls == 2


def test_cost_counter_budget_raises_before_forwarding():
    base = CostCounter(UniformMatroid(10, 4))
    C = CostCounter(base, budget=5)
    C.is_independent([0, 1, 2, 3])
    with pytest.raises(BudgetExceededError, match="above the budget 5"):
        C.is_independent([0, 1])
    assert base.calls == 1 and C.total_cost == 4


def test_cost_counter_cache_hits_are_charged_by_default():
    base = CostCounter(UniformMatroid(10, 4))
    C = CostCounter(base, cache=True)
    assert C.is_independent([2, 1]) and C.is_independent([1, 2])
    assert (C.total_cost, C.cache_hits, base.calls) == (4, 1, 1)
    free = CostCounter(base, cache=True, charge_cache_hits=False)
    free.is_independent([3])
    free.is_independent([3])
    assert (free.total_cost, free.calls, free.cache_hits) == (1, 1, 1)
