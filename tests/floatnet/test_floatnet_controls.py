"""Every comparative claim of floatnet, evaluated on its control for real, does not pass
(issue 39): the metric is computed with the method replaced by the control the claim names."""

import numpy as np
import pytest

from icml26.core import Status
from icml26.floatnet import FloatFormat, random_table, relu_interpolant
from icml26.floatnet.experiments import depth3, exact_vs_float, full, width


def claim(claims, claim_id):
    return next(c for c in claims if c.id == claim_id)


def float16_memoriser_exact_fraction(seed: int, n: int = 64) -> float:
    """The fraction of points the classical depth-2 memoriser gets right in float16 (the data
    of floatnet.exact_vs_float)."""
    rng = np.random.default_rng(seed)
    fmt = FloatFormat(11, 15)
    x = np.sort(rng.permutation(np.unique(fmt.round(rng.uniform(0.0, 8.0, 4 * n))))[:n])
    y = fmt.round(rng.uniform(-1.0, 1.0, len(x)))
    return float(np.mean(relu_interpolant(x, y).float_net(fmt)(x[:, None]) == y))


def test_the_depth2_memoriser_cannot_even_be_rounded_to_a_toy_format():
    fmt = FloatFormat(3, 3)
    x = fmt.grid(1)[:, 0]
    f = random_table(fmt, len(x), 0)
    with pytest.raises(ValueError, match="finite values"):
        relu_interpolant(x, f).float_net(fmt)  # slopes between subnormals overflow F(3,3)


def test_headline_fails_on_the_depth2_memoriser_in_float16():
    fractions = [float16_memoriser_exact_fraction(seed) for seed in range(3)]
    headline = claim(depth3.DEPTH3_CLAIMS, "C3-exact")
    assert headline.headline
    assert max(fractions) <= headline.control_value
    verdict = headline.judge([min(fractions)], deterministic=True)
    assert verdict.status is Status.NOT_REPRODUCED


@pytest.mark.parametrize(
    ("claims", "claim_id"),
    [
        (width.WIDTH_CLAIMS, "Cw-exact"),
        (full.FULL_CLAIMS, "all-exact"),
    ],
)
def test_exactness_claims_fail_on_a_constant_network(claims, claim_id):
    fmt = FloatFormat(3, 3)
    fractions = []
    for seed in range(3):
        f = random_table(fmt, len(fmt.grid(1)), seed)
        values, counts = np.unique(f, return_counts=True)
        constant = values[np.argmax(counts)]  # the best a constant output can do
        fractions.append(float(np.mean(f == constant)))
    c = claim(claims, claim_id)
    assert max(fractions) <= 2 * c.control_value
    assert c.judge([min(fractions)], deterministic=True).status is Status.NOT_REPRODUCED


def test_float_breaks_fails_in_exact_arithmetic():
    rng = np.random.default_rng(0)
    fmt = FloatFormat(11, 15)
    wrong = []
    for _ in range(3):
        x = np.sort(np.unique(fmt.round(rng.uniform(0.0, 8.0, 64)))[:16])
        y = fmt.round(rng.uniform(-1.0, 1.0, len(x)))
        interpolant = relu_interpolant(x, y)
        wrong.append(float(np.mean([interpolant(t) != v for t, v in zip(x, y, strict=True)])))
    c = claim(exact_vs_float.EXACT_VS_FLOAT_CLAIMS, "float-breaks")
    assert wrong == [c.control_value] * 3
    assert c.judge(wrong).status is Status.NOT_REPRODUCED


def test_c3_fixes_fails_on_the_depth2_memoriser():
    wrong = [1.0 - float16_memoriser_exact_fraction(seed, n=16) for seed in range(3)]
    c = claim(exact_vs_float.EXACT_VS_FLOAT_CLAIMS, "c3-fixes")
    assert min(wrong) >= 0.5
    assert c.judge(wrong).status is Status.NOT_REPRODUCED
