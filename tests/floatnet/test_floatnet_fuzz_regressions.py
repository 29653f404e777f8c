"""Regressions for the fuzz findings of issue 16: wrong kinds of argument and oversized requests are
refused at the public boundary with a message naming the parameter."""

import math

import numpy as np
import pytest

from icml26.floatnet import (
    FloatFormat,
    FloatReLUNet,
    collisions,
    is_monotone,
    special_values,
    stratified_sample,
    table_values,
    verify,
)

FMT = FloatFormat(3, 3)
IDENTITY = FloatReLUNet(FMT, [(np.ones((1, 1)), np.zeros(1))])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: special_values(None), "special_values: fmt must be a FloatFormat"),
        (lambda: stratified_sample(-1, 1, 4), "stratified_sample: fmt must be a FloatFormat"),
        (lambda: table_values(None, {}, np.zeros((1, 1))), "table_values: fmt must be"),
        (lambda: verify(None, lambda X: X[:, 0]), "verify: net must be a FloatReLUNet"),
        (lambda: collisions(None, [[0.0]]), "collisions: net must be a FloatReLUNet"),
        (lambda: is_monotone(FMT), "is_monotone: net must be a FloatReLUNet"),
        (lambda: FMT.contains("yes"), "FloatFormat.contains: x must be an array"),
        (lambda: FMT.round(object()), "FloatFormat.round: x must be an array"),
        (lambda: FMT.add("a", 1.0), "FloatFormat.add: x must be an array"),
        (lambda: FMT.succ({}), "FloatFormat.succ: a must be an array"),
        (lambda: FMT.round_fraction("1/3"), "round_fraction: q must be a Fraction"),
        (lambda: table_values(FMT, {(0.0,): "x"}, np.zeros((1, 1))), r"table value at \(0.0,\)"),
        (lambda: table_values(FMT, lambda X: ["x"], np.zeros((1, 1))), "table must return"),
    ],
)
def test_wrong_kinds_are_type_errors_naming_the_parameter(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: FMT.round_fraction(math.nan), "q must be finite"),
        (lambda: FMT.round_fraction(-math.inf), "q must be finite"),
        (lambda: stratified_sample(FMT, 2**31, 4), r"d must be an integer in \[1, 4096\]"),
        (lambda: stratified_sample(FMT, 4, 10**12), r"n must be an integer in \[0, 16777216\]"),
        (lambda: table_values(FMT, {}, np.float64(1.0)), r"domain must be 2-D"),
        (lambda: table_values(FMT, {}, [[math.nan]]), "domain must be finite"),
        (lambda: FMT.mul(np.ones(2), np.ones(3)), "x and y must broadcast"),
        (lambda: FMT.grid(2**40), r"d must keep \|F\|\^d <= 2\^26"),  # issue 40: hung on |F|^d
    ],
)
def test_bad_values_and_huge_sizes_are_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_values_bound_counts_what_is_returned():
    # F(22, 34) has 2.9e8 values: too many with or without the negative half, and the
    # message says which call was too large.
    big = FloatFormat(22, 34)
    with pytest.raises(ValueError, match=r"values\(nonneg=False\) would hold 289406975"):
        big.values()
    with pytest.raises(ValueError, match=r"values\(nonneg=True\) would hold 144703488"):
        big.values(nonneg=True)
    # The count used for nonneg=True is exact: one zero and the positive half.
    for fmt in (FMT, FloatFormat(2, 1), FloatFormat(4, 8, variant="fn"), FloatFormat(5, 6)):
        everything = fmt.values()
        assert len(fmt.values(nonneg=True)) == int(np.sum(everything >= 0))
        assert len(fmt.values(nonneg=True)) == (fmt.n_values + 1) // 2


def test_valid_calls_are_unchanged():
    # round_fraction agrees with the float path on numpy scalars, which it now accepts as floats.
    for q in (np.float32(2.25), np.float64(2.75), np.int64(5), 9):
        assert FMT.round_fraction(q) == float(FMT.round(float(q)))
    # A 1-D domain is read as points of F^1, as check_domain reads it.
    assert table_values(FMT, {1.0: -2.0, 0.0: 1.0}, np.array([1.0, 0.0])).tolist() == [-2.0, 1.0]
    assert verify(IDENTITY, lambda X: X[:, 0]).exact
