"""Inversion baselines on the same time grid: DDIM, EDICT, BDIA and O-BELM (eps-prediction).

Notation for a step from t_i to t_j: cx = alpha_j / alpha_i, ce = sigma_j - sigma_i cx, so the
DDIM step is D(x; i -> j) = cx x + ce eps(x, t_i). Grids run from the noise end ts[0] to the data
end ts[-1]. Every baseline has ``encode(x0, ts) -> state`` (data -> noise) and
``decode(state, ts) -> x0`` (noise -> data); ``sample(x_T, ts)`` generates from noise.

- DDIM inversion runs DDIM backwards with eps at the current point: not exact.
- EDICT (p = 0.93) couples (X, Y): X' = cx X + ce eps(Y); Y' = cx Y + ce eps(X');
  X <- p X' + (1-p) Y'; Y <- p Y' + (1-p) X, inverted line by line.
- BDIA (gamma = 0.5): first step DDIM, then
  x_{i+1} = gamma x_{i-1} + D(x_i; i->i+1) - gamma D(x_i; i->i-1);
  its inverse divides by gamma; its state is the pair (x_0, x_1) at the noise end.
- SDE-DPM-Solver++(1) (:func:`sde_dpm_solver_pp1_step`), the first-order stochastic solver in
  data prediction, one step with h = lambda_j - lambda_i and z ~ N(0, I):
  x_j = (sigma_j/sigma_i) e^-h x_i + alpha_j (1 - e^-2h) x0_hat(x_i, t_i)
        + sigma_j sqrt(1 - e^-2h) z.
- O-BELM: first step DDIM, then with chi = sigma/alpha at p = i-1, t = i, s = i+1,
  x_{i+1} = (d2 d3 a_s / d1) eps(x_i) + (d2/d1)^2 (a_s/a_p) x_{i-1}
            + ((d1-d2) d3 / d1^2)(a_s/a_t) x_i,
  d1 = chi_t - chi_p, d2 = chi_s - chi_t, d3 = chi_s - chi_p; state (x_0, x_1) as for BDIA.
"""

from __future__ import annotations

import abc
import itertools
import math
from collections.abc import Sequence

import torch

from icml26.core import check_in_interval, check_one_of
from icml26.rex._checks import check_callable, check_grid, check_schedule, check_state, check_time
from icml26.rex.parameterization import MODEL_OUTPUTS, Model, convert_output
from icml26.rex.schedules import Schedule

__all__ = ["BDIA", "DDIM", "EDICT", "OBELM", "sde_dpm_solver_pp1_step"]


class _EpsSolver:
    """Shared parts: eps(x, t) from any model output, the DDIM step and grid checks."""

    def __init__(self, model: Model, schedule: Schedule, *, model_output: str = "noise") -> None:
        owner = type(self).__name__
        self.model = check_callable("model", model, owner=owner)
        self.schedule = check_schedule("schedule", schedule, owner=owner)
        self.model_output = check_one_of("model_output", model_output, MODEL_OUTPUTS, owner=owner)

    def eps(self, x: torch.Tensor, t: float) -> torch.Tensor:
        """The model's noise prediction at (x, t)."""
        owner = f"{type(self).__name__}.eps"
        check_state("x", x, owner=owner)
        t = check_time(self.schedule, "t", t, owner=owner)
        return self._eps(x, t)

    def _eps(self, x: torch.Tensor, t: float) -> torch.Tensor:
        out = self.model(x, torch.full((x.shape[0],), t, dtype=x.dtype, device=x.device))
        return convert_output(out, x, t, self.schedule, source=self.model_output, target="noise")

    def ddim(self, x: torch.Tensor, t_i: float, t_j: float) -> torch.Tensor:
        """D(x; i -> j) = cx x + ce eps(x, t_i)."""
        owner = f"{type(self).__name__}.ddim"
        check_state("x", x, owner=owner)
        t_i = check_time(self.schedule, "t_i", t_i, owner=owner)
        t_j = check_time(self.schedule, "t_j", t_j, owner=owner)
        return self._ddim(x, t_i, t_j)

    def _ddim(self, x: torch.Tensor, t_i: float, t_j: float) -> torch.Tensor:
        a_i, a_j = self.schedule.alpha(t_i), self.schedule.alpha(t_j)
        cx = a_j / a_i
        ce = self.schedule.sigma(t_j) - self.schedule.sigma(t_i) * cx
        return cx * x + ce * self._eps(x, t_i)

    def _grid(self, ts: Sequence[float], minimum: int = 2) -> list[float]:
        return check_grid(self.schedule, "ts", ts, owner=type(self).__name__, minimum=minimum)

    def _state(self, name: str, x: torch.Tensor) -> torch.Tensor:
        return check_state(name, x, owner=type(self).__name__)

    def _pair(self, name: str, state: tuple[torch.Tensor, torch.Tensor]):
        if not (isinstance(state, tuple | list) and len(state) == 2):
            raise TypeError(
                f"{type(self).__name__}: {name} must be a pair of tensors; "
                f"got {type(state).__name__}."
            )
        a, b = (self._state(name, s) for s in state)
        if a.shape != b.shape:
            raise ValueError(
                f"{type(self).__name__}: the two tensors of {name} must share a shape; got "
                f"{tuple(a.shape)} and {tuple(b.shape)}."
            )
        return a, b


