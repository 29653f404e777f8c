"""The oscillation toy of spec §5 C3: STE linear regression with optima between FP4 grid points.

A weight vector w (dim,) is trained by Adam with a straight-through estimator (only the forward
weight is NVFP4-quantized) on 1/2 mean (x·Q(w) - y)², y = x·w*, where each free w*_i lies strictly
between two adjacent E2M1 grid points. Q(w) cannot reach w*, so late in training, with a small
learning rate, the master weight sits near a bin edge and Q(w) flips back and forth: the
oscillation OsciReset (:class:`~icml26.tetrajet.OsciReset`) is meant to suppress.

Every 16-block holds one fixed element w_i = 6 (its gradient is zeroed), so each block's amax is 6,
s_b = 448 and every element scale is 1: the grid is the E2M1 grid itself.

Deviations: the toy is the spec's construction; the paper shows the phenomenon on OLMo2 training.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch

from icml26.core import (
    Progress,
    Seed,
    adamw,
    check_in_interval,
    check_positive_int,
    check_tensor,
    optimizer_step,
    progress_reporter,
    set_lr,
    torch_generator,
    warmup_cosine_lr,
)
from icml26.tetrajet.formats import E2M1_VALUES, _bin_width
from icml26.tetrajet.linear import NVFP4Linear, QuantSpec
from icml26.tetrajet.oscireset import OsciReset, oscillation_stats

__all__ = ["OscillationToy", "ToyResult", "oscillation_toy_problem", "train_oscillation_toy"]

MAX_DIM = 2**20  # oscillation_toy_problem: weights (x holds n_samples x dim floats)
MAX_SAMPLES = 2**20
MAX_ELEMENTS = 2**27  # n_samples * dim: 512 MiB of float32 inputs
MAX_STEPS = 10**7


@dataclass(frozen=True)
class OscillationToy:
    """A drawn toy problem (see the module docstring).

    Attributes
    ----------
    w_star
        The optimum (dim,): free elements strictly between two E2M1 grid points, fixed ones 6.
    fixed
        Which elements are fixed at 6 (dim,), one per 16-block (every 16th).
    x
        Inputs (n_samples, dim), standard normal.
    y
        Targets x·w* (n_samples,).
    w_init
        The start weights (dim,): w* + N(0, 0.5²) clamped to [-5.5, 5.5], fixed elements at 6.
    """

    w_star: torch.Tensor
    fixed: torch.Tensor
    x: torch.Tensor
    y: torch.Tensor
    w_init: torch.Tensor

    def __post_init__(self) -> None:
        owner = "OscillationToy"
        w_star = check_tensor("w_star", self.w_star, owner=owner, ndim=1, finite=True)
        dim = w_star.numel()
        if dim == 0 or dim % 16:
            raise ValueError(f"{owner}: w_star must hold a positive multiple of 16; got {dim}.")
        fixed = check_tensor("fixed", self.fixed, owner=owner, shape=(dim,), floating=False)
        if fixed.dtype != torch.bool:
            raise TypeError(f"{owner}: fixed must be a bool tensor; got dtype {fixed.dtype}.")
        x = check_tensor("x", self.x, owner=owner, shape=(None, dim), finite=True)
        check_tensor("y", self.y, owner=owner, shape=(x.shape[0],), finite=True)
        check_tensor("w_init", self.w_init, owner=owner, shape=(dim,), finite=True)

    @property
    def dim(self) -> int:
        """Number of weights."""
        return int(self.w_star.numel())


@dataclass(frozen=True)
class ToyResult:
    """What :func:`train_oscillation_toy` measured.

    Attributes
    ----------
    oscillation_fraction
        Share of free weights that oscillate over the final 20 % of training
        (:func:`~icml26.tetrajet.oscillation_stats`).
    quantized_loss
        1/2 ‖Q(w) - w*‖² over the free weights at the end of training.
    """

    oscillation_fraction: float
    quantized_loss: float


def oscillation_toy_problem(
    dim: int = 512, n_samples: int = 2048, *, seed: Seed = None
) -> OscillationToy:
    """Draw the toy problem: w* between grid points, inputs, targets and start weights.

    Parameters
    ----------
    dim
        Number of weights, a multiple of 16 (one fixed element per 16-block).
    n_samples
        Number of regression samples.
    seed
        Randomness (int, ``torch.Generator`` or None); one torch generator draws, in this order,
        the grid pairs, the positions between them, the signs, ``x`` and the start offsets.

    Returns
    -------
    OscillationToy

    Raises
    ------
    ValueError
        If ``dim`` is not a positive multiple of 16 or a size is too large.

    Examples
    --------
    >>> toy = oscillation_toy_problem(32, 64, seed=0)
    >>> toy.x.shape, int(toy.fixed.sum()), float(toy.w_star[toy.fixed].min())
    (torch.Size([64, 32]), 2, 6.0)
    """
    owner = "oscillation_toy_problem"
    dim = check_positive_int("dim", dim, owner=owner, maximum=MAX_DIM)
    if dim % 16:
        raise ValueError(f"{owner}: dim must be a multiple of 16 (NVFP4 blocks); got {dim}.")
    n_samples = check_positive_int("n_samples", n_samples, owner=owner, maximum=MAX_SAMPLES)
    if dim * n_samples > MAX_ELEMENTS:
        raise ValueError(
            f"{owner}: dim * n_samples must be at most {MAX_ELEMENTS}; got {dim} * {n_samples}."
        )
    g = torch_generator(seed)
    fixed = torch.arange(dim) % 16 == 0  # one max-magnitude element per 16-block
    lo_index = torch.randint(0, 6, (dim,), generator=g)  # pairs (g_lo, g_hi) up to 4
    grid = torch.tensor(E2M1_VALUES)
    between = 0.1 + 0.8 * torch.rand(dim, generator=g)
    sign = torch.where(torch.rand(dim, generator=g) < 0.5, -1.0, 1.0)
    w_star = sign * (grid[lo_index] + between * (grid[lo_index + 1] - grid[lo_index]))
    w_star[fixed] = 6.0  # block amax 6 with s_b = 448: every scale is 1
    x = torch.randn(n_samples, dim, generator=g)  # (n_samples, dim)
    y = x @ w_star  # (n_samples,)
    start = w_star + 0.5 * torch.randn(dim, generator=g)
    w_init = torch.where(fixed, w_star, start.clamp(-5.5, 5.5))
    return OscillationToy(w_star=w_star, fixed=fixed, x=x, y=y, w_init=w_init)


def train_oscillation_toy(
    problem: OscillationToy,
    *,
    steps: int = 2000,
    lr: float = 1e-2,
    final_lr_fraction: float = 0.1,
    oscireset: bool = False,
    osc_start_fraction: float = 0.6,
    osc_period: int = 100,
    osc_track_steps: int = 25,
    osc_threshold: float = 8.0,
    progress: Progress = None,
) -> ToyResult:
    """Train the toy's weights with the STE (Adam, cosine decay), with or without OsciReset.

    Each step: lr_t = cosine from ``lr`` to ``final_lr_fraction`` · ``lr``; loss = 1/2 mean
    (x·Q(w) - y)²; Adam step (the fixed elements get no gradient); then OsciReset's step when
    ``oscireset``. W and Q(W) are recorded over the final 20 % of the steps.

    Parameters
    ----------
    problem
        From :func:`oscillation_toy_problem`.
    steps, lr, final_lr_fraction
        Optimisation: number of steps, peak learning rate, final learning rate as a fraction.
    oscireset
        Apply :class:`~icml26.tetrajet.OsciReset` with S0 = ``osc_start_fraction`` · ``steps``,
        P = ``osc_period``, T = ``osc_track_steps`` and τ = ``osc_threshold``.
    progress
        ``None``/``False``, ``True`` (a rich bar) or ``progress(done, total, metrics)``, called
        after every step with the loss.

    Returns
    -------
    ToyResult

    Raises
    ------
    TypeError, ValueError
        If ``problem`` is not an :class:`OscillationToy` or a setting is out of range.
    icml26.core.NonFiniteLossError
        If the loss becomes NaN or infinite.

    Examples
    --------
    >>> toy = oscillation_toy_problem(32, 64, seed=0)
    >>> plain = train_oscillation_toy(toy, steps=60)
    >>> reset = train_oscillation_toy(toy, steps=60, oscireset=True, osc_period=10,
    ...                               osc_track_steps=4)
    >>> 0 <= plain.oscillation_fraction <= 1 and reset.quantized_loss >= 0
    True
    """
    owner = "train_oscillation_toy"
    if not isinstance(problem, OscillationToy):
        raise TypeError(
            f"{owner}: problem must be an OscillationToy (from oscillation_toy_problem); got "
            f"{type(problem).__name__}."
        )
    # >= 10: the final 20 % must hold two steps for the oscillation statistics
    steps = check_positive_int("steps", steps, owner=owner, minimum=10, maximum=MAX_STEPS)
    lr = check_in_interval("lr", lr, low=0.0, closed="right", owner=owner)
    final_lr_fraction = check_in_interval(
        "final_lr_fraction", final_lr_fraction, low=0.0, high=1.0, owner=owner
    )
    if not isinstance(oscireset, bool):
        raise TypeError(f"{owner}: oscireset must be a bool; got {oscireset!r}.")
    osc_start_fraction = check_in_interval(
        "osc_start_fraction", osc_start_fraction, low=0.0, high=1.0, owner=owner
    )
    osc_period = check_positive_int("osc_period", osc_period, owner=owner, maximum=MAX_STEPS)
    osc_track_steps = check_positive_int("osc_track_steps", osc_track_steps, owner=owner)
    if osc_track_steps + 1 >= osc_period:
        raise ValueError(
            f"{owner}: osc_track_steps must be < osc_period - 1; got {osc_track_steps} with "
            f"osc_period={osc_period}."
        )
    osc_threshold = check_in_interval("osc_threshold", osc_threshold, low=0.0, owner=owner)
    return _train_toys(
        problem,
        (oscireset,),
        steps=steps,
        lr=lr,
        final_lr_fraction=final_lr_fraction,
        osc_start_fraction=osc_start_fraction,
        osc_period=osc_period,
        osc_track_steps=osc_track_steps,
        osc_threshold=osc_threshold,
        progress=progress,
    )[0]


class _ToyRun:
    """One STE training of the toy's weights: the layer, its Adam, its OsciReset, W/Q history."""

    def __init__(self, problem: OscillationToy, lr: float, weight: torch.Tensor) -> None:
        spec = QuantSpec(name="toy-ste", quantize=(False, True, False, False, False, False))
        self.layer = NVFP4Linear(problem.dim, 1, spec=spec, seed=0)
        with torch.no_grad():
            self.layer.weight.copy_(weight[None])
        # The fixed elements keep w = 6: their gradient is zeroed before Adam sees it.
        fixed = problem.fixed
        self.layer.weight.register_hook(lambda grad: grad.masked_fill(fixed[None], 0.0))
        self.optimizer = adamw(self.layer, lr=lr)  # Adam: no weight decay
        self.osc: OsciReset | None = None
        self.history_w: list[torch.Tensor] = []
        self.history_q: list[torch.Tensor] = []

    def fork(self, problem: OscillationToy, lr: float) -> _ToyRun:
        """A copy that continues as this run would: weights, Adam state, rounding stream."""
        run = _ToyRun(problem, lr, self.layer.weight.detach()[0])
        run.layer.generator.set_state(self.layer.generator.get_state())
        # a deep copy: load_state_dict keeps tensors that already have the parameter's dtype
        run.optimizer.load_state_dict(copy.deepcopy(self.optimizer.state_dict()))
        run.history_w, run.history_q = list(self.history_w), list(self.history_q)
        return run


