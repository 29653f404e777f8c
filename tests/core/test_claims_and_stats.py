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
    deterministic = len(values) < 3  # fewer values are judged only when declared exact
    assert (
        claim(comparison, threshold).judge(values, deterministic=deterministic).status is expected
    )


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
    v = claim("<=", 1.0).judge([0.59, 0.61, 0.6])
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


def test_fewer_than_three_values_of_a_seed_dependent_metric_give_no_verdict():
    c = claim(">=", 1.0)
    for values in ([5.0], [5.0, 5.1], [[5.0, 5.1]]):
        v = c.judge(values)
        assert v.status is Status.INCONCLUSIVE and "needs >= 3" in v.reason
    assert c.judge([[5.0, 5.1, 5.2]]).status is Status.REPRODUCED  # replicates inside one task
    assert c.judge([5.0], deterministic=True).status is Status.REPRODUCED


def test_sanity_checks_and_gates_read_holds_broken_fails():
    sanity = Claim("S", "identity", "err", "<=", 1e-9, "0", "-", source="none", kind="sanity")
    assert sanity.judge([0.0], deterministic=True).status is Status.HOLDS
    assert sanity.judge([1.0], deterministic=True).status is Status.BROKEN
    gate = Claim("G", "competent", "acc", ">=", 0.5, "-", "-", source="none", kind="gate")
    assert gate.judge([0.1, 0.2, 0.1]).status is Status.FAILS


def test_a_failed_gate_makes_its_claims_testbed_invalid_and_an_open_one_inconclusive():
    from icml26.core.claims import judge_claims

    gate = Claim("G", "competent", "acc", ">=", 0.5, "-", "-", source="none", kind="gate")
    gain = Claim("C", "gain", "gain", ">", 0.0, "+1", "T1")
    free = Claim("D", "gain, no gate", "gain", ">", 0.0, "+1", "T1", gates=())
    runs = [{"acc": a, "gain": 1.0} for a in (0.1, 0.2, 0.15)]
    statuses = [v.status for v in judge_claims([gate, gain, free], runs)]
    assert statuses == [Status.FAILS, Status.TESTBED_INVALID, Status.REPRODUCED]
    runs = [{"acc": a, "gain": 1.0} for a in (0.2, 0.9, 0.5)]  # the gate straddles its bar
    assert judge_claims([gate, gain], runs)[1].status is Status.INCONCLUSIVE
    with pytest.raises(ValueError, match="only claims depend on gates"):
        Claim("S", "s", "m", ">", 0.0, "-", "-", kind="sanity", gates=("G",))


def test_paired_item_claims_use_a_hierarchical_bootstrap():
    from icml26.core import bootstrap_mean

    c = Claim("P", "A beats B per table", "diff", ">", 0.0, "+0.1", "T2", over="items")
    one_seed = [[0.1, 0.12, 0.08, 0.11, 0.09]]
    assert c.judge(one_seed).status is Status.REPRODUCED
    assert c.judge([[0.0] * 5] * 3).status is Status.NOT_REPRODUCED  # a do-nothing method
    noisy = [[0.3, -0.3, 0.2, -0.25], [0.1, -0.2, 0.05, 0.0]]
    assert c.judge(noisy).status is Status.INCONCLUSIVE
    agg = bootstrap_mean([[1.0, 2.0, 3.0], [10.0, 11.0, 12.0]], seed=1)
    assert agg.mean == 6.5 and agg.ci_low < 2.5 and agg.ci_high > 10.5  # seeds dominate


def test_headline_claims_carry_the_papers_figure():
    with pytest.raises(ValueError, match="a headline is a claim with the paper's own figure"):
        Claim("H", "s", "m", ">", 0.0, "x", "spec §5", source="spec", headline=True)
    with pytest.raises(ValueError, match="control_value must be finite"):
        Claim("C", "s", "m", ">", 0.0, "x", "T", control_value=math.nan)
