"""Training on fresh synthetic samples and masked-position evaluation (spec §2.5 protocol).

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.5. AdamW β = (0.9, 0.98), weight decay 0.1 on weight
matrices only (none on norms, biases, embeddings' positional tables, A_log, D), linear warm-up
then cosine to 10 % of the peak, gradient clipping at 1.0, a fresh batch every step (infinite
data), fp32; the loss is cross-entropy on the masked (answer) positions only.

The spec's learning-rate search (train at each of {1e-3, 3e-3}, keep the best on a validation
set) is :func:`train_lr_search`.

Deviations: the paper's training protocol was not available; these are the spec's defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import final

import torch
from torch import nn

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
from icml26.hybrid_seq.models import AbstractSequenceModel
from icml26.hybrid_seq.tasks import AbstractTask

__all__ = [
    "LRSearchResult",
    "ShiftResult",
    "TrainConfig",
    "TrainHistory",
    "evaluate",
    "evaluate_shift",
    "masked_accuracy",
    "train",
    "train_lr_search",
]


@final
@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of :func:`train` (spec §2.5 defaults).

    Parameters
    ----------
    steps
        Optimiser steps (one fresh batch each).
    lr
        Peak learning rate.
    batch_size
        Samples per step.
    warmup
        Linear warm-up steps.
    seed
        Seed of the data stream.
    weight_decay
        AdamW decoupled weight decay on weight matrices.
    betas
        AdamW (β1, β2).
    grad_clip
        Max global gradient norm.
    final_lr_fraction
        The cosine ends at this fraction of ``lr``.

    Examples
    --------
    >>> TrainConfig(steps=10, lr=1e-3).batch_size
    64
    """

    steps: int
    lr: float
    batch_size: int = 64
    warmup: int = 100
    seed: int = 0
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float = 1.0
    final_lr_fraction: float = 0.1

    def __post_init__(self) -> None:
        owner = "TrainConfig"
        check_positive_int("steps", self.steps, owner=owner)
        check_in_interval("lr", self.lr, low=0.0, closed="neither", owner=owner)
        check_positive_int("batch_size", self.batch_size, owner=owner)
        check_positive_int("warmup", self.warmup, owner=owner, minimum=0)
        check_positive_int("seed", self.seed, owner=owner, minimum=0)
        check_in_interval("weight_decay", self.weight_decay, low=0.0, owner=owner)
        if not isinstance(self.betas, tuple | list) or len(self.betas) != 2:
            raise TypeError(f"{owner}: betas must be a pair (beta1, beta2); got {self.betas!r}.")
        for i, beta in enumerate(self.betas):
            check_in_interval(f"betas[{i}]", beta, low=0.0, high=1.0, closed="left", owner=owner)
        check_in_interval("grad_clip", self.grad_clip, low=0.0, closed="neither", owner=owner)
        check_in_interval(
            "final_lr_fraction", self.final_lr_fraction, low=0.0, high=1.0, owner=owner
        )


