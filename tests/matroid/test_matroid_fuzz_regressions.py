"""Regressions for the fuzz findings of issue 16: each kind of bad input is refused at the public
boundary with a message that names the parameter, before anything is allocated."""

import numpy as np
import pytest

from icml26.matroid import (
    MAX_GROUND_SET,
    CostCounter,
    DirectSum,
    GraphicMatroid,
    TransversalMatroid,
    UniformBlocks,
    UniformMatroid,
    check_oracle,
    fit_loglog_slope,
    lightest_in_dependent,
    run_scaling_experiment,
    weight_order,
)


def _greedy(oracle, weights, rng):
    return []


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: DirectSum(None), "parts must be oracles or one iterable"),
        (lambda: TransversalMatroid(3, 0), "sets must be a sequence"),
        (lambda: TransversalMatroid(3, [0]), r"sets\[0\] must be an iterable"),
        (lambda: TransversalMatroid(3, [[0.5]]), r"sets\[0\] must hold integer"),
        (lambda: GraphicMatroid(None), "edges must be a sequence"),
        (lambda: GraphicMatroid([([0], 1)]), "edge 0 of edges must hold hashable"),
        (lambda: run_scaling_experiment(lambda n, r: None, 8, {"g": _greedy}), "ns must be a"),
        (lambda: run_scaling_experiment(None, [8], {"g": _greedy}), "make_instance must be"),
        (lambda: run_scaling_experiment(lambda n, r: None, [8], {"g": 1}), "algorithms must"),
        (lambda: fit_loglog_slope({}, [1.0, 2.0]), "xs must be an array"),
        (lambda: weight_order({}), "weights must be a numeric 1-D array"),
        (lambda: weight_order(np.array(["a"])), "weights must be a numeric 1-D array"),
        (lambda: lightest_in_dependent(UniformMatroid(3, 1), 2.0), "Q must be a 1-D array"),
        (lambda: lightest_in_dependent(None, np.array([0, 1])), "oracle must be"),
    ],
)
def test_wrong_kinds_are_type_errors_naming_the_parameter(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: UniformMatroid(2**31, 1), r"n must be an integer in \[0, 100000000\]"),
        (lambda: TransversalMatroid(10**12, []), r"n must be an integer in \[0, 100000000\]"),
        (lambda: UniformBlocks(10**5, 10**5, 2), r"nblocks \* m must be an integer in \[0, "),
        (
            lambda: run_scaling_experiment(lambda n, r: None, [2**31], {"g": _greedy}),
            r"ns must be an integer in \[1, 100000000\]",
        ),
        (
            lambda: run_scaling_experiment(lambda n, r: None, [8], {"g": _greedy}, repeats=10**9),
            r"repeats must be an integer in \[1, 10000\]",
        ),
    ],
)
def test_huge_sizes_are_refused_before_allocation(call, match):
    assert MAX_GROUND_SET == 10**8
    with pytest.raises(ValueError, match=match):
        call()


def test_the_largest_ground_set_is_accepted():
    # np.zeros is lazily committed, so the bound itself costs no memory until queried.
    assert UniformMatroid(MAX_GROUND_SET, 2).is_independent([0, MAX_GROUND_SET - 1])


def test_messages_name_the_callers_parameter():
    with pytest.raises(TypeError, match="CostCounter: base must be an independence oracle"):
        CostCounter(None)
    with pytest.raises(TypeError, match="demo: thing must be an independence oracle"):
        check_oracle(3, owner="demo", name="thing")
    with pytest.raises(ValueError, match=r"Q must hold element ids in range\(0, 3\); got -1"):
        UniformMatroid(3, 1).is_independent([-1])


def test_empty_dependent_list_and_degenerate_fit_are_refused():
    # The empty set is independent, so no circuit (and no lightest element) exists in it.
    with pytest.raises(ValueError, match="Q must be a non-empty dependent list"):
        lightest_in_dependent(UniformMatroid(3, 1), np.array([], dtype=np.int64))
    # One distinct x: the slope of a vertical point cloud is undefined.
    with pytest.raises(ValueError, match="xs must hold at least two distinct values"):
        fit_loglog_slope([4.0, 4.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="weights must be finite"):
        weight_order(np.array([1.0, np.nan]))


def test_valid_calls_are_unchanged():
    # The public wrappers agree with their definition on ordinary input.
    assert weight_order([1.0, 3.0, 1.0]).tolist() == [1, 0, 2]
    assert lightest_in_dependent(UniformMatroid(6, 2), [5, 1, 3, 0]) == 3
    assert fit_loglog_slope([1, 2, 4], [3, 12, 48]) == pytest.approx(2.0, abs=1e-12)
    edges = np.array([[0, 1], [1, 2], [0, 2]])
    assert GraphicMatroid(edges).is_independent([0, 1]) is True
