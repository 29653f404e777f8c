"""Rex solver: per-step inverses, round trips, order, special cases, adaptive steps (spec §7)."""

import itertools
import math

import pytest
import torch

from icml26.rex import (
    TABLEAUS,
    RexSolver,
    SeededBrownian,
    VPSchedule,
    princeps_step,
)
from icml26.rex.baselines import DDIM
from icml26.rex.metrics import observed_order, roundtrip_error
from icml26.rex.toy import GaussianData, GaussianMixtureData

SCHEDULE = VPSchedule(t_data=1e-3)
GMM = GaussianMixtureData().denoiser(SCHEDULE)
GAUSS = GaussianData(mu=0.5, s=0.5, dim=2)


def randn(*shape, seed=0):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("tableau", sorted(TABLEAUS))
@pytest.mark.parametrize("zeta", [0.9, 0.999, 1.0])
@pytest.mark.parametrize("prediction", ["data", "noise"])
@pytest.mark.parametrize("direction", [+1, -1])
def test_backward_step_inverts_forward_step_ode(tableau, zeta, prediction, direction):
    solver = RexSolver(GMM, SCHEDULE, tableau=tableau, prediction=prediction, model_output="data",
                       zeta=zeta)  # fmt: skip
    x, x_hat = randn(16, 2, seed=1), randn(16, 2, seed=2)
    t0, t1 = (0.6, 0.45) if direction > 0 else (0.45, 0.6)  # h > 0 and h < 0 in varsigma
    x1, x_hat1, _ = solver.forward_step(x, x_hat, t0, t1)
    x_back, x_hat_back = solver.backward_step(x1, x_hat1, t0, t1)
    # float64 round-off of O(10) operations on O(1) values
    assert roundtrip_error(x_back, x, "max") < 1e-12
    assert roundtrip_error(x_hat_back, x_hat, "max") < 1e-12


@pytest.mark.parametrize("sde", ["em", "shark"])
@pytest.mark.parametrize("zeta", [0.9, 0.999, 1.0])
@pytest.mark.parametrize("prediction", ["data", "noise"])
def test_backward_step_inverts_forward_step_sde(sde, zeta, prediction):
    solver = RexSolver(
        GMM, SCHEDULE, sde=sde, prediction=prediction, model_output="data", zeta=zeta
    )
    x, x_hat = randn(16, 2, seed=1), randn(16, 2, seed=2)
    t0, t1 = 0.6, 0.45
    bm = SeededBrownian(3, x.shape, 0.0, 100.0)
    noise = bm.increment(solver.tv.noise_clock(t0), solver.tv.noise_clock(t1))
    x1, x_hat1, _ = solver.forward_step(x, x_hat, t0, t1, noise)
    x_back, x_hat_back = solver.backward_step(x1, x_hat1, t0, t1, noise)
    assert roundtrip_error(x_back, x, "max") < 1e-12
    assert roundtrip_error(x_hat_back, x_hat, "max") < 1e-12


@pytest.mark.parametrize("tableau", ["euler", "midpoint", "rk4", "dopri5"])
@pytest.mark.parametrize("n_steps", [10, 50])
def test_whole_trajectory_round_trips(tableau, n_steps):
    model = GAUSS.denoiser(SCHEDULE)
    solver = RexSolver(model, SCHEDULE, tableau=tableau, model_output="data", n_steps=n_steps,
                       grid="logsnr")  # fmt: skip
    ts = solver.timesteps()
    data, noise = GAUSS.sample(64, seed=0), randn(64, 2)
    x_T, x_T_hat = solver.encode(data, ts)
    assert roundtrip_error(solver.decode(x_T, x_T_hat, ts)[0], data, "max") < 1e-10
    # Decode first: the data->noise map amplifies round-off ~3e3 here (measured), so 1e-10 holds.
    x_0, x_0_hat = solver.decode(noise, noise.clone(), ts)
    back, back_hat = solver.backward_solve(x_0, x_0_hat, ts)
    assert roundtrip_error(back, noise, "max") < 1e-10
    assert roundtrip_error(back_hat, noise, "max") < 1e-10


def test_sde_sampling_is_reproducible_and_invertible():
    solver = RexSolver(GMM, SCHEDULE, sde="shark", model_output="data", n_steps=20, seed=7)
    noise = randn(32, 2)
    x0, _x0_hat, ts = solver.sample(noise)
    x0_again, _, _ = RexSolver(GMM, SCHEDULE, sde="shark", model_output="data", n_steps=20,
                               seed=7).sample(noise)  # fmt: skip
    assert torch.equal(x0, x0_again)
    other, _, _ = RexSolver(GMM, SCHEDULE, sde="shark", model_output="data", n_steps=20,
                            seed=8).sample(noise)  # fmt: skip
    assert not torch.allclose(x0, other)
    data = GaussianMixtureData().sample(32, seed=1)
    x_T, x_T_hat = solver.encode(data, ts)
    assert roundtrip_error(solver.decode(x_T, x_T_hat, ts)[0], data, "max") < 1e-6