class DDIM(_EpsSolver):
    """DDIM sampling and (inexact) DDIM inversion.

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> ddim = DDIM(lambda x, t: 0 * x, VPSchedule())
    >>> ddim.decode(ddim.encode(torch.ones(1, 2), [1.0, 0.5, 0.1]), [1.0, 0.5, 0.1]).shape
    torch.Size([1, 2])
    """

    @torch.no_grad()
    def encode(self, x0: torch.Tensor, ts: Sequence[float]) -> torch.Tensor:
        """DDIM inversion: data -> noise with eps at the current point."""
        ts = self._grid(ts)
        x = self._state("x0", x0)
        for t_j, t_i in zip(ts[:0:-1], ts[-2::-1], strict=True):
            x = self._ddim(x, t_j, t_i)
        return x

    @torch.no_grad()
    def decode(self, x_T: torch.Tensor, ts: Sequence[float]) -> torch.Tensor:
        """DDIM sampling: noise -> data."""
        ts = self._grid(ts)
        x = self._state("x_T", x_T)
        for t_i, t_j in itertools.pairwise(ts):
            x = self._ddim(x, t_i, t_j)
        return x

    def sample(self, x_T: torch.Tensor, ts: Sequence[float]) -> torch.Tensor:
        """Generate from noise."""
        return self.decode(x_T, ts)


class EDICT(_EpsSolver):
    """EDICT exact inversion with mixing parameter p (default 0.93)."""

    def __init__(
        self, model: Model, schedule: Schedule, *, p: float = 0.93, model_output: str = "noise"
    ) -> None:
        super().__init__(model, schedule, model_output=model_output)
        self.p = check_in_interval("p", p, low=0.0, high=1.0, closed="right", owner="EDICT")

    def _coeffs(self, t_i: float, t_j: float) -> tuple[float, float]:
        a_i, a_j = self.schedule.alpha(t_i), self.schedule.alpha(t_j)
        cx = a_j / a_i
        return cx, self.schedule.sigma(t_j) - self.schedule.sigma(t_i) * cx

    @torch.no_grad()
    def decode(self, state: tuple[torch.Tensor, torch.Tensor], ts: Sequence[float]) -> torch.Tensor:
        """Noise pair (X, Y) -> data (returns X)."""
        X, Y = self._pair("state", state)
        p = self.p
        ts = self._grid(ts)
        for t_i, t_j in itertools.pairwise(ts):
            cx, ce = self._coeffs(t_i, t_j)
            X = cx * X + ce * self._eps(Y, t_i)
            Y = cx * Y + ce * self._eps(X, t_i)  # EDICT evaluates both halves at t_i
            X = p * X + (1 - p) * Y
            Y = p * Y + (1 - p) * X
        return X

    @torch.no_grad()
    def encode(self, x0: torch.Tensor, ts: Sequence[float]) -> tuple[torch.Tensor, torch.Tensor]:
        """Data -> noise pair (X, Y), undoing :meth:`decode` line by line."""
        X = self._state("x0", x0)
        Y = X.clone()
        p = self.p
        ts = self._grid(ts)
        for t_j, t_i in zip(ts[:0:-1], ts[-2::-1], strict=True):
            cx, ce = self._coeffs(t_i, t_j)
            Y = (Y - (1 - p) * X) / p
            X = (X - (1 - p) * Y) / p
            Y = (Y - ce * self._eps(X, t_i)) / cx
            X = (X - ce * self._eps(Y, t_i)) / cx
        return X, Y

    def sample(self, x_T: torch.Tensor, ts: Sequence[float]) -> torch.Tensor:
        """Generate from noise (X = Y = x_T)."""
        x_T = self._state("x_T", x_T)
        return self.decode((x_T, x_T.clone()), ts)