@final
@dataclass(frozen=True)
class TrainHistory:
    """Per-step training loss and masked token accuracy, and the learning rates used."""

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)

    @property
    def final_loss(self) -> float:
        """Mean loss over the last 10 % of steps (at least one)."""
        tail = self.loss[-max(1, len(self.loss) // 10) :]
        return sum(tail) / len(tail)


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Decay only ≥ 2-D weights of Linear/Embedding/Conv (not norms, biases, A_log, D)."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        leaf = name.rpartition(".")[2]
        if p.dim() >= 2 and leaf not in ("A_log",) and "position_table" not in name:
            decay.append(p)
        else:
            no_decay.append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def masked_accuracy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> float:
    """Fraction of masked positions where argmax(logits) equals the target.

    ``logits`` is (..., vocab), ``targets`` integer ids (...) and ``mask`` a bool tensor (...);
    0 when nothing is masked.
    """
    owner = "masked_accuracy"
    check_tensor("logits", logits, owner=owner)
    if logits.dim() < 1 or logits.shape[-1] == 0:
        raise ValueError(
            f"{owner}: logits must be (..., vocab) with vocab >= 1; got shape "
            f"{tuple(logits.shape)}."
        )
    check_tensor("targets", targets, shape=logits.shape[:-1], floating=False, owner=owner)
    check_tensor("mask", mask, shape=logits.shape[:-1], floating=False, owner=owner)
    if targets.is_floating_point() or targets.is_complex() or targets.dtype == torch.bool:
        raise TypeError(f"{owner}: targets must hold integer ids; got dtype {targets.dtype}.")
    if mask.dtype != torch.bool:
        raise TypeError(f"{owner}: mask must be a bool tensor; got dtype {mask.dtype}.")
    correct = (logits.argmax(-1) == targets) & mask
    return float(correct.sum()) / max(int(mask.sum()), 1)


def train(
    model: AbstractSequenceModel,
    task: AbstractTask,
    cfg: TrainConfig,
    *,
    stop_at: float | None = None,
    check_every: int = 100,
    n_check: int = 256,
    check_seed: Seed = 1,
    progress: Progress = None,
) -> TrainHistory:
    """Train ``model`` on fresh samples of ``task``; returns the per-step history.

    Each step: sample a batch → forward → masked cross-entropy → backward → clip → AdamW step
    with the warm-up + cosine learning rate. ``progress`` follows the project's convention
    (``None``/``False`` silent, ``True`` a rich bar, or ``progress(done, total, {"loss": ...})``
    after each step).

    Early stopping (issue 46's sweeps): with ``stop_at`` set, every ``check_every`` steps the
    masked token accuracy on one fixed batch of ``n_check`` samples (stream ``check_seed``,
    disjoint from training) is measured, and training stops once it is >= ``stop_at``; the
    schedule stays the one of ``cfg.steps``. ``len(history.loss)`` is the number of steps run.

    Raises
    ------
    TypeError
        If ``model``, ``task`` or ``cfg`` has the wrong type.
    ValueError
        If the task's vocabulary does not fit the model's.
    icml26.core.NonFiniteLossError
        If a step's loss is NaN or infinite (before that step's update).

    Examples
    --------
    >>> from icml26.hybrid_seq import HybridLM, MQAR
    >>> task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    >>> model = HybridLM(task.vocab_size, 16, pattern="SA", seed=0)
    >>> hist = train(model, task, TrainConfig(steps=3, lr=1e-3, batch_size=8, warmup=1))
    >>> len(hist.loss)
    3
    """
    _check_pair(model, task, "train")
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"train: cfg must be a TrainConfig; got {type(cfg).__name__}.")
    if stop_at is not None:
        stop_at = check_in_interval("stop_at", stop_at, low=0.0, high=1.0, owner="train")
    check_every = check_positive_int("check_every", check_every, owner="train", maximum=10**9)
    n_check = check_positive_int("n_check", n_check, owner="train", maximum=100_000)
    check = task.sample(n_check, torch_generator(check_seed)) if stop_at is not None else None
    generator = torch_generator(cfg.seed)
    device = next(model.parameters()).device
    optimizer = adamw(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=cfg.betas)
    history = TrainHistory()
    model.train()
    with progress_reporter(progress, cfg.steps, "training") as report:
        for step in range(cfg.steps):
            lr = warmup_cosine_lr(
                step,
                total_steps=cfg.steps,
                peak_lr=cfg.lr,
                warmup_steps=min(cfg.warmup, cfg.steps - 1),
                final_lr=cfg.lr * cfg.final_lr_fraction,
            )
            set_lr(optimizer, lr)
            batch = task.sample(cfg.batch_size, generator)
            inputs, targets, mask = (
                t.to(device) for t in (batch.inputs, batch.targets, batch.mask)
            )
            logits = model(inputs)  # (B, T, vocab)
            loss = nn.functional.cross_entropy(logits[mask], targets[mask])
            value = optimizer_step(loss, optimizer, step=step, clip=cfg.grad_clip, owner="train")
            history.loss.append(value)
            history.accuracy.append(masked_accuracy(logits.detach(), targets, mask))
            history.lr.append(lr)
            report(step + 1, loss=value)
            if check is not None and (step + 1) % check_every == 0:
                with torch.no_grad():
                    model.eval()
                    logits = model(check.inputs.to(device))
                    model.train()
                hits = masked_accuracy(logits, check.targets.to(device), check.mask.to(device))
                if hits >= stop_at:
                    break
    model.eval()
    return history


@final
@dataclass(frozen=True)
class LRSearchResult:
    """The outcome of :func:`train_lr_search`.

    Attributes
    ----------
    model
        The model trained at the best learning rate.
    lr
        That learning rate.
    val_acc
        Its validation token accuracy.
    val_acc_by_lr
        Validation token accuracy at every learning rate tried, in the order tried.
    """

    model: AbstractSequenceModel
    lr: float
    val_acc: float
    val_acc_by_lr: dict[float, float]


MAX_LRS = 64  # learning rates one search may try


def train_lr_search(
    make_model: Callable[[], AbstractSequenceModel],
    task: AbstractTask,
    cfg: TrainConfig,
    lrs: Sequence[float],
    *,
    n_val: int = 500,
    val_seed: Seed = 1,
    progress: Progress = None,
) -> LRSearchResult:
    """Train a fresh ``make_model()`` at each learning rate; keep the best on a validation set.

    The spec's protocol (§2.5): for each ``lr`` in ``lrs``, train ``make_model()`` with
    ``replace(cfg, lr=lr)`` (the same initialisation and data stream when ``make_model`` and
    ``cfg.seed`` are fixed: only the learning rate differs), then score its masked token accuracy
    on ``n_val`` samples of ``task`` drawn from ``val_seed`` (keep it disjoint from the test
    stream). The first learning rate wins a tie; only the winning model is kept.

    Parameters
    ----------
    make_model
        Builds a fresh, seeded model (called once per learning rate).
    task
        The training task (validation uses the same task).
    cfg
        Training hyper-parameters; its ``lr`` is replaced by each of ``lrs``.
    lrs
        Learning rates to try (1 to ``MAX_LRS`` = 64, each > 0).
    n_val
        Validation samples.
    val_seed
        Seed of the validation stream.
    progress
        ``None``/``False``, ``True`` or ``progress(done, total, metrics)`` over all
        ``len(lrs) * cfg.steps`` steps.

    Returns
    -------
    LRSearchResult

    Raises
    ------
    TypeError
        If ``make_model`` is not a model factory (a model itself is refused) or does not return
        a model, or ``lrs`` is not a sequence of numbers.
    ValueError
        If ``lrs`` is empty, too long or holds a learning rate <= 0.

    Examples
    --------
    >>> from icml26.hybrid_seq import MQAR, HybridLM
    >>> task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    >>> best = train_lr_search(
    ...     lambda: HybridLM(task.vocab_size, 16, pattern="SA", seed=0),
    ...     task, TrainConfig(steps=3, lr=1e-3, batch_size=8, warmup=1), lrs=(1e-3, 3e-3),
    ...     n_val=16,
    ... )
    >>> best.lr in (1e-3, 3e-3), sorted(best.val_acc_by_lr)
    (True, [0.001, 0.003])
    """
    owner = "train_lr_search"
    if not callable(make_model) or isinstance(make_model, nn.Module):
        raise TypeError(
            f"{owner}: make_model must be a callable that builds a fresh model (e.g. "
            f"lambda: HybridLM(...)); got {type(make_model).__name__}."
        )
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"{owner}: cfg must be a TrainConfig; got {type(cfg).__name__}.")
    if not isinstance(lrs, Sequence) or isinstance(lrs, str):
        raise TypeError(f"{owner}: lrs must be a sequence of learning rates; got {lrs!r}.")
    if not 1 <= len(lrs) <= MAX_LRS:
        raise ValueError(f"{owner}: lrs must hold 1 to {MAX_LRS} learning rates; got {len(lrs)}.")
    lrs = [
        check_in_interval(f"lrs[{i}]", lr, low=0.0, closed="neither", owner=owner)
        for i, lr in enumerate(lrs)
    ]
    n_val = check_positive_int("n_val", n_val, owner=owner)
    best: tuple[AbstractSequenceModel, float, float] | None = None
    by_lr: dict[float, float] = {}
    with progress_reporter(progress, len(lrs) * cfg.steps, "lr search") as report:
        for i, lr in enumerate(lrs):
            model = make_model()
            _check_pair(model, task, owner)

            def moved(done: int, total: int, metrics: dict, before: int = i * cfg.steps) -> None:
                report(before + done, **metrics)

            train(model, task, replace(cfg, lr=lr), progress=moved)
            val = evaluate(model, task, n=n_val, seed=val_seed)[task.L][0]  # type: ignore[attr-defined]
            by_lr[lr] = val
            if best is None or val > best[2]:
                best = (model, lr, val)
    assert best is not None  # lrs is non-empty
    return LRSearchResult(model=best[0], lr=best[1], val_acc=best[2], val_acc_by_lr=by_lr)