@pytest.mark.parametrize(("tableau", "nominal"), [("euler", 1), ("midpoint", 2), ("rk4", 4)])
@pytest.mark.parametrize("zeta", [0.999, 1.0])
def test_convergence_order_against_closed_form(tableau, nominal, zeta):
    model = GAUSS.denoiser(SCHEDULE)
    x_T = randn(16, 2)
    ns = [8, 16, 32, 64]
    errors = []
    for n in ns:
        solver = RexSolver(model, SCHEDULE, tableau=tableau, model_output="data", zeta=zeta,
                           n_steps=n, grid="logsnr")  # fmt: skip
        x0, _, ts = solver.sample(x_T)
        errors.append(roundtrip_error(x0, GAUSS.flow(SCHEDULE, x_T, ts[0], ts[-1]), "max"))
    # Theorem 3.5: order >= nominal; 0.25 slack for the pre-asymptotic range (spec §2.5)
    assert observed_order(errors, ns) >= nominal - 0.25


def test_princeps_euler_data_is_ddim_and_euler_noise_is_dpm_solver_1():
    x = randn(8, 2)
    ddim = DDIM(GMM, SCHEDULE, model_output="data")
    for t0, t1 in [(1.0, 0.7), (0.7, 0.2), (0.2, 0.001)]:
        step = princeps_step(GMM, SCHEDULE, x, t0, t1, tableau="euler", prediction="data",
                             model_output="data")  # fmt: skip
        assert roundtrip_error(step, ddim.ddim(x, t0, t1), "max") < 1e-12
        # DPM-Solver-1: x_t = (a_t/a_s) x_s - sigma_t (e^h - 1) eps, h = lambda_t - lambda_s
        noise_step = princeps_step(GMM, SCHEDULE, x, t0, t1, tableau="euler", prediction="noise",
                                   model_output="data")  # fmt: skip
        eps = ddim.eps(x, t0)
        h = SCHEDULE.log_snr(t1) - SCHEDULE.log_snr(t0)
        expected = (
            SCHEDULE.alpha(t1) / SCHEDULE.alpha(t0) * x - SCHEDULE.sigma(t1) * math.expm1(h) * eps
        )
        assert roundtrip_error(noise_step, expected, "max") < 1e-12


def test_zeta_one_euler_pair_gap_is_second_order_per_step():
    # x and x_hat start equal; one coupled Euler step separates them by
    # kappa h (f(x_hat_n) - f(x_{n+1})) = O(h^2). Over N = O(1/h) steps the gap is O(h).
    model = GAUSS.denoiser(SCHEDULE)
    x = randn(16, 2)
    hs = [0.04, 0.02, 0.01]
    one_step = []
    for h in hs:
        solver = RexSolver(model, SCHEDULE, tableau="euler", model_output="data", zeta=1.0)
        x1, x1_hat, _ = solver.forward_step(x, x.clone(), 0.5, 0.5 - h)
        one_step.append(roundtrip_error(x1, x1_hat, "max"))
    assert observed_order(one_step, [1 / h for h in hs]) >= 1.75
    ns, endpoint = [16, 32, 64], []
    for n in ns:
        solver = RexSolver(model, SCHEDULE, tableau="euler", model_output="data", zeta=1.0,
                           n_steps=n, grid="logsnr")  # fmt: skip
        x0, x0_hat, _ = solver.sample(x)
        endpoint.append(roundtrip_error(x0, x0_hat, "max"))
    assert observed_order(endpoint, ns) >= 0.75


def test_adaptive_grid_is_monotone_ends_at_t_end_and_replays_exactly():
    solver = RexSolver(GMM, SCHEDULE, tableau="dopri5", model_output="data", adaptive=True,
                       n_steps=10, atol=1e-6, rtol=1e-6)  # fmt: skip
    noise = randn(32, 2)
    x0, x0_hat, ts = solver.sample(noise)
    assert ts[0] == 1.0 and ts[-1] == SCHEDULE.t_data
    assert all(a > b for a, b in itertools.pairwise(ts))
    assert len(ts) > 5
    back, _back_hat = solver.backward_solve(x0, x0_hat, ts)
    assert roundtrip_error(back, noise, "max") < 1e-9
    # and the fixed-grid sweep on the recorded grid reproduces the adaptive samples exactly
    assert torch.equal(solver.forward_solve(noise, noise.clone(), ts)[0], x0)


def test_embedded_error_is_zero_when_the_solution_is_linear_in_varsigma():
    # A constant data prediction makes dY/dvarsigma constant: every RK pair is exact.
    def constant(x, t):
        return torch.full_like(x, 0.3)

    solver = RexSolver(constant, SCHEDULE, tableau="dopri5", model_output="data")
    _, _, err = solver.forward_step(randn(4, 2), randn(4, 2), 0.8, 0.5)
    assert err < 1e-13


