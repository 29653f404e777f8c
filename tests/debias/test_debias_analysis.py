"""Closed forms, the decomposition identity and the systematic ratio (spec §7 items 1-4)."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats
from torch import nn

from icml26.debias import (
    bias_profile,
    module_bias,
    relu_gaussian_bias,
    relu_gaussian_mean,
    systematic_ratio,
)


def test_relu_gaussian_bias_closed_values():
    # values of spec §7.1: s/sqrt(2 pi) at u = 0, even in u, and the far tail at (2, 0.5)
    assert relu_gaussian_bias(0.0, 1.0) == pytest.approx(0.398942, abs=5e-7)
    assert relu_gaussian_bias(1.0, 1.0) == pytest.approx(0.083315, abs=5e-7)
    assert relu_gaussian_bias(-1.0, 1.0) == pytest.approx(0.083315, abs=5e-7)
    assert relu_gaussian_bias(2.0, 0.5) == pytest.approx(3.5726e-6, rel=1e-4)


def test_relu_gaussian_mean_matches_numerical_integration():
    # an independent reference: integrate (u + s z) phi(z) over z > -u/s (past the kink)
    for u, s in [(-1.3, 0.7), (0.0, 2.0), (2.5, 0.4)]:
        ref, _ = integrate.quad(lambda z, u=u, s=s: (u + s * z) * stats.norm.pdf(z), -u / s,
                                np.inf, epsabs=1e-14, epsrel=1e-12)  # fmt: skip
        assert relu_gaussian_mean(u, s) == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_relu_gaussian_bias_matches_monte_carlo_within_4_se():
    rng = np.random.default_rng(0)
    for u in (-1.0, -0.3, 0.0, 0.6, 1.0):
        for s in (0.5, 1.0, 2.0):
            draws = np.maximum(u + s * rng.standard_normal(100_000), 0.0) - max(u, 0.0)
            se = draws.std(ddof=1) / math.sqrt(draws.size)
            assert abs(draws.mean() - relu_gaussian_bias(u, s)) <= 4 * se


def test_relu_gaussian_bias_is_nonnegative_even_and_maximal_at_zero():
    u = np.arange(-3000, 3001) / 100.0  # exactly symmetric grid
    for s in (0.1, 1.0, 3.0):
        b = relu_gaussian_bias(u, s)
        assert np.all(b >= 0)
        np.testing.assert_allclose(b, b[::-1], rtol=0, atol=1e-15)  # even in u
        assert b.max() == pytest.approx(s / math.sqrt(2 * math.pi), rel=1e-12)
        assert u[np.argmax(b)] == 0.0


def test_relu_gaussian_bias_far_tail_keeps_relative_precision():
    # b = s phi(t) (1 - t R(t)) ~ s phi(t) / t^2 for large t = |u|/s (asymptotic Mills ratio)
    t = 30.0
    b = relu_gaussian_bias(t, 1.0)
    phi = math.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)
    assert b == pytest.approx(phi / t**2 * (1 - 3 / t**2), rel=1e-3)  # next term O(t^-4)


def _linear(d_in=3, d_out=2, seed=0):
    torch.manual_seed(seed)  # test-local construction; the library never seeds globally
    return nn.Sequential(nn.Linear(d_in, d_out, dtype=torch.float64))


def test_linear_module_antithetic_bias_is_zero_and_mean_shift_is_w_mu():
    g = torch.Generator().manual_seed(1)
    net = _linear()
    x = torch.randn(50, 3, generator=g, dtype=torch.float64)
    d = torch.randn(50, 6, 3, generator=g, dtype=torch.float64)
    rep = module_bias(net, "0", x, x[:, None] + torch.cat([d, -d], dim=1))
    assert rep.bias.abs().max() < 1e-13  # float64 round-off of 12 terms
    mu = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)
    rep = module_bias(net, "0", x, x[:, None] + torch.cat([d, -d], dim=1) + mu)
    w_mu = net[0].weight.detach() @ mu
    torch.testing.assert_close(rep.bias, w_mu.expand(50, 2), rtol=0, atol=1e-12)
    assert rep.rho == pytest.approx(1.0, abs=1e-12)  # input-independent shift


def test_decomposition_identity_on_samples():
    g = torch.Generator().manual_seed(2)
    net = nn.Sequential(nn.Linear(4, 8, dtype=torch.float64), nn.Tanh())
    x = torch.randn(40, 4, generator=g, dtype=torch.float64)
    xp = x[:, None] + 0.5 + torch.randn(40, 7, 4, generator=g, dtype=torch.float64)
    rep = module_bias(net, "1", x, xp)
    torch.testing.assert_close(rep.sq_shift, (rep.bias**2).sum(1) + rep.fluct_var,
                               rtol=1e-6, atol=0)  # fmt: skip


def test_flat_and_nested_perturbed_batches_agree():
    g = torch.Generator().manual_seed(3)
    net = nn.Sequential(nn.Linear(4, 5), nn.ReLU())
    x = torch.randn(10, 4, generator=g)
    xp = x[:, None] + torch.randn(10, 3, 4, generator=g)
    a = module_bias(net, "1", x, xp)
    b = module_bias(net, "1", x, xp.flatten(0, 1))
    torch.testing.assert_close(a.bias, b.bias)


def test_systematic_ratio_limits():
    rng = np.random.default_rng(0)
    const = np.tile(rng.standard_normal(5), (100, 1))
    assert systematic_ratio(const) == pytest.approx(1.0)
    signs = rng.choice([-1.0, 1.0], size=(10_000, 1))
    assert systematic_ratio(signs * np.ones((1, 5))) < 1e-3  # |mean sign|^2 ~ 1/n
    mixed = const + rng.standard_normal((100, 5))
    assert 0.0 <= systematic_ratio(mixed) <= 1.0
    assert systematic_ratio(np.zeros((3, 2))) == 1.0  # convention: a zero shift is constant
    # scale-free, also where squaring the entries overflows (fuzz campaign 3 drew 1e300: NaN)
    huge = np.array([[-1e300, 7.4], [0.0, 1e6]])
    assert systematic_ratio(huge) == pytest.approx(systematic_ratio(huge / 1e300))
    assert systematic_ratio(np.zeros((4, 0))) == 1.0  # no columns: a zero shift (campaign 8)


def test_bias_profile_rows_match_module_bias():
    g = torch.Generator().manual_seed(4)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2))
    x = torch.randn(30, 3, generator=g)
    xp = x[:, None] + torch.randn(30, 5, 3, generator=g)
    df = bias_profile(net, x, xp)
    assert list(df["module"]) == ["0", "1", "2"]
    for name in ("0", "1", "2"):
        rep = module_bias(net, name, x, xp)
        row = df.set_index("module").loc[name]
        assert row["bias_norm"] == pytest.approx(rep.bias_norm)
        assert row["rho"] == pytest.approx(rep.rho)
        assert row["fluct"] == pytest.approx(rep.fluct)
    assert np.all((df["rho"] >= 0) & (df["rho"] <= 1))


def test_a_module_that_never_runs_is_named():
    lonely = nn.ModuleDict({"used": nn.Linear(2, 2), "idle": nn.Linear(2, 2)})

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = lonely

        def forward(self, x):
            return self.parts["used"](x)

    x = torch.zeros(3, 2)
    with pytest.raises(ValueError, match=r"modules \['parts.idle'\] never ran"):
        module_bias(Net(), "parts.idle", x, x[:, None])
    df = bias_profile(Net(), x, x[:, None])  # the default skips modules that never run
    assert list(df["module"]) == ["parts.used"]