def _check_pair(model: object, task: object, owner: str) -> None:
    if not isinstance(model, AbstractSequenceModel):
        raise TypeError(
            f"{owner}: model must be a HybridLM or constructed model; got {type(model).__name__}."
        )
    if not isinstance(task, AbstractTask):
        raise TypeError(
            f"{owner}: task must be an AbstractTask (SelectiveCopying, MQAR, PlainCopying, "
            f"InductionHead); got {type(task).__name__}."
        )
    if task.vocab_size > model.vocab_size:
        raise ValueError(
            f"{owner}: the task's vocab_size {task.vocab_size} must be <= the model's "
            f"{model.vocab_size}."
        )


def _with_length(task: AbstractTask, length: int) -> AbstractTask:
    """The task with its length parameter L set to ``length``."""
    return replace(task, L=length)  # type: ignore[type-var]


@torch.no_grad()
def evaluate(
    model: AbstractSequenceModel,
    task: AbstractTask,
    n: int = 2000,
    lengths: Sequence[int] | None = None,
    *,
    batch_size: int = 250,
    seed: Seed = 0,
) -> dict[int, tuple[float, float]]:
    """Token accuracy on masked positions and sequence exact match, per task length L.

    Parameters
    ----------
    model, task
        The model and the task family member (its ``L`` is replaced by each length).
    n
        Fresh test samples per length.
    lengths
        Values of the task's ``L``; default ``[task.L]``.
    batch_size
        Samples per forward pass.
    seed
        Seed of the test stream (the same samples for every model).

    Returns
    -------
    dict
        ``{L: (token_acc, seq_acc)}``; ``(nan, nan)`` where the sequence is longer than the
        model accepts (a learned positional table beyond its length: "n/a").

    Examples
    --------
    >>> from icml26.hybrid_seq import SelectiveCopying, build_sc_hybrid
    >>> task = SelectiveCopying(L=32, k=4, n_symbols=8)
    >>> evaluate(build_sc_hybrid(8, max_len=200), task, n=50, lengths=[32, 128])
    {32: (1.0, 1.0), 128: (1.0, 1.0)}
    """
    _check_pair(model, task, "evaluate")
    n = check_positive_int("n", n, owner="evaluate")
    batch_size = check_positive_int("batch_size", batch_size, owner="evaluate")
    lengths = [task.L] if lengths is None else list(lengths)  # type: ignore[attr-defined]
    generator = torch_generator(seed)
    device = next(iter(model.parameters())).device
    was_training = model.training
    model.eval()
    results = {}
    for length in lengths:
        member = _with_length(task, check_positive_int("lengths[i]", length, owner="evaluate"))
        limit = model.max_positions
        if limit is not None and member.seq_len > limit:
            results[int(length)] = (math.nan, math.nan)
            continue
        correct_tokens = total_tokens = correct_seqs = 0
        for start in range(0, n, batch_size):
            batch = member.sample(min(batch_size, n - start), generator)
            mask, targets = batch.mask.to(device), batch.targets.to(device)
            hit = (model(batch.inputs.to(device)).argmax(-1) == targets) | ~mask
            correct_tokens += int((hit & mask).sum())
            total_tokens += int(mask.sum())
            correct_seqs += int(hit.all(dim=1).sum())
        results[int(length)] = (correct_tokens / max(total_tokens, 1), correct_seqs / n)
    model.train(was_training)
    return results


