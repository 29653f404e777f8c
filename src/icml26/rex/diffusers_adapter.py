"""Use a diffusers noise model and scheduler with Rex (the paper's SD 1.5 / DDPM CelebA-HQ path).

The discrete scheduler's betas give the continuous VP schedule (beta0 = 1000 betas[0],
beta1 = 1000 betas[-1], ``linear`` or ``scaled_linear``), and the UNet is queried at timestep
1000 t. Classifier-free guidance combines the unconditional and conditional predictions as
eps_u + w (eps_c - eps_u). ``diffusers`` is only imported by :func:`load_diffusers_unet`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from icml26.core import check_in_interval, check_tensor, require
from icml26.rex.schedules import VPSchedule

__all__ = ["from_diffusers", "load_diffusers_unet"]

_KINDS = {"linear": "linear", "scaled_linear": "scaled_linear"}


def from_diffusers(
    unet: Callable[..., Any],
    scheduler: Any,
    *,
    cond: torch.Tensor | None = None,
    uncond: torch.Tensor | None = None,
    cfg_scale: float | None = None,
) -> tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], VPSchedule, str]:
    """Wrap ``unet(x, timestep, ...)`` and a diffusers scheduler as ``(model, schedule, output)``.

    Parameters
    ----------
    unet
        A diffusers ``UNet2DModel`` / ``UNet2DConditionModel`` (or anything called the same way
        whose result has ``.sample``).
    scheduler
        A diffusers scheduler with ``betas`` and ``config.beta_schedule`` in {linear,
        scaled_linear} and ``config.prediction_type`` in {epsilon, sample, v_prediction}.
    cond, uncond
        Encoder hidden states for a conditional UNet (``uncond`` only with ``cfg_scale``).
    cfg_scale
        Classifier-free guidance weight w; ``None`` for no guidance.

    Returns
    -------
    model, schedule, model_output
        Ready for ``RexSolver(model, schedule, model_output=model_output)``.

    Example
    -------
    >>> # pipe = StableDiffusionPipeline.from_pretrained(path)  (real path, needs the weights)
    >>> # model, schedule, out = from_diffusers(pipe.unet, pipe.scheduler, cond=emb, uncond=null,
    >>> #                                       cfg_scale=3.0)
    >>> # solver = RexSolver(model, schedule, model_output=out, tableau="rk4", n_steps=50)
    """
    owner = "from_diffusers"
    if not callable(unet):
        raise TypeError(f"{owner}: unet must be a callable UNet; got {type(unet).__name__}.")
    config = getattr(scheduler, "config", None)
    if config is None or not hasattr(scheduler, "betas") or not hasattr(config, "beta_schedule"):
        raise TypeError(
            f"{owner}: scheduler must be a diffusers scheduler (with betas and a config); got "
            f"{type(scheduler).__name__}."
        )
    for name, states in (("cond", cond), ("uncond", uncond)):
        if states is not None:
            check_tensor(name, states, owner=owner)
    if cfg_scale is not None:
        cfg_scale = check_in_interval("cfg_scale", cfg_scale, low=-1e6, high=1e6, owner=owner)
    kind = _KINDS.get(config.beta_schedule)
    if kind is None:
        raise ValueError(
            f"from_diffusers: beta_schedule must be 'linear' or 'scaled_linear'; "
            f"got {config.beta_schedule!r}."
        )
    prediction = config.prediction_type
    if prediction not in ("epsilon", "sample", "v_prediction"):
        raise ValueError(
            "from_diffusers: prediction_type must be 'epsilon', 'sample' or 'v_prediction'; "
            f"got {prediction!r}."
        )
    if (cfg_scale is None) != (uncond is None) or (cfg_scale is not None and cond is None):
        raise ValueError("from_diffusers: cfg_scale needs both cond and uncond (and vice versa).")
    schedule = VPSchedule.from_betas(scheduler.betas, kind=kind)

    def call(x: torch.Tensor, timestep: torch.Tensor, states: torch.Tensor | None) -> torch.Tensor:
        kwargs = {} if states is None else {"encoder_hidden_states": states}
        return unet(x, timestep, **kwargs).sample

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        timestep = 1000 * t
        out = call(x, timestep, cond)
        if cfg_scale is not None:
            base = call(x, timestep, uncond)
            out = base + cfg_scale * (out - base)
        if prediction == "v_prediction":
            # v = alpha eps - sigma x0 with alpha^2 + sigma^2 = 1, so eps = sigma x + alpha v
            tt = float(t.reshape(-1)[0])
            return schedule.sigma(tt) * x + schedule.alpha(tt) * out
        return out

    output = "data" if prediction == "sample" else "noise"
    return model, schedule, output


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
