"""Bad input is refused at the public boundary, naming the parameter (issue 17 / fuzz).

Each case used to crash deep inside (ZeroDivisionError, math domain error) or return NaN.
"""

import math

import pytest
import torch

from icml26.rex import (
    DDIM,
    FlowMatchingSchedule,
    GaussianMixtureData,
    RexSolver,
    VPSchedule,
    make_grid,
    observed_order,
    princeps_solve,
    princeps_step,
    spectral_radius,
)

SCHEDULE = VPSchedule()
MODEL = GaussianMixtureData().denoiser(SCHEDULE)


def test_princeps_step_at_t_zero_is_refused_not_a_zero_division():
    x = torch.ones(4, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="t0 is outside the schedule's time range"):
        princeps_step(MODEL, SCHEDULE, x, 0.0, 0.5)  # sigma_0 = 0: varsigma = alpha / sigma
    with pytest.raises(TypeError, match="schedule must be a Schedule"):
        princeps_step(MODEL, None, x, 1.0, 0.5)
    with pytest.raises(ValueError, match="bm"):
        princeps_step(MODEL, SCHEDULE, x, 1.0, 0.5, sde="em")
    # the same step with t0 = t1 is the identity
    assert torch.equal(princeps_step(MODEL, SCHEDULE, x, 0.5, 0.5), x)


def test_ddim_refuses_integer_states_instead_of_returning_nan():
    ddim = DDIM(MODEL, SCHEDULE, model_output="data")
    with pytest.raises(TypeError, match="x_T must be a floating-point tensor"):
        ddim.sample(torch.ones(3, 2, dtype=torch.int64), [1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match="ts must be strictly monotone"):
        ddim.sample(torch.ones(3, 2), [1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="ts is outside the schedule's time range"):
        ddim.sample(torch.ones(3, 2), [1.0, 0.5, -0.1])


def test_schedules_refuse_times_outside_their_domain():
    with pytest.raises(ValueError, match="t must be in"):
        SCHEDULE.log_snr(0.0)  # was a math domain error
    with pytest.raises(ValueError, match="t must be in"):
        FlowMatchingSchedule().sigma(1.5)
    with pytest.raises(ValueError, match=r"lam must be in \[-inf, inf\]; got nan"):
        SCHEDULE.t_of_log_snr(math.nan)
    assert SCHEDULE.t_of_log_snr(-1e300) == pytest.approx(1 - VPSchedule.EPS)  # clamped, finite


def test_solver_and_helpers_name_their_parameters():
    with pytest.raises(ValueError, match="t_end is outside the schedule's time range"):
        RexSolver(MODEL, SCHEDULE, t_end=0.0)
    with pytest.raises(ValueError, match="ts must hold between 2"):
        princeps_solve(MODEL, SCHEDULE, torch.ones(2, 2), [1.0])
    with pytest.raises(ValueError, match="n_steps must hold at least two different"):
        observed_order([1.0, 0.5], [4, 4])
    with pytest.raises(ValueError, match="z must be finite"):
        spectral_radius(math.inf, 0.9)
    with pytest.raises(ValueError, match="n must be an integer in"):
        GaussianMixtureData().sample(-1)
    assert GaussianMixtureData().sample(0).shape == (0, 2)


def test_make_grid_refuses_a_schedule_that_is_no_schedule():
    with pytest.raises(TypeError, match="schedule must be a Schedule; got float"):
        make_grid(2.5, 4)
