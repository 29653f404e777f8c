"""Use a diffusers noise model and scheduler with Rex (the paper's SD 1.5 / DDPM CelebA-HQ path).

The time mapping is exact: the scheduler's own ``alphas_cumprod`` give a
:class:`~icml26.rex.schedules.DiscreteVPSchedule`, in which timestep k sits at t = (k + 1) / N with
alpha_t = sqrt(abar_k) exactly, and the UNet is queried at the timestep N t - 1 (fractional between
nodes). Classifier-free guidance runs the unconditional and conditional branches as one batched
UNet call and combines them as eps_u + w (eps_c - eps_u). ``diffusers`` itself is only imported by
:func:`load_diffusers_unet` (and by :class:`~icml26.rex.diffusers_scheduler.RexScheduler`).

Deviation: before issue 18 the adapter fitted a continuous ``VPSchedule`` to the betas and queried
the UNet at 1000 t; its alpha(k / 1000) missed sqrt(abar_k) by up to 4.5 % (DDPM linear).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from icml26.core import check_in_interval, check_tensor, require
from icml26.rex.schedules import DiscreteVPSchedule

__all__ = ["from_diffusers", "guided_unet", "load_diffusers_unet"]

PREDICTION_TYPES = ("epsilon", "sample", "v_prediction")
# the Rex model output each diffusers prediction type becomes (v is converted to eps first)
REX_OUTPUT = {"epsilon": "noise", "sample": "data", "v_prediction": "noise"}


def _output_tensor(out: Any) -> torch.Tensor:
    """A UNet's result: ``out.sample`` for diffusers outputs, the tensor itself otherwise."""
    out = getattr(out, "sample", out)
    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"model must return a tensor or an object with .sample; got {type(out).__name__}."
        )
    return out


def _rex_output(
    out: torch.Tensor, x: torch.Tensor, t: float, schedule: DiscreteVPSchedule, prediction_type: str
) -> torch.Tensor:
    """A diffusers prediction as the Rex model output named by ``REX_OUTPUT``."""
    if prediction_type == "v_prediction":
        # v = alpha eps - sigma x0 with alpha^2 + sigma^2 = 1, so eps = sigma x + alpha v
        return schedule.sigma(t) * x + schedule.alpha(t) * out
    return out


def _batch_like(name: str, states: torch.Tensor, batch: int, owner: str) -> torch.Tensor:
    if states.ndim < 1 or states.shape[0] not in (1, batch):
        raise ValueError(
            f"{owner}: {name} must have batch size 1 or {batch} (the sample's); "
            f"got shape {tuple(states.shape)}."
        )
    return states.expand(batch, *states.shape[1:]) if states.shape[0] != batch else states


