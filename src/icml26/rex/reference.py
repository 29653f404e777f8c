"""A high-accuracy reference for the probability-flow ODE, independent of the Rex solvers.

For a VP schedule (f = -beta/2, g^2 = beta) and a data-predicting model x0_hat(x, t), the PF-ODE
in t is

    dx/dt = -beta(t)/2 x + beta(t)/2 (x - alpha_t x0_hat(x, t)) / sigma_t^2,

integrated here by scipy's DOP853 (8th order, adaptive) from the noise end t = 1 to ``t_end`` at
tight tolerances. Order measurements compare a solver's endpoint against it where no closed form
exists (a Gaussian mixture: on Gaussian data the Lawson transform leaves an almost constant
integrand, so a closed-form Gaussian cannot tell a second-order method from a wrong one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from icml26.core import check_in_interval
from icml26.rex._checks import check_callable, check_state, check_time
from icml26.rex.parameterization import Model
from icml26.rex.schedules import VPSchedule

if TYPE_CHECKING:
    import numpy as np

__all__ = ["pf_ode_reference"]


def pf_ode_reference(
    model: Model,
    schedule: VPSchedule,
    x_T: torch.Tensor,
    t_end: float,
    *,
    rtol: float = 1e-12,
    atol: float = 1e-12,
) -> torch.Tensor:
    """x(t_end) of the probability-flow ODE from ``x_T`` at the schedule's noise end (float64).

    Parameters
    ----------
    model
        A data-predicting model ``model(x, t) -> x0_hat`` (float64, ``t`` of shape (batch,)).
    schedule
        A :class:`~icml26.rex.schedules.VPSchedule`.
    x_T
        The state at ``schedule.t_noise`` (float64, leading batch dimension).
    t_end
        Where to stop (a valid time of the schedule).
    rtol, atol
        DOP853's tolerances.

    Examples
    --------
    >>> from icml26.rex import GaussianData, VPSchedule
    >>> schedule, problem = VPSchedule(t_data=1e-2), GaussianData(mu=0.5, s=0.5, dim=2)
    >>> x_T = torch.zeros(3, 2, dtype=torch.float64)
    >>> x = pf_ode_reference(problem.denoiser(schedule), schedule, x_T, 1e-2)
    >>> exact = problem.flow(schedule, x_T, 1.0, 1e-2)
    >>> bool((x - exact).abs().max() < 1e-9)
    True
    """
    from scipy.integrate import solve_ivp

    owner = "pf_ode_reference"
    model = check_callable("model", model, owner=owner)
    if not isinstance(schedule, VPSchedule):
        raise TypeError(f"{owner}: schedule must be a VPSchedule; got {type(schedule).__name__}.")
    check_state("x_T", x_T, owner=owner)
    if x_T.dtype != torch.float64:
        raise TypeError(f"{owner}: x_T must be float64; got {x_T.dtype}.")
    t_end = check_time(schedule, "t_end", t_end, owner=owner)
    rtol = check_in_interval("rtol", rtol, low=0.0, high=1.0, closed="right", owner=owner)
    atol = check_in_interval("atol", atol, low=0.0, high=1.0, closed="right", owner=owner)
    shape = x_T.shape

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(y.reshape(shape))
        x0_hat = model(x, torch.full((shape[0],), t, dtype=torch.float64)).numpy().ravel()
        beta = schedule.beta(t)
        a, s = schedule.alpha(t), schedule.sigma(t)
        return -0.5 * beta * y + 0.5 * beta * (y - a * x0_hat) / (s * s)

    y0 = x_T.detach().cpu().numpy().ravel()
    sol = solve_ivp(rhs, (schedule.t_noise, t_end), y0, method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise ValueError(f"{owner}: DOP853 did not reach t_end ({sol.message}).")
    return torch.from_numpy(sol.y[:, -1].reshape(shape).copy())
