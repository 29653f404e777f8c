"""The exact privacy profile δ(ε): closed forms, invariants, Monte Carlo, shift monotonicity."""

import math

import numpy as np
import pytest
from scipy import stats

from icml26.sgg_dp import (
    SGGMechanism,
    analytic_gaussian_delta,
    check_shift_monotone,
    gaussian_member,
    l2_member,
    laplace_member,
)

MEMBERS = [SGGMechanism(3, 2.5, 1.35, 3.0), SGGMechanism(3, 3.5, 1.35, 3.0),
           SGGMechanism(2, 1.5, 1.2, 3.0), SGGMechanism(1, 0.7, 1.5, 2.0),
           SGGMechanism(1, 1.6, 1.0, 2.0), SGGMechanism(5, 6.0, 1.5, 4.0),
           SGGMechanism(4, 4.0, 0.7, 2.0)]  # fmt: skip


@pytest.mark.parametrize("T", [1, 3, 4, 7, 30])
@pytest.mark.parametrize("std", [0.6, 1.3, 4.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0])
def test_gaussian_member_matches_analytic_gaussian(T, std, eps):
    exact = analytic_gaussian_delta(eps, std, sensitivity=1.0)
    # measured ~1e-9 with kink-aligned panels; 1e-6 leaves room for other (T, s)
    assert gaussian_member(T, std=std).delta(eps) == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("std", [1.3, 4.0])
def test_gaussian_member_t2(std):
    # T = 2: the arcsine law of u leaves square-root endpoints; measured <= 3e-7
    assert gaussian_member(2, std=std).delta(1.0) == pytest.approx(
        analytic_gaussian_delta(1.0, std), rel=1e-4
    )


@pytest.mark.parametrize("b", [0.4, 1.5, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.2, 1.0, 2.0, 3.0])
def test_laplace_member_closed_form(b, eps):
    expected = max(0.0, 1 - math.exp((eps - 1.0 / b) / 2))
    # exact interval masses: only round-off in the gamma functions
    assert laplace_member(scale=b).delta(eps) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("T", [2, 3, 6])
def test_l2_member_is_pure_dp_beyond_delta_over_sigma(T):
    m = l2_member(T, sigma=0.8)
    assert m.pure_epsilon() == pytest.approx(1 / 0.8)
    # at ε = Δ/σ exactly the event boundary is u = −1 up to one ulp (a tie of measure zero)
    assert m.delta(1 / 0.8 * (1 + 1e-9)) == 0.0
    assert m.delta(1 / 0.8 + 0.1) == 0.0
    assert m.delta(1 / 0.8 - 0.05) > 0.0


def test_scale_invariance():
    # X → cX with Δ → cΔ leaves every likelihood ratio unchanged.
    a = SGGMechanism(4, 3.5, 1.3, 2.0, sensitivity=1.0).delta(0.4)
    b = SGGMechanism(4, 3.5, 1.3, 6.0, sensitivity=3.0).delta(0.4)
    assert a == pytest.approx(b, rel=1e-9)  # quadrature nodes scale exactly


@pytest.mark.parametrize("m", MEMBERS[:4])
def test_profile_is_non_increasing_in_eps_and_in_unit_interval(m):
    d = np.array([m.delta(e) for e in np.linspace(0, 2, 11)])
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d) <= 1e-12)  # quadrature round-off only


def test_delta_at_zero_is_total_variation_for_gaussian():
    # TV(N(0, s²), N(Δ, s²)) = 2Φ(Δ/(2s)) − 1
    assert gaussian_member(5, std=2.0).delta(0.0) == pytest.approx(
        2 * stats.norm.cdf(0.25) - 1, rel=1e-8
    )


@pytest.mark.parametrize("m", MEMBERS)
def test_profile_matches_monte_carlo_under_p_and_under_q(m):
    rng = np.random.default_rng(11)
    n = 400_000
    x = m.sample(n, rng)
    y = m.sample(n, rng)
    y[:, 0] += m.sensitivity  # Y ~ Q = P shifted by Δe₁
    lx, ly = m.privacy_loss(x), m.privacy_loss(y)
    for eps in (0.0, 0.3):
        exact = m.delta(eps)
        # reflected form: δ = P[L > ε] − e^ε P[L < −ε]
        v = (lx > eps) - math.exp(eps) * (lx < -eps)
        assert abs(v.mean() - exact) < 4.5 * v.std() / math.sqrt(n)  # 4.5 SE: 7 members × 2 ε
        # direct form: δ = P[L > ε] − e^ε Q[L > ε]
        direct = (lx > eps).mean() - math.exp(eps) * (ly > eps).mean()
        se = math.sqrt((lx > eps).var() / n + math.exp(2 * eps) * (ly > eps).var() / n)
        assert abs(direct - exact) < 4.5 * se


@pytest.mark.parametrize("m", MEMBERS[:4])
def test_shift_monotonicity_of_members_used(m):
    assert check_shift_monotone(m, 0.3)


def test_worst_case_scan_equals_boundary_for_monotone_member():
    m = SGGMechanism(3, 3.5, 1.35, 3.0)
    scan = SGGMechanism(3, 3.5, 1.35, 3.0, worst_case="scan")
    assert scan.delta(0.3) == pytest.approx(m.delta(0.3), rel=1e-12)
