"""Issue 39: each comparative sgg_dp claim, evaluated on its control for real, does not pass.

The control of the "best member beats both" claims (H, Q2, T1) is the better of the Gaussian and
ℓ2 mechanisms: the search restricted to those two members of the family (k = T, p ∈ {1, 2}).
The control of the asymptotic claims (T2a-c) is "no dimension effect": the low-dimensional
gain carried to every T.
"""

import pytest

from icml26.core import Status
from icml26.sgg_dp import best_member
from icml26.sgg_dp.experiments import low_dim_win, table
from icml26.sgg_dp.experiments.common import baselines

EPS, DELTA, T = 0.5, 1e-2, 3


def claim(claims, claim_id):
    return next(c for c in claims if c.id == claim_id)


@pytest.fixture(scope="module")
def ratios():
    """best/min(G, ℓ2) of the control (Gaussian and ℓ2 only) and best/G of a low-dim member."""
    gauss, l2 = baselines(EPS, DELTA, T)
    control, _ = best_member(EPS, DELTA, T, k_grid=(float(T),), p_grid=(1.0, 2.0))
    method, _ = best_member(EPS, DELTA, T, k_grid=(float(T),), p_grid=(1.35,))
    return {
        "control": control.mse() / min(gauss, l2),
        "method": method.mse() / min(gauss, l2),
        "low_dim_over_g": method.mse() / gauss,
    }


def test_the_best_member_claims_fail_on_the_better_baseline(ratios):
    assert ratios["control"] == pytest.approx(1.0, abs=1e-3)
    claims = table.CLAIMS
    for c in (claim(claims, "H"), claim(claims, "T1"), claim(low_dim_win.CLAIMS, "Q2")):
        # metric on the control (one deterministic value) fails; the recorded control agrees
        assert c.judge([ratios["control"]], deterministic=True).status is Status.NOT_REPRODUCED
        assert c.control_value == pytest.approx(ratios["control"], abs=1e-3)
    # the spec's member (3, 1.35) passes the spec's bars but not the paper's 15 %
    assert ratios["method"] == pytest.approx(0.891, abs=1e-3)
    assert claim(low_dim_win.CLAIMS, "Q2").judge([ratios["method"]], deterministic=True).status is (
        Status.REPRODUCED
    )
    assert claim(claims, "H").judge([ratios["method"]], deterministic=True).status is (
        Status.NOT_REPRODUCED
    )


def test_the_asymptotic_claims_fail_with_no_dimension_effect(ratios):
    claims = table.CLAIMS
    carried = ratios["low_dim_over_g"]  # the T = 3 gain, carried to T = 200
    assert carried == pytest.approx(claim(claims, "T2b").control_value, abs=1e-3)
    for claim_id in ("T2b", "T2c"):
        c = claim(claims, claim_id)
        assert c.judge([carried], deterministic=True).status is Status.NOT_REPRODUCED
    flat = [
        {"eps": e, "delta": d, "T": t, "best": carried, "gaussian": 1.0}
        for e, d in table.SEQUENCES
        for t in (3, 10, 200)
    ]
    violations = table.ratio_violations(flat)
    assert violations == 4.0  # every step of both sequences
    t2a = claim(claims, "T2a")
    assert t2a.judge([violations], deterministic=True).status is Status.NOT_REPRODUCED
    rising = [dict(r, best=r["T"] / 1000) for r in flat]
    assert t2a.judge([table.ratio_violations(rising)], deterministic=True).status is (
        Status.REPRODUCED
    )
    assert table.ratio_violations(flat[:2]) != table.ratio_violations(flat[:2])  # NaN: 2 rows
