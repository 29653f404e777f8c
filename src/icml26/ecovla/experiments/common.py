"""What the ecovla experiments share: the paper, the policy's config and presets, and the steps
that train it, build its calibration sets, play paired episodes and draw open-loop frames.

Importing this module stays light: torch and the ecovla API are imported inside the functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext

# Single-sample policy steps on a tiny model: one thread is fastest (and the cores are shared).
RESOURCES = Resources(cpus=1)
PAPER = (
    "Huang et al., EcoVLA: Environment-Aware Adaptive Pruning with Interleaved Inference "
    "Orchestration for Vision-Language-Action Models, ICML 2026 (arXiv:2602.00780)"
)


@dataclass(frozen=True)
class ShiftConfig:
    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 4
    d_ff: int = 512
    patch: int = 8  # 64 visual tokens (spec)
    demo_episodes: int = 2000
    train_steps: int = 3000
    encoder_steps: int = 2000  # stage 1: the vision encoder alone (stand-in for a pretrained one)
    batch_size: int = 64
    lr: float = 2e-3
    eval_episodes: int = 200
    ratios: tuple[float, ...] = (0.25, 0.4)
    p: float = 5.0  # paper: OpenVLA-OFT/CogACT
    p_sweep: tuple[float, ...] = (5.0, 20.0, 50.0, 80.0)
    alpha: float = 0.7
    alpha_sweep: tuple[float, ...] = (0.0, 0.3, 0.7, 0.9)
    calib_frames: int = 64
    token_keep: float = 0.5  # FastV: half of the visual tokens after block 2
    token_layer: int = 2
    execute: int = 2  # actions run per chunk (receding horizon): ~16 backbone steps per episode
    # gates (issue 42): dense and noisy-dense episodes (the first eval_episodes are the ones every
    # method plays), action noise below the demonstrations' 0.15 execution noise, and the
    # open-loop redundancy test on expert frames of the shift split
    gate_episodes: int = 200
    noise: float = 0.1
    openloop_frames: int = 300
    openloop_ratio: float = 0.25
    openloop_random: int = 3  # random patterns averaged per frame


SHIFT_DEFAULT = ShiftConfig()
SHIFT_PRESETS = {
    # seconds: a 2-layer model barely trained; the claims are not expected to hold
    "smoke": replace(
        SHIFT_DEFAULT,
        d_model=32,
        n_layers=2,
        d_ff=64,
        patch=16,
        demo_episodes=6,
        train_steps=4,
        encoder_steps=4,
        batch_size=16,
        eval_episodes=2,
        ratios=(0.4,),
        p_sweep=(5.0, 80.0),
        alpha_sweep=(0.0, 0.7),
        calib_frames=4,
        token_layer=1,
        gate_episodes=2,
        openloop_frames=16,
        openloop_random=1,
    ),
    # about 6 CPU-minutes: small model, 40 episodes per method (100 for the dense gates), 40 %
    # only (spec §5); the p sweep keeps its ends (the trigger's sanity checks)
    "quick": replace(
        SHIFT_DEFAULT,
        d_model=64,
        n_layers=4,
        d_ff=256,
        patch=16,
        demo_episodes=300,
        encoder_steps=800,
        train_steps=800,
        eval_episodes=40,
        gate_episodes=100,
        ratios=(0.4,),
        p_sweep=(5.0, 80.0),
        alpha_sweep=(0.0, 0.7),
    ),
    "full": SHIFT_DEFAULT,
}


def spec_claim(*fields: Any, **options: Any) -> Claim:
    """A :class:`Claim` whose reference figure is the spec's own small-scale target."""
    return Claim(*fields, source="spec", **options)


def pct(ratio: float) -> str:
    """A pruning ratio as the percent tag of metric names: 0.4 -> "40"."""
    return f"{round(100 * ratio):d}"


