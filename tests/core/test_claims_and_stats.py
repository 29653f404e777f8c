import math

import numpy as np
import pytest
from scipy import stats

from icml26.core import Claim, Status, aggregate


def test_aggregate_matches_scipy_t_interval():
    values = [0.8, 1.1, 0.9, 1.3, 1.05]
    agg = aggregate(values)
    low, high = stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values)
    )
    assert agg.mean == pytest.approx(np.mean(values), abs=1e-15)
    assert agg.std == pytest.approx(np.std(values, ddof=1), abs=1e-15)
    assert (agg.ci_low, agg.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert agg.n == 5


def test_aggregate_single_value_and_infinite_values_use_the_observed_range():
    one = aggregate([2.5])
    assert (one.mean, one.ci_low, one.ci_high, one.n) == (2.5, 2.5, 2.5, 1)
    assert math.isnan(one.std)
    blown = aggregate([1.0, math.inf])
    assert (blown.ci_low, blown.ci_high) == (1.0, math.inf)


def test_aggregate_rejects_empty():
    with pytest.raises(ValueError, match="non-empty 1-D"):
        aggregate([])


def claim(comparison, threshold, tolerance=None):
    return Claim("X", "statement", "m", comparison, threshold, "paper", "Table 1", tolerance)


@pytest.mark.parametrize(
    ("comparison", "threshold", "values", "expected"),
    [
        (">=", 1.0, [1.5, 1.6, 1.55], Status.REPRODUCED),
        (">=", 1.0, [0.5, 0.6, 0.55], Status.NOT_REPRODUCED),
        (">=", 1.0, [0.5, 1.5, 1.0], Status.INCONCLUSIVE),  # CI straddles the threshold
        ("<=", 1e-10, [1e-13, 3e-13], Status.REPRODUCED),
        ("<=", 1e-10, [1e-3], Status.NOT_REPRODUCED),
        ("<", 1.0, [1.0], Status.NOT_REPRODUCED),  # strict: equality fails
        (">", 1.0, [1.0], Status.NOT_REPRODUCED),
        ("<=", 1.0, [1.0], Status.REPRODUCED),
    ],
)
def test_verdicts_by_comparison(comparison, threshold, values, expected):
    assert claim(comparison, threshold).judge(values).status is expected


def test_within_band():
    c = claim("within", 0.3, tolerance=0.05)
    assert c.judge([0.29, 0.31, 0.3]).status is Status.REPRODUCED
    assert c.judge([0.5, 0.51, 0.52]).status is Status.NOT_REPRODUCED
    assert c.judge([0.1, 0.12, 0.11]).status is Status.NOT_REPRODUCED  # below the band
    assert c.judge([0.2, 0.4, 0.3]).status is Status.INCONCLUSIVE
    assert c.criterion == "within 0.3 ± 0.05"


def test_missing_and_nan_metrics_are_not_measured():
    c = claim(">=", 0.0)
    assert c.judge([]).status is Status.NOT_MEASURED
    assert "no finished task" in c.judge([]).reason
    assert c.judge([math.nan, 1.0]).status is Status.NOT_MEASURED


def test_verdict_reports_the_measurement():
    v = claim("<=", 1.0).judge([0.59, 0.61])
    assert v.measured is not None and v.measured.mean == pytest.approx(0.6)
    assert v.ours.startswith("0.6 ± ")
    assert "satisfies <= 1" in v.reason


def test_bad_claims():
    with pytest.raises(ValueError, match="comparison must be one of"):
        claim("~", 1.0)
    with pytest.raises(ValueError, match="tolerance is required for 'within'"):
        claim("within", 1.0)
    with pytest.raises(ValueError, match="tolerance is required for 'within' and only for it"):
        claim(">=", 1.0, tolerance=0.1)
