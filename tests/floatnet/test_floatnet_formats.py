"""Rounding, enumeration and neighbours of F(p, emax) against independent references."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.floatnet import FORMATS, FloatFormat

F16 = FORMATS["float16"]


def test_round_matches_numpy_float16_on_random_inputs_overflow_and_subnormal_ties():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100_000) * np.exp(rng.uniform(-25, 12, 100_000))
    ties = (np.arange(-2000, 2000) + 0.5) * F16.smin  # exact subnormal midpoints
    edges = np.array([65519.99, 65520.0, -65520.0, 65504.0, 1e300, np.inf, -np.inf])
    x = np.concatenate([x, ties, edges])
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16).astype(np.float64)  # numpy casts are correctly rounded
    assert np.array_equal(F16.round(x), ref)
    assert F16.round(65519.99) == 65504.0 and F16.round(65520.0) == np.inf


def test_round_matches_exact_fraction_reference():
    rng = np.random.default_rng(1)
    for fmt in (FORMATS["toy_p3_e3"], FORMATS["bfloat16"], FORMATS["e4m3"]):
        x = rng.standard_normal(2000) * np.exp(rng.uniform(-12, 8, 2000))
        assert np.array_equal(fmt.round(x), [fmt.round_fraction(Fraction(v)) for v in x])


def test_float8_formats_match_ml_dtypes_on_float32_inputs():
    # ml_dtypes rounds float32 -> float8 once, so on float32 inputs it is a correct reference.
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(50_000) * np.exp(rng.uniform(-12, 8, 50_000))).astype(np.float32)
    for name, dtype in (("e5m2", ml_dtypes.float8_e5m2), ("e4m3fn", ml_dtypes.float8_e4m3fn)):
        ours = FORMATS[name].round(x.astype(np.float64))
        ref = x.astype(dtype).astype(np.float64)
        assert np.array_equal(ours, ref, equal_nan=True), name


def _bfloat16_exact(x: float) -> float:
    """Round-to-nearest-even to bfloat16 (p = 8) of a normal x > 0, in exact arithmetic."""
    q = Fraction(x)
    e = q.numerator.bit_length() - q.denominator.bit_length()  # off by at most one
    if Fraction(2) ** e > q:
        e -= 1
    ulp = Fraction(2) ** (e - 7)
    return float(round(q / ulp) * ulp)  # Fraction.__round__ breaks ties to even


def test_bfloat16_is_correctly_rounded_next_to_midpoints():
    # Just above or below a bfloat16 midpoint by less than a float32 ulp: a conversion that goes
    # through float32 first lands on the tie and rounds to even (double rounding). ml_dtypes did
    # this before 0.7 (1 + 2^-8 + 2^-30 -> 1.0); the correct answer is 1.0078125 = 1 + 2^-7.
    assert FORMATS["bfloat16"].round(1.0 + 2.0**-8 + 2.0**-30) == 1.0078125
    rng = np.random.default_rng(3)
    mantissas = rng.integers(2**7, 2**8, 500)
    exponents = rng.integers(-60, 60, 500)
    midpoints = (mantissas + 0.5) * 2.0 ** (exponents - 7.0)
    nudge = rng.choice([-1.0, 1.0], 500) * 2.0 ** rng.integers(-40, -26, 500)
    x = np.concatenate([midpoints, midpoints * (1 + nudge)])
    assert np.array_equal(FORMATS["bfloat16"].round(x), [_bfloat16_exact(v) for v in x])


@pytest.mark.parametrize(
    "name", ["toy_p2_e2", "toy_p3_e3", "toy_p4_e4", "e5m2", "e4m3fn", "float16"]
)
def test_values_count_order_and_neighbours(name):
    fmt = FORMATS[name]
    v = fmt.values()
    half = 2 ** (fmt.p - 1)
    closed_form = 2 * ((half - 1) + (fmt.emax - fmt.emin + 1) * half) + 1
    assert len(v) == fmt.n_values == closed_form - (2 if fmt.variant == "fn" else 0)
    assert np.all(np.diff(v) > 0) and v[-1] == fmt.max and v[v > 0][0] == fmt.smin
    assert np.array_equal(fmt.succ(v[:-1]), v[1:]) and np.array_equal(fmt.pred(v[1:]), v[:-1])
    assert fmt.succ(fmt.max) == np.inf and fmt.pred(-fmt.max) == -np.inf
    assert np.array_equal(fmt.round(v), v) and np.all(fmt.contains(v))


def test_known_constants():
    assert (F16.max, F16.smin) == (65504.0, 2.0**-24)
    assert FORMATS["e4m3fn"].max == 448.0 and FORMATS["e5m2"].max == 57344.0
    assert len(FloatFormat(3, 3).values(nonneg=True)) == 28


@settings(max_examples=200, deadline=None)
@given(
    st.floats(-20, 20, allow_nan=False),
    st.floats(-20, 20, allow_nan=False),
    st.floats(-20, 20, allow_nan=False),
)
def test_rounded_ops_are_monotone(a, b, c):
    fmt = FORMATS["toy_p3_e3"]
    lo, hi = sorted((a, b))
    assert fmt.round(lo) <= fmt.round(hi)
    assert fmt.add(lo, c) <= fmt.add(hi, c)
    if c >= 0:
        assert fmt.mul(lo, c) <= fmt.mul(hi, c)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": 1, "emax": 3}, "p must be an integer >= 2"),
        ({"p": 3, "emax": 0}, "emax must be an integer >= 1"),
        ({"p": 26, "emax": 3}, r"p must be an integer in \[2, 25\]"),
        ({"p": 3, "emax": 3, "variant": "ocp"}, "variant must be one of"),
    ],
)
def test_bad_formats_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FloatFormat(**kwargs)


def test_neighbours_of_values_outside_the_format_raise():
    with pytest.raises(ValueError, match=r"finite values of F\(3, 3\); got 1.1"):
        FloatFormat(3, 3).succ(1.1)
    with pytest.raises(ValueError, match=r"more than 2\^26"):
        FORMATS["float32"].values()
