"""Rex as a diffusers scheduler: ``pipe.scheduler = RexScheduler.from_config(config)``.

Blasingame & Liu, *Rex* (arXiv:2502.08834): the reversible McCallum-Foster coupling of an
exponential RK (Princeps) increment, here behind diffusers' stepping protocol
(``set_timesteps`` / ``timesteps`` / ``step`` / ``init_noise_sigma``).

One Rex step from t_n to t_{n+1} needs the model at every stage of two increments,
Psi_h(varsigma_n, x_hat_n) and Psi_{-h}(varsigma_{n+1}, x_{n+1}) (2 s calls for an s-stage tableau).
A diffusers loop calls the model once per entry of ``timesteps``, so, as diffusers' own Heun and
KDPM2 schedulers do, ``timesteps`` lists every model call (stage times included) and ``step``
returns as ``prev_sample`` the input of the next call; the scheduler holds the reversible pair
(x, x_hat) and the stage values between calls, and the last call of the sweep returns x_0. The
arithmetic is :class:`~icml26.rex.solver.RexSolver`'s own (its stage generators), so a pipeline
with this scheduler gives what ``RexSolver`` gives on the same model.

Time mapping: the scheduler's ``alphas_cumprod`` (built by diffusers' ``DDPMScheduler`` from the
same config) give a :class:`~icml26.rex.schedules.DiscreteVPSchedule` with timestep k at
t = (k + 1) / N and alpha = sqrt(abar_k) exactly; stage times between nodes become fractional
timesteps N t - 1 (a UNet's sinusoidal embedding takes any real timestep).

Deviations: ``generator`` in ``step`` is used only to key the Brownian path of an SDE sweep when
``seed=None`` (Rex draws no other noise); the sampling span is the full training span
(timestep N - 1 to 0), and ``timestep_spacing`` / ``steps_offset`` of other schedulers' configs
are ignored (the grid is ``grid``: uniform in t, log-SNR or varsigma).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, final

import torch

from icml26.core import check_in_interval, check_one_of, check_positive_int, check_tensor, require
from icml26.rex._checks import check_callable, check_state
from icml26.rex.brownian import _path_key
from icml26.rex.diffusers_adapter import (
    PREDICTION_TYPES,
    REX_OUTPUT,
    _output_tensor,
    _rex_output,
)
from icml26.rex.parameterization import PREDICTIONS, convert_output
from icml26.rex.princeps import SDE_METHODS, _drive
from icml26.rex.schedules import MAX_TRAIN_TIMESTEPS, DiscreteVPSchedule
from icml26.rex.solver import GRIDS, MAX_STEPS, RexSolver
from icml26.rex.tableaus import TABLEAUS

require("diffusers", "rex-diffusers", owner="RexScheduler")
from diffusers import DDPMScheduler  # noqa: E402
from diffusers.configuration_utils import ConfigMixin, register_to_config  # noqa: E402
from diffusers.schedulers.scheduling_utils import (  # noqa: E402
    KarrasDiffusionSchedulers,
    SchedulerMixin,
)
from diffusers.utils import BaseOutput  # noqa: E402

__all__ = ["RexInversion", "RexScheduler", "RexSchedulerOutput"]

BETA_SCHEDULES = ("linear", "scaled_linear", "squaredcos_cap_v2", "sigmoid")


@dataclass
class RexSchedulerOutput(BaseOutput):
    """What :meth:`RexScheduler.step` returns.

    Attributes
    ----------
    prev_sample
        The input of the next model call, or x_0 after the sweep's last call.
    pred_original_sample
        The data prediction x0_hat of the call just made (at its stage input and time);
        ``None`` after ShARK's priming call.
    """

    prev_sample: torch.Tensor
    pred_original_sample: torch.Tensor | None = None


@dataclass(frozen=True)
class RexInversion:
    """Data encoded to noise by :meth:`RexScheduler.invert`: decode it with ``set_inversion``.

    Attributes
    ----------
    latents, latents_hat
        The reversible pair (x_T, x_T_hat) at the noise end. The first model call of a sweep is
        at x_T_hat, so a pipeline decodes from ``pipeline_latents`` (= ``latents_hat``; pass
        ``latents=inversion.pipeline_latents``) and the scheduler holds x_T.
    num_inference_steps
        The grid it was encoded on (decoding must use the same).
    seed
        The Brownian path's key (SDE schedulers; decoding must use the same path).
    """

    latents: torch.Tensor
    latents_hat: torch.Tensor
    num_inference_steps: int
    seed: int

    @property
    def pipeline_latents(self) -> torch.Tensor:
        """The sample a pipeline's loop starts from to decode this inversion (x_T_hat)."""
        return self.latents_hat


