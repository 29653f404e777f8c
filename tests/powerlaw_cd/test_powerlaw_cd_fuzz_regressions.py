"""Regressions for the fuzz findings of issue 16: bad input is refused at the public boundary with
a message naming the parameter, and sizes are bounded before allocation."""

import math

import numpy as np
import pytest

from icml26.powerlaw_cd import (
    Dataset,
    dataset_seed,
    f1_tnr,
    find_cycle,
    granger_pairwise,
    is_dag,
    lagged_design,
    load_airquality,
    load_csv_with_truth,
    load_rivers,
    make_acyclic,
    n_windows,
    powerlaw_noise,
    run_benchmark,
    simulate_ou,
    var_wald_test,
    window_frequencies,
    windowed_scores,
)

SIM = simulate_ou(3, 700, seed=0)
DATA = Dataset(SIM.X, SIM.adjacency, ("a", "b", "c"))
CELL = {"n_vars": 3, "length": 400}


def granger(X):
    return granger_pairwise(X, max_lags=2)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: load_rivers(None), "load_rivers: directory must be a path"),
        (lambda: load_airquality(3), "load_airquality: directory must be a path"),
        (lambda: load_csv_with_truth(None, "g.csv"), "load_csv_with_truth: csv must be a path"),
        (lambda: load_csv_with_truth("x.csv", 1.5), "load_csv_with_truth: truth must be a path"),
        (lambda: windowed_scores(None, granger), "dataset must be a Dataset"),
        (lambda: windowed_scores(DATA, None), "method must be callable"),
        (lambda: windowed_scores(DATA, lambda X: X, window=300), "method must return a CDResult"),
        (lambda: find_cycle({}), "find_cycle: adjacency must be an array"),
        (lambda: make_acyclic(np.zeros((2, 2)), {}), "make_acyclic: pvalues must be an array"),
        (lambda: powerlaw_noise(1.0, "x"), "shape must be a non-empty tuple of ints"),
        (lambda: powerlaw_noise(1.0, (2, 3.5)), "shape must be an integer"),
        (lambda: dataset_seed(None, 0), "dataset_seed: cell must be a mapping"),
        (lambda: dataset_seed({1: 2}, 0), "cell must be a mapping with string keys"),
        (lambda: run_benchmark(None, [CELL], [0]), "run_benchmark: methods must be a sequence"),
        (lambda: run_benchmark({"g": 1}, [CELL], [0]), r"methods\['g'\] must be callable"),
        (lambda: run_benchmark({"g": granger}, [3], [0]), "grid must be a mapping"),
        (lambda: run_benchmark({"g": granger}, [CELL], ["0"]), "seeds must be an integer"),
        (
            lambda: run_benchmark({"g": lambda X: None}, [CELL], [0], n_jobs=1),
            r"methods\['g'\] must return a CDResult",
        ),
        (lambda: Dataset(SIM.X, SIM.adjacency, "abc"), "names must be a tuple of strings"),
        (lambda: var_wald_test("y", np.zeros((1, 5)), 1), "target must be an array"),
    ],
)
def test_wrong_kinds_are_type_errors_naming_the_parameter(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: n_windows(100, 50, -1), r"stride must be an integer >= 1; got -1"),
        (lambda: n_windows(0, 0, 0), r"window must be an integer >= 1"),
        (lambda: n_windows(-5, 2, 1), r"length must be an integer >= 0"),
        (lambda: window_frequencies(2**31), r"window must be an integer in \[1, 16777216\]"),
        (lambda: window_frequencies(50, math.nan), "fmin must be in"),
        (lambda: is_dag(0.0), r"adjacency must be a square 2-D array; got shape \(\)"),
        (lambda: find_cycle([[0, math.nan], [0, 0]]), "adjacency must be finite"),
        (lambda: f1_tnr(0.0, 0.0), r"adj_true must be a square 2-D array"),
        (lambda: make_acyclic(np.zeros((2, 2)), np.zeros(3)), "pvalues must have the shape"),
        (lambda: powerlaw_noise(1e300, (2, 26)), r"exponent must be in \[0, 16\]"),
        (lambda: powerlaw_noise(1.0, (3, 2**31)), "shape must hold at most 33554432 values"),
        (lambda: simulate_ou(3, 10**9), r"n_vars \* length must be <= 33554432"),
        (lambda: simulate_ou(3, 500, noise_exponent=40.0), r"noise_exponent must be in"),
        (lambda: dataset_seed({}, -1), r"seed must be an integer >= 0; got -1"),
        (lambda: run_benchmark({"g": granger}, [{"x": 1}], [0]), "grid cells take simulate_ou"),
        (
            lambda: run_benchmark({"g": granger}, [{"n_vars": -3}], [0], n_jobs=1),
            r"grid cell \{'n_vars': -3\} is invalid",
        ),
        (lambda: run_benchmark({"g": granger}, [CELL], [0], n_jobs=2**31), "n_jobs must be an"),
        (lambda: lagged_design(np.zeros((4, 2)), 5), r"lags must be an integer in \[0, 4\]"),
        (lambda: lagged_design(np.zeros(()), 1), "Y must be 2-D"),
        # p = 0 has no restriction to test: χ²(0) would give a NaN p-value.
        (lambda: var_wald_test(np.zeros(9), np.zeros((1, 9)), 0), r"lags must be an integer"),
        (lambda: var_wald_test(np.zeros(9), np.zeros((1, 8)), 1), "drivers must have shape"),
        (lambda: var_wald_test(np.zeros(9), np.zeros((0, 9)), 1), "drivers must have shape"),
        (lambda: Dataset(SIM.X, np.zeros((2, 2)), ("a", "b", "c")), "adjacency must be"),
        (lambda: windowed_scores(DATA, granger, window=10**9), "window must be <= T"),
    ],
)
def test_bad_values_and_huge_sizes_are_value_errors_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_non_numeric_files_are_named(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n3,x\n")
    (tmp_path / "g.csv").write_text("cause,effect\na,b\n")
    with pytest.raises(ValueError, match="load_csv_with_truth: csv must hold numbers only"):
        load_csv_with_truth(tmp_path / "x.csv", tmp_path / "g.csv")
    with pytest.raises(FileNotFoundError):
        load_rivers(tmp_path / "missing")


def test_n_windows_is_the_number_of_window_starts():
    # Brute force: the starts 0, s, 2s, ... that leave a whole window.
    for length, window, stride in [
        (5000, 50, 1),
        (100, 50, 7),
        (49, 50, 1),
        (50, 50, 3),
        (0, 1, 1),
    ]:
        assert n_windows(length, window, stride) == len(range(0, length - window + 1, stride))


def test_valid_calls_are_unchanged():
    A = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    assert find_cycle(A) == [(0, 1), (1, 2), (2, 0)] and not is_dag(A)
    assert is_dag(make_acyclic(A, np.array([[1, 0.01, 1], [1, 1, 0.02], [0.5, 1, 1]])))
    assert powerlaw_noise(2.0, 64, seed=0).shape == (64,)  # an int shape is one time axis
    assert windowed_scores(DATA, granger, window=300).shape == (2, 2)
    df = run_benchmark({"g": granger}, [CELL], [0, 1], n_jobs=1)
    assert df.shape[0] == 2 and set(df["seed"]) == {0, 1}
