"""Model-output conversions and the reparameterised time variable (varsigma, kappa) of Rex.

With Y = x / kappa the linear drift of the diffusion ODE/SDE is integrated exactly (Lawson):

=====================  ==========================  ==============  ===========================
case                   varsigma                    kappa           equation
=====================  ==========================  ==============  ===========================
ODE, data prediction   alpha / sigma               sigma           dY = x0_hat dvarsigma
ODE, noise prediction  sigma / alpha               alpha           dY = eps_hat dvarsigma
SDE, data prediction   alpha^2 / sigma^2           sigma^2 / alpha dY = x0_hat dvarsigma + dW
SDE, noise prediction  sigma / alpha               alpha           dY = 2 eps_hat dvarsigma
                                                                   + dW_{varsigma^2}
=====================  ==========================  ==============  ===========================
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from icml26.core import check_in_interval, check_one_of
from icml26.rex.schedules import Schedule

__all__ = ["MODEL_OUTPUTS", "PREDICTIONS", "TimeVariable", "convert_output"]

PREDICTIONS = ("data", "noise")
MODEL_OUTPUTS = ("noise", "data", "velocity")
Model = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def convert_output(
    out: torch.Tensor, x: torch.Tensor, t: float, schedule: Schedule, *, source: str, target: str
) -> torch.Tensor:
    """Convert a model output at (x, t) between noise, data and velocity predictions.

    x = alpha x0 + sigma eps and v = alpha_dot x0 + sigma_dot eps, so
    x0 = (x - sigma eps) / alpha, eps = (x - alpha x0) / sigma, and from v:
    x0 = (sigma_dot x - sigma v) / (sigma_dot alpha - sigma alpha_dot),
    eps = (alpha v - alpha_dot x) / (sigma_dot alpha - sigma alpha_dot).

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> s, x, eps = VPSchedule(), torch.ones(2), torch.zeros(2)
    >>> x0 = convert_output(eps, x, 0.5, s, source="noise", target="data")  # eps = 0: x = alpha x0
    >>> bool(torch.allclose(x0 * s.alpha(0.5), x))
    True
    """
    check_one_of("source", source, MODEL_OUTPUTS, owner="convert_output")
    check_one_of("target", target, MODEL_OUTPUTS, owner="convert_output")
    if source == target:
        return out
    a, s = schedule.alpha(t), schedule.sigma(t)
    if source == "velocity":
        ad, sd = schedule.alpha_dot(t), schedule.sigma_dot(t)
        det = sd * a - s * ad
        x0 = (sd * x - s * out) / det
        return convert_output(x0, x, t, schedule, source="data", target=target)
    x0 = (x - s * out) / a if source == "noise" else out
    eps = out if source == "noise" else (x - a * out) / s
    if target == "velocity":
        return schedule.alpha_dot(t) * x0 + schedule.sigma_dot(t) * eps
    return x0 if target == "data" else eps


class TimeVariable:
    """The integration variable varsigma(t), its inverse, kappa(t) and the prediction f(x, t).

    Parameters
    ----------
    schedule
        The noise schedule.
    prediction
        ``"data"`` or ``"noise"``: which quantity the exponential integrator integrates.
    sde
        Whether the reverse SDE (not the probability-flow ODE) is solved.
    """

    def __init__(self, schedule: Schedule, prediction: str, sde: bool) -> None:
        if not isinstance(schedule, Schedule):
            raise TypeError(
                f"TimeVariable: schedule must be a Schedule; got {type(schedule).__name__}."
            )
        if not isinstance(sde, bool):
            raise TypeError(f"TimeVariable: sde must be a bool; got {sde!r}.")
        self.schedule = schedule
        self.prediction = check_one_of("prediction", prediction, PREDICTIONS, owner="TimeVariable")
        self.sde = sde
        # varsigma = exp(power * lambda)
        self.power = {("data", False): 1, ("noise", False): -1, ("data", True): 2}.get(
            (prediction, sde), -1
        )

    def varsigma(self, t: float) -> float:
        """The integration variable at time t."""
        a, s = self.schedule.alpha(t), self.schedule.sigma(t)
        if self.power == 1:
            return a / s
        if self.power == 2:
            return (a / s) ** 2
        return s / a

    def t_of(self, varsigma: float) -> float:
        """Inverse of :meth:`varsigma`."""
        varsigma = check_in_interval(
            "varsigma", varsigma, low=0.0, closed="neither", owner="TimeVariable.t_of"
        )
        if not math.isfinite(varsigma):
            raise ValueError(f"TimeVariable.t_of: varsigma must be finite; got {varsigma!r}.")
        return self.schedule.t_of_log_snr(math.log(varsigma) / self.power)

    def kappa(self, t: float) -> float:
        """The weight kappa with x = kappa Y."""
        a, s = self.schedule.alpha(t), self.schedule.sigma(t)
        if self.prediction == "noise":
            return a
        return s * s / a if self.sde else s

    def noise_clock(self, t: float) -> float:
        """The clock of the Brownian motion: varsigma (data SDE) or varsigma^2 (noise SDE)."""
        v = self.varsigma(t)
        return v * v if self.prediction == "noise" else v

    def predictor(
        self, model: Model, model_output: str
    ) -> Callable[[torch.Tensor, float], torch.Tensor]:
        """f(x, t): the model's prediction converted to this case's integrand."""
        check_one_of("model_output", model_output, MODEL_OUTPUTS, owner="TimeVariable")
        scale = 2.0 if (self.sde and self.prediction == "noise") else 1.0

        def f(x: torch.Tensor, t: float) -> torch.Tensor:
            t_batch = torch.full((x.shape[0],), t, dtype=x.dtype, device=x.device)
            out = model(x, t_batch)
            if out.shape != x.shape:
                raise ValueError(
                    f"model output shape {tuple(out.shape)} differs from the state's "
                    f"{tuple(x.shape)}."
                )
            pred = convert_output(
                out, x, t, self.schedule, source=model_output, target=self.prediction
            )
            return scale * pred if scale != 1.0 else pred

        return f
