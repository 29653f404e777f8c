"""Exhaustive exactness of the constructions on toy formats, sizes, and bad inputs."""

import numpy as np
import pytest

from icml26.floatnet import (
    ORDERS,
    FloatFormat,
    build_binary_code_net,
    build_depth2_integer,
    build_depth3,
    build_narrow,
    stratified_sample,
    verify,
)


def _table(fmt, n, seed):
    return np.random.default_rng(seed).choice(fmt.values(), n)


@pytest.mark.parametrize(("p", "emax", "d"), [(3, 3, 1), (2, 3, 2), (4, 4, 1), (3, 4, 1)])
def test_depth3_is_exact_on_every_input_in_every_order(p, emax, d):
    fmt = FloatFormat(p, emax)
    X = fmt.grid(d)
    f = _table(fmt, len(X), p + emax + d)
    net = build_depth3(fmt, d, lambda D: f)
    assert net.depth == 3 and net.widths[1:] == (len(X), 1)
    orders = ORDERS if d == 1 else ("bias_first",)
    for order in orders:
        for engine in ("dense", "sparse") if d == 1 else ("sparse",):
            assert verify(net, lambda D: f, engine=engine, order=order).exact, (order, engine)


def test_depth3_widths_match_the_spec_prototype():
    # spec section 3: F(3,3) d=1 -> 232/55/1 and F(2,3) d=2 -> 136/729/1.
    assert build_depth3(FloatFormat(3, 3), 1, lambda D: D[:, 0]).widths == (232, 55, 1)
    assert build_depth3(FloatFormat(2, 3), 2, lambda D: D[:, 0]).widths == (136, 729, 1)


def test_depth3_on_a_float16_subdomain_and_table_as_dict():
    fmt = FloatFormat(11, 15)
    D = stratified_sample(fmt, 1, 200, seed=0)
    table = {(float(x),): float(fmt.round(-x / 3)) for x in D[:, 0]}
    net = build_depth3(fmt, 1, table, domain=D)
    assert verify(net, table, domain=D, engine="sparse").exact


@pytest.mark.parametrize(
    ("p", "emax", "d", "nonneg"),
    [(3, 3, 1, False), (2, 2, 1, False), (4, 3, 1, False), (3, 3, 1, True), (2, 3, 2, True)],
)
def test_narrow_is_exact_with_width_2d_plus_4_or_d_plus_4(p, emax, d, nonneg):
    fmt = FloatFormat(p, emax)
    X = fmt.grid(d, nonneg=nonneg)
    f = _table(fmt, len(X), p * emax + d)
    net = build_narrow(fmt, d, lambda D: f, nonneg=nonneg)
    assert net.width == (d if nonneg else 2 * d) + 4
    report = verify(net, lambda D: f, domain=X)  # dense engine: no NaN either
    assert report.exact and report.nonfinite == 0
    for order in ORDERS:  # every neuron sums at most two non-zero terms and a bias
        assert np.array_equal(net(X, order=order), f)


def test_binary_code_net_has_width_5_below_d_8_in_float16():
    fmt = FloatFormat(11, 15)
    bits = np.array([[(k >> i) & 1 for i in range(8)] for k in range(256)], dtype=float)
    f = _table(fmt, 256, 3)
    net = build_binary_code_net(fmt, 8, lambda D: f)
    assert net.width == 5 < 8
    assert verify(net, lambda D: f, domain=bits).exact


def test_depth2_integer_toy_is_exact_for_random_tables():
    fmt = FloatFormat(11, 15)
    rng = np.random.default_rng(4)
    for _ in range(20):  # spec 2.7: N = 31, M = 15 satisfies 4MN + M < 2^11
        g = rng.integers(-15, 16, 32).astype(float)
        net = build_depth2_integer(fmt, g)
        assert net.depth == 2 and np.array_equal(net(np.arange(32.0)[:, None]), g)


def test_depth3_precondition_guard_and_bad_inputs():
    with pytest.raises(ValueError, match=r"2\*emax >= p \+ 3"):
        build_depth3(FloatFormat(2, 2), 2, lambda D: D[:, 0])
    fmt = FloatFormat(3, 3)
    with pytest.raises(
        ValueError, match=r"table values must be finite values of F\(3, 3\); got 1.1"
    ):
        build_depth3(fmt, 1, lambda D: D[:, 0] * 0 + 1.1)
    with pytest.raises(ValueError, match=r"table has no value for domain point \(1.0,\)"):
        build_depth3(fmt, 1, {(0.0,): 1.0}, domain=[[0.0], [1.0]])
    with pytest.raises(ValueError, match=r"domain must hold finite values of F\(3, 3\); got 0.3"):
        build_narrow(fmt, 1, lambda D: D[:, 0], domain=[[0.3]])
    with pytest.raises(
        ValueError, match=r"domain must be non-negative when nonneg=True; got -1\.0"
    ):
        build_narrow(fmt, 1, lambda D: D[:, 0], nonneg=True, domain=[[-1.0]])
    with pytest.raises(ValueError, match="must not repeat a point"):
        build_depth3(fmt, 1, lambda D: D[:, 0], domain=[[0.0], [-0.0]])
    with pytest.raises(ValueError, match="4 M N \\+ M < 2\\^p"):
        build_depth2_integer(fmt, [0, 3, -3, 3])
    with pytest.raises(ValueError, match="d <= p"):
        build_binary_code_net(fmt, 4, lambda D: D[:, 0])
    with pytest.raises(ValueError, match="variant 'fn'"):
        build_narrow(FloatFormat(4, 8, variant="fn"), 1, lambda D: D[:, 0] * 0)
