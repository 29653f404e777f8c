"""LAHP (spec §7): effective rank, the cumulative profile, the cost-equivalent scale, MPP."""

import numpy as np
import pytest
import torch
from scipy.optimize import brentq
from scipy.stats import ortho_group

from icml26.omnifit import (
    LAHPProfile,
    cumulative_profile,
    effective_rank,
    layer_cost,
    modality_preference,
    retention_profile,
    split_budget,
)


def test_rank_one_matrix_has_effective_rank_one():
    g = torch.Generator().manual_seed(0)
    u, v = (
        torch.randn(20, 1, generator=g, dtype=torch.float64),
        torch.randn(1, 8, generator=g, dtype=torch.float64),
    )
    assert effective_rank(u @ v, 0.9) == 1


@pytest.mark.parametrize(("d", "delta", "expected"), [(10, 0.9, 10), (10, 0.85, 9), (20, 0.5, 11)])
def test_isotropic_matrix_takes_floor_delta_d_plus_one(d, delta, expected):
    # orthonormal columns scaled equally: every singular value equal, strict ">" convention
    Q = torch.as_tensor(ortho_group.rvs(30, random_state=1)[:, :d]) * 3.0
    assert effective_rank(Q, delta) == expected


def test_effective_rank_is_invariant_to_rotations_and_scale_and_monotone_in_delta():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 12)) * np.linspace(3, 0.1, 12)  # anisotropic spectrum
    U, V = ortho_group.rvs(40, random_state=3), ortho_group.rvs(12, random_state=4)
    base = [effective_rank(torch.as_tensor(X), delta) for delta in (0.3, 0.6, 0.9, 0.99)]
    rotated = [
        effective_rank(torch.as_tensor(U @ X @ V * 7.5), delta) for delta in (0.3, 0.6, 0.9, 0.99)
    ]
    assert base == rotated
    assert base == sorted(base) and base[0] < base[-1]


def test_cumulative_profile_is_the_running_product():
    psi = cumulative_profile([8, 6, 6, 3], 8)
    np.testing.assert_allclose(
        psi, [1.0, 0.75, 0.75 * 0.75, 0.75 * 0.75 * 3 / 8], rtol=0, atol=1e-15
    )
    assert np.all(np.diff(psi) <= 0)


@pytest.mark.parametrize("mu", [0.4, 0.3, 0.2, 0.1])
@pytest.mark.parametrize(
    "k_eff", [[90, 88, 86, 85, 84, 80, 78, 75], [60, 55, 50, 48, 45, 40, 38, 35]]
)
def test_xi_is_the_root_of_the_cost_equation_and_at_most_one(mu, k_eff):
    psi = cumulative_profile(k_eff, 96)
    c1, c2, N = 221184.0, 384.0, 192
    r, xi = retention_profile(psi, mu, c1, c2, N, r_min=1e-9)
    r_tilde = mu * psi / psi.mean()
    assert r_tilde.mean() == pytest.approx(mu, abs=1e-15)
    target = len(psi) * layer_cost(mu * N, c1, c2)

    def gap(x):
        return layer_cost(x * r_tilde * N, c1, c2).sum() - target

    if np.all(r < 1):  # nothing clipped: xi is the root over all layers
        assert xi == pytest.approx(brentq(gap, 1e-9, 10.0, xtol=1e-14), abs=1e-9)
        np.testing.assert_allclose(r, xi * r_tilde, rtol=1e-12)
        assert xi <= 1.0  # Jensen: sum r~^2 >= L mu^2
    else:  # layers clipped at 1: the others rise above their unclipped scale
        assert k_eff[0] == 60
    # the cost equation holds before rounding, clipped or not
    assert layer_cost(r * N, c1, c2).sum() == pytest.approx(target, rel=1e-12)
    assert np.all((r >= 1e-9) & (r <= 1.0))


def test_flat_profile_gives_xi_one_and_mu_everywhere():
    r, xi = retention_profile(np.ones(6), 0.3, 5.0, 0.1, 500)
    assert xi == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(r, 0.3, atol=1e-12)


