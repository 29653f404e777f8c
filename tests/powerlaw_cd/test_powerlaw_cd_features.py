"""Spectral features: known exponents, invariances, OLS equivalence, shapes (spec §7.1-7.4)."""

import colorednoise
import numpy as np
import pytest

from icml26.powerlaw_cd import (
    n_windows,
    powerlaw_features,
    powerlaw_features_reference,
    powerlaw_noise,
    window_frequencies,
)


@pytest.mark.parametrize("window", [50, 256])
@pytest.mark.parametrize("beta", [0.5, 1.0, 1.5, 2.0])
def test_median_exponent_recovers_the_noise_exponent(beta, window):
    x = powerlaw_noise(beta, (4, 4096), seed=7)  # 4 realisations: the median's spread is ~0.03
    lam, _ = powerlaw_features(x, window=window)
    # spec §7.1: leakage biases steep spectra low by ~0.13 at W=50; 0.15 is the spec's bound
    assert abs(np.median(lam) - beta) < 0.15


def test_colorednoise_reference_noise_gives_the_same_exponents():
    x = colorednoise.powerlaw_psd_gaussian(1.5, (1, 4096), random_state=np.random.default_rng(3))
    lam, _ = powerlaw_features(x, window=50, stride=4)
    assert abs(np.median(lam) - 1.5) < 0.15  # the spec's bound, independent noise generator


def test_scaling_shifts_the_intercept_by_two_log10_c_and_keeps_the_exponent():
    X = np.random.default_rng(0).standard_normal((2, 400)).cumsum(axis=1)
    lam, amp = powerlaw_features(X)
    lam3, amp3 = powerlaw_features(3.0 * X)
    np.testing.assert_allclose(lam3, lam, atol=1e-10)  # round-off of log10 only
    np.testing.assert_allclose(amp3 - amp, 2 * np.log10(3.0), atol=1e-10)


def test_adding_a_constant_changes_only_the_dropped_dc_bin():
    X = np.random.default_rng(1).standard_normal((3, 300))
    for a, b in zip(powerlaw_features(X), powerlaw_features(X + 123.0), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)  # spec §7.2: FFT round-off at |x| ~ 1e2


@pytest.mark.parametrize(("window", "stride"), [(50, 1), (64, 3), (7, 2)])
def test_vectorised_fit_equals_per_window_polyfit(window, stride):
    X = np.random.default_rng(2).standard_normal((3, 500)).cumsum(axis=1)
    fast = powerlaw_features(X, window, stride)
    slow = powerlaw_features_reference(X, window, stride)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)  # spec §7.3: two OLS solvers, float64


def _naive_fit(segment, window, weight_exponent, remove_outliers):
    f = np.arange(window // 2)[1:] / window
    power = np.abs(np.fft.fft(segment)[1 : window // 2]) ** 2
    x, y = np.log10(f), np.log10(power)
    w = np.abs(x) ** -weight_exponent
    # np.polyfit weights multiply residuals, so sqrt of the squared-residual weights
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))
    if remove_outliers:
        resid = y - (intercept + slope * x)
        q1, q3 = np.quantile(resid, [0.25, 0.75])
        keep = (resid >= q1 - 1.5 * (q3 - q1)) & (resid <= q3 + 1.5 * (q3 - q1))
        slope, intercept = np.polyfit(x[keep], y[keep], 1, w=np.sqrt(w[keep]))
    return -slope, intercept


@pytest.mark.parametrize(
    ("weight_exponent", "remove_outliers"), [(1.0, False), (0.0, True), (2.0, True)]
)
def test_weighted_and_outlier_fits_equal_a_naive_loop(weight_exponent, remove_outliers):
    X = np.random.default_rng(4).standard_normal((2, 90))
    lam, amp = powerlaw_features(X, 50, 5, weight_exponent=weight_exponent,
                                 remove_outliers=remove_outliers)  # fmt: skip
    for i in range(2):
        for k in range(lam.shape[1]):
            ref = _naive_fit(X[i, 5 * k : 5 * k + 50], 50, weight_exponent, remove_outliers)
            np.testing.assert_allclose((lam[i, k], amp[i, k]), ref, atol=1e-9)  # float64 OLS


def test_exact_power_law_is_fitted_exactly():
    # a window whose periodogram is exactly c f^-2 (built in the frequency domain) gives λ = 2
    window = 50
    f = np.arange(window // 2 + 1) / window
    amplitude = np.zeros(f.size)
    amplitude[1:] = 10.0 * f[1:] ** -1.0
    x = np.fft.irfft(amplitude * np.exp(1j * np.linspace(0, 3, f.size)), n=window)
    lam, amp = powerlaw_features(x[None], window)
    assert lam[0, 0] == pytest.approx(2.0, abs=1e-9)  # exact power law, round-off only
    assert amp[0, 0] == pytest.approx(2.0, abs=1e-9)  # log10(10²)


def test_shapes_and_frequency_count():
    assert window_frequencies(50).size == 24
    assert n_windows(5000, 50, 1) == 4951 and n_windows(100, 50, 7) == 8
    lam, amp = powerlaw_features(np.zeros((2, 100)) + np.arange(100.0) ** 1.5, 50, 7)
    assert lam.shape == amp.shape == (2, 8)


def test_a_window_without_power_is_forward_filled():
    X = np.random.default_rng(5).standard_normal((1, 200))
    X[0, 120:] = 0.0  # windows entirely in the zero tail have exactly zero power
    lam, amp = powerlaw_features(X, 50, 10)
    last_fit = 11  # window 11 covers samples 110..159, window 12 starts in the tail
    assert np.all(np.isfinite(lam))
    assert np.all(lam[0, last_fit + 1 :] == lam[0, last_fit])
    assert np.all(amp[0, last_fit + 1 :] == amp[0, last_fit])
