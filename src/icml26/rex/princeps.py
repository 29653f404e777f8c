"""The Princeps increment Psi: an exponential (Lawson) RK step in (varsigma, Y = x / kappa).

For an explicit tableau (c, A, b), from x at t_from to t_to, h = varsigma(t_to) - varsigma(t_from):

    Y = x / kappa(t_from);  Z_i = Y + h sum_{j<i} a_ij k_j;  k_i = f(kappa(t_i) Z_i, t_i),
    t_i = t(varsigma(t_from) + c_i h);  Psi = h sum_i b_i k_i,

and the plain (non-reversible) Princeps step is x' = (kappa'/kappa) x + kappa' Psi. With the
Euler tableau and data prediction this is exactly DDIM. Stochastic versions, with the Brownian
increment W and space-time Levy area H of the step:

    Euler-Maruyama: Psi = h f(x, t_from) + W
    ShARK:          k1 = f(kappa (Y + H), t_from),
                    k2 = f(kappa_2 (Y + 5/6 h k1 + 5/6 W + H), t(varsigma + 5/6 h)),
                    Psi = h (0.4 k1 + 0.6 k2) + W.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from icml26.core import Seed, check_one_of, check_tensor
from icml26.rex._checks import check_callable, check_grid, check_schedule, check_state, check_time
from icml26.rex.brownian import SeededBrownian, brownian_on_grid
from icml26.rex.parameterization import Model, TimeVariable
from icml26.rex.schedules import Schedule
from icml26.rex.tableaus import ButcherTableau, get_tableau

__all__ = ["SDE_METHODS", "Increment", "princeps_increment", "princeps_solve", "princeps_step"]

SDE_METHODS = (None, "em", "shark")
Predictor = Callable[[torch.Tensor, float], torch.Tensor]


@dataclass(frozen=True)
class Increment:
    """Psi and, for an embedded tableau, the max-abs error estimate of kappa(t_to) * Psi."""

    psi: torch.Tensor
    error: float | None = None


def princeps_increment(
    f: Predictor,
    tv: TimeVariable,
    tableau: ButcherTableau,
    t_from: float,
    t_to: float,
    x: torch.Tensor,
    *,
    sde: str | None = None,
    W: torch.Tensor | None = None,
    H: torch.Tensor | None = None,
) -> Increment:
    """Psi_h(varsigma(t_from), x) for the step t_from -> t_to (either direction).

    Parameters
    ----------
    f
        The prediction f(x, t) of the case (see :meth:`TimeVariable.predictor`).
    sde
        ``None`` (ODE, uses ``tableau``), ``"em"`` or ``"shark"`` (use W and H; ShARK needs H).
    """
    owner = "princeps_increment"
    check_callable("f", f, owner=owner)
    if not isinstance(tv, TimeVariable):
        raise TypeError(f"{owner}: tv must be a TimeVariable; got {type(tv).__name__}.")
    if not isinstance(tableau, ButcherTableau):
        raise TypeError(f"{owner}: tableau must be a ButcherTableau; got {type(tableau).__name__}.")
    check_one_of("sde", sde, SDE_METHODS, owner=owner)
    t_from = check_time(tv.schedule, "t_from", t_from, owner=owner)
    t_to = check_time(tv.schedule, "t_to", t_to, owner=owner)
    check_state("x", x, owner=owner)
    for name, noise in (("W", W), ("H", H)):
        if noise is not None:
            check_tensor(name, noise, owner=owner)
            if noise.shape != x.shape:
                raise ValueError(
                    f"{owner}: {name} must have x's shape {tuple(x.shape)}; "
                    f"got {tuple(noise.shape)}."
                )
    return _increment(f, tv, tableau, t_from, t_to, x, sde=sde, W=W, H=H)


Request = tuple[torch.Tensor, float]  # (model input x, time t) a stage asks f for
Stages = Generator[Request, torch.Tensor, Any]


def _drive(stages: Stages, f: Predictor) -> Any:
    """Run a stage generator to its end, answering each request (x, t) with f(x, t)."""
    try:
        x, t = next(stages)
        while True:
            x, t = stages.send(f(x, t))
    except StopIteration as stop:
        return stop.value


def _increment(
    f: Predictor,
    tv: TimeVariable,
    tableau: ButcherTableau,
    t_from: float,
    t_to: float,
    x: torch.Tensor,
    *,
    sde: str | None,
    W: torch.Tensor | None,
    H: torch.Tensor | None,
) -> Increment:
    """princeps_increment without the boundary checks (the solvers' inner loop)."""
    return _drive(_increment_stages(tv, tableau, t_from, t_to, x, sde=sde, W=W, H=H), f)


def _increment_stages(
    tv: TimeVariable,
    tableau: ButcherTableau,
    t_from: float,
    t_to: float,
    x: torch.Tensor,
    *,
    sde: str | None,
    W: torch.Tensor | None,
    H: torch.Tensor | None,
) -> Generator[Request, torch.Tensor, Increment]:
    """The increment as a generator: yields each stage's (input, time), receives f there.

    This lets a caller that owns the model calls (a diffusers pipeline loop) drive the same
    arithmetic as :func:`_increment`. A first stage at c = 0 with no a_ij is evaluated at x
    itself (kappa (x / kappa) = x up to round-off).
    """
    v0 = tv.varsigma(t_from)
    h = tv.varsigma(t_to) - v0

    def stage_time(c: float) -> float:
        if c == 0.0:
            return t_from
        return t_to if c == 1.0 else tv.t_of(v0 + c * h)

    if sde is None:
        Y = x / tv.kappa(t_from)
        ks: list[torch.Tensor] = []
        for c_i, a_i in zip(tableau.c, tableau.a, strict=True):
            Z = Y
            for a_ij, k_j in zip(a_i, ks, strict=False):
                if a_ij != 0.0:
                    Z = Z + (h * a_ij) * k_j
            t_i = stage_time(c_i)
            stage_x = x if (Z is Y and t_i == t_from) else tv.kappa(t_i) * Z
            ks.append((yield stage_x, t_i))
        psi = sum((h * b_i) * k_i for b_i, k_i in zip(tableau.b, ks, strict=True) if b_i != 0.0)
        error = None
        if tableau.b_hat is not None:
            diff = sum(
                (h * (b_i - bh_i)) * k_i
                for b_i, bh_i, k_i in zip(tableau.b, tableau.b_hat, ks, strict=True)
            )
            error = float((tv.kappa(t_to) * diff).detach().abs().max())
        return Increment(psi, error)
    if W is None:
        raise ValueError(f"princeps_increment: sde={sde!r} needs the Brownian increment W.")
    if sde == "em":
        k = yield x, t_from
        return Increment(h * k + W)
    if H is None:
        raise ValueError("princeps_increment: ShARK needs the space-time Levy area H.")
    Y = x / tv.kappa(t_from)
    k1 = yield tv.kappa(t_from) * (Y + H), t_from
    t2 = stage_time(5 / 6)
    k2 = yield tv.kappa(t2) * (Y + (5 / 6 * h) * k1 + 5 / 6 * W + H), t2
    return Increment(h * (0.4 * k1 + 0.6 * k2) + W)


def princeps_step(
    model: Model,
    schedule: Schedule,
    x: torch.Tensor,
    t0: float,
    t1: float,
    *,
    tableau: str | ButcherTableau = "euler",
    prediction: str = "data",
    model_output: str = "noise",
    sde: str | None = None,
    bm: SeededBrownian | None = None,
) -> torch.Tensor:
    """One plain (non-reversible) Princeps step: x1 = (kappa1/kappa0) x + kappa1 Psi.

    With ``tableau="euler"`` and ``prediction="data"`` this is DDIM; with ``sde="em"`` and data
    prediction it is SDE-DPM-Solver++(1) / SEEDS-1.

    Parameters
    ----------
    bm
        The Brownian path (required for SDEs); its time is the case's noise clock.

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> model = lambda x, t: torch.zeros_like(x)  # predicts eps = 0
    >>> princeps_step(model, VPSchedule(), torch.ones(1, 2), 1.0, 0.5).shape
    torch.Size([1, 2])
    """
    owner = "princeps_step"
    check_callable("model", model, owner=owner)
    check_schedule("schedule", schedule, owner=owner)
    check_one_of("sde", sde, SDE_METHODS, owner=owner)
    check_state("x", x, owner=owner)
    t0 = check_time(schedule, "t0", t0, owner=owner)
    t1 = check_time(schedule, "t1", t1, owner=owner)
    tableau = get_tableau(tableau)
    tv = TimeVariable(schedule, prediction, sde is not None)
    f = tv.predictor(model, model_output)
    W = H = None
    if sde is not None:
        if not isinstance(bm, SeededBrownian):
            raise ValueError(f"{owner}: an SDE step needs the Brownian path bm; got {bm!r}.")
        W, H = bm.increment(tv.noise_clock(t0), tv.noise_clock(t1))
    elif bm is not None and not isinstance(bm, SeededBrownian):
        raise TypeError(f"{owner}: bm must be a SeededBrownian or None; got {type(bm).__name__}.")
    if t0 == t1:
        return x.clone()  # an empty step
    inc = _increment(f, tv, tableau, t0, t1, x, sde=sde, W=W, H=H)
    k0, k1 = tv.kappa(t0), tv.kappa(t1)
    return (k1 / k0) * x + k1 * inc.psi


def princeps_solve(
    model: Model,
    schedule: Schedule,
    x: torch.Tensor,
    ts: Sequence[float],
    *,
    tableau: str | ButcherTableau = "euler",
    prediction: str = "data",
    model_output: str = "noise",
    sde: str | None = None,
    seed: Seed = 0,
) -> torch.Tensor:
    """Integrate along ``ts`` with the plain (non-reversible) Princeps step.

    For SDEs the Brownian path is ``SeededBrownian(seed, ...)`` over the grid's noise-clock span,
    the same path a :class:`RexSolver` with the same seed and grid uses, so the two can be
    compared sample by sample (a generator ``seed`` gives the path one key drawn from it, as
    :class:`SeededBrownian` does).

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> model = lambda x, t: torch.zeros_like(x)
    >>> princeps_solve(model, VPSchedule(), torch.ones(2, 1), [1.0, 0.5, 0.1]).shape
    torch.Size([2, 1])
    """
    owner = "princeps_solve"
    check_callable("model", model, owner=owner)
    check_schedule("schedule", schedule, owner=owner)
    check_one_of("sde", sde, SDE_METHODS, owner=owner)
    check_state("x", x, owner=owner)
    ts = check_grid(schedule, "ts", ts, owner=owner)
    bm = None
    if sde is not None:
        bm = brownian_on_grid(seed, TimeVariable(schedule, prediction, True), ts, x)
    for t0, t1 in itertools.pairwise(ts):
        x = princeps_step(model, schedule, x, t0, t1, tableau=tableau, prediction=prediction,
                          model_output=model_output, sde=sde, bm=bm)  # fmt: skip
    return x
