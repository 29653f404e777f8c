"""Random instances (target tables, width-1 networks) and the classical depth-2 interpolant."""

from fractions import Fraction

import numpy as np
import pytest

from icml26.floatnet import (
    FloatFormat,
    build_depth3,
    is_monotone,
    random_table,
    random_width1_net,
    relu_interpolant,
)

F16 = FloatFormat(11, 15)


def test_random_table_draws_values_of_f_uniformly_and_reproducibly():
    fmt = FloatFormat(3, 3)
    table = random_table(fmt, 20_000, seed=0)
    assert np.array_equal(table, random_table(fmt, 20_000, seed=np.random.default_rng(0)))
    assert np.all(fmt.contains(table))
    values, counts = np.unique(table, return_counts=True)
    assert np.array_equal(values, np.unique(fmt.values()))  # every value of F shows up
    assert counts.max() / counts.min() < 2  # about 20000 / 55 = 364 each
    assert random_table(fmt, 0, seed=0).shape == (0,)
    with pytest.raises(TypeError, match="fmt must be a FloatFormat"):
        random_table("F(3,3)", 4)
    with pytest.raises(ValueError, match="n must be an integer"):
        random_table(fmt, -1)


def test_random_width1_nets_are_monotone_width_one_with_small_parameters():
    fmt = FloatFormat(3, 3)
    rng = np.random.default_rng(5)
    for _ in range(30):
        net = random_width1_net(fmt, 4, rng, bound=2.0)
        assert (net.width, net.depth) == (1, 4)
        assert all(np.abs(W).max() <= 2.0 and np.abs(b).max() <= 2.0 for W, b in net.layers)
        assert is_monotone(net)
    with pytest.raises(ValueError, match="bound must be in"):
        random_width1_net(fmt, 2, bound=0.0)
    with pytest.raises(ValueError, match="depth must be an integer"):
        random_width1_net(fmt, 0)


def test_interpolant_is_exact_in_real_arithmetic_and_its_float16_twin_is_not():
    rng = np.random.default_rng(0)
    x = np.sort(np.unique(F16.round(rng.uniform(0.0, 8.0, 256))))[:64]
    y = F16.round(rng.uniform(-1.0, 1.0, len(x)))
    interp = relu_interpolant(x, y)
    assert all(interp(t) == Fraction(v) for t, v in zip(x, y, strict=True))
    # between knots the exact interpolant is linear: the midpoint of two data points
    mid = (Fraction(x[0]) + Fraction(x[1])) / 2
    assert interp(float(mid)) == (Fraction(y[0]) + Fraction(y[1])) / 2
    net = interp.float_net(F16)
    assert (net.depth, net.width) == (2, len(x) - 1)
    assert np.mean(net(x[:, None]) != y) > 0  # rounding breaks the memoriser ...
    c3 = build_depth3(F16, 1, lambda D: y, domain=x[:, None])
    assert np.array_equal(c3(x[:, None], engine="sparse"), y)  # ... the depth-3 net does not


def test_interpolant_refuses_unsorted_or_mismatched_points():
    with pytest.raises(ValueError, match="x must be strictly increasing"):
        relu_interpolant([0.0, 0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="same length"):
        relu_interpolant([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="x must be finite"):
        relu_interpolant([0.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="y must be 1-D"):
        relu_interpolant([0.0, 1.0], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="x must be a 1-D array of numbers"):
        relu_interpolant(["a", "b"], [1.0, 2.0])