def guided_unet(
    unet: Callable[..., Any],
    cond: torch.Tensor | None = None,
    uncond: torch.Tensor | None = None,
    guidance_scale: float | None = None,
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """``model(x, timestep)``: the UNet's prediction, with classifier-free guidance in one call.

    With ``guidance_scale`` w the unconditional and conditional branches are stacked into one
    batch of 2B, run as one UNet call, split, and combined as out_u + w (out_c - out_u).

    Parameters
    ----------
    unet
        ``unet(x, timestep, encoder_hidden_states=...)`` returning a tensor or an object with
        ``.sample`` (a diffusers ``UNet2DModel`` / ``UNet2DConditionModel``).
    cond, uncond
        Encoder hidden states (batch 1 or B) of the conditional and unconditional branch;
        ``uncond`` only with ``guidance_scale``.
    guidance_scale
        Classifier-free guidance weight w; ``None`` for no guidance.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> unet = lambda x, t, encoder_hidden_states: SimpleNamespace(sample=x * encoder_hidden_states)
    >>> model = guided_unet(unet, torch.full((1, 1), 2.0), torch.ones(1, 1), guidance_scale=3.0)
    >>> model(torch.ones(2, 1), torch.tensor(5.0)).flatten().tolist()  # 1 + 3 (2 - 1)
    [4.0, 4.0]
    """
    owner = "guided_unet"
    if not callable(unet):
        raise TypeError(f"{owner}: unet must be a callable UNet; got {type(unet).__name__}.")
    for name, states in (("cond", cond), ("uncond", uncond)):
        if states is not None:
            check_tensor(name, states, owner=owner)
    if guidance_scale is not None:
        guidance_scale = check_in_interval(
            "guidance_scale", guidance_scale, low=-1e6, high=1e6, owner=owner
        )
    if (guidance_scale is None) != (uncond is None) or (
        guidance_scale is not None and cond is None
    ):
        raise ValueError(
            f"{owner}: guidance_scale needs both cond and uncond (and uncond needs guidance_scale)."
        )

    def model(x: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        if guidance_scale is None:
            kwargs = {} if cond is None else {"encoder_hidden_states": cond}
            return _output_tensor(unet(x, timestep, **kwargs))
        batch = x.shape[0]
        states = torch.cat([_batch_like("uncond", uncond, batch, owner),
                            _batch_like("cond", cond, batch, owner)])  # fmt: skip
        timesteps = timestep if timestep.ndim == 0 else torch.cat([timestep, timestep])
        # one UNet call on the stacked batch (unconditional first, as diffusers' pipelines do)
        out = _output_tensor(unet(torch.cat([x, x]), timesteps, encoder_hidden_states=states))
        out_u, out_c = out.chunk(2)  # (batch, ...) each
        return out_u + guidance_scale * (out_c - out_u)

    return model


def from_diffusers(
    unet: Callable[..., Any],
    scheduler: Any,
    *,
    cond: torch.Tensor | None = None,
    uncond: torch.Tensor | None = None,
    cfg_scale: float | None = None,
) -> tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], DiscreteVPSchedule, str]:
    """Wrap ``unet(x, timestep, ...)`` and a diffusers scheduler as ``(model, schedule, output)``.

    The schedule is the scheduler's exact discrete one (``DiscreteVPSchedule(alphas_cumprod)``)
    and ``model(x, t)`` queries the UNet at timestep N t - 1. To put Rex *into* a diffusers
    pipeline instead, use :class:`~icml26.rex.diffusers_scheduler.RexScheduler`.

    Parameters
    ----------
    unet
        A diffusers ``UNet2DModel`` / ``UNet2DConditionModel`` (or anything called the same way
        whose result has ``.sample``).
    scheduler
        A diffusers scheduler with ``alphas_cumprod`` and ``config.prediction_type`` in
        {epsilon, sample, v_prediction} (any beta schedule).
    cond, uncond
        Encoder hidden states for a conditional UNet (``uncond`` only with ``cfg_scale``).
    cfg_scale
        Classifier-free guidance weight w; ``None`` for no guidance. Both branches run as one
        batched UNet call.

    Returns
    -------
    model, schedule, model_output
        Ready for ``RexSolver(model, schedule, model_output=model_output)``.

    Examples
    --------
    >>> # pipe = StableDiffusionPipeline.from_pretrained(path)  (real path, needs the weights)
    >>> # model, schedule, out = from_diffusers(pipe.unet, pipe.scheduler, cond=emb, uncond=null,
    >>> #                                       cfg_scale=3.0)
    >>> # solver = RexSolver(model, schedule, model_output=out, tableau="rk4", n_steps=50)
    """
    owner = "from_diffusers"
    if not callable(unet):
        raise TypeError(f"{owner}: unet must be a callable UNet; got {type(unet).__name__}.")
    config = getattr(scheduler, "config", None)
    if config is None or not hasattr(scheduler, "alphas_cumprod"):
        raise TypeError(
            f"{owner}: scheduler must be a diffusers scheduler (with alphas_cumprod and a "
            f"config); got {type(scheduler).__name__}."
        )
    prediction = getattr(config, "prediction_type", None)
    if prediction not in PREDICTION_TYPES:
        raise ValueError(
            "from_diffusers: scheduler's prediction_type must be 'epsilon', 'sample' or "
            f"'v_prediction'; got {prediction!r}."
        )
    if (cfg_scale is None) != (uncond is None) or (cfg_scale is not None and cond is None):
        raise ValueError("from_diffusers: cfg_scale needs both cond and uncond (and vice versa).")
    for name, states in (("cond", cond), ("uncond", uncond)):
        if states is not None:
            check_tensor(name, states, owner=owner)
    if cfg_scale is not None:
        cfg_scale = check_in_interval("cfg_scale", cfg_scale, low=-1e6, high=1e6, owner=owner)
    try:
        schedule = DiscreteVPSchedule(scheduler.alphas_cumprod)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{owner}: the scheduler's alphas_cumprod are unusable: {err}") from None
    net = guided_unet(unet, cond, uncond, cfg_scale)
    n = schedule.num_train_timesteps

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = net(x, n * t - 1)  # timestep k at t = (k + 1) / N
        return _rex_output(out, x, float(t.reshape(-1)[0]), schedule, prediction)

    return model, schedule, REX_OUTPUT[prediction]


def load_diffusers_unet(
    name_or_dir: str, *, subfolder: str | None = "unet", conditional: bool = True
):
    """Load ``(unet, scheduler)`` with diffusers from a hub name or a local folder.

    For Stable Diffusion 1.5 use ``subfolder="unet"`` and ``conditional=True``; for a
    ``google/ddpm-*`` checkpoint use ``subfolder=None`` and ``conditional=False``.

    Raises
    ------
    MissingExtraError
        If diffusers is not installed (``pip install 'icml26[rex-diffusers]'``).
    """
    owner = "load_diffusers_unet"
    if not isinstance(name_or_dir, str | os.PathLike) or not str(name_or_dir):
        raise TypeError(
            f"{owner}: name_or_dir must be a non-empty str or path; got {name_or_dir!r}."
        )
    if subfolder is not None and not isinstance(subfolder, str):
        raise TypeError(f"{owner}: subfolder must be a str or None; got {subfolder!r}.")
    if not isinstance(conditional, bool):
        raise TypeError(f"{owner}: conditional must be a bool; got {conditional!r}.")
    diffusers = require("diffusers", "rex-diffusers", owner=owner)
    unet_cls = diffusers.UNet2DConditionModel if conditional else diffusers.UNet2DModel
    unet = unet_cls.from_pretrained(name_or_dir, subfolder=subfolder)
    sched_sub = "scheduler" if subfolder is not None else None
    scheduler = diffusers.DDIMScheduler.from_pretrained(name_or_dir, subfolder=sched_sub)
    return unet.eval(), scheduler
