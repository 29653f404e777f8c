"""Demonstrations, behaviour cloning and closed-loop evaluation of a VLA policy (spec §5).

The scripted expert is executed with noise on (dx, dy) while its noise-free action at each visited
state is the label (DART-style, so the clone sees recoveries); the label of a frame is the chunk of
the next ``chunk`` clean actions. Training minimises the L1 loss on the chunk (OpenVLA-OFT).
Evaluation runs a policy closed-loop and executes each predicted chunk open-loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from icml26.core.progress import Progress, progress_reporter
from icml26.core.schedules import warmup_cosine_lr
from icml26.core.training import adamw, optimizer_step, set_lr
from icml26.core.validation import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
    torch_generator,
)
from icml26.ecovla._inputs import check_int_array, check_seed
from icml26.ecovla.env import SPLITS, TASKS, Shift2DPickPlaceEnv, scripted_expert

__all__ = [
    "Demonstrations",
    "EvalResult",
    "collect_demos",
    "evaluate",
    "first_action_errors",
    "initial_frames",
    "train_bc",
]

MAX_EPISODES = 100_000
MAX_STEPS = 1_000_000


@dataclass(frozen=True)
class Demonstrations:
    """Frames of expert episodes: images (n, H, W, 3) uint8, instruction (n, 2), proprio (n, 3),
    chunks (n, chunk, 3) of clean expert actions, the episode index of each frame, and positions
    (n, 4): the instructed object's and pad's (x, y), the auxiliary localisation target; ``task``
    (n,): each frame's task as an index into ``TASKS`` (``None``: all pick-place)."""

    images: np.ndarray
    instruction: np.ndarray
    proprio: np.ndarray
    chunks: np.ndarray
    episode: np.ndarray
    positions: np.ndarray
    task: np.ndarray | None = None

    def __post_init__(self) -> None:
        owner = "Demonstrations"
        n = None
        for name, ndim, dtype in (
            ("images", 4, np.uint8),
            ("instruction", 2, np.int64),
            ("proprio", 2, np.float32),
            ("chunks", 3, np.float32),
            ("episode", 1, np.int64),
            ("positions", 2, np.float32),
        ):
            if np.issubdtype(dtype, np.integer):
                value = check_int_array(name, getattr(self, name), owner, dtype, ndim)
            else:
                value = check_array(name, getattr(self, name), ndim=ndim, dtype=dtype, owner=owner)
            if n is not None and len(value) != n:
                raise ValueError(
                    f"{owner}: {name} must have one row per frame ({n}); got {len(value)}."
                )
            n = len(value)
            object.__setattr__(self, name, value)
        task = np.zeros(n, np.int64) if self.task is None else self.task
        task = check_int_array("task", task, owner, np.int64, 1)
        if len(task) != n:
            raise ValueError(f"{owner}: task must have one row per frame ({n}); got {len(task)}.")
        if task.size and (task.min() < 0 or task.max() >= len(TASKS)):
            raise ValueError(f"{owner}: task must hold indices into {TASKS} (0..{len(TASKS) - 1}).")
        object.__setattr__(self, "task", task)

    def __len__(self) -> int:
        return len(self.images)

    @classmethod
    def concatenate(cls, parts: Sequence[Demonstrations]) -> Demonstrations:
        """The frames of ``parts`` one after the other, episodes renumbered to stay distinct
        (e.g. the demonstrations of several tasks, issue 42's multi-task pre-training data).

        Examples
        --------
        >>> both = Demonstrations.concatenate(
        ...     [collect_demos(1, seed=0), collect_demos(1, seed=0, task="touch")])
        >>> sorted(set(both.task.tolist())), sorted(set(both.episode.tolist()))
        ([0, 1], [0, 1])
        """
        if not isinstance(parts, Sequence) or not parts:
            raise ValueError("Demonstrations.concatenate: parts must be a non-empty sequence.")
        if not all(isinstance(part, Demonstrations) for part in parts):
            raise TypeError("Demonstrations.concatenate: parts must be Demonstrations.")
        offsets = np.cumsum([0] + [int(part.episode.max()) + 1 for part in parts[:-1]])
        return cls(
            *(
                np.concatenate([getattr(part, name) for part in parts])
                for name in ("images", "instruction", "proprio", "chunks")
            ),
            np.concatenate([part.episode + k for part, k in zip(parts, offsets, strict=True)]),
            np.concatenate([part.positions for part in parts]),
            np.concatenate([part.task for part in parts]),
        )

    def observations(self, idx: Sequence[int]) -> list[dict[str, Any]]:
        """Frames ``idx`` as env observations (e.g. calibration frames for the pruner)."""
        try:
            rows = np.asarray(idx, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(
                "Demonstrations.observations: idx must be a sequence of ints."
            ) from None
        if rows.size and (rows.min() < 0 or rows.max() >= len(self)):
            raise ValueError(f"Demonstrations.observations: idx must be in [0, {len(self)}).")
        return [
            {
                "image": self.images[i],
                "instruction": self.instruction[i],
                "proprio": self.proprio[i],
            }
            for i in rows
        ]


def collect_demos(
    episodes: int,
    split: Literal["clean", "train", "shift"] = "train",
    chunk: int = 4,
    noise: float = 0.15,
    seed: Seed = 0,
    task: Literal["pick_place", "touch", "push"] = "pick_place",
) -> Demonstrations:
    """Run the noisy scripted expert for ``episodes`` episodes and label every frame.

    Parameters
    ----------
    episodes
        Number of episodes (at most 100000).
    split
        Env split.
    chunk
        Action-chunk length of the labels.
    noise
        Execution noise of the expert on (dx, dy).
    seed
        Seeds the episodes' layouts and the noise.
    task
        The env's task (``TASKS``); the default is the evaluated pick-place task, the others
        are multi-task pre-training data (issue 42). After the end of a touch episode the label
        keeps the gripper closed on the object; otherwise it stays open.
    """
    owner = "collect_demos"
    episodes = check_positive_int("episodes", episodes, maximum=MAX_EPISODES, owner=owner)
    split = check_one_of("split", split, SPLITS, owner=owner)
    chunk = check_positive_int("chunk", chunk, maximum=64, owner=owner)
    noise = check_in_interval("noise", noise, low=0.0, high=1.0, owner=owner)
    task = check_one_of("task", task, TASKS, owner=owner)
    rng = numpy_generator(check_seed(seed, owner))
    env = Shift2DPickPlaceEnv(split=split, task=task)
    after = np.array([[0.0, 0.0, 1.0 if task == "touch" else -1.0]], np.float32)
    images, instr, proprio, chunks, episode, positions = [], [], [], [], [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        noisy = scripted_expert(env, noise=noise, seed=int(rng.integers(2**31)))
        clean: list[np.ndarray] = []
        done = False
        while not done:
            images.append(obs["image"])
            positions.append(env.task_positions().astype(np.float32))
            instr.append(obs["instruction"])
            proprio.append(obs["proprio"])
            clean.append(env.expert_action().astype(np.float32))
            action = noisy(obs)
            action[2] = clean[-1][2]  # the noise moves the gripper; the grip follows the label
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        clean_arr = np.stack(clean)  # (T, 3)
        padded = np.concatenate([clean_arr, np.repeat(after, chunk, axis=0)])  # after the end
        chunks += [padded[t : t + chunk] for t in range(len(clean_arr))]
        episode += [ep] * len(clean_arr)
    return Demonstrations(
        np.stack(images),
        np.stack(instr).astype(np.int64),
        np.stack(proprio).astype(np.float32),
        np.stack(chunks),
        np.asarray(episode),
        np.stack(positions),
        np.full(len(episode), TASKS.index(task), np.int64),
    )


def train_bc(
    model: Any,
    demos: Demonstrations,
    steps: int = 2000,
    *,
    encoder_steps: int,
    pretrain: Demonstrations | None = None,
    pretrain_steps: int = 0,
    batch_size: int = 128,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    aux_weight: float = 1.0,
    seed: Seed = 0,
    resume: Any = None,
    progress: Progress = None,
) -> list[float]:
    """Behaviour cloning: AdamW on the L1 loss of the action chunk, cosine learning rate.

    Up to three stages run one after the other: ``encoder_steps`` steps of the vision encoder
    alone, ``pretrain_steps`` steps of the whole policy on the multi-task ``pretrain`` frames
    (issue 42: pick-place, touch and push, each frame with its task index), then ``steps`` steps
    of behaviour cloning on ``demos``; ``encoder_steps`` has no default, so the total number of
    optimiser steps (``encoder_steps + pretrain_steps + steps``) is always written at the call.
    Each stage has its own warm-up and cosine schedule; one optimiser and one minibatch
    generator run through all stages, so ``resume`` continues across them.

    Parameters
    ----------
    model
        A :class:`~icml26.ecovla.model.TinyVLA` (its dense weights must be installed).
    demos
        Labelled frames (:func:`collect_demos`).
    steps
        Optimiser steps of the behaviour-cloning stage (warm-up 5 %, cosine to 0).
    encoder_steps
        Steps of a first stage that trains only the vision encoder on the localisation loss
        (no backbone pass: cheap), the stand-in for a VLA's pretrained vision tower; 0 skips it.
        It draws its frames from ``pretrain`` when given, else from ``demos``.
    pretrain
        Multi-task pre-training frames (``Demonstrations.concatenate`` of
        :func:`collect_demos` of several tasks) or ``None``. Frames of a task other than
        pick-place need a model with a task token (``TinyVLAConfig.n_tasks``).
    pretrain_steps
        Steps of the pre-training stage (0 without ``pretrain``; > 0 with it).
    batch_size, lr
        Minibatch size and peak learning rate of both stages.
    weight_decay
        AdamW's decoupled weight decay (one optimiser for both stages: the encoder stage leaves
        the backbone without gradients, so AdamW skips it there).
    aux_weight
        Weight of the auxiliary L1 loss on the instructed object's and pad's positions
        (``TinyVLA.locate``; a training aid only, the policy acts from the action head).
    seed
        Minibatch sampling seed.
    resume
        A :class:`~icml26.core.TrainingCheckpoint` (or ``None``): the run restores from it and
        saves to it every ``resume.every`` steps, so an interrupted run continues with the same
        minibatches.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, {"loss": value})`` called after each of the
        ``encoder_steps + steps`` steps.

    Returns
    -------
    list[float]
        The loss of every step (encoder stage first).

    Raises
    ------
    NonFiniteLossError
        When a loss is NaN or infinite (the step is named; the weights are left as before it).

    Examples
    --------
    >>> from icml26.ecovla import TinyVLA, TinyVLAConfig, collect_demos
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, d_ff=64, patch=16), seed=0)
    >>> losses = train_bc(model, collect_demos(1, seed=0), steps=2, encoder_steps=1, batch_size=4)
    >>> len(losses)
    3
    """
    import torch

    from icml26.ecovla.model import TinyVLA

    owner = "train_bc"
    if not isinstance(model, TinyVLA):
        raise TypeError(f"{owner}: model must be a TinyVLA; got {type(model).__name__}.")
    if not isinstance(demos, Demonstrations):
        raise TypeError(f"{owner}: demos must be Demonstrations; got {type(demos).__name__}.")
    steps = check_positive_int("steps", steps, maximum=MAX_STEPS, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, maximum=65_536, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, high=1.0, closed="right", owner=owner)
    aux_weight = check_in_interval("aux_weight", aux_weight, low=0.0, high=100.0, owner=owner)
    encoder_steps = check_positive_int(
        "encoder_steps", encoder_steps, minimum=0, maximum=MAX_STEPS, owner=owner
    )
    if model.installed_key is not None:
        raise ValueError(f"{owner}: model must have its dense weights installed (install(None)).")
    pretrain_steps = check_positive_int(
        "pretrain_steps", pretrain_steps, minimum=0, maximum=MAX_STEPS, owner=owner
    )
    if pretrain is not None and not isinstance(pretrain, Demonstrations):
        raise TypeError(
            f"{owner}: pretrain must be Demonstrations or None; got {type(pretrain).__name__}."
        )
    if (pretrain is None) != (pretrain_steps == 0):
        raise ValueError(
            f"{owner}: pretrain and pretrain_steps go together (frames and steps > 0, or None "
            f"and 0); got pretrain={'None' if pretrain is None else 'frames'} and "
            f"pretrain_steps={pretrain_steps}."
        )
    for name, data in (("demos", demos), ("pretrain", pretrain)):
        if data is None:
            continue
        if data.chunks.shape[1] != model.config.chunk:
            raise ValueError(
                f"{owner}: {name} must have chunks of {model.config.chunk} steps; got "
                f"{data.chunks.shape[1]}."
            )
        if int(data.task.max(initial=0)) >= max(1, model.config.n_tasks):
            raise ValueError(
                f"{owner}: {name} holds tasks {sorted(set(data.task.tolist()))} but the model "
                f"has {model.config.n_tasks} task embeddings (TinyVLAConfig.n_tasks; 0: "
                "pick-place only)."
            )
    from icml26.core.training import TrainingCheckpoint

    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, high=1.0, owner=owner)
    if resume is not None and not isinstance(resume, TrainingCheckpoint):
        raise TypeError(f"{owner}: resume must be a TrainingCheckpoint or None.")
    gen = torch_generator(check_seed(seed, owner))
    tensors = {name: _tensors(data) for name, data in (("bc", demos), ("pretrain", pretrain))}
    model.train()
    opt = adamw(model, lr=lr, weight_decay=weight_decay)
    generators = {"batches": gen}
    start = 0 if resume is None else resume.restore(model, opt, generators)
    losses: list[float] = [] if start == 0 else list(resume.extra["losses"])
    # (stage, its first step, its steps, its frames) in order; empty stages are skipped
    stages = [
        ("encoder", 0, encoder_steps, tensors["pretrain"] or tensors["bc"]),
        ("pretrain", encoder_steps, pretrain_steps, tensors["pretrain"]),
        ("bc", encoder_steps + pretrain_steps, steps, tensors["bc"]),
    ]
    total = encoder_steps + pretrain_steps + steps
    with progress_reporter(progress, total, "behaviour cloning") as report:
        for step in range(start, total):
            # stage 1: the vision encoder alone learns to locate the instructed object and pad;
            # stage 2 (optional): multi-task pre-training of the whole policy, task token on;
            # stage 3: behaviour cloning of the whole policy (the encoder keeps its aux loss)
            stage, first, n, data = next(s for s in stages if s[1] <= step < s[1] + s[2])
            k = step - first
            set_lr(
                opt, warmup_cosine_lr(k, total_steps=n, peak_lr=lr, warmup_steps=max(1, n // 20))
            )
            images, instruction, proprio, targets, positions, task = data
            idx = torch.randint(0, len(images), (batch_size,), generator=gen)
            if stage == "encoder":
                located = model.locate(model.encode_images(images[idx], instruction[idx])[:, 0])
                loss = (located - positions[idx]).abs().mean()
                losses.append(optimizer_step(loss, opt, step=k, owner=f"{owner} (encoder stage)"))
            else:
                pred, located = model(
                    images[idx],
                    instruction[idx],
                    proprio[idx],
                    return_positions=True,
                    task=task[idx] if model.config.n_tasks else None,
                )
                loss = (pred - targets[idx]).abs().mean()  # L1 on the chunk (OpenVLA-OFT)
                loss = loss + aux_weight * (located - positions[idx]).abs().mean()
                where = owner if stage == "bc" else f"{owner} (pre-training stage)"
                losses.append(optimizer_step(loss, opt, step=k, clip=1.0, owner=where))
            report(step + 1, loss=losses[-1])
            if resume is not None:
                resume.save_if_due(step + 1, model, opt, generators, {"losses": losses})
    model.eval()
    return losses


def _tensors(data: Demonstrations | None) -> tuple | None:
    """The training tensors of ``data``: images, instruction, proprio, chunks, positions, task."""
    import torch

    if data is None:
        return None
    names = ("images", "instruction", "proprio", "chunks", "positions", "task")
    return tuple(torch.from_numpy(getattr(data, name)) for name in names)


def initial_frames(
    n: int,
    split: Literal["clean", "train", "shift"] = "clean",
    per_episode: int = 4,
    seed: Seed = 0,
) -> list[dict[str, Any]]:
    """The first ``per_episode`` frames of fresh episodes (gripper open, arm at rest), ``n`` in all.

    The static baselines' calibration set (spec §5: initial-phase frames under the default
    lighting on the ``"clean"`` split): episode layouts are drawn from ``seed`` until ``n``
    frames are collected.

    Examples
    --------
    >>> frames = initial_frames(6, seed=0)
    >>> len(frames), sorted(frames[0])
    (6, ['image', 'instruction', 'proprio'])
    """
    owner = "initial_frames"
    n = check_positive_int("n", n, maximum=MAX_EPISODES, owner=owner)
    split = check_one_of("split", split, SPLITS, owner=owner)
    per_episode = check_positive_int("per_episode", per_episode, maximum=1000, owner=owner)
    rng = numpy_generator(check_seed(seed, owner))
    env = Shift2DPickPlaceEnv(split=split)
    frames: list[dict[str, Any]] = []
    while len(frames) < n:
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        for _ in range(per_episode):  # the reach phase's first frames
            frames.append(obs)
            obs, *_ = env.step(np.array([0.0, 0.0, -1.0]))
    return frames[:n]


def first_action_errors(
    model: Any, demos: Demonstrations, pattern: Any = None, batch_size: int = 256
) -> np.ndarray:
    """Open-loop error of a (pruned) policy: per frame, the mean absolute error of the first
    predicted action against the expert's clean label.

    A cheap test of redundancy before any closed loop: a good channel selection keeps the error
    near the dense one, a random one does not (issue 42's gate).

    Parameters
    ----------
    model
        A :class:`~icml26.ecovla.model.TinyVLA`.
    demos
        Labelled frames (:func:`collect_demos`, e.g. on the ``"shift"`` split).
    pattern
        A :class:`~icml26.ecovla.pattern.SparsityPattern` whose sliced weights act, or ``None``
        (dense). The dense weights are installed again afterwards.
    batch_size
        Frames per forward pass (at most 4096).

    Returns
    -------
    numpy.ndarray
        ``(len(demos),)`` errors, mean over (dx, dy, grip) of the first action of the chunk.

    Examples
    --------
    >>> from icml26.ecovla import TinyVLA, TinyVLAConfig, collect_demos, random_pattern
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)
    >>> demos = collect_demos(1, split="shift", seed=0)
    >>> dense = first_action_errors(model, demos)
    >>> pruned = first_action_errors(model, demos, random_pattern(model, 0.4, seed=0))
    >>> dense.shape == pruned.shape == (len(demos),), bool((dense != pruned).any())
    (True, True)
    """
    import torch

    from icml26.ecovla.model import TinyVLA
    from icml26.ecovla.pattern import SparsityPattern

    owner = "first_action_errors"
    if not isinstance(model, TinyVLA):
        raise TypeError(f"{owner}: model must be a TinyVLA; got {type(model).__name__}.")
    if not isinstance(demos, Demonstrations):
        raise TypeError(f"{owner}: demos must be Demonstrations; got {type(demos).__name__}.")
    if pattern is not None:
        if not isinstance(pattern, SparsityPattern):
            raise TypeError(
                f"{owner}: pattern must be a SparsityPattern or None; got {type(pattern).__name__}."
            )
        model._check_pattern(pattern)
    batch_size = check_positive_int("batch_size", batch_size, maximum=4096, owner=owner)
    device = model.visual_pos.device
    errors = []
    model.eval()
    model.install(pattern)
    try:
        with torch.no_grad():
            for start in range(0, len(demos), batch_size):
                rows = slice(start, start + batch_size)
                chunk = model(
                    torch.as_tensor(demos.images[rows], device=device),
                    torch.as_tensor(demos.instruction[rows], device=device),
                    torch.as_tensor(demos.proprio[rows], device=device),
                )
                label = torch.as_tensor(demos.chunks[rows, 0], device=device, dtype=chunk.dtype)
                errors.append((chunk[:, 0] - label).abs().mean(dim=1).cpu().numpy())
    finally:
        model.install(None)
    return np.concatenate(errors).astype(np.float64)


def _check_env(env: Any, owner: str) -> Any:
    """``env`` if it is a Shift2DPickPlaceEnv or a gymnasium wrapper of one."""
    import gymnasium

    if isinstance(env, gymnasium.vector.VectorEnv):
        raise TypeError(
            f"{owner}: env must be a single environment, not a vector env "
            f"({type(env).__name__}); pass gymnasium.make('Shift2DPickPlace-v0') (or a "
            "Shift2DPickPlaceEnv), or use icml26.ecovla.evaluate_lockstep for batched episodes."
        )
    if not isinstance(getattr(env, "unwrapped", None), Shift2DPickPlaceEnv):
        raise TypeError(
            f"{owner}: env must be a Shift2DPickPlaceEnv or a gymnasium wrapper of one; got "
            f"{type(env).__name__}."
        )
    return env


@dataclass(frozen=True)
class EvalResult:
    """Closed-loop results: per-episode success, length (env steps) and policy queries."""

    success: np.ndarray
    length: np.ndarray
    queries: np.ndarray

    @property
    def success_rate(self) -> float:
        """Fraction of successful episodes."""
        return float(np.mean(self.success))


def evaluate(
    policy: Any,
    env: Shift2DPickPlaceEnv,
    episodes: int,
    seeds: Sequence[int] | int = 0,
    execute: int | None = None,
    on_episode: Callable[[Any], None] | None = None,
    progress: Progress = None,
) -> EvalResult:
    """Run ``policy`` closed-loop for ``episodes`` episodes per seed; success per episode.

    Parameters
    ----------
    policy
        An :class:`~icml26.ecovla.pruner.AbstractPolicy` (``reset()``, ``step(obs) -> chunk``).
    env
        The environment: a ``Shift2DPickPlaceEnv`` or a gymnasium wrapper of one (e.g.
        ``gymnasium.make("Shift2DPickPlace-v0")``, whose wrappers' ``step`` is what runs);
        episode i of seed s is ``env.reset(seed=s * 100003 + i)``. Vector envs are refused:
        pass one env, or run many episodes at once with
        :func:`~icml26.ecovla.lockstep.evaluate_lockstep`.
    episodes
        Episodes per seed (at most 100000).
    seeds
        Env seed sets (an int or a sequence of ints).
    execute
        Actions executed from each chunk before re-querying (default: the whole chunk).
    on_episode
        Called with the policy after each episode, for statistics (e.g. a
        :class:`~icml26.ecovla.pruner.PruningLog`).
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, {"success_rate": value})`` called after each episode.
    """
    from icml26.ecovla.pruner import AbstractPolicy

    owner = "evaluate"
    if not isinstance(policy, AbstractPolicy):
        raise TypeError(f"{owner}: policy must be an AbstractPolicy; got {type(policy).__name__}.")
    env = _check_env(env, owner)
    episodes = check_positive_int("episodes", episodes, maximum=MAX_EPISODES, owner=owner)
    seed_list = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    if not isinstance(seed_list, Sequence) or not seed_list:
        raise TypeError(f"{owner}: seeds must be an int or a non-empty sequence of ints.")
    seed_list = [
        check_positive_int("seeds", s, minimum=0, maximum=2**20, owner=owner) for s in seed_list
    ]
    if execute is not None:
        execute = check_positive_int("execute", execute, maximum=64, owner=owner)
    success, length, queries = [], [], []
    total = len(seed_list) * episodes
    with progress_reporter(progress, total, "episodes") as report:
        for s in seed_list:
            for i in range(episodes):
                obs, info = env.reset(seed=s * 100_003 + i)
                policy.reset()
                done, n_queries = False, 0
                while not done:
                    chunk = np.asarray(policy.step(obs), dtype=np.float64).reshape(-1, 3)
                    n_queries += 1
                    for action in chunk[: execute or len(chunk)]:
                        obs, _, terminated, truncated, info = env.step(action)
                        done = terminated or truncated
                        if done:
                            break
                success.append(bool(info["success"]))
                length.append(int(info["t"]))
                queries.append(n_queries)
                if on_episode is not None:
                    on_episode(policy)
                report(len(success), success_rate=float(np.mean(success)))
    return EvalResult(np.asarray(success), np.asarray(length), np.asarray(queries))