def _warn_ddim_options(eta: Any, clipped: Any, variance_noise: Any, owner: str) -> None:
    """Check DDIM's step options and warn about those that would change a DDIM sample."""
    if eta is not None:
        eta = check_in_interval("eta", eta, low=0.0, high=1.0, owner=owner)
    if clipped is not None and not isinstance(clipped, bool):
        raise TypeError(f"{owner}: use_clipped_model_output must be a bool or None; got {clipped}.")
    if variance_noise is not None and not isinstance(variance_noise, torch.Tensor):
        kind = type(variance_noise).__name__
        raise TypeError(f"{owner}: variance_noise must be a tensor or None; got {kind}.")
    options = {
        "eta > 0": bool(eta),
        "use_clipped_model_output": bool(clipped),
        "variance_noise": variance_noise is not None,
    }
    ignored = [name for name, on in options.items() if on]
    if ignored:
        warnings.warn(
            f"{owner}: {', '.join(ignored)} ignored: Rex is deterministic unless the scheduler's "
            "config sets sde ('em' or 'shark'), and it clips nothing.",
            UserWarning,
            stacklevel=3,
        )


def _refuse_model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("RexScheduler's solver is driven by the pipeline's model calls.")


@final
class RexScheduler(SchedulerMixin, ConfigMixin):
    """Rex (reversible exponential RK / stochastic RK) as a diffusers scheduler.

    Parameters
    ----------
    num_train_timesteps, beta_start, beta_end, beta_schedule, trained_betas
        The training noise schedule, as diffusers' DDPM/DDIM schedulers take it (``from_config``
        of any of them carries these over). ``beta_schedule`` in {linear, scaled_linear,
        squaredcos_cap_v2, sigmoid}.
    prediction_type
        What the UNet predicts: ``"epsilon"``, ``"sample"`` or ``"v_prediction"``.
    tableau
        Butcher tableau of the Princeps increment (``"euler"``, ``"midpoint"``, ``"rk4"``, ...;
        the ODE only). Non-adaptive: an embedded tableau is used with its propagated weights.
    prediction
        ``"data"`` or ``"noise"``: what the exponential integrator integrates.
    sde
        ``None`` (probability-flow ODE), ``"em"`` or ``"shark"``.
    zeta
        Coupling parameter in (0, 1] (the reference code's default 0.999).
    grid
        Sampling grid uniform in ``"t"``, ``"logsnr"`` or ``"varsigma"``.
    seed
        Key of the Brownian path (SDEs); ``None``: drawn at the first step of each sweep from
        the pipeline's ``generator`` (fresh entropy without one).
    low_order_final_n_steps
        The last that many steps use Euler (Euler-Maruyama), as the reference code's option.

    Examples
    --------
    >>> import diffusers
    >>> ddpm = diffusers.DDPMScheduler()
    >>> rex = RexScheduler.from_config(ddpm.config, tableau="midpoint")
    >>> rex.set_timesteps(3)
    >>> len(rex.timesteps), rex.init_noise_sigma  # 3 steps x 2 increments x 2 stages
    (12, 1.0)
    >>> model = lambda x, t: 0.1 * x  # any eps-predictor (a UNet in a pipeline)
    >>> x = torch.randn(2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> for t in rex.timesteps:
    ...     x = rex.step(model(x, t), t, x).prev_sample
    >>> inversion = rex.invert(model, x)  # data -> noise, exact
    >>> rex.set_inversion(inversion)
    >>> y = inversion.pipeline_latents
    >>> for t in rex.timesteps:
    ...     y = rex.step(model(y, t), t, y).prev_sample
    >>> bool((y - x).abs().max() < 1e-12 * x.abs().max())  # x_0 is far from 0: a toy model
    True
    """

    _compatibles: ClassVar[list[str]] = [e.name for e in KarrasDiffusionSchedulers]
    order = 1  # model calls per step; set per instance from the tableau

    @register_to_config
    def __init__(
        self,
        num_train_timesteps: int = 1000,
        beta_start: float = 0.0001,
        beta_end: float = 0.02,
        beta_schedule: str = "linear",
        trained_betas: list[float] | None = None,
        prediction_type: str = "epsilon",
        tableau: str = "rk4",
        prediction: str = "data",
        sde: str | None = None,
        zeta: float = 0.999,
        grid: str = "t",
        seed: int | None = 0,
        low_order_final_n_steps: int = 0,
    ) -> None:
        owner = "RexScheduler"
        n = check_positive_int(
            "num_train_timesteps", num_train_timesteps, owner=owner, minimum=2,
            maximum=MAX_TRAIN_TIMESTEPS,
        )  # fmt: skip
        beta_start = check_in_interval(
            "beta_start", beta_start, low=0.0, high=1.0, closed="neither", owner=owner
        )
        beta_end = check_in_interval(
            "beta_end", beta_end, low=0.0, high=1.0, closed="neither", owner=owner
        )
        check_one_of("beta_schedule", beta_schedule, BETA_SCHEDULES, owner=owner)
        if trained_betas is not None:
            trained_betas = self._check_betas(trained_betas, n)
        self.prediction_type = check_one_of(
            "prediction_type", prediction_type, PREDICTION_TYPES, owner=owner
        )
        if not isinstance(tableau, str):
            raise TypeError(f"{owner}: tableau must be a str (a config is JSON); got {tableau!r}.")
        check_one_of("tableau", tableau, tuple(TABLEAUS), owner=owner)
        check_one_of("prediction", prediction, PREDICTIONS, owner=owner)
        check_one_of("sde", sde, SDE_METHODS, owner=owner)
        check_one_of("grid", grid, GRIDS, owner=owner)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(
                f"{owner}: seed must be an int or None (a config is JSON); got {seed!r}."
            )
        ddpm = DDPMScheduler(num_train_timesteps=n, beta_start=beta_start, beta_end=beta_end,
                             beta_schedule=beta_schedule, trained_betas=trained_betas)  # fmt: skip
        self.betas, self.alphas_cumprod = ddpm.betas, ddpm.alphas_cumprod  # diffusers' own
        try:
            self.schedule = DiscreteVPSchedule(self.alphas_cumprod)
        except ValueError as err:
            raise ValueError(
                f"{owner}: beta_start, beta_end, beta_schedule and trained_betas give unusable "
                f"alphas_cumprod: {err}"
            ) from None
        self._solver = RexSolver(
            _refuse_model, self.schedule, tableau=tableau, prediction=prediction,
            model_output=REX_OUTPUT[self.prediction_type], sde=sde, zeta=zeta, grid=grid,
            seed=0 if seed is None else seed, low_order_final_n_steps=low_order_final_n_steps,
        )  # fmt: skip
        self._solver._f = self._solver.tv.predictor(self._pending_output, self._solver.model_output)
        stages = 1 if sde == "em" else 2 if sde == "shark" else self._solver.tableau.stages
        self.order = 2 * stages  # model calls per step (ShARK: one priming call per sweep more)
        self.init_noise_sigma = 1.0
        self.num_inference_steps: int | None = None
        self.timesteps = torch.zeros(0, dtype=torch.float64)
        self._ts: list[float] | None = None
        self._priming = False
        self._inversion: RexInversion | None = None
        self._pair: tuple[torch.Tensor, torch.Tensor] | None = None
        self._reset()

    @staticmethod
    def _check_betas(trained_betas: Any, n: int) -> list[float]:
        values = trained_betas.tolist() if hasattr(trained_betas, "tolist") else trained_betas
        if isinstance(values, str | bytes) or not isinstance(values, list | tuple):
            raise TypeError(
                f"RexScheduler: trained_betas must be a list of floats or None; got "
                f"{type(trained_betas).__name__}."
            )
        if len(values) != n:
            raise ValueError(
                f"RexScheduler: trained_betas must hold num_train_timesteps={n} values; "
                f"got {len(values)}."
            )
        return [
            check_in_interval("trained_betas", b, low=0.0, high=1.0, closed="neither",
                              owner="RexScheduler")
            for b in values
        ]  # fmt: skip

    # --- the model output a stage is waiting for ---------------------------------------------

    def _pending_output(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """The model output handed to ``step``/``invert``, as the solver's model output at t."""
        return _rex_output(
            self._pending, x, float(t.reshape(-1)[0]), self.schedule, self.prediction_type
        )

    def _reset(self) -> None:
        self._stages = None  # the running sweep (a stage generator of RexSolver)
        self._request: tuple[torch.Tensor, float] | None = None
        self._returned: torch.Tensor | None = None
        self._step_index = 0
        self._pending: torch.Tensor | None = None

    # --- the diffusers protocol ---------------------------------------------------------------

    def set_timesteps(
        self, num_inference_steps: int, device: str | torch.device | None = None
    ) -> None:
        """Fix the grid of ``num_inference_steps`` Rex steps; ``timesteps`` lists every model call.

        Entries are the (fractional) model timesteps N t - 1 of each stage, in call order, as
        float64. Ends any sweep in progress; a pending :meth:`set_inversion` stays.
        """
        owner = "RexScheduler.set_timesteps"
        n = check_positive_int("num_inference_steps", num_inference_steps, owner=owner,
                               maximum=MAX_STEPS)  # fmt: skip
        if device is not None and not isinstance(device, str | torch.device):
            raise TypeError(f"{owner}: device must be a str, torch.device or None; got {device!r}.")
        try:
            device = torch.device("cpu" if device is None else device)
            torch.zeros(1, device=device)
        except (RuntimeError, AssertionError) as err:
            raise ValueError(f"{owner}: device {device!r} is not available: {err}") from None
        ts = self._solver.timesteps(n)
        # a dry run on a 1-element state lists the stage times (they do not depend on values)
        probe = torch.zeros(1, dtype=torch.float64)
        times: list[float] = []
        _drive(self._solver._forward_sweep(probe, probe.clone(), ts),
               lambda x, t: times.append(t) or torch.zeros_like(x))  # fmt: skip
        # ShARK's first stage sits at x_hat + kappa H, which the pipeline cannot know before its
        # first call: that call (at the noise itself) only primes the sweep, its output unused
        self._priming = self.config.sde == "shark"
        if self._priming:
            times.insert(0, ts[0])
        dtype = torch.float32 if device.type == "mps" else torch.float64
        self.timesteps = torch.tensor(
            [self.schedule.timestep(t) for t in times], dtype=dtype, device=device
        )
        self.num_inference_steps, self._ts = n, ts
        self._reset()

    def scale_model_input(self, sample: torch.Tensor, timestep: Any = None) -> torch.Tensor:
        """The model input as is (Rex needs no input scaling; part of diffusers' protocol)."""
        check_tensor("sample", sample, owner="RexScheduler.scale_model_input")
        return sample

    def step(
        self,
        model_output: torch.Tensor,
        timestep: float | torch.Tensor,
        sample: torch.Tensor,
        eta: float | None = 0.0,
        use_clipped_model_output: bool | None = None,
        generator: torch.Generator | None = None,
        variance_noise: torch.Tensor | None = None,
        return_dict: bool = True,
    ) -> RexSchedulerOutput | tuple[torch.Tensor]:
        """Take the model output of the current call; return the next call's input (or x_0).

        Accepts the keyword arguments diffusers' pipelines pass to a scheduler's ``step``
        (``DDIMPipeline`` passes ``eta``, ``use_clipped_model_output`` and ``generator``).

        Parameters
        ----------
        model_output
            The UNet's output at ``sample`` and ``timestep`` (``prediction_type``).
        timestep
            The current entry of ``timesteps`` (checked against it).
        sample
            The previous ``prev_sample`` (the noise x_T at the first call of a sweep).
        eta, use_clipped_model_output, variance_noise
            DDIM's stochasticity and clipping, which Rex does not have (its noise is the ``sde``
            of the config): accepted so that DDIM-style pipelines run, ignored as diffusers'
            other schedulers ignore them; ``eta > 0``, ``use_clipped_model_output=True`` or a
            ``variance_noise`` warn that they are ignored.
        generator
            Keys the Brownian path of an SDE sweep when ``seed=None``; otherwise unused.
        return_dict
            ``False`` returns a tuple ``(prev_sample,)`` (diffusers' convention).
        """
        owner = "RexScheduler.step"
        _warn_ddim_options(eta, use_clipped_model_output, variance_noise, owner)
        if self._ts is None:
            raise ValueError(
                f"{owner}: call set_timesteps(num_inference_steps) before step(model_output, "
                "timestep, sample)."
            )
        check_state("model_output", model_output, owner=owner)
        check_state("sample", sample, owner=owner)
        if model_output.shape != sample.shape:
            raise ValueError(
                f"{owner}: model_output must have the sample's shape {tuple(sample.shape)}; got "
                f"{tuple(model_output.shape)}."
            )
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(
                f"{owner}: generator must be a torch.Generator or None; got {generator!r}."
            )
        if not isinstance(return_dict, bool):
            raise TypeError(f"{owner}: return_dict must be a bool; got {return_dict!r}.")
        index = self._step_index
        if index >= len(self.timesteps):
            raise ValueError(
                f"{owner}: the sweep of {len(self.timesteps)} model calls is finished; call "
                "set_timesteps(num_inference_steps) before the next step(model_output, timestep, "
                "sample)."
            )
        self._check_timestep(timestep, index, owner)
        if index == 0:
            self._start_sweep(sample, generator, owner)
            if self._priming:
                self._step_index, self._returned = 1, self._request[0]
                return RexSchedulerOutput(self._returned) if return_dict else (self._returned,)
        elif not (sample is self._returned or torch.equal(sample, self._returned)):
            raise ValueError(
                f"{owner}: sample must be the prev_sample of the previous step (Rex holds the "
                "reversible pair between calls)."
            )
        x, t = self._request
        self._pending = model_output
        value = self._solver._f(x, t)
        x0_pred = convert_output(
            _rex_output(model_output, x, t, self.schedule, self.prediction_type), x, t,
            self.schedule, source=self._solver.model_output, target="data",
        )  # fmt: skip
        try:
            self._request = self._stages.send(value)
            prev = self._request[0]
        except StopIteration as stop:
            self._pair = stop.value
            prev = self._pair[0]
            self._stages = self._request = None
        self._step_index += 1
        self._returned = prev
        if not return_dict:
            return (prev,)
        return RexSchedulerOutput(prev_sample=prev, pred_original_sample=x0_pred)

    def add_noise(
        self, original_samples: torch.Tensor, noise: torch.Tensor, timesteps: torch.Tensor
    ) -> torch.Tensor:
        """Forward-noise ``original_samples`` to integer ``timesteps`` (diffusers' meaning).

        ``sqrt(abar_k) x_0 + sqrt(1 - abar_k) noise`` with this scheduler's ``alphas_cumprod``,
        as ``DDPMScheduler.add_noise``: for training a UNet or for SDEdit-style editing.
        ``timesteps`` holds one integer in ``[0, num_train_timesteps)`` per sample (or one
        for all).
        """
        owner = "RexScheduler.add_noise"
        check_tensor("original_samples", original_samples, owner=owner, finite=True)
        check_tensor("noise", noise, owner=owner, shape=tuple(original_samples.shape),
                     finite=True)  # fmt: skip
        if (
            not isinstance(timesteps, torch.Tensor)
            or timesteps.is_floating_point()
            or (timesteps.is_complex() or timesteps.dtype == torch.bool)
        ):
            raise TypeError(f"{owner}: timesteps must be an integer tensor; got {timesteps!r}.")
        n = len(self.alphas_cumprod)
        if timesteps.numel() and (int(timesteps.min()) < 0 or int(timesteps.max()) >= n):
            raise ValueError(f"{owner}: timesteps must lie in [0, {n}); got {timesteps.tolist()}.")
        if timesteps.ndim > 1 or timesteps.numel() not in (1, original_samples.shape[0]):
            raise ValueError(
                f"{owner}: timesteps must hold one timestep per sample "
                f"({original_samples.shape[0]}) or one; got shape {tuple(timesteps.shape)}."
            )
        abar = self.alphas_cumprod.to(original_samples.device)[timesteps.long().reshape(-1)]
        abar = abar.to(original_samples.dtype).reshape(-1, *[1] * (original_samples.ndim - 1))
        return abar.sqrt() * original_samples + (1 - abar).sqrt() * noise

    def _check_timestep(self, timestep: Any, index: int, owner: str) -> None:
        if isinstance(timestep, torch.Tensor):
            if timestep.numel() == 0 or timestep.is_complex():
                raise ValueError(f"{owner}: timestep must be a real number; got {timestep!r}.")
            values = timestep.detach().double().reshape(-1).cpu().tolist()
        elif isinstance(timestep, int | float) and not isinstance(timestep, bool):
            values = [float(timestep)]
        else:
            raise TypeError(f"{owner}: timestep must be a number or tensor; got {timestep!r}.")
        expected = float(self.timesteps[index])
        # a pipeline hands back our own entries; 1e-3 allows a float32 copy of them
        if not all(
            math.isfinite(v) and abs(v - expected) <= 1e-3 * max(1.0, expected) for v in values
        ):
            raise ValueError(
                f"{owner}: timestep must be timesteps[{index}] = {expected!r} (call {index} of the "
                f"sweep); got {values[:2]}."
            )

    def _start_sweep(self, sample: torch.Tensor, generator: torch.Generator | None, owner: str):
        inversion, x, x_hat = self._inversion, sample, sample.clone()
        if inversion is not None:
            start = inversion.pipeline_latents
            if inversion.num_inference_steps != self.num_inference_steps or not (
                start.shape == sample.shape and torch.equal(start, sample)
            ):
                raise ValueError(
                    f"{owner}: a pending inversion decodes only from its own pipeline_latents "
                    f"on its own grid ({inversion.num_inference_steps} steps); got another sample "
                    f"or {self.num_inference_steps} steps (start at pipeline_latents)."
                )
            x, x_hat = inversion.latents.to(sample.dtype).clone(), sample
            self._solver.seed = inversion.seed
            self._inversion = None
        elif self.config.seed is None:
            self._solver.seed = _path_key(generator, owner=owner)
        else:
            self._solver.seed = self.config.seed
        self._stages = self._solver._forward_sweep(x, x_hat, self._ts)
        self._request = next(self._stages)

    # --- exact inversion ----------------------------------------------------------------------

    @torch.no_grad()
    def invert(
        self,
        model: Any,
        sample: torch.Tensor,
        num_inference_steps: int | None = None,
        generator: torch.Generator | None = None,
    ) -> RexInversion:
        """Encode data to noise exactly: Rex's backward sweep on this scheduler's grid.

        Parameters
        ----------
        model
            ``model(x, timestep)`` returning the ``prediction_type`` output as a tensor or with
            ``.sample``: a ``UNet2DModel``, or :func:`~icml26.rex.guided_unet` for a conditional
            UNet with classifier-free guidance (one batched call per stage).
        sample
            The data x_0 (a batch).
        num_inference_steps
            Grid size (``set_timesteps`` is called with it); ``None`` keeps the current grid.
        generator
            Keys the Brownian path when the scheduler has ``seed=None`` (SDEs).

        Returns
        -------
        RexInversion
            Hand it to :meth:`set_inversion`; the next sweep started from its ``x_T`` returns
            ``sample`` up to round-off.
        """
        owner = "RexScheduler.invert"
        check_callable("model", model, owner=owner)
        check_state("sample", sample, owner=owner)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(
                f"{owner}: generator must be a torch.Generator or None; got {generator!r}."
            )
        if num_inference_steps is not None:
            self.set_timesteps(num_inference_steps)
        if self._ts is None:
            raise ValueError(f"{owner}: give num_inference_steps or call set_timesteps first.")
        self._reset()
        seed = _path_key(generator, owner=owner) if self.config.seed is None else self.config.seed
        self._solver.seed = seed

        def f(x: torch.Tensor, t: float) -> torch.Tensor:
            timestep = torch.tensor(self.schedule.timestep(t), dtype=torch.float64, device=x.device)
            self._pending = _output_tensor(model(x, timestep))
            return self._solver._f(x, t)

        x_T, x_T_hat = _drive(self._solver._backward_sweep(sample, sample.clone(), self._ts), f)
        self._pending = None
        return RexInversion(x_T, x_T_hat, self.num_inference_steps, seed)

    def set_inversion(self, inversion: RexInversion) -> None:
        """Make the next sweep decode ``inversion`` (start it from ``inversion.latents``).

        Calls ``set_timesteps(inversion.num_inference_steps)``; the pipeline's own call with the
        same number keeps it pending. The first ``step`` then checks that its sample is x_T.
        """
        if not isinstance(inversion, RexInversion):
            raise TypeError(
                f"RexScheduler.set_inversion: inversion must be a RexInversion (from invert); got "
                f"{type(inversion).__name__}."
            )
        self.set_timesteps(inversion.num_inference_steps)
        self._inversion = inversion

    @property
    def pair(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(x_0, x_0_hat) of the last finished sweep (``None`` before one finishes)."""
        return self._pair

    def __len__(self) -> int:
        return self.config.num_train_timesteps