def _train_toys(
    problem: OscillationToy,
    resets: tuple[bool, ...],
    *,
    steps: int,
    lr: float,
    final_lr_fraction: float,
    osc_start_fraction: float,
    osc_period: int,
    osc_track_steps: int,
    osc_threshold: float,
    progress: Progress,
) -> list[ToyResult]:
    """Train the toy once per entry of ``resets`` (with OsciReset where True), settings checked.

    The trainings are identical until OsciReset's first step S0, so with several entries the
    steps before S0 are trained once and the run is copied there: every result equals that of
    its own :func:`train_oscillation_toy` call, bit for bit (tested).
    """
    start = round(osc_start_fraction * steps)
    track_from = steps - steps // 5  # the final 20 %
    shared_steps = min(start, steps) if len(resets) > 1 else 0
    total = shared_steps + len(resets) * (steps - shared_steps)
    shared = _ToyRun(problem, lr, problem.w_init)
    results, done = [], 0
    with progress_reporter(progress, total, "STE toy regression") as report:
        for i, reset in enumerate(resets):
            if i == 0:
                done = _advance(problem, shared, 0, shared_steps, steps, lr, final_lr_fraction,
                                track_from, report, done)  # fmt: skip
            run = shared if i == len(resets) - 1 else shared.fork(problem, lr)
            if reset:
                run.osc = OsciReset(
                    run.layer,
                    start_step=start,
                    period=osc_period,
                    track_steps=osc_track_steps,
                    threshold=osc_threshold,
                )
            done = _advance(problem, run, shared_steps, steps, steps, lr, final_lr_fraction,
                            track_from, report, done)  # fmt: skip
            results.append(_result(problem, run))
    return results


