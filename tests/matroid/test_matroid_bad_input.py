"""Bad inputs raise clear ValueError/TypeError messages in the core's one shape."""

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
    find_circuit_lightest,
    fit_loglog_slope,
    greedy_basis,
    max_weight_basis,
    partition_size_exact,
    partition_size_first_fit,
    rank,
    run_scaling_experiment,
)

M = UniformMatroid(5, 2)


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ([1.0, 2.0], ValueError, r"weights must have shape \(5,\)"),
        ([1.0, 2.0, np.nan, 0.0, 1.0], ValueError, "weights must be finite"),
        ([1.0, 2.0, np.inf, 0.0, 1.0], ValueError, "weights must be finite"),
        (["a", "b", "c", "d", "e"], TypeError, "weights must be numeric"),
        (np.ones((5, 1)), ValueError, "weights must have shape"),
    ],
)
def test_bad_weights(weights, error, match):
    with pytest.raises(error, match=match):
        max_weight_basis(M, weights)
    with pytest.raises(error, match=match):
        bounded_circuit_max_weight_basis(M, weights, 2)


@pytest.mark.parametrize(
    ("Q", "error", "match"),
    [
        ([0, 5], ValueError, r"Q must hold element ids in range\(0, 5\); got 5"),
        ([-1], ValueError, "got -1"),
        ([1, 1], ValueError, "must not repeat an element id"),
        ([0.5], TypeError, "Q must hold integer ids"),
        ([[0, 1]], ValueError, "Q must be a 1-D sequence"),
    ],
)
def test_bad_queries(Q, error, match):
    for oracle in (M, GraphicMatroid([(0, 1)] * 5), LinearMatroidGF2(np.eye(5, dtype=int))):
        with pytest.raises(error, match=match):
            oracle.is_independent(Q)


def test_bad_element_lists_in_algorithms():
    with pytest.raises(ValueError, match=r"order must hold ids in range\(0, 5\)"):
        greedy_basis(M, order=[0, 7])
    with pytest.raises(ValueError, match="order must not repeat"):
        greedy_basis(M, order=[0, 0])
    with pytest.raises(ValueError, match=r"subset must hold ids|order must hold ids"):
        rank(M, [9])
    with pytest.raises(ValueError, match="Q must hold ids"):
        find_circuit_lightest(M, [0, 1, 9])


@pytest.mark.parametrize("c", [1, 0, -3])
def test_circuit_bound_below_two(c):
    with pytest.raises(ValueError, match=r"c must be an integer >= 2"):
        bounded_circuit_max_weight_basis(M, np.ones(5), c)


def test_bad_schedule_parameters():
    with pytest.raises(TypeError, match="c must be an integer"):
        bounded_circuit_max_weight_basis(M, np.ones(5), 2.5)
    with pytest.raises(ValueError, match=r"growth must be in \(1, inf\)"):
        bounded_circuit_max_weight_basis(M, np.ones(5), 2, growth=1.0)
    with pytest.raises(ValueError, match="q0 must be an integer >= 1"):
        bounded_circuit_max_weight_basis(M, np.ones(5), 2, q0=0)
    with pytest.raises(TypeError, match="seed must be"):
        bounded_circuit_max_weight_basis(M, np.ones(5), 2, seed="zero")


class NotAnOracle:
    n = 3


@pytest.mark.parametrize("bad", [NotAnOracle(), "matroid", None, [0, 1]])
def test_non_oracle_objects(bad):
    for call in (
        lambda: max_weight_basis(bad),
        lambda: bounded_circuit_max_weight_basis(bad, np.ones(3), 2),
        lambda: rank(bad),
        lambda: partition_size_first_fit(bad, 2),
        lambda: partition_size_exact(bad, 2),
        lambda: CostCounter(bad),
        lambda: DirectSum([M, bad]),
    ):
        # The message names the caller's parameter: oracle, CostCounter's base, DirectSum's parts.
        with pytest.raises(TypeError, match=r"(oracle|base|parts) must be an independence oracle"):
            call()


def test_oracle_with_bad_n():
    class Weird:
        n = -1

        def is_independent(self, Q):
            return True

    with pytest.raises(
        TypeError, match=r"oracle.n, the oracle's ground-set size, must be an integer >= 0; got -1"
    ):
        max_weight_basis(Weird())


def test_bad_family_parameters():
    with pytest.raises(ValueError, match=r"UniformMatroid: r must be <= n = 3; got 4"):
        UniformMatroid(3, 4)
    with pytest.raises(ValueError, match=r"UniformBlocks: c must be an integer >= 2"):
        UniformBlocks(4, 2, 1)
    with pytest.raises(ValueError, match=r"UniformBlocks: m must be an integer >= 3"):
        UniformBlocks(4, 2, 3)
    with pytest.raises(ValueError, match=r"block ids must be in range\(0, 2\)"):
        PartitionMatroid([0, 2], [1, 1])
    with pytest.raises(ValueError, match="caps must be >= 0"):
        PartitionMatroid([0, 1], [1, -1])
    with pytest.raises(TypeError, match="blocks must be a 1-D sequence of integers"):
        PartitionMatroid([0.5], [1])
    with pytest.raises(ValueError, match="matrix must be 2-D with entries 0/1"):
        LinearMatroidGF2([[0, 2]])
    with pytest.raises(ValueError, match=r"sets\[0\] holds 4, outside range\(0, 3\)"):
        TransversalMatroid(3, [[0, 4]])
    with pytest.raises(ValueError, match="edge 1 of edges must be a pair"):
        GraphicMatroid([(0, 1), (0, 1, 2)])
    with pytest.raises(ValueError, match="parts must hold at least one oracle"):
        DirectSum([])
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        partition_size_first_fit(M, 0)


def test_bad_cost_counter_arguments():
    with pytest.raises(TypeError, match="cost_fn must be callable"):
        CostCounter(M, cost_fn=3)
    with pytest.raises(ValueError, match="budget must be a number >= 0"):
        CostCounter(M, budget=-1)


def test_bad_scaling_arguments(tmp_path):
    with pytest.raises(ValueError, match="xs and ys must be positive"):
        fit_loglog_slope([1, 2], [0, 1])
    with pytest.raises(ValueError, match="same length >= 2"):
        fit_loglog_slope([1], [1])
    with pytest.raises(ValueError, match="one count per n"):
        run_scaling_experiment(lambda n, r: (M, np.ones(5)), [4, 8], {}, repeats=[1])
    with pytest.raises(FileNotFoundError, match="no such file"):
        GraphicMatroid.from_edgelist(tmp_path / "missing.txt")
