"""The bounded-circuit algorithm is Las Vegas: it returns the greedy basis on every family and
seed, even when the circuit bound c is violated; only its cost depends on c."""

import networkx as nx
import numpy as np
import pytest

from icml26.matroid import (
    CostCounter,
    DirectSum,
    GraphicMatroid,
    LinearMatroidGF2,
    PartitionMatroid,
    TransversalMatroid,
    UniformBlocks,
    UniformMatroid,
    bounded_circuit_max_weight_basis,
    max_weight_basis,
    rank,
)


def instances(rng):
    graph = nx.gnm_random_graph(30, 90, seed=int(rng.integers(1000)))
    return [
        (UniformBlocks(nblocks=100, m=2, c=2), 2),
        (UniformBlocks(nblocks=60, m=4, c=3), 3),
        (PartitionMatroid(rng.integers(0, 10, 150), rng.integers(0, 5, 10)), 6),
        (GraphicMatroid.from_networkx(graph), 3),  # circuits up to 30: bound violated
        (GraphicMatroid([(0, 1), (0, 1), (1, 2), (2, 0), (3, 3), (4, 5), (4, 5)] * 5), 3),
        (LinearMatroidGF2(rng.integers(0, 2, (12, 80))), 2),  # unbounded circuits
        (TransversalMatroid(40, [rng.choice(40, 6, replace=False) for _ in range(15)]), 2),
        (DirectSum([UniformMatroid(20, 5), UniformBlocks(10, 3, 2)]), 2),
        (UniformMatroid(12, 5), 2),  # circuits of size 6 > c = 2 (spec §7)
        (UniformMatroid(0, 0), 2),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_equals_greedy_basis_on_every_family(seed):
    rng = np.random.default_rng(seed)
    for M, c in instances(rng):
        w = rng.permutation(M.n).astype(float)
        expected = max_weight_basis(M, w)
        result = bounded_circuit_max_weight_basis(M, w, c, seed=rng)
        assert result == expected, type(M).__name__
        assert M.is_independent(result) and len(result) == rank(M)


def test_equals_greedy_with_tied_weights_and_other_schedules():
    rng = np.random.default_rng(5)
    M = UniformBlocks(nblocks=80, m=4, c=3)
    w = rng.integers(0, 5, M.n).astype(float)  # many ties: broken by smaller id
    expected = max_weight_basis(M, w)
    for q0, growth in [(None, 2.0), (1, 1.5), (50, 3.0), (10_000, 2.0)]:
        assert bounded_circuit_max_weight_basis(M, w, 3, seed=1, q0=q0, growth=growth) == expected


def test_same_seed_gives_same_cost():
    M = UniformBlocks(nblocks=300, m=2, c=2)
    w = np.random.default_rng(0).random(M.n)
    costs = []
    for _ in range(2):
        C = CostCounter(M)
        bounded_circuit_max_weight_basis(C, w, 2, seed=7)
        costs.append((C.total_cost, C.calls))
    assert costs[0] == costs[1]


def test_beats_greedy_cost_for_c2_at_moderate_n():
    # At n = 2^13 the spec's prototype measured greedy/sampling ≈ 1.44; 1.1 leaves room for
    # seed-to-seed variation (a deterministic property of this fixed seed, not a timing).
    M = UniformBlocks(nblocks=4096, m=2, c=2)
    w = np.random.default_rng(0).random(M.n)
    greedy, sampling = CostCounter(M), CostCounter(M)
    max_weight_basis(greedy, w)
    bounded_circuit_max_weight_basis(sampling, w, 2, seed=0)
    assert greedy.total_cost / sampling.total_cost > 1.1
