"""Partition size: exact (A4) against the Edmonds/Nash-Williams min formula by exhaustive search,
first-fit's 2-approximation and cost bound (A3), and the covering number."""

import itertools
import math

import numpy as np
import pytest

from icml26.matroid import (
    CostCounter,
    GraphicMatroid,
    LinearMatroidGF2,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
    covering_number_exact,
    partition_size_exact,
    partition_size_first_fit,
    rank,
)


def random_matroid(rng, n):
    kind = int(rng.integers(4))
    if kind == 0:
        return LinearMatroidGF2(rng.integers(0, 2, (int(rng.integers(1, 5)), n)))
    if kind == 1:
        return GraphicMatroid(
            [tuple(rng.integers(0, int(rng.integers(2, 6)), 2)) for _ in range(n)]
        )
    if kind == 2:
        sets = [rng.choice(n, int(rng.integers(1, n + 1)), replace=False) for _ in range(3)]
        return TransversalMatroid(n, sets)
    return PartitionMatroid(rng.integers(0, 3, n), rng.integers(0, 3, 3))


def union_rank_by_formula(M, k):
    """min over A ⊆ E of |E \\ A| + k r(A), by exhaustive search."""
    return min(
        M.n - size + k * rank(M, list(A))
        for size in range(M.n + 1)
        for A in itertools.combinations(range(M.n), size)
    )


def check_sets(M, sets):
    flat = [e for s in sets for e in s]
    assert len(flat) == len(set(flat)), "sets must be disjoint"
    assert all(M.is_independent(s) for s in sets)
    return len(flat)


@pytest.mark.parametrize("seed", range(8))
def test_exact_partition_size_matches_min_formula_and_first_fit_is_half(seed):
    rng = np.random.default_rng(seed)
    M = random_matroid(rng, int(rng.integers(3, 9)))
    for k in (1, 2, 3):
        p, sets = partition_size_exact(M, k)
        assert p == check_sets(M, sets) == union_rank_by_formula(M, k)
        C = CostCounter(M)
        s, ff_sets = partition_size_first_fit(C, k)
        assert s == check_sets(M, ff_sets)
        assert math.ceil(p / 2) <= s <= p
        assert C.total_cost <= M.n * (M.n + k)
        if k == 1:
            assert p == s == rank(M)


def test_first_fit_is_strictly_suboptimal_on_a_triangle_with_a_parallel_edge():
    # Triangle e0, e1, e2 on vertices {0, 1, 2} plus e3 parallel to e2. First-fit puts e0, e1 in
    # I_1 and e2 in I_2, leaving no home for e3; the optimum is {e0, e2}, {e1, e3}.
    M = GraphicMatroid([(1, 0), (2, 0), (1, 2), (2, 1)])
    assert partition_size_first_fit(M, 2) == (3, [[0, 1], [2]])
    p, sets = partition_size_exact(M, 2)
    assert p == 4 and check_sets(M, sets) == 4


def test_covering_number_equals_max_ceil_ratio_and_least_full_k():
    rng = np.random.default_rng(3)
    for _ in range(6):
        n = int(rng.integers(3, 8))
        M = LinearMatroidGF2(np.vstack([np.ones(n, int), rng.integers(0, 2, (3, n))]))  # loopless
        chi = covering_number_exact(M)
        formula = max(
            math.ceil(len(S) / rank(M, list(S)))
            for size in range(1, n + 1)
            for S in itertools.combinations(range(n), size)
        )
        assert chi == formula
        assert partition_size_exact(M, chi)[0] == n
        assert chi == 1 or partition_size_exact(M, chi - 1)[0] < n
    assert covering_number_exact(UniformMatroid(10, 3)) == 4
    assert covering_number_exact(UniformMatroid(0, 0)) == 0


def test_covering_number_rejects_loops():
    with pytest.raises(ValueError, match="element 1 is a loop"):
        covering_number_exact(GraphicMatroid([(0, 1), (2, 2)]))
