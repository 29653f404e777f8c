"""Behaviour cloning of TinyARVLA on scripted-expert demonstrations (spec §5).

Demonstrations are (image, instruction, expert action) triples from rolled-out expert episodes;
actions become OpenVLA tokens. Training minimises the cross-entropy of the teacher-forced action
tokens (optionally against a Gaussian over neighbouring bins), with AdamW and a warm-up/cosine
schedule (the pieces of :mod:`icml26.core.training`; the loop can resume after an interruption).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 (the usual alias)

from icml26.core.progress import Progress, progress_reporter
from icml26.core.schedules import warmup_cosine_lr
from icml26.core.training import TrainingCheckpoint, adamw, optimizer_step, set_lr
from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_positive_int,
    numpy_generator,
    torch_generator,
)
from icml26.scale.env import AmbiguousReach2DEnv, scripted_expert
from icml26.scale.env_v1 import AmbiguousReach2DV1Env, dart_rollout
from icml26.scale.hf_vla import TinyOpenVLA
from icml26.scale.model import TinyARVLA
from icml26.scale.tokenizer import ActionTokenizer

__all__ = ["Demonstrations", "collect_dart_demonstrations", "collect_demonstrations", "train_bc"]


@dataclass
class Demonstrations:
    """Expert transitions: uint8 images (N, 48, 48, 3), instructions (N,), actions (N, 3).

    Attributes
    ----------
    episodes, expert_success
        Episodes rolled out and the expert's success rate on them.
    """

    images: np.ndarray
    instructions: np.ndarray
    actions: np.ndarray
    episodes: int
    expert_success: float

    def __len__(self) -> int:
        return len(self.instructions)


def collect_demonstrations(
    env: AmbiguousReach2DEnv, episodes: int, seed: Seed = 0
) -> Demonstrations:
    """Roll out :func:`scripted_expert` for ``episodes`` episodes (at most 100 000).

    Examples
    --------
    >>> demos = collect_demonstrations(AmbiguousReach2DEnv(), 2, seed=0)
    >>> demos.images.shape[1:], demos.expert_success
    ((48, 48, 3), 1.0)
    """
    if not isinstance(getattr(env, "unwrapped", None), AmbiguousReach2DEnv):
        raise TypeError(
            f"collect_demonstrations: env must be an AmbiguousReach2DEnv; got {type(env).__name__}."
        )
    episodes = check_positive_int(
        "episodes", episodes, owner="collect_demonstrations", maximum=100_000
    )
    rng = numpy_generator(seed)
    images, instructions, actions, successes = [], [], [], []
    for _ in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        while True:
            action = scripted_expert(env)
            images.append(obs["image"])
            instructions.append(obs["instruction"])
            actions.append(action)
            obs, reward, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                successes.append(reward)
                break
    return Demonstrations(
        images=np.stack(images),
        instructions=np.asarray(instructions, dtype=np.int64),
        actions=np.stack(actions).astype(np.float64),
        episodes=episodes,
        expert_success=float(np.mean(successes)),
    )


def collect_dart_demonstrations(
    env: AmbiguousReach2DV1Env,
    episodes: int,
    seed: Seed = 0,
    noise: float = 0.3,
    detour: float = 0.3,
) -> Demonstrations:
    """Roll out the noisy expert (:func:`~icml26.scale.env_v1.dart_rollout`) on ``env``.

    Every visited observation is labelled with the clean expert action; ``expert_success`` is
    the noisy executor's success rate. At most 100 000 episodes.

    Examples
    --------
    >>> demos = collect_dart_demonstrations(AmbiguousReach2DV1Env(), 2, seed=0)
    >>> demos.images.shape[1:], demos.actions.shape[1]
    ((32, 32, 3), 3)
    """
    owner = "collect_dart_demonstrations"
    if not isinstance(getattr(env, "unwrapped", None), AmbiguousReach2DV1Env):
        raise TypeError(f"{owner}: env must be an AmbiguousReach2DV1Env; got {type(env).__name__}.")
    episodes = check_positive_int("episodes", episodes, owner=owner, maximum=100_000)
    rng = numpy_generator(seed)
    images, instructions, actions, successes = [], [], [], []
    for _ in range(episodes):
        env.reset(seed=int(rng.integers(2**31)))
        observations, labels, reward = dart_rollout(env, rng, noise=noise, detour=detour)
        images += [o["image"] for o in observations]
        instructions += [o["instruction"] for o in observations]
        actions += labels
        successes.append(reward)
    return Demonstrations(
        images=np.stack(images),
        instructions=np.asarray(instructions, dtype=np.int64),
        actions=np.stack(actions).astype(np.float64),
        episodes=episodes,
        expert_success=float(np.mean(successes)),
    )


def _soft_targets(tokens: torch.Tensor, vocab: int, start: int, sigma: float) -> torch.Tensor:
    """Gaussian over the action bins around each target token (sigma in bins), (..., vocab)."""
    bins = torch.arange(start, vocab, dtype=torch.float64)
    weights = torch.exp(-0.5 * ((bins - tokens[..., None].double()) / sigma) ** 2)
    soft = torch.zeros(*tokens.shape, vocab, dtype=torch.float32)
    soft[..., start:] = (weights / weights.sum(-1, keepdim=True)).float()
    return soft


def train_bc(
    model: TinyARVLA | TinyOpenVLA,
    demos: Demonstrations,
    steps: int = 2000,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.01,
    label_sigma: float = 0.0,
    seed: Seed = 0,
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> list[float]:
    """Behaviour cloning: cross-entropy of the expert's action tokens; returns per-step losses.

    Parameters
    ----------
    model
        The TinyARVLA or TinyOpenVLA to train (in place; left in eval mode).
    demos
        From :func:`collect_demonstrations`.
    steps, batch_size
        Optimiser steps (at most 10**6) and minibatch size (at most 4096).
    lr, weight_decay
        AdamW peak learning rate (5 % warm-up, cosine to 10 %) and weight decay.
    label_sigma
        0: one-hot targets (OpenVLA); > 0: a Gaussian over neighbouring bins with this sigma.
    seed
        Seed of the minibatch draws.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or ``progress(done, total,
        metrics)`` after every step (:mod:`icml26.core.progress`).
    resume
        A :class:`~icml26.core.TrainingCheckpoint`: training restores from it (model,
        optimizer, minibatch generator, losses so far) and saves to it every ``resume.every``
        steps, so an interrupted run continues to the same result as an uninterrupted one.

    Raises
    ------
    NonFiniteLossError
        When a loss is NaN or infinite (before that step's update).

    Examples
    --------
    >>> demos = collect_demonstrations(AmbiguousReach2DEnv(), 2, seed=0)
    >>> losses = train_bc(TinyARVLA(d_vision=16, d_model=16, seed=0), demos, steps=3, batch_size=4)
    >>> len(losses)
    3
    """
    owner = "train_bc"
    if not isinstance(model, TinyARVLA | TinyOpenVLA):
        raise TypeError(
            f"{owner}: model must be a TinyARVLA or TinyOpenVLA; got {type(model).__name__}."
        )
    if not isinstance(demos, Demonstrations) or len(demos) == 0:
        raise TypeError(f"{owner}: demos must be non-empty Demonstrations.")
    steps = check_positive_int("steps", steps, owner=owner, maximum=10**6)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=4096)
    lr = check_in_interval("lr", lr, low=0.0, high=1.0, closed="right", owner=owner)
    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, high=1.0, owner=owner)
    label_sigma = check_in_interval("label_sigma", label_sigma, low=0.0, high=256.0, owner=owner)
    generator = torch_generator(seed)
    tokenizer = ActionTokenizer(model.vocab_size, model.n_bins)
    images = torch.as_tensor(demos.images)
    instructions = torch.as_tensor(demos.instructions)
    tokens = torch.as_tensor(tokenizer.encode(demos.actions))  # (N, 3)
    optimizer = adamw(model, lr=lr, weight_decay=weight_decay)
    start = 0 if resume is None else resume.restore(model, optimizer, {"batches": generator})
    losses: list[float] = list(resume.extra.get("losses", [])) if start else []
    model.train()
    warmup = max(1, steps // 20)
    with progress_reporter(progress, steps, "behaviour cloning") as report:
        for step in range(start, steps):
            set_lr(
                optimizer,
                warmup_cosine_lr(
                    step, total_steps=steps, peak_lr=lr, warmup_steps=warmup, final_lr=lr / 10
                ),
            )
            idx = torch.randint(0, len(demos), (batch_size,), generator=generator)
            logits = model(images[idx], instructions[idx], tokens[idx])  # (B, K_a, vocab)
            if label_sigma > 0:
                target = _soft_targets(
                    tokens[idx], model.vocab_size, tokenizer.token_range[0], label_sigma
                )
                loss = -(target * torch.log_softmax(logits, -1)).sum(-1).mean()
            else:
                loss = F.cross_entropy(logits.flatten(0, 1), tokens[idx].flatten())
            losses.append(optimizer_step(loss, optimizer, step=step, clip=1.0, owner=owner))
            report(step + 1, loss=losses[-1])
            if resume is not None:
                resume.save_if_due(step + 1, model, optimizer, {"batches": generator},
                                   {"losses": losses})  # fmt: skip
    model.eval()
    return losses