def _advance(
    problem: OscillationToy,
    run: _ToyRun,
    first: int,
    stop: int,
    steps: int,
    lr: float,
    final_lr_fraction: float,
    track_from: int,
    report: Callable[..., None],
    done: int,
) -> int:
    """Train ``run`` over steps ``first .. stop - 1`` of ``steps``; the progress count after."""
    for t in range(first, stop):
        set_lr(
            run.optimizer,
            warmup_cosine_lr(
                t,
                total_steps=steps,
                peak_lr=lr,
                warmup_steps=0,
                final_lr=final_lr_fraction * lr,
            ),
        )
        loss = 0.5 * ((run.layer(problem.x)[:, 0] - problem.y) ** 2).mean()
        value = optimizer_step(loss, run.optimizer, step=t, owner="train_oscillation_toy")
        if run.osc is not None:
            run.osc.step(t)
        if t >= track_from:
            qt, _ = run.layer.fp4_weight()
            run.history_w.append(run.layer.weight.detach()[0].clone())
            run.history_q.append(qt.dequantize()[0])
        done += 1
        report(done, loss=value)
    return done


def _result(problem: OscillationToy, run: _ToyRun) -> ToyResult:
    free = ~problem.fixed
    q_final = run.history_q[-1]
    widths = _bin_width(q_final.abs())  # every scale is 1
    stats = oscillation_stats(
        torch.stack(run.history_w)[:, free], torch.stack(run.history_q)[:, free], widths[free]
    )
    return ToyResult(
        oscillation_fraction=stats["fraction"],
        quantized_loss=float(0.5 * ((q_final - problem.w_star)[free] ** 2).sum()),
    )