def test_flow_matching_velocity_model_round_trips():
    from icml26.rex import FlowMatchingSchedule

    fm = FlowMatchingSchedule()
    # exact velocity field for data N(0.5, 0.25 I): v = d/dt (t mu + sqrt(t^2 s^2 + (1-t)^2) z)
    mu, s2 = 0.5, 0.25

    def velocity(x, t):
        tt = float(t[0])
        std = math.sqrt(tt * tt * s2 + (1 - tt) ** 2)
        z = (x - tt * mu) / std
        return mu + (tt * s2 - (1 - tt)) / std * z

    solver = RexSolver(velocity, fm, tableau="rk4", model_output="velocity", n_steps=80,
                       grid="logsnr")  # fmt: skip
    x_T = randn(16, 2)
    x0, _x0_hat, ts = solver.sample(x_T)
    std = lambda t: math.sqrt(t * t * s2 + (1 - t) ** 2)  # noqa: E731
    exact = ts[-1] * mu + std(ts[-1]) * (x_T - ts[0] * mu) / std(ts[0])
    # RK4 on a log-SNR grid: ~1e-5 at 80 steps here (order ~4 from 10 to 80 steps)
    assert roundtrip_error(x0, exact, "max") < 1e-4
    x_enc, x_enc_hat = solver.encode(x0, ts)
    assert roundtrip_error(solver.decode(x_enc, x_enc_hat, ts)[0], x0, "max") < 1e-10


def test_float32_state_stays_float32():
    solver = RexSolver(GMM, SCHEDULE, tableau="midpoint", model_output="data", n_steps=5)
    x0, x0_hat, _ = solver.sample(torch.randn(4, 2))
    assert x0.dtype == torch.float32 and x0_hat.dtype == torch.float32


def test_bad_inputs():
    with pytest.raises(ValueError, match="tableau must be one of"):
        RexSolver(GMM, SCHEDULE, tableau="rk9")
    with pytest.raises(ValueError, match="prediction must be one of 'data', 'noise'"):
        RexSolver(GMM, SCHEDULE, prediction="score")
    with pytest.raises(ValueError, match="model_output must be one of"):
        RexSolver(GMM, SCHEDULE, model_output="x")
    with pytest.raises(ValueError, match="sde must be one of"):
        RexSolver(GMM, SCHEDULE, sde="milstein")
    with pytest.raises(ValueError, match=r"zeta must be in \(0, 1\]; got 1.5"):
        RexSolver(GMM, SCHEDULE, zeta=1.5)
    with pytest.raises(ValueError, match=r"zeta must be in \(0, 1\]; got 0.0"):
        RexSolver(GMM, SCHEDULE, zeta=0.0)
    with pytest.raises(ValueError, match="adaptive=True needs sde=None and an embedded tableau"):
        RexSolver(GMM, SCHEDULE, tableau="rk4", adaptive=True)
    with pytest.raises(TypeError, match="model must be a callable"):
        RexSolver(3, SCHEDULE)
    solver = RexSolver(GMM, SCHEDULE, model_output="data")
    x = randn(4, 2)
    with pytest.raises(ValueError, match="at least 2 times"):
        solver.encode(x, [0.5])
    with pytest.raises(ValueError, match="strictly monotone"):
        solver.encode(x, [0.001, 0.5, 1.0])  # data end first
    with pytest.raises(ValueError, match="strictly monotone"):
        solver.encode(x, [1.0, 0.5, 0.5, 0.1])
    with pytest.raises(ValueError, match="must share shape and dtype"):
        solver.decode(x, randn(4, 3), [1.0, 0.5])
    with pytest.raises(ValueError, match="must share shape and dtype"):
        solver.decode(x, x.float(), [1.0, 0.5])


def test_princeps_solve_is_ddim_and_shares_rex_brownian_path():
    from icml26.rex import princeps_solve

    x_T = randn(16, 2)
    ts = RexSolver(GMM, SCHEDULE, n_steps=12, grid="logsnr").timesteps()
    plain = princeps_solve(GMM, SCHEDULE, x_T, ts, model_output="data")
    assert (
        roundtrip_error(plain, DDIM(GMM, SCHEDULE, model_output="data").decode(x_T, ts), "max")
        < 1e-12
    )
    # One EM step with zeta = 1 and x = x_hat: Rex's x1 is exactly the plain EM step on the same W.
    rex = RexSolver(GMM, SCHEDULE, sde="em", model_output="data", zeta=1.0, n_steps=1, seed=4)
    ts1 = rex.timesteps()
    x1, _, _ = rex.sample(x_T)
    em = princeps_solve(GMM, SCHEDULE, x_T, ts1, sde="em", model_output="data", seed=4)
    assert roundtrip_error(x1, em, "max") < 1e-12
