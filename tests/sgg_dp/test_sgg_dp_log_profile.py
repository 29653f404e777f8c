"""δ(ε) in log space (issue 17): values down to 1e-300 within 1e-6 relative and never below the
true δ, against references that share no code with the package (tests/sgg_dp/references.py):
scipy's log_ndtr closed form, nested adaptive quadrature in other coordinates, and mpmath."""

import math
import warnings
from itertools import pairwise

import mpmath as mp
import pytest
from scipy import optimize

from icml26.sgg_dp import SGGMechanism, gaussian_member

from .references import delta_by_nested_quad, delta_line_mpmath, log_gaussian_delta

REL = 1e-6  # issue 17: relative error of δ


def assert_upper_and_close(log_ours: float, log_exact: float) -> None:
    assert log_exact <= log_ours <= log_exact + math.log1p(REL)


@pytest.mark.parametrize(
    ("T", "std", "eps"),
    [(2, 0.6, 4.0), (9, 1.7, 6.5), (9, 3.0, 12.3), (400, 2.6, 14.2), (1, 3.0, 12.0)],
)
def test_gaussian_member_log_delta_matches_closed_form_down_to_1e_300(T, std, eps):
    exact = log_gaussian_delta(eps, std)
    assert exact > -700  # the deepest cases sit at δ ~ 1e-300
    assert_upper_and_close(gaussian_member(T, std=std).log_delta(eps), exact)


def test_issue_examples_no_cutoff_near_1e_17():
    g = gaussian_member(3, std=2.0)
    # was 0 instead of 4.4e-24
    assert g.delta(5.0) == pytest.approx(math.exp(log_gaussian_delta(5.0, 2.0)), rel=REL)
    for delta in (1e-25, 1e-100, 1e-300):
        exact = optimize.brentq(
            lambda e, d=delta: log_gaussian_delta(e, 2.0) - math.log(d), 0.0, 100.0, xtol=1e-13
        )
        # ε(1e-25) was 9.665 (δ stopped changing below 1e-21); exact 5.18699
        assert exact <= g.epsilon(delta) <= exact + 1e-8


def test_large_eps_gives_zero_not_nan():
    members = [gaussian_member(3, std=2.0), SGGMechanism(T=3, k=3.0, p=1.35, sigma=1.0),
               SGGMechanism(3, 3.5, 1.35, 3.0), SGGMechanism(2, 1.5, 1.2, 3.0)]  # fmt: skip
    for m in members:
        for eps in (710.0, 1000.0, 1e4):
            value = m.delta(eps)
            assert not math.isnan(value)
            assert 0.0 <= value < 1e-300
    # far below a float (and below the 1e-300 of the issue) the log is still finite and close:
    # δ(100) ~ 1e-8670, measured 1e-9 relative
    got, exact = gaussian_member(3, std=2.0).log_delta(100.0), log_gaussian_delta(100.0, 2.0)
    assert abs(got - exact) <= REL


@pytest.mark.parametrize(
    ("T", "k", "p", "sigma", "eps", "log_scale", "t_min"),
    [
        (3, 3.5, 1.35, 3.0, 3.66, 0.0, 1e-60),  # k > T: HEAD under-reported 1.004x; 0 from ε = 10
        (3, 3.5, 1.35, 3.0, 115.0, 690.0, 1e-130),  # the ball around v: δ ~ 1e-303
        (4, 3.0, 1.5, 0.8, 30.0, 300.0, 1e-60),  # k < T: the ball around 0 and its mirror
        (2, 1.5, 1.2, 3.0, 1.0, 0.0, 1e-60),  # T = 2: arcsine law of the direction
        (3, 3.0, 1.35, 3.0, 2.0, 300.0, 1e-60),  # k = T, p > 1: loss unbounded as r → ∞, δ ~ 1e-140
        (5, 6.0, 1.5, 4.0, 0.0, 0.0, 1e-60),  # k > T, ε = 0: roots merge at t* (was 1.4e-6 low)
        (5, 6.0, 1.5, 4.0, 1e-4, 0.0, 1e-60),  # ... and appear at h = h* − ε, 0.07 apart in r
    ],
)
def test_unbounded_losses_match_nested_quadrature(T, k, p, sigma, eps, log_scale, t_min):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quad's round-off notes on the far tails
        ref = delta_by_nested_quad(eps, T, k, p, sigma, log_scale=log_scale, tol=1e-10, t_min=t_min)
    assert ref > 0
    # the reference's own error (epsrel 1e-10 per piece) is far inside the 1e-6 band
    assert_upper_and_close(SGGMechanism(T, k, p, sigma).log_delta(eps), math.log(ref) - log_scale)


@pytest.mark.parametrize(
    ("k", "p", "sigma", "eps"),
    [(0.7, 1.5, 2.0, 150.0), (1.6, 1.0, 2.0, 300.0), (2.5, 1.3, 1.0, 400.0), (1.6, 1.0, 2.0, 0.2)],
)
def test_line_members_match_mpmath_in_the_deep_tail(k, p, sigma, eps):
    ref = delta_line_mpmath(eps, k, p, sigma)
    assert ref > 0
    # k < 1 (loss unbounded at 0), k > 1 (unbounded at Δ): δ down to e^{-503}
    assert_upper_and_close(SGGMechanism(1, k, p, sigma).log_delta(eps), float(mp.log(ref)))


def test_profile_of_unbounded_loss_is_positive_and_decreasing_at_large_eps():
    m = SGGMechanism(3, 3.5, 1.35, 3.0)  # HEAD: exactly 0 from ε = 10 on
    logs = [m.log_delta(e) for e in (3.66, 10.0, 40.0, 100.0)]
    assert all(math.isfinite(v) for v in logs)
    assert all(a > b for a, b in pairwise(logs))
