"""Schedules, conversions, tableaus, Brownian tree, baselines, stability (spec §7 items 3, 6-11)."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from icml26.rex import (
    TABLEAUS,
    CustomSchedule,
    FlowMatchingSchedule,
    SeededBrownian,
    TimeVariable,
    VPSchedule,
    convert_output,
    get_tableau,
)
from icml26.rex.baselines import BDIA, DDIM, EDICT, OBELM
from icml26.rex.metrics import mmd_rbf, observed_order, roundtrip_error, sliced_wasserstein
from icml26.rex.stability import coupled_euler_matrix, spectral_radius, stable_interval
from icml26.rex.toy import GaussianData, GaussianMixtureData

SCHEDULES = [
    VPSchedule(kind="linear"),
    VPSchedule(0.85, 12.0, kind="scaled_linear"),
    FlowMatchingSchedule(),
    CustomSchedule(lambda t: math.cos(math.pi * t / 2), lambda t: math.sin(math.pi * t / 2),
                   t_noise=0.999, t_data=1e-3),
]  # fmt: skip
CASES = [("data", False), ("noise", False), ("data", True), ("noise", True)]


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: repr(s).split(" object at ")[0])
@pytest.mark.parametrize(("prediction", "sde"), CASES)
def test_time_variable_inverse_and_kappa(schedule, prediction, sde):
    tv = TimeVariable(schedule, prediction, sde)
    lo, hi = sorted((schedule.t_data, schedule.t_noise))
    for t in np.linspace(max(lo, 2e-3), min(hi, 0.998), 23):
        assert tv.t_of(tv.varsigma(float(t))) == pytest.approx(float(t), abs=1e-10)
        a, s = schedule.alpha(t), schedule.sigma(t)
        expected_kappa = a if prediction == "noise" else (s * s / a if sde else s)
        assert tv.kappa(float(t)) == pytest.approx(expected_kappa, rel=1e-14)


def test_vp_schedules_closed_forms():
    s = VPSchedule(0.1, 20.0)
    t = 0.37
    assert s.alpha(t) == pytest.approx(math.exp(-19.9 * t * t / 4 - 0.05 * t), rel=1e-15)
    assert s.alpha(t) ** 2 + s.sigma(t) ** 2 == pytest.approx(1.0, abs=1e-15)
    # scaled_linear: beta(t) = (sqrt(b0) + t (sqrt(b1) - sqrt(b0)))^2, alpha = exp(-1/2 int beta)
    sl = VPSchedule(0.85, 12.0, kind="scaled_linear")
    from scipy.integrate import quad

    integral, _ = quad(
        lambda u: (math.sqrt(0.85) + u * (math.sqrt(12) - math.sqrt(0.85))) ** 2, 0, t
    )
    assert sl.alpha(t) == pytest.approx(math.exp(-integral / 2), rel=1e-12)
    # from_betas reads 1000 * betas[0] and 1000 * betas[-1]
    betas = torch.linspace(0.00085**0.5, 0.012**0.5, 1000) ** 2
    built = VPSchedule.from_betas(betas, kind="scaled_linear")
    assert (built.beta0, built.beta1) == pytest.approx((0.85, 12.0), rel=1e-5)


@pytest.mark.parametrize("schedule", SCHEDULES[:3], ids=lambda s: repr(s).split(" object at ")[0])
def test_derivatives_match_finite_differences(schedule):
    t, d = 0.4, 1e-6
    assert schedule.alpha_dot(t) == pytest.approx(
        (schedule.alpha(t + d) - schedule.alpha(t - d)) / (2 * d), rel=1e-6
    )
    assert schedule.sigma_dot(t) == pytest.approx(
        (schedule.sigma(t + d) - schedule.sigma(t - d)) / (2 * d), rel=1e-6
    )


@pytest.mark.parametrize("schedule", SCHEDULES[:3], ids=lambda s: repr(s).split(" object at ")[0])
@pytest.mark.parametrize("source", ["noise", "data", "velocity"])
@pytest.mark.parametrize("target", ["noise", "data", "velocity"])
def test_conversions_are_mutually_consistent(schedule, source, target):
    g = torch.Generator().manual_seed(0)
    x, out = (
        torch.randn(5, 3, generator=g, dtype=torch.float64),
        torch.randn(5, 3, generator=g, dtype=torch.float64),
    )
    t = 0.6
    there = convert_output(out, x, t, schedule, source=source, target=target)
    back = convert_output(there, x, t, schedule, source=target, target=source)
    assert roundtrip_error(back, out, "max") < 1e-12
    # consistency with the forward process: x = alpha x0 + sigma eps
    x0 = convert_output(out, x, t, schedule, source=source, target="data")
    eps = convert_output(out, x, t, schedule, source=source, target="noise")
    assert roundtrip_error(schedule.alpha(t) * x0 + schedule.sigma(t) * eps, x, "max") < 1e-12


def _order_conditions(tab, order):
    c, b = np.array(tab.c), np.array(tab.b)
    A = np.zeros((len(b), len(b)))
    for i, row in enumerate(tab.a):
        A[i, : len(row)] = row
    conds = {1: [(b.sum(), 1)], 2: [(b @ c, Fraction(1, 2))],
             3: [(b @ c**2, Fraction(1, 3)), (b @ A @ c, Fraction(1, 6))],
             4: [(b @ c**3, Fraction(1, 4)), (b @ (c * (A @ c)), Fraction(1, 8)),
                 (b @ A @ c**2, Fraction(1, 12)), (b @ A @ A @ c, Fraction(1, 24))]}  # fmt: skip
    return [pair for k in range(1, min(order, 4) + 1) for pair in conds[k]], A


@pytest.mark.parametrize("name", sorted(TABLEAUS))
def test_tableaus_satisfy_their_order_conditions(name):
    tab = get_tableau(name)
    conditions, A = _order_conditions(tab, tab.order)
    for value, expected in conditions:
        assert value == pytest.approx(float(expected), abs=1e-14)
    assert np.allclose(A.sum(1), tab.c, atol=1e-14)  # row-sum condition
    if tab.b_hat is not None:
        assert sum(tab.b_hat) == pytest.approx(1.0, abs=1e-14)


def test_brownian_is_reproducible_and_additive():
    bm = SeededBrownian(5, (7,), 0.0, 10.0)
    W1, H1 = bm.increment(1.3, 6.1)
    W2, H2 = SeededBrownian(5, (7,), 0.0, 10.0).increment(1.3, 6.1)  # fresh object, same seed
    assert torch.equal(W1, W2) and torch.equal(H1, H2)
    bm.increment(0.2, 9.0)  # other queries in between change nothing
    assert torch.equal(bm.increment(1.3, 6.1)[0], W1)
    Wa, Ha = bm.increment(1.3, 2.7)
    Wb, Hb = bm.increment(2.7, 6.1)
    assert torch.allclose(Wa + Wb, W1, atol=1e-12)
    # integrals add too: K = h (H + W/2), K_ac = K_ab + K_bc + (c - b) W_ab
    K = lambda h, W, H: h * (H + W / 2)  # noqa: E731
    assert torch.allclose(K(1.4, Wa, Ha) + K(3.4, Wb, Hb) + 3.4 * Wa, K(4.8, W1, H1), atol=1e-12)
    Wr, Hr = bm.increment(6.1, 1.3)  # reversed interval: -W, same H
    assert torch.equal(Wr, -W1) and torch.equal(Hr, H1)


def test_brownian_levy_area_moments():
    n = 100_000
    bm = SeededBrownian(11, (n,), 0.0, 1.0)
    a, b = 0.123, 0.789  # not dyadic: exercises the splits, combination and leaf parabola
    W, H = bm.increment(a, b)
    h = b - a
    # standard errors of a variance estimate from 1e5 draws are ~0.45%: 3% is ~6 sigma
    assert W.var().item() == pytest.approx(h, rel=0.03)
    assert H.var().item() == pytest.approx(h / 12, rel=0.03)
    corr = torch.corrcoef(torch.stack([W, H]))[0, 1].item()
    assert abs(corr) < 0.02  # ~6 standard errors of a correlation from 1e5 draws


def test_brownian_bad_inputs():
    bm = SeededBrownian(0, (2,), 0.0, 1.0)
    with pytest.raises(ValueError, match="leaves the path's span"):
        bm.increment(0.5, 1.5)
    with pytest.raises(ValueError, match="empty interval"):
        bm.increment(0.5, 0.5)
    with pytest.raises(ValueError, match="need finite lo < hi"):
        SeededBrownian(0, (2,), 1.0, 1.0)
    with pytest.raises(TypeError, match="seed must be an int"):
        SeededBrownian(0.5, (2,), 0.0, 1.0)


@pytest.fixture(scope="module")
def problem():
    schedule = VPSchedule(t_data=1e-3)
    data = GaussianMixtureData()
    ts = [float(t) for t in np.linspace(1.0, 1e-3, 11)]
    return schedule, data.denoiser(schedule), data.sample(64, seed=0), ts


@pytest.mark.parametrize("cls", [EDICT, BDIA, OBELM])
def test_exact_inversion_baselines_invert_in_float64(cls, problem):
    schedule, model, x0, ts = problem
    solver = cls(model, schedule, model_output="data")
    assert roundtrip_error(solver.decode(solver.encode(x0, ts), ts), x0, "max") < 1e-10


def test_ddim_inversion_is_not_exact(problem):
    schedule, model, x0, ts = problem
    ddim = DDIM(model, schedule, model_output="data")
    assert roundtrip_error(ddim.decode(ddim.encode(x0, ts), ts), x0) > 1e-3


def test_obelm_is_exact_on_a_point_mass_with_the_true_noise():
    # For data = one point, eps(x_t) is exact and O-BELM's update is exact (its coefficients sum
    # to the right combination of x0 and eps), so samples land on the point.
    schedule = VPSchedule(t_data=1e-3)
    point = GaussianData(mu=0.7, s=1e-12, dim=1)
    solver = OBELM(point.denoiser(schedule), schedule, model_output="data")
    x_T = torch.randn(8, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ts = [float(t) for t in np.linspace(1.0, 1e-3, 8)]
    out = solver.sample(x_T, ts)
    eps = (x_T - schedule.alpha(1.0) * 0.7) / schedule.sigma(1.0)
    expected = schedule.alpha(ts[-1]) * 0.7 + schedule.sigma(ts[-1]) * eps
    assert roundtrip_error(out, expected, "max") < 1e-10


def _simulated_growth_rate(z, zeta, steps=200_000, window=10_000):
    """Growth factor per step of the coupled Euler iteration, written out independently."""
    x, x_hat, norms = 1.0, 1.0, []
    for n in range(steps):
        x = zeta * x + (1 - zeta) * x_hat + z * x_hat
        x_hat = x_hat + z * x
        if n in (steps - window - 1, steps - 1):
            norms.append(math.hypot(x, x_hat))
    return (norms[1] / norms[0]) ** (1 / window)


@pytest.mark.parametrize("zeta", [0.99, 0.999])
def test_coupled_euler_stability_interval(zeta):
    lo, hi = stable_interval(zeta)
    width = hi - lo
    for z, stable in [(lo + 0.1 * width, True), (hi - 0.1 * width, True),
                      (lo - 0.1 * width, False), (hi + 0.1 * width, False)]:  # fmt: skip
        rho = spectral_radius(z, zeta)
        assert (rho < 1) == stable
        # the simulated growth rate converges to the spectral radius (power iteration)
        assert _simulated_growth_rate(z, zeta) == pytest.approx(rho, abs=1e-9)
    assert np.linalg.det(coupled_euler_matrix(-0.3, zeta)).real == pytest.approx(zeta, abs=1e-12)
    assert spectral_radius(-0.05, 1.0) > 1  # zeta = 1: unstable for every real z != 0
    assert spectral_radius(0.05, 1.0) > 1


def test_metrics():
    assert observed_order([4.0, 1.0, 0.25], [1, 2, 4]) == pytest.approx(2.0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(500, 2, generator=g, dtype=torch.float64)
    assert sliced_wasserstein(x, x) == 0.0
    assert sliced_wasserstein(x, x + 1.0) == pytest.approx(
        1.0, rel=0.1
    )  # |shift| = sqrt(2) * E|u1+u2|/sqrt2
    assert abs(mmd_rbf(x, torch.randn(500, 2, generator=g, dtype=torch.float64))) < 0.01
    assert mmd_rbf(x, x + 3.0) > 0.5
    with pytest.raises(ValueError, match="need >= 2 positive entries"):
        observed_order([1.0, 0.0], [1, 2])
    with pytest.raises(ValueError, match="a and b must share a shape"):
        roundtrip_error(torch.zeros(2), torch.zeros(3))


def test_schedule_bad_inputs():
    with pytest.raises(ValueError, match="kind must be one of 'linear', 'scaled_linear'"):
        VPSchedule(kind="cosine")
    with pytest.raises(ValueError, match="beta1 must be >= beta0"):
        VPSchedule(20.0, 0.1)
    with pytest.raises(TypeError, match="alpha_fn and sigma_fn must be callables"):
        CustomSchedule(1.0, 2.0)
    with pytest.raises(ValueError, match="velocity outputs need alpha_dot_fn"):
        CustomSchedule(math.cos, math.sin).alpha_dot(0.3)
