"""The SGG noise law: density normalisation, sampler law, moments, members (spec §7)."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from icml26.sgg_dp import SGGMechanism, gaussian_member, l2_member
from icml26.sgg_dp.radial import radius_nodes

CASES = [(1, 1.0, 1.0, 1.5), (2, 1.5, 1.2, 0.7), (3, 2.5, 1.35, 3.0), (5, 6.0, 0.8, 2.0),
         (10, 10.0, 2.0, 1.0)]  # fmt: skip


def log_density(x, T, k, p, sigma):
    """ln f(x) with the constant C = p Γ(T/2) / (2 π^{T/2} σ^k Γ(k/p)) written out."""
    log_c = (math.log(p) + special.gammaln(T / 2) - math.log(2) - T / 2 * math.log(math.pi)
             - k * math.log(sigma) - special.gammaln(k / p))  # fmt: skip
    r = np.linalg.norm(x, axis=-1)
    return log_c + (k - T) * np.log(r) - (r / sigma) ** p


@pytest.mark.parametrize(("T", "k", "p", "sigma"), CASES)
def test_density_integrates_to_one(T, k, p, sigma):
    surface = 2 * math.pi ** (T / 2) / math.gamma(T / 2)  # area of S^{T-1}

    def radial(r):
        return surface * r ** (T - 1) * math.exp(log_density(np.array([r] + [0.0] * (T - 1)),
                                                             T, k, p, sigma))  # fmt: skip

    total, _err = integrate.quad(radial, 0, np.inf, limit=200)
    assert total == pytest.approx(1.0, abs=1e-8)  # quad's own error estimate is ~1e-10


@pytest.mark.parametrize(("T", "k", "p", "sigma"), CASES)
def test_radial_quadrature_weights_sum_to_one_and_integrate_moments(T, k, p, sigma):
    r, w = radius_nodes(k, p, sigma, n_panels=200)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)  # only ~1e-17 of mass lies outside |s| <= 40
    m = SGGMechanism(T, k, p, sigma)
    assert np.sum(w * r**2) == pytest.approx(m.mse(), rel=1e-10)  # smooth integrand: GL converges


@pytest.mark.parametrize(("T", "k", "p", "sigma"), CASES)
def test_privacy_loss_is_log_density_ratio(T, k, p, sigma):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, T)) * sigma
    v = np.zeros(T)
    v[0] = 1.0
    expected = log_density(x, T, k, p, sigma) - log_density(x - v, T, k, p, sigma)
    got = SGGMechanism(T, k, p, sigma).privacy_loss(x)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)  # same formula, round-off


@pytest.mark.parametrize(("T", "k", "p", "sigma"), CASES)
def test_sampler_radius_follows_generalized_gamma_and_direction_is_uniform(T, k, p, sigma):
    x = SGGMechanism(T, k, p, sigma).sample(100_000, seed=1)
    r = np.linalg.norm(x, axis=1)
    # scipy's gengamma(a, c, scale) is the Stacy law with a = k/p, c = p: an independent reference.
    assert stats.kstest(r, stats.gengamma(k / p, p, scale=sigma).cdf).pvalue > 1e-3
    u = x / r[:, None]
    # E u = 0 and E u_1² = 1/T; 5 standard errors of 1e5 draws (sd of u_i, u_i² <= 1)
    assert np.all(np.abs(u.mean(axis=0)) < 5 / math.sqrt(1e5))
    assert abs(np.mean(u[:, 0] ** 2) - 1 / T) < 5 / math.sqrt(1e5)


def test_mse_closed_forms_of_members_and_monte_carlo():
    assert l2_member(4, sigma=1.5).mse() == pytest.approx(4 * 5 * 1.5**2, rel=1e-12)
    g = gaussian_member(6, std=0.8)
    assert g.mse() == pytest.approx(6 * 0.64, rel=1e-12)
    assert g.variance_per_coordinate() == pytest.approx(0.64, rel=1e-12)
    m = SGGMechanism(3, 2.5, 1.35, 2.0)
    x = m.sample(400_000, seed=2)
    sq = np.sum(x**2, axis=1)
    # 5 standard errors of the Monte-Carlo mean
    assert abs(sq.mean() - m.mse()) < 5 * sq.std() / math.sqrt(sq.size)
    norms = np.sqrt(sq)
    assert abs(norms.mean() - m.mean_norm()) < 5 * norms.std() / math.sqrt(norms.size)


def test_gaussian_member_samples_are_gaussian_coordinates():
    x = gaussian_member(4, std=1.7).sample(50_000, seed=3)
    for j in range(4):
        assert stats.kstest(x[:, j], stats.norm(scale=1.7).cdf).pvalue > 1e-3


def test_sample_is_reproducible_under_a_seed():
    m = SGGMechanism(3, 3.0, 1.35, 1.0)
    np.testing.assert_array_equal(m.sample(5, seed=7), m.sample(5, seed=7))
    assert not np.array_equal(m.sample(5, seed=7), m.sample(5, seed=8))
