"""The training loop of spec §2.5: quantize, AdamW, clip, OutControl calibration, OsciReset.

for t in 0..steps-1: loss = LM(batch_t); backward; clip_grad_norm_(1); AdamW step (the three with
:func:`icml26.core.optimizer_step`, which stops on a NaN/inf loss); calibrator.step(t); osc.step(t).
LR: :func:`icml26.core.warmup_cosine_lr`, linear warm-up then cosine to ``final_lr_fraction``
(10 %) of the peak at the last step. The oscillation fraction is measured on a fixed random sample
of each layer's FP4 weights over the final 20 % of training (spec §5 metrics).

NVIDIA's published recipe (``QuantSpec.high_precision_last_blocks`` / ``_final_fraction``): the
Linears of the last blocks of ``model.blocks`` stay in full precision throughout, and from step
``round((1 - fraction) * steps)`` (``TrainResult.switch_step``) on every layer runs in full
precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    adamw,
    check_in_interval,
    check_positive_int,
    check_tensor,
    numpy_generator,
    optimizer_step,
    progress_reporter,
    set_lr,
    warmup_cosine_lr,
)
from icml26.tetrajet.convert import quantize_model_, quantized_layers
from icml26.tetrajet.data import TextData, sample_batch
from icml26.tetrajet.formats import _bin_width
from icml26.tetrajet.linear import QuantSpec
from icml26.tetrajet.oscireset import OsciReset, oscillation_stats
from icml26.tetrajet.outcontrol import OutlierChannelCalibrator
from icml26.tetrajet.recipes import resolve_spec

__all__ = ["TrainConfig", "TrainResult", "train_lm", "window_losses"]


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and schedule settings (defaults: spec §5)."""

    steps: int = 3000
    batch_size: int = 16
    lr: float = 3e-3
    warmup: int = 100
    final_lr_fraction: float = 0.1
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 100
    eval_batches: int = 8
    # OutControl calibration, scaled like the official 501/12,505 and 50/12,505.
    record_start_fraction: float = 0.04
    record_iters_fraction: float = 0.004
    # OsciReset (spec §5: S0 = 60 % of steps, P = 100, T = 25, τ = 8).
    osc_start_fraction: float = 0.6
    osc_period: int = 100
    osc_track_steps: int = 25
    osc_threshold: float = 8.0
    osc_sample: int = 2048

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "eval_every", "eval_batches", "osc_sample"):
            check_positive_int(name, getattr(self, name), owner="TrainConfig")
        check_positive_int("warmup", self.warmup, owner="TrainConfig", minimum=0)
        for name in ("lr", "weight_decay", "grad_clip"):
            check_in_interval(name, getattr(self, name), low=0.0, owner="TrainConfig")
        for name in ("final_lr_fraction", "record_start_fraction", "osc_start_fraction"):
            check_in_interval(name, getattr(self, name), low=0.0, high=1.0, owner="TrainConfig")


@dataclass
class TrainResult:
    """Validation-loss curve, final loss, oscillation fraction and reset counts of one run."""

    eval_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    oscillation: float = math.nan
    n_reset: float = 0.0
    switch_step: int | None = None  # first full-precision step of a final switch, if any

    @property
    def final_val_loss(self) -> float:
        """The last validation loss (nats/token)."""
        return self.val_loss[-1]


@torch.no_grad()
def _evaluate(model: nn.Module, tokens: torch.Tensor, cfg: TrainConfig, context: int) -> float:
    model.eval()
    losses = []
    for i in range(cfg.eval_batches):
        x, y = sample_batch(tokens, cfg.batch_size, context, seed=10_000 + i)  # fixed val batches
        logits = model(x)
        losses.append(float(nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())))
    model.train()
    return sum(losses) / len(losses)


@torch.no_grad()
def window_losses(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, batch_size: int = 64
) -> torch.Tensor:
    """Mean next-token cross-entropy of each window ``(n,)``, in ``model``'s current precision.

    Examples
    --------
    >>> net = nn.Sequential(nn.Embedding(5, 5))
    >>> x = torch.zeros(3, 4, dtype=torch.long)
    >>> window_losses(net, x, x + 1).shape
    torch.Size([3])
    """
    owner = "window_losses"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be an nn.Module; got {type(model).__name__}.")
    for name, ids in (("x", x), ("y", y)):
        check_tensor(name, ids, owner=owner, ndim=2, floating=False)
        if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"{owner}: {name} must be an integer tensor; got {ids.dtype}.")
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=2**20)
    if x.shape != y.shape:
        raise ValueError(f"window_losses: x and y must be equal (n, T); got {x.shape}, {y.shape}.")
    was_training = model.training
    model.eval()
    out = []
    for i in range(0, len(x), batch_size):
        logits = model(x[i : i + batch_size])
        loss = nn.functional.cross_entropy(
            logits.transpose(1, 2), y[i : i + batch_size], reduction="none"
        )
        out.append(loss.mean(dim=1))
    model.train(was_training)
    return torch.cat(out) if out else torch.zeros(0)