@pytest.mark.parametrize(("mu", "clip"), [(0.3, "low"), (0.8, "high")])
def test_clipping_keeps_entries_in_range_and_the_cost_equal(mu, clip):
    psi = cumulative_profile([10, 4, 4, 4, 4, 4], 10)  # steep: deep layers clip at r_min
    r, _ = retention_profile(psi, mu, 1.0, 1.0, 100, r_min=0.05)
    assert np.all((r >= 0.05) & (r <= 1.0))
    assert (r == 0.05).any() if clip == "low" else r[0] == 1.0
    target = 6 * layer_cost(mu * 100, 1.0, 1.0)
    assert layer_cost(r * 100, 1.0, 1.0).sum() == pytest.approx(target, rel=1e-12)


def test_mu_one_keeps_every_token():
    r, xi = retention_profile([1.0, 0.5, 0.1], 1.0, 1.0, 1.0, 10)
    assert r.tolist() == [1.0, 1.0, 1.0] and xi == 1.0


def test_preference_is_unchanged_when_a_modality_is_duplicated():
    # every query attends the same way (identical rows), so duplicating the video tokens (their
    # rows and their key columns, each copy receiving the same attention) changes neither
    # modality's per-token preference: the token normalisation 1/N_m cancels the doubled sum
    g = torch.Generator().manual_seed(5)
    ids = torch.tensor([1, 1, 1, 2, 2, 0, 0])
    received = torch.rand(3, 7, generator=g, dtype=torch.float64)  # (L, n)
    A = received[:, None, :].expand(3, 7, 7)
    idx = torch.cat([torch.arange(7), torch.nonzero(ids == 1).flatten()])
    A_dup = A[:, idx][:, :, idx]
    rho, rho_dup = modality_preference(A, ids), modality_preference(A_dup, ids[idx])
    for name in ("video", "audio"):
        np.testing.assert_allclose(rho_dup[name], rho[name], rtol=1e-12)
    np.testing.assert_allclose(rho["video"], received[:, :3].mean(1).numpy(), rtol=1e-12)


def test_preference_averages_five_dimensional_maps():
    g = torch.Generator().manual_seed(6)
    A = torch.softmax(torch.randn(2, 3, 4, 5, 5, generator=g, dtype=torch.float64), dim=-1)
    ids = torch.tensor([0, 1, 1, 2, 2])
    rho5 = modality_preference(A, ids)
    rho3 = modality_preference(A.mean(dim=(1, 2)), ids)
    np.testing.assert_allclose(rho5["audio"], rho3["audio"], rtol=1e-12)


def test_missing_modality_gets_zero_preference():
    A = torch.full((2, 3, 3), 1 / 3)
    rho = modality_preference(A, torch.tensor([0, 1, 1]))
    assert rho["audio"].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("K", [0, 1, 7, 13, 40, 100])
def test_split_budget_sums_to_k_and_follows_preference_density(K):
    rho, counts = {"video": 0.02, "audio": 0.05}, {"video": 64, "audio": 32}
    out = split_budget(K, rho, counts)
    assert out["video"] + out["audio"] == min(K, 96)
    share = 0.02 * 64 / (0.02 * 64 + 0.05 * 32)
    if 0 < K <= 40:  # no cap binds: proportional to rho_m N_m up to rounding
        assert abs(out["video"] - share * K) <= 1


def test_split_budget_caps_and_hands_the_overflow_over():
    out = split_budget(30, {"video": 0.0, "audio": 1.0}, {"video": 64, "audio": 10})
    assert out == {"video": 20, "audio": 10}


def test_split_budget_without_audio_gives_video_everything():
    assert split_budget(12, {"video": 0.0, "audio": 0.0}, {"video": 50, "audio": 0}) == {
        "video": 12,
        "audio": 0,
    }


def test_layer_budgets_are_non_increasing_and_profile_round_trips(tmp_path):
    p = LAHPProfile(
        [96, 60, 50, 40],
        96,
        {"video": [0.1, 0.3, 0.1, 0.2], "audio": [0.3, 0.1, 0.4, 0.1]},
        221184.0,
        384.0,
        meta={"N": 192},
    )
    budgets = p.layer_budgets(0.3, {"video": 128, "audio": 64})
    for name in ("video", "audio"):
        counts = [b[name] for b in budgets]
        assert counts == sorted(counts, reverse=True)
    p.save(tmp_path / "p.json")
    q = LAHPProfile.load(tmp_path / "p.json")
    assert q.to_dict() == p.to_dict()
    assert q.layer_budgets(0.3, {"video": 128, "audio": 64}) == budgets
