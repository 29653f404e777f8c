"""``low_order_final_n_steps``: the reference code's Euler / Euler-Maruyama final steps."""

import pytest
import torch

from icml26.rex import GaussianMixtureData, RexSolver, VPSchedule, roundtrip_error

SCHEDULE = VPSchedule(t_data=1e-3)
MODEL = GaussianMixtureData().denoiser(SCHEDULE)


def randn(*shape, seed=0):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def solver(**kw):
    return RexSolver(MODEL, SCHEDULE, model_output="data", grid="logsnr", n_steps=10, **kw)


def test_final_low_order_steps_are_euler_steps_on_the_same_grid():
    x_T = randn(32, 2)
    mixed = solver(tableau="rk4", low_order_final_n_steps=2)
    ts = mixed.timesteps()
    x0, x0_hat, _ = mixed.sample(x_T)
    # reference: RK4 for steps 0..7, then a plain Euler Rex solver for steps 8 and 9
    x, x_hat = solver(tableau="rk4").forward_solve(x_T, x_T.clone(), ts[:9])
    x, x_hat = solver(tableau="euler").forward_solve(x, x_hat, ts[8:])
    assert torch.equal(x0, x) and torch.equal(x0_hat, x_hat)
    # every step low order: the Euler solver itself
    all_low = solver(tableau="rk4", low_order_final_n_steps=10).sample(x_T)[0]
    assert torch.equal(all_low, solver(tableau="euler").sample(x_T)[0])
    # and it changes the result (the option is not a no-op)
    assert roundtrip_error(x0, solver(tableau="rk4").sample(x_T)[0], "max") > 1e-6


def test_low_order_steps_keep_round_trips_exact():
    data = GaussianMixtureData().sample(64, seed=1)
    for kw in ({"tableau": "rk4"}, {"sde": "shark", "seed": 4}):
        s = solver(low_order_final_n_steps=3, **kw)
        ts = s.timesteps()
        x_T, x_T_hat = s.encode(data, ts)
        back, _ = s.decode(x_T, x_T_hat, ts)
        assert roundtrip_error(back, data, "max") < 1e-9  # R1/R2: round-off level in float64


def test_sde_low_order_steps_are_euler_maruyama_on_the_same_path():
    x_T = randn(32, 2, seed=2)
    shark_as_em = solver(sde="shark", seed=9, low_order_final_n_steps=10).sample(x_T)[0]
    assert torch.equal(shark_as_em, solver(sde="em", seed=9).sample(x_T)[0])


def test_low_order_bad_inputs():
    with pytest.raises(ValueError, match="low_order_final_n_steps must be an integer in"):
        solver(low_order_final_n_steps=-1)
    with pytest.raises(TypeError, match="low_order_final_n_steps must be an integer"):
        solver(low_order_final_n_steps=1.5)
    with pytest.raises(ValueError, match="low_order_final_n_steps needs a fixed grid"):
        solver(tableau="dopri5", adaptive=True, low_order_final_n_steps=2)