class _TwoStep(_EpsSolver, abc.ABC):
    """A two-step exact-inversion scheme x_{i+1} = step(x_{i-1}, x_i); state (x_0, x_1)."""

    @abc.abstractmethod
    def _forward(self, x_prev, x_cur, ts: list[float], i: int) -> torch.Tensor:
        """x_{i+1} from (x_{i-1}, x_i)."""

    @abc.abstractmethod
    def _backward(self, x_next, x_cur, ts: list[float], i: int) -> torch.Tensor:
        """x_{i-1} from (x_{i+1}, x_i): the exact inverse of :meth:`_forward`."""

    @torch.no_grad()
    def decode(self, state: tuple[torch.Tensor, torch.Tensor], ts: Sequence[float]) -> torch.Tensor:
        """(x_0, x_1) at the noise end -> data."""
        ts = self._grid(ts, minimum=3)
        x_prev, x_cur = self._pair("state", state)
        for i in range(1, len(ts) - 1):
            x_prev, x_cur = x_cur, self._forward(x_prev, x_cur, ts, i)
        return x_cur

    @torch.no_grad()
    def encode(self, x0: torch.Tensor, ts: Sequence[float]) -> tuple[torch.Tensor, torch.Tensor]:
        """Data -> (x_0, x_1): one DDIM inversion step, then the exact backward recurrence."""
        ts = self._grid(ts, minimum=3)
        x0 = self._state("x0", x0)
        n = len(ts) - 1
        x_next, x_cur = x0, self._ddim(x0, ts[n], ts[n - 1])
        for i in range(n - 1, 0, -1):
            x_next, x_cur = x_cur, self._backward(x_next, x_cur, ts, i)
        return x_cur, x_next

    def sample(self, x_T: torch.Tensor, ts: Sequence[float]) -> torch.Tensor:
        """Generate from noise (first step DDIM)."""
        ts = self._grid(ts, minimum=3)
        x_T = self._state("x_T", x_T)
        return self.decode((x_T, self._ddim(x_T, ts[0], ts[1])), ts)


class BDIA(_TwoStep):
    """Bidirectional integration approximation with gamma (default 0.5)."""

    def __init__(
        self, model: Model, schedule: Schedule, *, gamma: float = 0.5, model_output: str = "noise"
    ) -> None:
        super().__init__(model, schedule, model_output=model_output)
        self.gamma = check_in_interval(
            "gamma", gamma, low=0.0, high=1.0, closed="right", owner="BDIA"
        )

    def _forward(self, x_prev, x_cur, ts, i):
        g = self.gamma
        return (
            g * x_prev
            + self._ddim(x_cur, ts[i], ts[i + 1])
            - g * self._ddim(x_cur, ts[i], ts[i - 1])
        )

    def _backward(self, x_next, x_cur, ts, i):
        g = self.gamma
        return (
            x_next - self._ddim(x_cur, ts[i], ts[i + 1]) + g * self._ddim(x_cur, ts[i], ts[i - 1])
        ) / g