def train_policy(config: ShiftConfig, ctx: RunContext) -> tuple[Any, Any, float]:
    """Collect demonstrations and train a TinyVLA by behaviour cloning.

    Returns the model, the demonstrations and the mean loss of the last tenth of the steps.
    """
    from icml26.ecovla import TinyVLA, TinyVLAConfig, collect_demos, train_bc

    demos = collect_demos(config.demo_episodes, split="train", seed=ctx.numpy_generator("demos"))
    model_config = TinyVLAConfig(
        d_model=config.d_model,
        n_layers=config.n_layers,
        n_heads=config.n_heads,
        n_kv_heads=config.n_heads,
        d_ff=config.d_ff,
        patch=config.patch,
    )
    model = TinyVLA(model_config, seed=ctx.torch_generator("init"))
    with ctx.progress(config.encoder_steps + config.train_steps, "training") as bar:
        losses = train_bc(
            model,
            demos,
            steps=config.train_steps,
            encoder_steps=config.encoder_steps,
            batch_size=config.batch_size,
            lr=config.lr,
            seed=ctx.torch_generator("batches"),
            progress=bar,
        )
    return model, demos, float(np.mean(losses[-max(1, len(losses) // 10) :]))


def calibration_sets(config: ShiftConfig, demos: Any, ctx: RunContext) -> tuple[list, list]:
    """Initial-phase default-lighting frames (first steps of clean episodes) and mixed frames
    (drawn from the demonstrations)."""
    from icml26.ecovla import initial_frames

    rng = ctx.numpy_generator("calibration")
    initial = initial_frames(config.calib_frames, split="clean", per_episode=4, seed=rng)
    mixed = demos.observations(rng.choice(len(demos), config.calib_frames, replace=False))
    return initial, mixed


def episode_success(
    policy: Any,
    config: ShiftConfig,
    ctx: RunContext,
    episodes: int | None = None,
    log: Any = None,
) -> np.ndarray:
    """Per-episode success (0 or 100) of ``policy`` on the shift split over ``episodes``
    (default: the config's evaluation episodes); ``log`` (e.g. a ``PruningLog``) sees the policy
    after each episode.

    Episode i has the same layout, shift step and noise for every policy of a task, so the
    arrays of two policies are paired episode by episode.
    """
    from icml26.ecovla import Shift2DPickPlaceEnv, evaluate

    env = Shift2DPickPlaceEnv(split="shift")
    eval_seed = int(ctx.numpy_generator("eval").integers(2**20))
    result = evaluate(
        policy,
        env,
        episodes or config.eval_episodes,
        seeds=[eval_seed],
        execute=config.execute,
        on_episode=log,
    )
    return 100.0 * result.success.astype(np.float64)


def paired(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Per-episode differences ``a - b`` over the episodes both played (claims over items)."""
    n = min(len(a), len(b))
    return (np.asarray(a[:n], dtype=np.float64) - np.asarray(b[:n], dtype=np.float64)).tolist()


def openloop_frames(config: ShiftConfig, ctx: RunContext) -> Any:
    """``config.openloop_frames`` expert frames of the shift split with their clean labels."""
    from icml26.ecovla import Demonstrations, collect_demos

    rng = ctx.numpy_generator("openloop")
    episodes = max(1, config.openloop_frames // 10)  # an expert episode has 20-60 frames
    demos = collect_demos(episodes, split="shift", seed=rng)
    while len(demos) < config.openloop_frames:
        episodes *= 2
        demos = collect_demos(episodes, split="shift", seed=rng)
    rows = np.sort(rng.choice(len(demos), config.openloop_frames, replace=False))
    return Demonstrations(
        demos.images[rows],
        demos.instruction[rows],
        demos.proprio[rows],
        demos.chunks[rows],
        demos.episode[rows],
        demos.positions[rows],
    )


def relative_errors(errors: np.ndarray, dense: np.ndarray) -> list[float]:
    """Per-frame ``1 + (e_i - dense_i) / mean(dense)``: their mean is the ratio of mean errors
    (method / dense), and they pair frame by frame (a bootstrap over frames gives its interval)."""
    return (1.0 + (errors - dense) / float(np.mean(dense))).tolist()


def episode_trigger_rates(log: Any) -> np.ndarray:
    """Trigger rate of each episode of a ``PruningLog`` (decision steps t >= 1; NaN if none)."""
    rates = []
    for records in log.episodes:
        decisions = len(records) - 1
        triggers = sum(r.triggered for r in records)
        rates.append(triggers / decisions if decisions > 0 else math.nan)
    return np.asarray(rates, dtype=np.float64)
