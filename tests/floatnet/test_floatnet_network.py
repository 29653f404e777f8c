"""The rounded network model: engines, orders, serialisation, monotonicity, collisions."""

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.floatnet import ORDERS, FloatFormat, FloatReLUNet, collisions, is_monotone

FMT = FloatFormat(3, 3)
VALUES = FMT.values()


def _random_net(rng, widths, density=0.6, small=4.0):
    pool = VALUES[np.abs(VALUES) <= small]
    layers, n_in = [], widths[0]
    for n_out in widths[1:]:
        W = rng.choice(pool, (n_out, n_in)) * (rng.random((n_out, n_in)) < density)
        layers.append((W + 0.0, rng.choice(pool, n_out)))
        n_in = n_out
    return FloatReLUNet(FMT, layers)


def _exact(fmt, a, b, mul):
    """One correctly rounded operation on Fractions (IEEE float rules once a value is inf)."""
    if not (np.isfinite(a) and np.isfinite(b)):
        return float(fmt.mul(a, b) if mul else fmt.add(a, b))
    q = Fraction(a) * Fraction(b) if mul else Fraction(a) + Fraction(b)
    return fmt.round_fraction(q)


def _reference(net, x, order):
    """Per-neuron Python loop with exact Fraction sums rounded once per operation."""
    fmt, a = net.fmt, list(x)
    for k, (W, b) in enumerate(net.layers):
        out = []
        for r in range(W.shape[0]):
            cols = [j for j in range(W.shape[1]) if W[r, j] != 0]
            terms = [_exact(fmt, W[r, j], a[j], True) for j in cols]
            if order == "reversed":
                terms = terms[::-1]
            leaves = [*terms, b[r]] if order == "bias_last" else [b[r], *terms]
            if order == "pairwise":
                while len(leaves) > 1:
                    pairs = [leaves[i : i + 2] for i in range(0, len(leaves), 2)]
                    leaves = [
                        p[0] if len(p) == 1 else _exact(fmt, p[0], p[1], False) for p in pairs
                    ]
                z = leaves[0]
            else:
                z = leaves[0]
                for t in leaves[1:]:
                    z = _exact(fmt, z, t, False)
            out.append(z if k == net.depth - 1 else max(z, 0.0))
        a = out
    return a[0]


@pytest.mark.parametrize("order", ORDERS)
def test_evaluator_matches_a_per_neuron_exact_reference(order):
    rng = np.random.default_rng(0)
    net = _random_net(rng, (2, 4, 3, 1), small=2.0)  # small weights: no overflow, all finite
    X = FMT.grid(2)[rng.choice(55 * 55, 150, replace=False)]
    ours = net(X, order=order, engine="sparse")
    assert np.array_equal(ours, [_reference(net, x, order) for x in X])


@pytest.mark.parametrize("order", ORDERS)
def test_dense_and_sparse_engines_agree_when_activations_are_finite(order):
    rng = np.random.default_rng(1)
    net = _random_net(rng, (2, 5, 4, 1))
    X = FMT.grid(2)
    dense, sparse = (
        net.evaluate(X, engine="dense", order=order),
        net.evaluate(X, engine="sparse", order=order),
    )
    ok = ~dense.nonfinite
    assert ok.sum() > 100
    assert np.array_equal(dense.y[ok], sparse.y[ok])
    assert np.array_equal(dense.nonfinite, sparse.nonfinite)


def test_dense_engine_surfaces_zero_times_inf_as_nan():
    big = FMT.max
    layers = [
        (np.array([[big], [1.0]]), np.zeros(2)),
        (np.array([[big, 0.0], [0.0, 1.0]]), np.zeros(2)),
        (np.array([[0.0, 1.0]]), np.zeros(1)),
    ]
    net = FloatReLUNet(FMT, layers)
    x = np.array([[big]])  # layer 2 neuron 1 is big*big*big -> +inf, then 0 * inf
    assert np.isnan(net(x, engine="dense"))[0] and net(x, engine="sparse")[0] == big
    assert net.evaluate(x).nonfinite[0]


def test_metadata_and_round_trip_through_json():
    rng = np.random.default_rng(2)
    net = _random_net(rng, (3, 6, 2, 1))
    assert (net.depth, net.width, net.widths, net.d) == (3, 6, (6, 2, 1), 3)
    again = FloatReLUNet.from_dict(json.loads(json.dumps(net.to_dict())))
    X = FMT.grid(3)[::7]
    assert np.array_equal(again(X), net(X), equal_nan=True)


def test_relu_of_minus_inf_is_zero():
    net = FloatReLUNet(
        FMT, [(np.array([[-FMT.max]]), np.zeros(1)), (np.array([[1.0]]), np.ones(1))]
    )
    assert net(np.array([[FMT.max]]))[0] == 1.0  # -max*max overflows to -inf, ReLU gives 0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_width_one_networks_are_monotone(depth, seed):
    rng = np.random.default_rng(seed)
    layers = [(rng.choice(VALUES, (1, 1)), rng.choice(VALUES, 1)) for _ in range(depth)]
    assert is_monotone(FloatReLUNet(FMT, layers))


def test_indicator_of_zero_is_not_monotone_so_width_one_cannot_represent_it():
    x = VALUES
    indicator = (x == 0).astype(float)
    assert not (np.all(np.diff(indicator) >= 0) or np.all(np.diff(indicator) <= 0))


def test_collisions_find_inputs_merged_by_a_narrow_layer():
    # One hidden ReLU(x_1 + x_2): points with equal rounded sum (or both <= 0) collide.
    net = FloatReLUNet(FMT, [(np.ones((1, 2)), np.zeros(1)), (np.ones((1, 1)), np.zeros(1))])
    D = FMT.grid(2)
    pairs = collisions(net, D)
    h = net.hidden(D, 1)[:, 0]
    assert len(pairs) == len(D) - len(np.unique(h))
    assert np.all(h[pairs[:, 0]] == h[pairs[:, 1]]) and np.all(pairs[:, 0] != pairs[:, 1])


@pytest.mark.parametrize(
    ("layers", "match"),
    [
        (
            [(np.array([[1.1]]), np.zeros(1))],
            r"layer 1 weights must hold finite values of F\(3, 3\); got 1.1",
        ),
        ([(np.ones((2, 1)), np.zeros(2))], "last layer must have 1 output"),
        (
            [(np.ones((2, 1)), np.zeros(2)), (np.ones((1, 3)), np.zeros(1))],
            "layer 2 must have W of shape",
        ),
    ],
)
def test_bad_networks_raise(layers, match):
    with pytest.raises(ValueError, match=match):
        FloatReLUNet(FMT, layers)


def test_bad_evaluation_inputs_raise():
    net = FloatReLUNet(FMT, [(np.ones((1, 1)), np.zeros(1))])
    with pytest.raises(ValueError, match=r"X must hold finite values of F\(3, 3\); got 0.3"):
        net(np.array([[0.3]]))
    with pytest.raises(ValueError, match="engine must be one of"):
        net(np.array([[1.0]]), engine="fast")
    with pytest.raises(ValueError, match=r"X must have shape \(batch, 1\)"):
        net(np.ones((2, 2)))
