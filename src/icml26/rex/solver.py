"""Rex: the reversible McCallum-Foster coupling of the Princeps increment (Blasingame & Liu).

State (x, x_hat), initialised with x_hat = x. One step n -> n+1 (h = varsigma_{n+1} - varsigma_n,
kappa ratios r = kappa_{n+1}/kappa_n, coupling zeta in (0, 1]):

    x_{n+1}     = r (zeta x_n + (1 - zeta) x_hat_n) + kappa_{n+1} Psi_h(varsigma_n, x_hat_n)
    x_hat_{n+1} = r x_hat_n - kappa_{n+1} Psi_{-h}(varsigma_{n+1}, x_{n+1})

and its closed-form inverse

    x_hat_n = x_hat_{n+1} / r + kappa_n Psi_{-h}(varsigma_{n+1}, x_{n+1})
    x_n     = x_{n+1} / (r zeta) + (1 - 1/zeta) x_hat_n
              - (kappa_n / zeta) Psi_h(varsigma_n, x_hat_n).

Sampling runs the forward sweep from noise to data; encoding real data sets x = x_hat = data and
runs the backward sweep on the same grid; decoding runs the forward sweep again. For SDEs, the
Brownian increment W_n and Levy area H_n of each step are regenerated from the seed (the reversed
evaluation uses -W_n and the same H_n), so nothing is stored per path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import torch

from icml26.core import Seed, check_in_interval, check_one_of, check_positive_int, check_tensor
from icml26.rex._checks import check_state, check_time
from icml26.rex.brownian import SeededBrownian, _path_key, brownian_on_grid
from icml26.rex.parameterization import MODEL_OUTPUTS, PREDICTIONS, Model, TimeVariable
from icml26.rex.princeps import SDE_METHODS, Stages, _drive, _increment_stages
from icml26.rex.schedules import Schedule
from icml26.rex.tableaus import ButcherTableau, get_tableau

EULER = get_tableau("euler")
MAX_STEPS = 100_000  # largest n_steps / low_order_final_n_steps accepted (a grid is a list)

__all__ = ["GRIDS", "RexSolver", "make_grid"]

GRIDS = ("t", "logsnr", "varsigma")
Noise = tuple[torch.Tensor | None, torch.Tensor | None]


def make_grid(
    schedule: Schedule,
    n_steps: int,
    *,
    kind: str = "t",
    t_start: float | None = None,
    t_end: float | None = None,
    time_variable: TimeVariable | None = None,
) -> list[float]:
    """N + 1 times from ``t_start`` (noise) to ``t_end`` (data), uniform in t, log-SNR or varsigma.

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> make_grid(VPSchedule(), 2, t_end=0.5)
    [1.0, 0.75, 0.5]
    """
    n_steps = check_positive_int("n_steps", n_steps, owner="make_grid", maximum=MAX_STEPS)
    check_one_of("kind", kind, GRIDS, owner="make_grid")
    if not isinstance(schedule, Schedule):
        raise TypeError(f"make_grid: schedule must be a Schedule; got {type(schedule).__name__}.")
    t0 = schedule.t_noise if t_start is None else float(t_start)
    t1 = schedule.t_data if t_end is None else float(t_end)
    if kind == "t":
        ts = np.linspace(t0, t1, n_steps + 1)
    elif kind == "logsnr":
        lams = np.linspace(schedule.log_snr(t0), schedule.log_snr(t1), n_steps + 1)
        ts = np.array([schedule.t_of_log_snr(float(lam)) for lam in lams])
    else:
        if time_variable is None:
            raise ValueError("make_grid: kind='varsigma' needs the solver's time_variable.")
        vs = np.linspace(time_variable.varsigma(t0), time_variable.varsigma(t1), n_steps + 1)
        ts = np.array([time_variable.t_of(float(v)) for v in vs])
    ts[0], ts[-1] = t0, t1  # exact ends, whatever the inverse map's round-off
    return [float(t) for t in ts]


class RexSolver:
    """Reversible exponential (stochastic) Runge-Kutta solver for diffusion and flow models.

    Parameters
    ----------
    model
        ``model(x, t)`` with ``x`` of shape (batch, ...) and ``t`` of shape (batch,), returning the
        quantity named by ``model_output`` with the shape of ``x``.
    schedule
        :class:`VPSchedule`, :class:`FlowMatchingSchedule` or :class:`CustomSchedule`.
    tableau
        Name from ``TABLEAUS`` (``"euler"``, ``"midpoint"``, ``"rk4"``, ``"dopri5"``...) or a
        :class:`ButcherTableau`; ignored by SDE solvers.
    prediction
        ``"data"`` or ``"noise"``: the quantity the exponential integrator integrates.
    model_output
        ``"noise"``, ``"data"`` or ``"velocity"``.
    sde
        ``None`` (probability-flow ODE), ``"em"`` (Euler-Maruyama) or ``"shark"``.
    zeta
        Coupling parameter in (0, 1]; 1 is the paper's experiments, 0.999 the reference default.
    n_steps
        Steps of the fixed grid (and the initial step of the adaptive controller).
    seed
        Seed of the Brownian path (SDEs): an int, or a numpy / torch generator (``None``: fresh
        entropy) from which one integer key is drawn at construction, so every sweep of this
        solver (sample, encode, decode) uses the same path. The key is kept as ``seed``.
    adaptive
        Adaptive steps with an embedded tableau (ODE only); ``sample`` returns the accepted grid.
    grid
        Fixed grid uniform in ``"t"``, ``"logsnr"`` or ``"varsigma"``.
    atol, rtol, safety, min_step
        Step-size controller settings.
    t_start, t_end
        Sampling span (default: the schedule's ``t_noise`` and ``t_data``).
    low_order_final_n_steps
        The last this many steps of every sweep (those nearest the data end) use the Euler
        tableau, or Euler-Maruyama for SDEs, as the reference code's option of the same name
        (its scripts use 0 or 2). Encoding uses the same steps, so round trips stay exact. Fixed
        grids only.

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> model = lambda x, t: 0.5 * x  # any eps-predictor
    >>> solver = RexSolver(model, VPSchedule(), tableau="midpoint", n_steps=10)
    >>> x0 = torch.randn(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> ts = solver.timesteps()
    >>> xT, xT_hat = solver.encode(x0, ts)
    >>> x0_back, _ = solver.decode(xT, xT_hat, ts)
    >>> bool((x0_back - x0).abs().max() < 1e-10)
    True
    """

    def __init__(
        self,
        model: Model,
        schedule: Schedule,
        *,
        tableau: str | ButcherTableau = "rk4",
        prediction: str = "data",
        model_output: str = "noise",
        sde: str | None = None,
        zeta: float = 0.999,
        n_steps: int = 50,
        seed: Seed = 0,
        adaptive: bool = False,
        grid: str = "t",
        atol: float = 1e-5,
        rtol: float = 1e-5,
        safety: float = 0.9,
        min_step: float = 1e-10,
        t_start: float | None = None,
        t_end: float | None = None,
        low_order_final_n_steps: int = 0,
    ) -> None:
        owner = "RexSolver"
        if not callable(model):
            raise TypeError(
                f"{owner}: model must be a callable model(x, t); got {type(model).__name__}."
            )
        if not isinstance(schedule, Schedule):
            raise TypeError(f"{owner}: schedule must be a Schedule; got {type(schedule).__name__}.")
        self.model, self.schedule = model, schedule
        self.tableau = get_tableau(tableau)
        self.prediction = check_one_of("prediction", prediction, PREDICTIONS, owner=owner)
        self.model_output = check_one_of("model_output", model_output, MODEL_OUTPUTS, owner=owner)
        self.sde = check_one_of("sde", sde, SDE_METHODS, owner=owner)
        self.zeta = check_in_interval("zeta", zeta, low=0.0, high=1.0, closed="right", owner=owner)
        self.n_steps = check_positive_int("n_steps", n_steps, owner=owner, maximum=MAX_STEPS)
        self.seed = _path_key(seed, owner=owner)
        self.adaptive = bool(adaptive)
        if self.adaptive and (sde is not None or not self.tableau.embedded):
            raise ValueError(
                f"{owner}: adaptive=True needs sde=None and an embedded tableau "
                f"(bogacki_shampine, dopri5); got sde={sde!r}, tableau={self.tableau.name!r}."
            )
        self.low_order_final_n_steps = check_positive_int(
            "low_order_final_n_steps", low_order_final_n_steps, owner=owner, minimum=0,
            maximum=MAX_STEPS,
        )  # fmt: skip
        if self.adaptive and self.low_order_final_n_steps:
            raise ValueError(
                f"{owner}: low_order_final_n_steps needs a fixed grid (adaptive=False); got "
                f"low_order_final_n_steps={low_order_final_n_steps!r} with adaptive=True."
            )
        self.grid = check_one_of("grid", grid, GRIDS, owner=owner)
        self.atol = check_in_interval("atol", atol, low=0.0, owner=owner)
        self.rtol = check_in_interval("rtol", rtol, low=0.0, owner=owner)
        self.safety = check_in_interval(
            "safety", safety, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.min_step = check_in_interval(
            "min_step", min_step, low=0.0, closed="neither", owner=owner
        )
        t_start = schedule.t_noise if t_start is None else t_start
        t_end = schedule.t_data if t_end is None else t_end
        self.t_start = check_time(schedule, "t_start", t_start, owner=owner)
        self.t_end = check_time(schedule, "t_end", t_end, owner=owner)
        if self.t_start == self.t_end:
            raise ValueError(f"{owner}: t_start and t_end must differ; got {t_start!r} twice.")
        self.tv = TimeVariable(schedule, self.prediction, self.sde is not None)
        self._f = self.tv.predictor(model, self.model_output)

    # --- grids and noise -------------------------------------------------------------------

    def timesteps(self, n_steps: int | None = None) -> list[float]:
        """The fixed sampling grid (noise end first)."""
        return make_grid(
            self.schedule,
            self.n_steps if n_steps is None else n_steps,
            kind=self.grid,
            t_start=self.t_start,
            t_end=self.t_end,
            time_variable=self.tv,
        )

    def _check_grid(self, ts: Sequence[float] | torch.Tensor | np.ndarray) -> list[float]:
        ts = [float(t) for t in (ts.tolist() if hasattr(ts, "tolist") else ts)]
        if len(ts) < 2:
            raise ValueError(f"RexSolver: ts needs at least 2 times; got {len(ts)}.")
        direction = math.copysign(1.0, self.t_end - self.t_start)
        steps = np.diff(ts) * direction
        if not np.all(steps > 0):
            raise ValueError(
                "RexSolver: ts must be strictly monotone from the noise end to the data end "
                f"(t_start={self.t_start}, t_end={self.t_end}); got {ts[:4]}..."
            )
        return ts

    def brownian(
        self, ts: Sequence[float] | torch.Tensor | np.ndarray, x: torch.Tensor
    ) -> SeededBrownian | None:
        """The Brownian path every sweep on the grid ``ts`` uses (``None`` for ODEs).

        It lives on the grid's noise-clock span, is keyed by ``seed``, and resolves the grid's
        shortest clock step (see :func:`~icml26.rex.brownian.tree_depth`); ``x`` gives the shape,
        dtype and device of the increments.
        """
        ts = self._check_grid(ts)
        check_tensor("x", x, owner="RexSolver.brownian")
        if self.sde is None:
            return None
        return brownian_on_grid(self.seed, self.tv, ts, x)

    def noise(self, bm: SeededBrownian | None, t0: float, t1: float) -> Noise:
        """(W, H) of the step t0 -> t1 on the path ``bm``, in this solver's noise clock."""
        if bm is None:
            return None, None
        return bm.increment(self.tv.noise_clock(t0), self.tv.noise_clock(t1))

    def _psi(self, t_from: float, t_to: float, x: torch.Tensor, W, H, low_order: bool) -> Stages:
        """The increment's stage generator (see :func:`~icml26.rex.princeps._increment_stages`)."""
        if low_order:  # Euler / Euler-Maruyama (low_order_final_n_steps)
            sde = None if self.sde is None else "em"
            return _increment_stages(self.tv, EULER, t_from, t_to, x, sde=sde, W=W, H=H)
        return _increment_stages(self.tv, self.tableau, t_from, t_to, x, sde=self.sde, W=W, H=H)

    def _low_order(self, step: int, n_steps: int) -> bool:
        """Whether step ``step`` (0 = noise end) of ``n_steps`` is a final low-order one."""
        return step >= n_steps - self.low_order_final_n_steps

    # --- one step ---------------------------------------------------------------------------

    def _check_step(self, x, x_hat, t0, t1, noise, method: str):
        owner = f"RexSolver.{method}"
        check_state("x" if method == "forward_step" else "x1", x, owner=owner)
        check_state("x_hat" if method == "forward_step" else "x_hat1", x_hat, owner=owner)
        t0 = check_time(self.schedule, "t0", t0, owner=owner)
        t1 = check_time(self.schedule, "t1", t1, owner=owner)
        if t0 == t1:
            raise ValueError(f"{owner}: t0 and t1 must differ; got {t0!r} twice.")
        if not (isinstance(noise, tuple | list) and len(noise) == 2):
            raise TypeError(f"{owner}: noise must be a pair (W, H); got {type(noise).__name__}.")
        W, H = noise
        if self.sde is not None and W is None:
            raise ValueError(f"{owner}: an SDE step needs noise = (W, H) from RexSolver.noise.")
        for name, value in (("noise", W), ("noise", H)):
            if value is not None:
                check_tensor(name, value, owner=owner)
                if value.shape != x.shape:
                    raise ValueError(
                        f"{owner}: noise tensors must have the state's shape {tuple(x.shape)}; "
                        f"got {tuple(value.shape)}."
                    )
        return t0, t1, W, H

    def forward_step(
        self,
        x: torch.Tensor,
        x_hat: torch.Tensor,
        t0: float,
        t1: float,
        noise: Noise = (None, None),
        *,
        low_order: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, float | None]:
        """One coupled step t0 -> t1; returns (x1, x_hat1, error estimate or None).

        ``low_order=True`` takes the step with Euler (Euler-Maruyama for SDEs).
        """
        t0, t1, W, H = self._check_step(x, x_hat, t0, t1, noise, "forward_step")
        return _drive(self._forward_stages(x, x_hat, t0, t1, W, H, low_order), self._f)

    def _forward_stages(self, x, x_hat, t0: float, t1: float, W, H, low_order: bool) -> Stages:
        k0, k1 = self.tv.kappa(t0), self.tv.kappa(t1)
        r, z = k1 / k0, self.zeta
        inc = yield from self._psi(t0, t1, x_hat, W, H, low_order)
        x1 = r * (z * x + (1 - z) * x_hat) + k1 * inc.psi
        back = yield from self._psi(t1, t0, x1, None if W is None else -W, H, low_order)
        x_hat1 = r * x_hat - k1 * back.psi
        return x1, x_hat1, inc.error

    def backward_step(
        self,
        x1: torch.Tensor,
        x_hat1: torch.Tensor,
        t0: float,
        t1: float,
        noise: Noise = (None, None),
        *,
        low_order: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The exact inverse of :meth:`forward_step` (from t1 back to t0)."""
        t0, t1, W, H = self._check_step(x1, x_hat1, t0, t1, noise, "backward_step")
        return _drive(self._backward_stages(x1, x_hat1, t0, t1, W, H, low_order), self._f)

    def _backward_stages(self, x1, x_hat1, t0: float, t1: float, W, H, low_order: bool) -> Stages:
        k0, k1 = self.tv.kappa(t0), self.tv.kappa(t1)
        r, z = k1 / k0, self.zeta
        back = yield from self._psi(t1, t0, x1, None if W is None else -W, H, low_order)
        x_hat = x_hat1 / r + k0 * back.psi
        inc = yield from self._psi(t0, t1, x_hat, W, H, low_order)
        x = x1 / (r * z) + (1 - 1 / z) * x_hat - (k0 / z) * inc.psi
        return x, x_hat

    # --- sweeps -----------------------------------------------------------------------------

    def _check_pair(self, x: torch.Tensor, x_hat: torch.Tensor) -> None:
        check_tensor("x", x, owner="RexSolver")
        check_tensor("x_hat", x_hat, owner="RexSolver")
        if x.shape != x_hat.shape or x.dtype != x_hat.dtype:
            raise ValueError(
                "RexSolver: x and x_hat must share shape and dtype; got "
                f"{tuple(x.shape)} {x.dtype} and {tuple(x_hat.shape)} {x_hat.dtype}."
            )
        if x.ndim < 1:
            raise ValueError("RexSolver: x must have a leading batch dimension.")

    def forward_solve(
        self, x: torch.Tensor, x_hat: torch.Tensor, ts: Sequence[float]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward sweep along ``ts`` (noise -> data): decoding / sampling."""
        self._check_pair(x, x_hat)
        return _drive(self._forward_sweep(x, x_hat, self._check_grid(ts)), self._f)

    def _forward_sweep(self, x: torch.Tensor, x_hat: torch.Tensor, ts: list[float]) -> Stages:
        bm = self.brownian(ts, x)
        n = len(ts) - 1
        for i, (t0, t1) in enumerate(itertools.pairwise(ts)):
            W, H = self.noise(bm, t0, t1)
            x, x_hat, _ = yield from self._forward_stages(
                x, x_hat, t0, t1, W, H, self._low_order(i, n)
            )
        return x, x_hat

    def backward_solve(
        self, x: torch.Tensor, x_hat: torch.Tensor, ts: Sequence[float]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Backward sweep along ``ts`` reversed (data -> noise): encoding."""
        self._check_pair(x, x_hat)
        return _drive(self._backward_sweep(x, x_hat, self._check_grid(ts)), self._f)

    def _backward_sweep(self, x: torch.Tensor, x_hat: torch.Tensor, ts: list[float]) -> Stages:
        bm = self.brownian(ts, x)
        n = len(ts) - 1
        for i in range(n - 1, -1, -1):
            t0, t1 = ts[i], ts[i + 1]
            W, H = self.noise(bm, t0, t1)
            x, x_hat = yield from self._backward_stages(
                x, x_hat, t0, t1, W, H, self._low_order(i, n)
            )
        return x, x_hat

    @torch.no_grad()
    def sample(self, x_T: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
        """Integrate from noise ``x_T`` to data; returns (x_0, x_0_hat, ts) with the grid used."""
        if self.adaptive:
            return self._sample_adaptive(x_T)
        ts = self.timesteps()
        x0, x0_hat = self.forward_solve(x_T, x_T.clone(), ts)
        return x0, x0_hat, ts

    @torch.no_grad()
    def encode(self, x_0: torch.Tensor, ts: Sequence[float]) -> tuple[torch.Tensor, torch.Tensor]:
        """Map data to noise on the grid ``ts`` (x = x_hat = data, backward sweep)."""
        return self.backward_solve(x_0, x_0.clone(), ts)

    @torch.no_grad()
    def decode(
        self, x_T: torch.Tensor, x_T_hat: torch.Tensor, ts: Sequence[float]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Map (x_T, x_T_hat) back to data on the grid ``ts`` (forward sweep)."""
        return self.forward_solve(x_T, x_T_hat, ts)

    def _sample_adaptive(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list[float]]:
        # Standard controller in t; the accepted grid is returned so that encode/decode replay it.
        x_hat = x.clone()
        t, t_end = self.t_start, self.t_end
        dt = (t_end - t) / self.n_steps
        p = self.tableau.order
        ts = [t]
        while t != t_end:
            t_next = t_end if abs(dt) >= abs(t_end - t) else t + dt
            attempted = t_next - t
            x1, x_hat1, err = self.forward_step(x, x_hat, t, t_next)
            scale = self.atol + self.rtol * float(torch.maximum(x.abs().max(), x1.abs().max()))
            ratio = (err or 0.0) / scale
            accept = ratio <= 1.0 or abs(t_next - t) <= self.min_step
            exponent = -1.0 / (p + 1) if accept else -1.0 / p
            factor = 2.0 if ratio == 0.0 else min(2.0, max(0.1, self.safety * ratio**exponent))
            if accept:
                x, x_hat, t = x1, x_hat1, t_next
                ts.append(t)
            dt = math.copysign(max(abs(attempted) * factor, self.min_step), attempted)
        return x, x_hat, ts

    def __repr__(self) -> str:
        return (
            f"RexSolver(tableau={self.tableau.name!r}, prediction={self.prediction!r}, "
            f"model_output={self.model_output!r}, sde={self.sde!r}, zeta={self.zeta}, "
            f"n_steps={self.n_steps}, adaptive={self.adaptive})"
        )
