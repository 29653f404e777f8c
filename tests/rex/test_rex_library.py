"""Library pieces: seeded randomness, training with the core progress convention and loss guard,
round-trip errors, the mixture's marginal moments, SDE-DPM-Solver++(1) and the diffusers extra."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from icml26.core import MissingExtraError, NonFiniteLossError
from icml26.rex import (
    GaussianData,
    GaussianMixtureData,
    MLPDenoiser,
    RexSolver,
    SeededBrownian,
    VPSchedule,
    make_moons_data,
    princeps_solve,
    princeps_step,
    roundtrip_error,
    roundtrip_errors,
    sde_dpm_solver_pp1_step,
    train_denoiser,
)


def test_a_public_name_loads_its_module_on_first_use():
    code = (
        "import sys, icml26.rex as r\n"
        "assert 'icml26.rex.solver' not in sys.modules and 'torch' not in sys.modules\n"
        "from icml26.rex import RexSolver\n"
        "assert 'icml26.rex.solver' in sys.modules and 'icml26.rex.learned' not in sys.modules\n"
        "assert 'train_denoiser' in dir(r)\n"
        "print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


def test_mlp_denoiser_is_seeded_and_leaves_the_global_rng_alone():
    before = torch.random.get_rng_state()
    a, b, c = MLPDenoiser(2, seed=0), MLPDenoiser(2, seed=0), MLPDenoiser(2, seed=1)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.net[0].weight, c.net[0].weight)
    # a generator seed is advanced by exactly one draw (seeded_default_init's), nothing more
    g, g_again = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    MLPDenoiser(2, seed=g)
    torch.randint(0, 2**62, (1,), generator=g_again)
    assert torch.equal(g.get_state(), g_again.get_state())


def test_train_denoiser_is_deterministic_reports_progress_and_leaves_the_global_rng_alone():
    data = make_moons_data(200, seed=0)
    calls = []
    before = torch.random.get_rng_state()
    a = train_denoiser(data, VPSchedule(), steps=5, seed=2, progress=lambda *c: calls.append(c))
    assert torch.equal(torch.random.get_rng_state(), before)
    b = train_denoiser(data, VPSchedule(), steps=5, seed=2, progress=False)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert [(done, total) for done, total, _ in calls] == [(k, 5) for k in range(1, 6)]
    assert all(set(m) == {"loss"} and m["loss"] > 0 for *_, m in calls)
    with pytest.raises(TypeError, match="progress must be True, False, None or a callable"):
        train_denoiser(data, VPSchedule(), steps=1, progress="yes")


def test_train_denoiser_stops_on_a_non_finite_loss():
    data = make_moons_data(64, seed=0) * 1e30  # finite in float64; the squared error overflows
    with pytest.raises(NonFiniteLossError, match="train_denoiser: the loss is inf at step 0"):
        train_denoiser(data, VPSchedule(), steps=3, seed=0)


def test_make_moons_data_refuses_a_bad_seed():
    with pytest.raises(TypeError, match="make_moons_data: seed must be an int"):
        make_moons_data(10, seed=1.5)
    with pytest.raises(ValueError, match="make_moons_data: seed must be an int >= 0"):
        make_moons_data(10, seed=-1)


def _problem(sde=None, tableau="rk4"):
    schedule = VPSchedule(t_data=1e-3)
    model = GaussianMixtureData().denoiser(schedule)
    solver = RexSolver(model, schedule, tableau=tableau, model_output="data", sde=sde,
                       n_steps=10, seed=3)  # fmt: skip
    g = torch.Generator().manual_seed(0)
    data = GaussianMixtureData().sample(32, seed=1)
    noise = torch.randn(32, 2, dtype=torch.float64, generator=g)
    return solver, data, noise


@pytest.mark.parametrize("sde", [None, "em"])
def test_roundtrip_errors_are_those_of_the_four_sweeps(sde):
    solver, data, noise = _problem(sde, tableau="euler" if sde else "rk4")
    data_err, noise_err = roundtrip_errors(solver, data, noise)
    assert data_err < 1e-6  # exact inversion, ODE and seeded SDE
    # noise -> data -> noise: exact for the ODE; the SDE's amplifies round-off (docs: R2b)
    assert noise_err < (1e-3 if sde else 1e-10)
    ts = solver.timesteps()
    back, _ = solver.decode(*solver.encode(data, ts), ts)
    assert data_err == roundtrip_error(back, data, "max")
    mse = roundtrip_errors(solver, data, noise, kind="mse")
    assert mse[0] == roundtrip_error(back, data, "mse") and mse[1] <= noise_err**2


def test_roundtrip_errors_bad_input():
    solver, data, noise = _problem()
    with pytest.raises(TypeError, match="roundtrip_errors: solver must be a RexSolver"):
        roundtrip_errors("rk4", data, noise)
    with pytest.raises(ValueError, match="kind must be one of"):
        roundtrip_errors(solver, data, noise, kind="l1")


def test_mixture_marginal_moments_match_a_large_sample():
    schedule = VPSchedule(t_data=1e-3)
    mixture = GaussianMixtureData()
    mean, var = mixture.marginal_moments(schedule, 0.3)
    x0 = mixture.sample(400_000, seed=0)
    eps = torch.randn(x0.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    x_t = schedule.alpha(0.3) * x0 + schedule.sigma(0.3) * eps
    # 4e5 draws: standard errors ~2e-3 on the mean and ~3e-3 on the variance; 5 SE of slack
    assert torch.allclose(x_t.mean(0), mean, atol=1e-2)
    assert torch.allclose(x_t.var(0), var, rtol=1e-2)
    # one component: the Gaussian's closed form
    one = GaussianMixtureData(((0.5, 0.5),), (0.25,), (1.0,))
    std = GaussianData(mu=0.5, s=0.5, dim=2).marginal_std(schedule, 0.3)
    assert torch.allclose(one.marginal_moments(schedule, 0.3)[1], torch.tensor(std**2).double())
    with pytest.raises(ValueError, match="marginal_moments: t"):
        mixture.marginal_moments(schedule, 1.5)


def test_vp_beta_is_the_log_alpha_rate():
    schedule = VPSchedule(kind="scaled_linear", beta0=0.85, beta1=12.0)
    h = 1e-6
    numeric = -2 * (math.log(schedule.alpha(0.4 + h)) - math.log(schedule.alpha(0.4 - h))) / (2 * h)
    assert schedule.beta(0.4) == pytest.approx(numeric, rel=1e-7)
    with pytest.raises(ValueError, match="VPSchedule: t must be in"):
        schedule.beta(2.0)


def test_sde_dpm_solver_pp1_is_princeps_em_on_the_data_sde():
    schedule = VPSchedule(t_data=1e-3)
    model = GaussianMixtureData().denoiser(schedule)
    solver = RexSolver(model, schedule, model_output="data", sde="em", n_steps=6)
    ts = solver.timesteps()
    x = torch.randn(16, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    bm = solver.brownian(ts, x)
    t0, t1 = ts[1], ts[2]
    W, _ = bm.increment(solver.tv.noise_clock(t0), solver.tv.noise_clock(t1))
    z = W / (solver.tv.noise_clock(t1) - solver.tv.noise_clock(t0)) ** 0.5
    ours = sde_dpm_solver_pp1_step(model, schedule, x, t0, t1, z)
    em = princeps_step(model, schedule, x, t0, t1, sde="em", prediction="data",
                       model_output="data", bm=bm)  # fmt: skip
    assert float((ours - em).abs().max()) < 1e-12

    # the same step from a noise-predicting model (converted to data prediction inside)
    def eps_model(x, t):
        a, sigma = schedule.alpha(float(t[0])), schedule.sigma(float(t[0]))
        return (x - a * model(x, t)) / sigma

    same = sde_dpm_solver_pp1_step(eps_model, schedule, x, t0, t1, z, model_output="noise")
    assert torch.allclose(same, ours, atol=1e-12)


def test_sde_dpm_solver_pp1_bad_input():
    schedule = VPSchedule()
    x = torch.zeros(2, 2, dtype=torch.float64)
    model = GaussianData().denoiser(schedule)
    with pytest.raises(ValueError, match="noise must have the shape of x"):
        sde_dpm_solver_pp1_step(model, schedule, x, 1.0, 0.5, torch.zeros(3, 2))
    with pytest.raises(ValueError, match="model_output must be one of"):
        sde_dpm_solver_pp1_step(model, schedule, x, 1.0, 0.5, x, model_output="score")
    with pytest.raises(TypeError, match="sde_dpm_solver_pp1_step: model must be callable"):
        sde_dpm_solver_pp1_step(None, schedule, x, 1.0, 0.5, x)


@pytest.mark.parametrize(
    "make", [lambda: np.random.default_rng(4), lambda: torch.Generator().manual_seed(4)]
)
def test_a_generator_seed_keys_one_brownian_path_for_every_sweep(make):
    schedule = VPSchedule(t_data=1e-3)
    model = GaussianMixtureData().denoiser(schedule)
    solver = RexSolver(model, schedule, sde="em", model_output="data", n_steps=8, seed=make())
    assert isinstance(solver.seed, int)
    assert solver.seed == RexSolver(model, schedule, sde="em", seed=make()).seed
    data = GaussianMixtureData().sample(16, seed=0)
    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    # decode inverts encode only if both sweeps drew the same path from the one key
    assert roundtrip_error(solver.decode(x_T, x_T_hat, ts)[0], data, "max") < 1e-6
    x = princeps_solve(model, schedule, x_T, ts, sde="em", model_output="data", seed=make())
    assert torch.equal(
        x, princeps_solve(model, schedule, x_T, ts, sde="em", model_output="data", seed=solver.seed)
    )
    W, _ = SeededBrownian(make(), (3,), 0.0, 1.0).increment(0.1, 0.4)
    assert torch.equal(W, SeededBrownian(solver.seed, (3,), 0.0, 1.0).increment(0.1, 0.4)[0])


def test_seed_of_the_wrong_type_is_refused():
    schedule = VPSchedule()
    with pytest.raises(TypeError, match="RexSolver: seed must be an int, a numpy or torch"):
        RexSolver(lambda x, t: x, schedule, seed=1.5)
    with pytest.raises(TypeError, match="SeededBrownian: seed must be an int"):
        SeededBrownian(True, (2,), 0.0, 1.0)


def test_diffusers_path_without_diffusers_names_its_extra(monkeypatch):
    from icml26.rex import load_diffusers_unet

    monkeypatch.setitem(sys.modules, "diffusers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'icml26\[rex-diffusers\]'") as err:
        load_diffusers_unet("anything")
    assert err.value.extra == "rex-diffusers"
    assert "load_diffusers_unet needs diffusers" in str(err.value)