class OBELM(_TwoStep):
    """O-BELM: the optimal bidirectional explicit linear multistep exact-inversion sampler."""

    def _coeffs(self, ts, i):
        sch = self.schedule
        t_p, t_t, t_s = ts[i - 1], ts[i], ts[i + 1]
        a_p, a_t, a_s = sch.alpha(t_p), sch.alpha(t_t), sch.alpha(t_s)
        chi_p, chi_t, chi_s = sch.sigma(t_p) / a_p, sch.sigma(t_t) / a_t, sch.sigma(t_s) / a_s
        d1, d2, d3 = chi_t - chi_p, chi_s - chi_t, chi_s - chi_p
        A = d2 * d3 * a_s / d1
        B = (d2 / d1) ** 2 * (a_s / a_p)
        C = (d1 - d2) * d3 / d1**2 * (a_s / a_t)
        return A, B, C

    def _forward(self, x_prev, x_cur, ts, i):
        A, B, C = self._coeffs(ts, i)
        return A * self._eps(x_cur, ts[i]) + B * x_prev + C * x_cur

    def _backward(self, x_next, x_cur, ts, i):
        A, B, C = self._coeffs(ts, i)
        return (x_next - A * self._eps(x_cur, ts[i]) - C * x_cur) / B


def sde_dpm_solver_pp1_step(
    model: Model,
    schedule: Schedule,
    x: torch.Tensor,
    t0: float,
    t1: float,
    noise: torch.Tensor,
    *,
    model_output: str = "data",
) -> torch.Tensor:
    """One step of SDE-DPM-Solver++(1) from ``t0`` to ``t1`` with standard normal ``noise``.

    x_1 = (sigma_1/sigma_0) e^-h x + alpha_1 (1 - e^-2h) x0_hat(x, t0) + sigma_1 sqrt(1 - e^-2h) z,
    h = lambda_1 - lambda_0 (Lu et al., DPM-Solver++). Princeps-EM on the data SDE is this step
    when ``noise`` is the Brownian increment over the step divided by the root of its length.

    Examples
    --------
    >>> from icml26.rex import GaussianData, VPSchedule
    >>> schedule = VPSchedule()
    >>> model = GaussianData(mu=0.5, s=0.5, dim=2).denoiser(schedule)
    >>> x = torch.zeros(4, 2, dtype=torch.float64)
    >>> sde_dpm_solver_pp1_step(model, schedule, x, 1.0, 0.5, torch.zeros_like(x)).shape
    torch.Size([4, 2])
    """
    owner = "sde_dpm_solver_pp1_step"
    check_callable("model", model, owner=owner)
    check_schedule("schedule", schedule, owner=owner)
    check_state("x", x, owner=owner)
    check_state("noise", noise, owner=owner)
    if noise.shape != x.shape:
        raise ValueError(
            f"{owner}: noise must have the shape of x {tuple(x.shape)}; got {tuple(noise.shape)}."
        )
    t0 = check_time(schedule, "t0", t0, owner=owner)
    t1 = check_time(schedule, "t1", t1, owner=owner)
    model_output = check_one_of("model_output", model_output, MODEL_OUTPUTS, owner=owner)
    h = schedule.log_snr(t1) - schedule.log_snr(t0)
    a1, s0, s1 = schedule.alpha(t1), schedule.sigma(t0), schedule.sigma(t1)
    out = model(x, torch.full((x.shape[0],), t0, dtype=x.dtype, device=x.device))
    x0_hat = convert_output(out, x, t0, schedule, source=model_output, target="data")
    return (
        (s1 / s0) * math.exp(-h) * x
        + a1 * -math.expm1(-2 * h) * x0_hat
        + s1 * math.sqrt(-math.expm1(-2 * h)) * noise
    )