def train_lm(
    model: nn.Module,
    data: TextData,
    spec: QuantSpec | str,
    cfg: TrainConfig,
    *,
    context: int,
    seed: Seed = None,
    progress: Progress = None,
) -> TrainResult:
    """Convert ``model`` per ``spec`` and train it on ``data`` (next-token cross-entropy).

    Parameters
    ----------
    model
        A decoder returning logits ``(batch, T, vocab)`` (e.g. :class:`~icml26.tetrajet.TinyGPT`).
    data
        Token splits.
    spec
        Recipe (QuantSpec or name); ``outlier_ratio > 0`` adds OutControl, ``oscireset`` OsciReset.
    cfg
        Optimisation settings.
    context
        Sequence length.
    seed
        Seeds the layers' generators and the batch order.
    progress
        ``None``/``False`` (silent), ``True`` (a rich bar) or a callable
        ``progress(done, total, metrics)`` called after every step with the training loss.

    Returns
    -------
    TrainResult

    Raises
    ------
    icml26.core.NonFiniteLossError
        When the training loss becomes NaN or infinite (before that step's update).

    Examples
    --------
    >>> from icml26.tetrajet import GPTConfig, TinyGPT, load_text_data
    >>> data = load_text_data("char")
    >>> net = TinyGPT(GPTConfig(vocab_size=data.vocab_size, context=16, d_model=32, n_layers=1,
    ...                         n_heads=2, d_mlp=64), seed=0)
    >>> cfg = TrainConfig(steps=4, batch_size=2, warmup=1, eval_every=2, eval_batches=1)
    >>> len(train_lm(net, data, "tetrajet_v2", cfg, context=16, seed=0).val_loss)
    3
    """
    owner = "train_lm"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be an nn.Module; got {type(model).__name__}.")
    if not isinstance(data, TextData):
        raise TypeError(f"{owner}: data must be a TextData; got {type(data).__name__}.")
    spec = resolve_spec(spec, name="spec", owner=owner)
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"{owner}: cfg must be a TrainConfig; got {type(cfg).__name__}.")
    context = check_positive_int("context", context, owner=owner, maximum=2**16)
    rng = numpy_generator(seed)
    layers = _convert(model, spec, seed=int(rng.integers(0, 2**62)))
    result_switch = _switch_step(spec, cfg.steps)
    optimizer = adamw(model, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.95))
    calibrator = None
    if spec.enabled and spec.outlier_ratio > 0:
        calibrator = OutlierChannelCalibrator(
            model,
            ratio=spec.outlier_ratio,
            record_start=round(cfg.record_start_fraction * cfg.steps),
            record_iters=max(5, round(cfg.record_iters_fraction * cfg.steps)),
        )
    osc = None
    if spec.enabled and spec.oscireset:
        osc = OsciReset(
            model,
            start_step=round(cfg.osc_start_fraction * cfg.steps),
            period=cfg.osc_period,
            track_steps=cfg.osc_track_steps,
            threshold=cfg.osc_threshold,
        )
    track_from = cfg.steps - max(2, cfg.steps // 5)  # final 20 % of training
    samples = [
        torch.from_numpy(rng.choice(layer.weight.numel(), size=cfg.osc_sample, replace=False))
        if spec.enabled and not spec.weight_2d and layer.weight.numel() >= cfg.osc_sample
        else None
        for layer in layers
    ]
    history: list[list[torch.Tensor]] = [[], []]  # sampled W and Q(W) per step
    widths: torch.Tensor | None = None
    result = TrainResult(switch_step=result_switch)
    batch_seed = int(rng.integers(0, 2**62))
    model.train()
    with progress_reporter(progress, cfg.steps, f"training ({spec.name})") as report:
        for t in range(cfg.steps):
            if t == result.switch_step:
                for layer in layers:
                    layer.spec = _full_precision(layer.spec)
            x, y = sample_batch(data.train, cfg.batch_size, context, seed=batch_seed + t)
            lr = warmup_cosine_lr(
                t,
                total_steps=cfg.steps,
                peak_lr=cfg.lr,
                warmup_steps=cfg.warmup,
                final_lr=cfg.final_lr_fraction * cfg.lr,
            )
            set_lr(optimizer, lr)
            loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            value = optimizer_step(loss, optimizer, step=t, clip=cfg.grad_clip, owner=owner)
            if calibrator is not None:
                calibrator.step(t)
            if osc is not None:
                stats = osc.step(t)
                result.n_reset += stats["n_reset"] if stats else 0.0
            if t >= track_from and any(s is not None for s in samples):
                w, q, s = _sampled_grid(layers, samples)
                history[0].append(w)
                history[1].append(q)
                widths = _bin_width((q / s).abs()) * s if widths is None else widths
            result.train_loss.append(value)
            if t % cfg.eval_every == 0 or t == cfg.steps - 1:
                result.eval_steps.append(t)
                result.val_loss.append(_evaluate(model, data.val, cfg, context))
            report(t + 1, loss=value)
    if widths is not None and len(history[0]) >= 2:
        fp4 = torch.isfinite(widths)  # elements of MXFP8 channels have no FP4 grid
        w_hist, q_hist = torch.stack(history[0])[:, fp4], torch.stack(history[1])[:, fp4]
        stats = oscillation_stats(w_hist, q_hist, widths[fp4])
        result.oscillation = stats["fraction"]
    return result


def _convert(model: nn.Module, spec: QuantSpec, seed: int) -> list:
    """Quantize ``model`` per ``spec`` (the last blocks in full precision); its quantized layers."""
    quantize_model_(model, spec, seed=seed)
    _keep_last_blocks_full_precision(model, spec.high_precision_last_blocks)
    return quantized_layers(model)


def _switch_step(spec: QuantSpec, steps: int) -> int | None:
    """The first step of NVIDIA's final full-precision phase, or ``None`` without one."""
    fraction = spec.high_precision_final_fraction
    return round((1 - fraction) * steps) if fraction > 0 else None


def _as_trained_(model: nn.Module, spec: QuantSpec | str, steps: int) -> None:
    """Convert ``model`` to the layers ``train_lm`` leaves after ``steps`` steps of ``spec``.

    For loading trained weights (shipped stand-ins): the forward then computes what the trained
    model computed (the seed only feeds the backward's rounding, which evaluation never runs).
    """
    spec = resolve_spec(spec, name="spec", owner="_as_trained_")
    layers = _convert(model, spec, seed=0)
    switch = _switch_step(spec, steps)
    if switch is not None and switch < steps:
        for layer in layers:
            layer.spec = _full_precision(layer.spec)


def _full_precision(spec: QuantSpec) -> QuantSpec:
    return replace(spec, name=f"{spec.name}_fp32", quantize=(False,) * 6, outlier_ratio=0.0)


def _keep_last_blocks_full_precision(model: nn.Module, n_blocks: int) -> None:
    """Turn off every quantizer of the layers in the last ``n_blocks`` of ``model.blocks``."""
    if n_blocks == 0:
        return
    blocks = getattr(model, "blocks", None)
    if not isinstance(blocks, nn.ModuleList) or len(blocks) < n_blocks:
        raise ValueError(
            f"train_lm: the recipe keeps the last {n_blocks} block(s) in full precision, which "
            f"needs a model.blocks ModuleList of at least that length (e.g. TinyGPT)."
        )
    for block in list(blocks)[-n_blocks:]:
        for layer in quantized_layers(block):
            layer.spec = _full_precision(layer.spec)


def _sampled_grid(
    layers: list, samples: list[torch.Tensor | None]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """W, Q(W) and s at the sampled elements of all layers (FP4 columns: full-weight layout)."""
    ws, qs, ss = [], [], []
    for layer, index in zip(layers, samples, strict=True):
        if index is None:
            continue
        qt, columns = layer.fp4_weight()
        w = layer.weight.detach().clone()
        q, s = w.clone(), torch.full_like(w, math.nan)
        q[:, columns], s[:, columns] = qt.dequantize(), qt.element_scales()
        ws.append(w.flatten()[index])
        qs.append(q.flatten()[index])
        ss.append(s.flatten()[index])
    return torch.cat(ws), torch.cat(qs), torch.cat(ss)
