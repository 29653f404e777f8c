"""The two training stages of UniPercept (spec §2.5, §2.7 steps 3–8): TinyPercept or PerceptVLM.

Cao et al., UniPercept (arXiv:2512.21675), §4:

* Stage 1, Domain-Adaptive Pre-Training (DAPT): supervised cross-entropy on the answers of
  question items (the text-QA analogue) and on the ground-truth score token round(g) of rating
  items (optionally a Gaussian-smoothed label).
* Stage 2, Task-Aligned RL: GRPO (:func:`~icml26.unipercept.grpo.grpo_step`) against the frozen
  DAPT model, with the AGSR (or threshold) rating reward and the binary VQA reward.

Deviations: AdamW with a constant learning rate (the paper's optimiser settings are for an 8B
model and do not transfer); one GRPO optimisation pass per sampled group.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from icml26.core.progress import Progress, progress_reporter
from icml26.core.training import adamw, optimizer_step
from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.unipercept.grpo import GRPOStats, PerceptPolicy, grpo_step, percept_reward_fn
from icml26.unipercept.items import GenericQAItem, VQAItem, VRItem
from icml26.unipercept.model import PerceptBatch, TinyPercept
from icml26.unipercept.tokens import N_SCORES
from icml26.unipercept.vlm import PerceptVLM

__all__ = ["DAPTHistory", "dapt_loss", "train_dapt", "train_grpo"]

MAX_STEPS = 1_000_000
MODELS = (TinyPercept, PerceptVLM)  # what both stages train
Item = VRItem | VQAItem | GenericQAItem


@dataclass(frozen=True)
class DAPTHistory:
    """Mean training loss of each DAPT epoch."""

    epoch_loss: tuple[float, ...]


def _check_data(
    data: Sequence[VRItem | VQAItem], owner: str, model: object
) -> list[VRItem | VQAItem]:
    from icml26.unipercept.items import check_sequence

    items = check_sequence("data", data, owner, (VRItem, VQAItem, GenericQAItem))
    if isinstance(model, TinyPercept) and any(isinstance(it, GenericQAItem) for it in items):
        raise TypeError(
            f"{owner}: TinyPercept reads no question text: data must be rating and question items."
        )
    if len({it.image.shape for it in items}) != 1:
        raise ValueError(f"{owner}: data must hold items of one image shape.")
    return items


def dapt_loss(logits: torch.Tensor, batch: PerceptBatch, label_sigma: float = 0.0) -> torch.Tensor:
    """Cross-entropy of the DAPT stage on a mixed batch, (B, 101) logits.

    Rating rows use the score token round(g) as target (one-hot, or a discretised Gaussian
    N(g, label_sigma^2) over the 101 tokens when ``label_sigma`` > 0); question rows the answer.
    """
    label_sigma = check_in_interval(
        "label_sigma", label_sigma, low=0.0, high=100.0, owner="dapt_loss"
    )
    logp = torch.log_softmax(logits, dim=-1)  # (B, 101)
    target = torch.zeros_like(logp)
    target[torch.arange(len(batch)), batch.target] = 1.0
    if label_sigma > 0:
        rating = batch.is_rating
        grid = torch.arange(N_SCORES, dtype=logp.dtype)
        soft = torch.exp(-((grid[None] - batch.mos[rating, None]) ** 2) / (2 * label_sigma**2))
        target[rating] = soft / soft.sum(dim=1, keepdim=True)
    # invalid columns are -inf in logp and 0 in target: drop them instead of computing 0 * -inf
    contribution = torch.where(target > 0, target * logp, torch.zeros_like(logp))
    return -contribution.sum(dim=1).mean()


def train_dapt(
    model: TinyPercept | PerceptVLM,
    data: Sequence[VRItem | VQAItem],
    epochs: int = 2,
    batch_size: int = 64,
    lr: float = 2e-3,
    weight_decay: float = 1e-4,
    label_sigma: float = 0.0,
    seed: Seed = 0,
    progress: Progress = None,
) -> DAPTHistory:
    """Stage 1 (DAPT): supervised cross-entropy on question answers and score tokens.

    Parameters
    ----------
    model
        The model to train (in place).
    data
        Rating and question items of one image size, any mix of domains.
    epochs, batch_size, lr, weight_decay
        AdamW schedule (constant learning rate).
    label_sigma
        Width of the Gaussian-smoothed score label (0: one-hot on round(g), the spec default).
    seed
        Seed of the batch order.
    progress
        ``None``/``False`` (silent), ``True`` (a rich bar) or a callable
        ``progress(done, total, metrics)`` called after every optimiser step
        (:mod:`icml26.core.progress`).

    Returns
    -------
    DAPTHistory
        The mean loss of each epoch.

    Raises
    ------
    icml26.core.NonFiniteLossError
        When a batch loss is NaN or infinite (before that update).

    Examples
    --------
    >>> from icml26.unipercept import OPTION_VOCAB, TinyPercept, make_iqa_vr
    >>> model = TinyPercept(option_vocab=OPTION_VOCAB, channels=(4, 4, 4, 4), d_model=8, seed=0)
    >>> seen = []
    >>> history = train_dapt(model, make_iqa_vr(8, seed=0, size=16), epochs=2, batch_size=4,
    ...                      progress=lambda done, total, m: seen.append((done, total)))
    >>> len(history.epoch_loss), seen[-1]
    (2, (4, 4))
    """
    if not isinstance(model, MODELS):
        raise TypeError(
            f"train_dapt: model must be a TinyPercept or PerceptVLM; got {type(model).__name__}."
        )
    items = _check_data(data, "train_dapt", model)
    epochs = check_positive_int("epochs", epochs, owner="train_dapt", maximum=10_000)
    batch_size = check_positive_int("batch_size", batch_size, owner="train_dapt", maximum=65_536)
    lr = check_in_interval("lr", lr, low=0.0, high=10.0, closed="right", owner="train_dapt")
    weight_decay = check_in_interval(
        "weight_decay", weight_decay, low=0.0, high=10.0, owner="train_dapt"
    )
    check_in_interval("label_sigma", label_sigma, low=0.0, high=100.0, owner="train_dapt")
    rng = numpy_generator(seed)
    full = model.encode(items)
    optimizer = adamw(model, lr=lr, weight_decay=weight_decay)
    model.train()
    losses = []
    per_epoch = -(-len(full) // batch_size)
    with progress_reporter(progress, epochs * per_epoch, "DAPT") as report:
        for epoch in range(epochs):
            order = torch.from_numpy(rng.permutation(len(full)))
            total, count = 0.0, 0
            for i, start in enumerate(range(0, len(full), batch_size)):
                step = epoch * per_epoch + i
                batch = full.subset(order[start : start + batch_size])
                loss = dapt_loss(model(batch), batch, label_sigma)  # forward
                value = optimizer_step(loss, optimizer, step=step, owner="train_dapt")
                total += value * len(batch)
                count += len(batch)
                report(step + 1, loss=value)
            losses.append(total / count)
    model.eval()
    return DAPTHistory(tuple(losses))


def train_grpo(
    model: TinyPercept | PerceptVLM,
    ref: TinyPercept | PerceptVLM | None,
    data: Sequence[VRItem | VQAItem],
    reward: Literal["agsr", "threshold"] = "agsr",
    steps: int = 40,
    batch_size: int = 32,
    n: int = 8,
    lr: float = 3e-4,
    clip_eps: float = 0.2,
    beta: float = 1e-3,
    sigma0: float = 8.0,
    alpha: float = 0.25,
    eps: float = 10.0,
    seed: Seed = 0,
    progress: Progress = None,
) -> list[GRPOStats]:
    """Stage 2: GRPO with the AGSR (or threshold) rating reward and the binary VQA reward.

    Parameters
    ----------
    model
        The policy (trained in place).
    ref
        The frozen reference pi_ref (the DAPT model); ``None`` freezes a copy of ``model``.
    data
        Rating and question items; each step draws ``batch_size`` queries uniformly.
    reward
        Rating reward: ``"agsr"`` (Adaptive Gaussian Soft Reward) or ``"threshold"``.
    steps, batch_size, n, lr
        Number of updates, queries per update, group size, AdamW learning rate.
    clip_eps, beta
        PPO clip range and KL weight against ``ref``.
    sigma0, alpha, eps
        AGSR width and growth; threshold tolerance.
    seed
        Seed of the query draws and of the response sampling.
    progress
        ``None``/``False``, ``True`` or ``progress(done, total, metrics)`` after every update
        (:mod:`icml26.core.progress`).

    Returns
    -------
    list of GRPOStats
        One entry per update.

    Examples
    --------
    >>> from icml26.unipercept import OPTION_VOCAB, TinyPercept, make_iqa_vr
    >>> model = TinyPercept(option_vocab=OPTION_VOCAB, channels=(4, 4, 4, 4), d_model=8, seed=0)
    >>> history = train_grpo(model, None, make_iqa_vr(8, seed=0, size=16), steps=2, batch_size=4)
    >>> len(history), 0.0 <= history[0].reward_mean <= 1.0
    (2, True)
    """
    if not isinstance(model, MODELS):
        raise TypeError(
            f"train_grpo: model must be a TinyPercept or PerceptVLM; got {type(model).__name__}."
        )
    if ref is not None and type(ref) is not type(model):
        raise TypeError(f"train_grpo: ref must be a {type(model).__name__} or None; got {ref!r}.")
    items = _check_data(data, "train_grpo", model)
    check_one_of("reward", reward, ("agsr", "threshold"), owner="train_grpo")
    steps = check_positive_int("steps", steps, owner="train_grpo", maximum=MAX_STEPS)
    batch_size = check_positive_int("batch_size", batch_size, owner="train_grpo", maximum=65_536)
    n = check_positive_int("n", n, owner="train_grpo", minimum=2, maximum=1024)
    lr = check_in_interval("lr", lr, low=0.0, high=10.0, closed="right", owner="train_grpo")
    rng = numpy_generator(seed)
    reference = copy.deepcopy(model) if ref is None else ref
    reference.eval()  # pi_ref is only read under no_grad (grpo_step); its weights stay as given
    reward_fn = percept_reward_fn(reward, sigma0, alpha, eps)
    policy = PerceptPolicy(model, seed=int(rng.integers(2**62)))
    ref_policy = PerceptPolicy(reference, seed=0)
    optimizer = adamw(model, lr=lr, weight_decay=0.0)
    full = model.encode(items)
    # BatchNorm keeps its DAPT running statistics: pi_theta, pi_old and pi_ref then see one
    # deterministic network each (train-mode batch statistics would make KL != 0 at equal weights)
    model.eval()
    history = []
    with progress_reporter(progress, steps, "GRPO") as report:
        for step in range(steps):
            index = torch.from_numpy(
                rng.choice(len(full), size=min(batch_size, len(full)), replace=False)
            )
            batch = full.subset(index)  # step 4: a batch of mixed queries
            stats = grpo_step(policy, ref_policy, batch, reward_fn, n, clip_eps, beta, optimizer)
            history.append(stats)
            report(step + 1, reward=stats.reward_mean, kl=stats.kl)
    model.eval()
    return history