@final
@dataclass(frozen=True)
class ShiftResult:
    """Accuracy of one model in distribution and under a distribution shift.

    Attributes
    ----------
    iid_acc, ood_acc
        Token accuracy on masked positions on the training task and on the shifted task.
    iid_seq_acc, ood_seq_acc
        Sequence exact match on each.
    drop
        ``iid_acc - ood_acc`` (the model's drop against its own in-distribution accuracy).
    """

    iid_acc: float
    ood_acc: float
    iid_seq_acc: float
    ood_seq_acc: float

    @property
    def drop(self) -> float:
        """Token-accuracy drop ``iid_acc - ood_acc``."""
        return self.iid_acc - self.ood_acc


def evaluate_shift(
    model: AbstractSequenceModel,
    train_task: AbstractTask,
    test_task: AbstractTask,
    n: int = 2000,
    *,
    batch_size: int = 250,
    seed: Seed = 0,
) -> ShiftResult:
    """Evaluate ``model`` on its training distribution and on a shifted one (spec §2.5 OOD).

    Both evaluations use ``n`` fresh samples from a test stream seeded by ``seed`` (the same
    stream for every model), at each task's own length. The shifted task must use the
    training task's vocabulary (reserve its unseen ids in training, e.g. with
    :func:`noise_shift_tasks` or MQAR's ``n_filler_ids``).

    Parameters
    ----------
    model
        A trained ``HybridLM`` or constructed model.
    train_task, test_task
        Tasks of the same type and vocabulary size.
    n, batch_size, seed
        As in :func:`evaluate`.

    Returns
    -------
    ShiftResult

    Examples
    --------
    >>> from icml26.hybrid_seq import build_sc_hybrid, noise_shift_tasks
    >>> train_task, test_task = noise_shift_tasks(L=32, k=4, n_symbols=8)
    >>> model = build_sc_hybrid(8, max_len=64, vocab_size=train_task.vocab_size)
    >>> evaluate_shift(model, train_task, test_task, n=50).drop
    0.0
    """
    owner = "evaluate_shift"
    _check_pair(model, train_task, owner)
    _check_pair(model, test_task, owner)
    if type(train_task) is not type(test_task):
        raise TypeError(
            f"{owner}: train_task and test_task must be the same task type; got "
            f"{type(train_task).__name__} and {type(test_task).__name__}."
        )
    if train_task.vocab_size != test_task.vocab_size:
        raise ValueError(
            f"{owner}: test_task.vocab_size must equal train_task.vocab_size="
            f"{train_task.vocab_size}; got {test_task.vocab_size}."
        )
    kwargs = {"n": n, "batch_size": batch_size, "seed": seed}
    iid = next(iter(evaluate(model, train_task, **kwargs).values()))
    ood = next(iter(evaluate(model, test_task, **kwargs).values()))
    return ShiftResult(iid_acc=iid[0], ood_acc=ood[0], iid_seq_acc=iid[1], ood_seq_acc=ood[1])
