"""The synthetic generator and its seeded power-law noise (§7.8)."""

import colorednoise
import numpy as np
import pytest

from icml26.powerlaw_cd import powerlaw_noise, simulate_ou


def _lag_corr(a, b, lag):
    da, db = np.diff(a), np.diff(b)  # increments: the levels are strongly autocorrelated
    return np.corrcoef(da[:-lag], db[lag:])[0, 1]


@pytest.mark.parametrize("kind", [dict(), dict(stock_like=True, stationary=False)])
def test_adjacency_is_a_strictly_upper_triangular_dag(kind):
    for seed in range(10):
        sim = simulate_ou(6, 600, seed=seed, **kind)
        assert np.all(np.tril(sim.adjacency) == 0)
        assert sim.X.shape == (6, 600 - 6 * 5)


def test_no_coupling_gives_no_lagged_cross_correlation():
    sim = simulate_ou(4, 20000, strength=0.0, p_edge=1.0, seed=1)
    for i in range(4):
        for j in range(4):
            if i != j:
                # independent increments: sd of r is 1/sqrt(2e4) = 0.007, so 0.05 is ~7 sd
                assert abs(_lag_corr(sim.X[i], sim.X[j], sim.lag)) < 0.05


def test_an_edge_has_a_larger_lagged_cross_correlation_than_a_non_edge():
    sim = simulate_ou(4, 5000, strength=0.5, sigma_b=0.0, seed=2, normalize="zscore")
    edges = [
        abs(_lag_corr(sim.X[i], sim.X[j], 5))
        for i, j in zip(*np.nonzero(sim.adjacency), strict=True)
    ]
    absent = [abs(_lag_corr(sim.X[i], sim.X[j], 5)) for i in range(4) for j in range(4)
              if i < j and not sim.adjacency[i, j]]  # fmt: skip
    assert edges and absent and min(edges) > max(absent)


def test_the_same_seed_gives_the_same_data_colored_noise_included():
    a = simulate_ou(3, 800, sigma_b=1.0, stock_like=True, seed=11)
    b = simulate_ou(3, 800, sigma_b=1.0, stock_like=True, seed=11)
    c = simulate_ou(3, 800, sigma_b=1.0, stock_like=True, seed=12)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)


def test_normalisations():
    first = simulate_ou(3, 600, seed=0, stationary=False)
    assert np.all(first.X[:, 0] == 1.0)
    z = simulate_ou(3, 600, seed=0, normalize="zscore")
    np.testing.assert_allclose(z.X.mean(axis=1), 0, atol=1e-12)  # round-off
    np.testing.assert_allclose(z.X.std(axis=1), 1, atol=1e-12)


def test_drift_coupling_variant_has_the_same_graph_and_lagged_effect():
    sim = simulate_ou(3, 5000, p_edge=1.0, strength=1.0, post_causality=False, seed=3,
                      normalize="zscore")  # fmt: skip
    assert sim.adjacency.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    assert np.all(np.isfinite(sim.X))


@pytest.mark.parametrize("beta", [0.0, 1.0, 2.0])
def test_powerlaw_noise_has_the_requested_spectral_slope_and_unit_variance(beta):
    x = powerlaw_noise(beta, (200, 1024), seed=0)
    power = np.mean(np.abs(np.fft.rfft(x, axis=-1)[:, 1:-1]) ** 2, axis=0)
    f = np.fft.rfftfreq(1024)[1:-1]
    slope = np.polyfit(np.log10(f), np.log10(power), 1)[0]
    assert slope == pytest.approx(-beta, abs=0.05)  # 200 averaged periodograms: slope sd ~0.01
    centred = x - x.mean(axis=-1, keepdims=True)  # the DC bin is excluded from the scaling
    # exact for the non-DC part; the Nyquist term's halving shifts it by < 1%; 200 series average
    assert np.mean(centred.var(axis=-1)) == pytest.approx(1.0, rel=0.05)


def test_powerlaw_noise_variance_matches_colorednoise():
    ours = powerlaw_noise(2.0, (400, 512), seed=1)
    ref = colorednoise.powerlaw_psd_gaussian(2.0, (400, 512), random_state=np.random.default_rng(1))
    # same construction, independent draws: mean variances agree within sampling error (~5%)
    assert np.var(ours - ours.mean(-1, keepdims=True)) == pytest.approx(
        np.var(ref - ref.mean(-1, keepdims=True)), rel=0.1
    )
