"""Bad inputs fail early with messages that name the parameter and what is allowed."""

import numpy as np
import pytest

from icml26.powerlaw_cd import (
    benjamini_hochberg,
    f1_tnr,
    granger_on_features,
    granger_pairwise,
    make_acyclic,
    placy,
    powerlaw_features,
    run_benchmark,
    simulate_ou,
)

X = np.random.default_rng(0).standard_normal((3, 200))


def test_series_too_short_for_window_and_lags():
    # T = W + p + 1 is one sample short of the spec's rule T >= W + p + 2
    with pytest.raises(ValueError, match="placy: X is too short"):
        placy(X[:, : 50 + 20 + 1], max_lags=20, window=50)
    placy(np.random.default_rng(1).standard_normal((2, 50 + 3 + 2)), max_lags=3, window=50)
    with pytest.raises(ValueError, match="granger_pairwise: X is too short"):
        granger_pairwise(X[:, :22], max_lags=20)
    with pytest.raises(ValueError, match="T must be >= window"):
        powerlaw_features(X[:, :40], window=50)


def test_nan_in_x():
    bad = X.copy()
    bad[1, 5] = np.nan
    for fn in (placy, granger_pairwise, powerlaw_features):
        with pytest.raises(ValueError, match="X must be finite; got 1 NaN/inf"):
            fn(bad)


def test_fewer_than_two_variables_or_wrong_rank():
    with pytest.raises(ValueError, match=r"placy: X must have N >= 2 variables"):
        placy(X[:1])
    with pytest.raises(ValueError, match=r"X must be 2-D of shape \(N, T\)"):
        granger_pairwise(X[0])
    with pytest.raises(TypeError, match="placy: X must be an array of float64; got list"):
        placy([["a", "b"], ["c", "d"]])


@pytest.mark.parametrize(("name", "value", "error"), [
    ("window", 0, ValueError), ("window", -5, ValueError), ("stride", 0, ValueError),
    ("window", 2.5, TypeError), ("max_lags", 0, ValueError),
])  # fmt: skip
def test_non_positive_window_stride_lags(name, value, error):
    with pytest.raises(error, match=f"placy: {name} must be an integer"):
        placy(X, **{name: value})


def test_window_too_small_for_a_line_fit():
    with pytest.raises(ValueError, match="window must leave >= 2 frequencies"):
        powerlaw_features(X, window=5)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_alpha_outside_the_open_unit_interval(alpha):
    with pytest.raises(ValueError, match=r"placy: alpha must be in \(0, 1\)"):
        placy(X, max_lags=2, window=20, alpha=alpha)
    with pytest.raises(ValueError, match=r"benjamini_hochberg: alpha must be in \(0, 1\)"):
        benjamini_hochberg([0.1], alpha)


def test_unknown_fdr_method():
    with pytest.raises(ValueError, match="fdr must be one of 'none', 'bh'; got 'holm'"):
        placy(X, max_lags=2, window=20, fdr="holm")


def test_pvalues_outside_unit_interval_and_shape_mismatches():
    with pytest.raises(ValueError, match=r"pvalues must be in \[0, 1\]"):
        benjamini_hochberg([0.1, 1.2])
    with pytest.raises(ValueError, match="adjacency must be a square 2-D array"):
        make_acyclic(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"adj_est must have the shape of adj_true \(2, 2\)"):
        f1_tnr(np.ones((2, 2)), np.ones((3, 3)))


def test_simulator_parameters():
    with pytest.raises(ValueError, match=r"simulate_ou: p_edge must be in \[0, 1\]"):
        simulate_ou(3, 500, p_edge=1.5)
    with pytest.raises(ValueError, match="simulate_ou: length must be > n_vars"):
        simulate_ou(3, 16, lag=5)
    with pytest.raises(ValueError, match="simulate_ou: normalize must be one of"):
        simulate_ou(3, 500, normalize="max")
    with pytest.raises(TypeError, match="seed must be an int"):
        simulate_ou(3, 500, seed="zero")


def test_non_numeric_inputs_of_the_building_blocks():
    with pytest.raises(TypeError, match="granger_on_features: targets must be an array"):
        granger_on_features([["a"]], X[:, None, :])
    with pytest.raises(TypeError, match="benjamini_hochberg: pvalues must be an array"):
        benjamini_hochberg(["low"])


def test_benchmark_arguments():
    with pytest.raises(ValueError, match="run_benchmark: grid must not be empty"):
        run_benchmark({"g": granger_pairwise}, [], [0])


def test_a_transposed_numpy_array_gets_a_clear_message():
    """Issue 49: a T x N array (pandas' layout) given as numpy, and a square one, are refused
    with the orientation named, not as 'T too short'; the transposed array runs."""
    import numpy as np

    from icml26.powerlaw_cd import granger_pairwise, placy

    x = np.random.default_rng(0).standard_normal((400, 3))  # T x N
    for method in (placy, granger_pairwise):
        with pytest.raises(ValueError, match=r"array X is \(N, T\).*pass X\.T"):
            method(x)
    with pytest.raises(ValueError, match=r"square"):
        placy(np.zeros((5, 5)))
    assert granger_pairwise(x.T, max_lags=2).adjacency.shape == (3, 3)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("alpha", 1.5, r"alpha must be in \[0, 1\]"),
        ("data", ("nope",), "data must be one of"),
        ("n_seeds", 0, "n_seeds must be an integer"),
        ("strengths", (float("nan"),), "strengths must be"),
    ],
)
def test_grid_config_refuses_bad_fields(field, value, match):
    """Issue 40: a bad --set fails when the CLI builds the config (exit 2), naming the field."""
    import dataclasses

    from icml26.powerlaw_cd.experiments.grid import GRID_PRESETS

    with pytest.raises((ValueError, TypeError), match=match):
        dataclasses.replace(GRID_PRESETS["quick"], **{field: value})
