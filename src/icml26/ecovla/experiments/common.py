"""What the ecovla experiments share: the paper, the policy's config and presets, and the steps
that train it, build its calibration sets, play paired episodes and draw open-loop frames.

Importing this module stays light: torch and the ecovla API are imported inside the functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources
from icml26.core.annotations import check_fields
from icml26.core.validation import check_in_interval, check_positive_int

# Single-sample policy steps on a tiny model: one thread is fastest (and the cores are shared).
RESOURCES = Resources(cpus=1)
PAPER = (
    "Huang et al., EcoVLA: Environment-Aware Adaptive Pruning with Interleaved Inference "
    "Orchestration for Vision-Language-Action Models, ICML 2026 (arXiv:2602.00780)"
)


@dataclass(frozen=True)
class EvalConfig:
    """What the ecovla experiments evaluate: which shipped policies, how many paired episodes,
    the pruning settings and the gates' sizes (issue 42)."""

    policies: tuple[str, ...] = ("tinyvla_s0", "tinyvla_s1", "tinyvla_s2")
    episodes: int = 200  # per method and policy; episode i is the same for every method
    eval_seed: int = 20261207  # episode i resets with eval_seed + i
    ratios: tuple[float, ...] = (0.25, 0.4)
    p: float = 5.0  # paper: OpenVLA-OFT/CogACT
    p_high: float = 80.0  # the trigger's other end (paper: pi0.5), for the sanity checks
    alpha: float = 0.7
    calib_frames: int = 64
    token_keep: float = 0.5  # FastV: half of the visual tokens after block 2
    token_layer: int = 2
    execute: int = 2  # actions run per chunk (receding horizon): ~16 backbone steps per episode
    noise: float = 0.1  # the noise gate: below the demonstrations' 0.15 execution noise
    openloop_frames: int = 300
    openloop_ratio: float = 0.25
    openloop_random: int = 3  # random patterns averaged per frame
    phase_pairs: int = 40  # (reach, carry) frame pairs of the phase-dependence gate

    def __post_init__(self) -> None:
        owner = "EvalConfig"
        from icml26.ecovla.standins import STANDINS

        check_fields(self)
        if not isinstance(self.policies, tuple) or not self.policies:
            raise ValueError(f"{owner}: policies must be a non-empty tuple of names.")
        for name in self.policies:
            if name != UNTRAINED and name not in STANDINS:
                raise ValueError(
                    f"{owner}: policies must name shipped policies {sorted(STANDINS)} or "
                    f"{UNTRAINED!r}; got {name!r}."
                )
        check_positive_int("episodes", self.episodes, maximum=10_000, owner=owner)
        check_positive_int("eval_seed", self.eval_seed, minimum=0, maximum=2**30, owner=owner)
        if not isinstance(self.ratios, tuple) or not self.ratios:
            raise ValueError(f"{owner}: ratios must be a non-empty tuple.")
        for ratio in self.ratios:
            check_in_interval("ratios", ratio, low=0.0, high=0.95, owner=owner)
        check_in_interval("openloop_ratio", self.openloop_ratio, low=0.0, high=0.95, owner=owner)
        for name in ("p", "p_high"):
            check_in_interval(name, getattr(self, name), low=0.0, high=100.0, owner=owner)
        check_in_interval("alpha", self.alpha, low=0.0, high=1.0, owner=owner)
        check_in_interval(
            "token_keep", self.token_keep, low=0.0, high=1.0, closed="right", owner=owner
        )
        check_in_interval("noise", self.noise, low=0.0, high=1.0, owner=owner)
        for name, top in (
            ("calib_frames", 10_000),
            ("token_layer", 64),
            ("execute", 64),
            ("openloop_frames", 100_000),
            ("openloop_random", 100),
            ("phase_pairs", 10_000),
        ):
            check_positive_int(name, getattr(self, name), maximum=top, owner=owner)


# TinyVLAConfig's width bound and default image side (a test checks they agree)
MAX_WIDTH = 4096
IMAGE_SIZE = 64


def check_backbone(config: Any) -> None:
    """Check the TinyVLA sizes and pruning ratios of a FLOPs/latency config (``__post_init__``).

    The size rules are ``TinyVLAConfig``'s (64 px images; KV heads = heads), mirrored here so
    that building a preset does not import torch; the ratios are ``random_pattern``'s [0, 1).
    """
    owner = type(config).__name__
    check_fields(config)
    for name, top in (
        ("d_model", MAX_WIDTH),
        ("d_ff", MAX_WIDTH),
        ("n_layers", 64),
        ("n_heads", 64),
    ):
        check_positive_int(name, getattr(config, name), maximum=top, owner=owner)
    check_positive_int("patch", config.patch, maximum=IMAGE_SIZE, owner=owner)
    if config.d_model % config.n_heads or (config.d_model // config.n_heads) % 2:
        raise ValueError(
            f"{owner}: d_model must be n_heads times an even head size; got "
            f"d_model={config.d_model}, n_heads={config.n_heads}."
        )
    if config.patch % 4 or IMAGE_SIZE % config.patch:
        raise ValueError(
            f"{owner}: patch must be a multiple of 4 that divides {IMAGE_SIZE}; got {config.patch}."
        )
    if not config.ratios or len({pct(r) for r in config.ratios}) != len(config.ratios):
        raise ValueError(f"{owner}: ratios must be distinct percentages; got {config.ratios}.")
    for ratio in config.ratios:
        check_in_interval("ratios", ratio, low=0.0, high=1.0, closed="left", owner=owner)


UNTRAINED = "untrained"  # smoke: a random-init 2-layer policy (seconds; claims not expected)
DEFAULT = EvalConfig()
PRESETS = {
    "smoke": replace(
        DEFAULT,
        policies=(UNTRAINED,),
        episodes=2,
        ratios=(0.25, 0.4),
        calib_frames=4,
        token_layer=1,
        openloop_frames=16,
        openloop_random=1,
        phase_pairs=2,
    ),
    # the three shipped policies, 24 paired episodes each per method (72 per comparison)
    "quick": replace(DEFAULT, episodes=24, openloop_frames=120, openloop_random=2, phase_pairs=12),
    "full": DEFAULT,
}


def policy_models(config: EvalConfig) -> list[tuple[str, Any]]:
    """The policies a task evaluates: the shipped stand-ins (loaded once per process) or, for
    ``UNTRAINED``, a random-init 2-layer TinyVLA."""
    from icml26.ecovla import TinyVLA, TinyVLAConfig
    from icml26.ecovla.standins import load_policy

    models = []
    for name in config.policies:
        if name == UNTRAINED:
            model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)
        else:
            model = load_policy(name)
        models.append((name, model))
    return models


def spec_claim(*fields: Any, **options: Any) -> Claim:
    """A :class:`Claim` whose reference figure is the spec's own small-scale target."""
    return Claim(*fields, source="spec", **options)


def pct(ratio: float) -> str:
    """A pruning ratio as the percent tag of metric names: 0.4 -> "40"."""
    return f"{round(100 * ratio):d}"


def calibration_sets(config: EvalConfig) -> tuple[list, list]:
    """Initial-phase default-lighting frames (first steps of clean episodes) and mixed frames
    (random frames of noisy expert episodes on the training split)."""
    from icml26.ecovla import collect_demos, initial_frames

    rng = np.random.default_rng(config.eval_seed)
    initial = initial_frames(config.calib_frames, split="clean", per_episode=4, seed=rng)
    demos = collect_demos(max(1, config.calib_frames // 8), split="train", seed=rng)
    rows = rng.choice(len(demos), min(config.calib_frames, len(demos)), replace=False)
    return initial, demos.observations(rows)


def play(
    model: Any,
    methods: dict[str, Any],
    split: str,
    config: EvalConfig,
    trace: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Play ``config.episodes`` paired episodes of every method in lock-step on ``split``.

    ``methods`` maps a name to a policy; an :class:`~icml26.ecovla.EcoVLAPruner` is cloned for
    each episode (its own state per row). Episode i resets with ``eval_seed + i`` for every
    method, so the success arrays are paired episode by episode. Returns, per method, the
    :class:`~icml26.ecovla.LockstepResult` of its rows plus its pruner rows (``"<name>:rows"``).
    """
    from icml26.ecovla import EcoVLAPruner, Shift2DPickPlaceEnv, evaluate_lockstep

    policies, names = [], []
    for name, policy in methods.items():
        rows = [
            policy.clone() if isinstance(policy, EcoVLAPruner) else policy
            for _ in range(config.episodes)
        ]
        for row in rows:
            if isinstance(row, EcoVLAPruner):
                row.slice_ahead = False  # masks act in the batch; slices are for latency
        policies += rows
        names += [name] * config.episodes
    seeds = [config.eval_seed + i for i in range(config.episodes)] * len(methods)
    envs = [Shift2DPickPlaceEnv(split=split) for _ in policies]
    result = evaluate_lockstep(
        policies, envs, seeds, execute=config.execute, trace=[n in trace for n in names]
    )
    out: dict[str, Any] = {}
    for k, name in enumerate(methods):
        rows = slice(k * config.episodes, (k + 1) * config.episodes)
        out[name] = type(result)(
            success=result.success[rows],
            length=result.length[rows],
            queries=result.queries[rows],
            failure=result.failure[rows],
            drift=result.drift[rows],
            closest=result.closest[rows],
        )
        out[f"{name}:rows"] = policies[rows]
    return out


def success(result: Any) -> np.ndarray:
    """Per-episode success of a lock-step result, 0 or 100."""
    return 100.0 * np.asarray(result.success, dtype=np.float64)


def trigger_log(rows: list[Any]) -> Any:
    """A ``PruningLog`` of the pruner rows of one method (one episode each)."""
    from icml26.ecovla import PruningLog

    log = PruningLog()
    for row in rows:
        log(row)
    return log


def openloop_frames(config: EvalConfig, split: str) -> Any:
    """``config.openloop_frames`` expert frames of ``split`` with their clean labels."""
    from icml26.ecovla import Demonstrations, collect_demos

    rng = np.random.default_rng(config.eval_seed + 1)
    episodes = max(1, config.openloop_frames // 10)  # an expert episode has 20-60 frames
    demos = collect_demos(episodes, split=split, seed=rng)
    while len(demos) < config.openloop_frames:
        episodes *= 2
        demos = collect_demos(episodes, split=split, seed=rng)
    rows = np.sort(rng.choice(len(demos), config.openloop_frames, replace=False))
    return Demonstrations(
        demos.images[rows],
        demos.instruction[rows],
        demos.proprio[rows],
        demos.chunks[rows],
        demos.episode[rows],
        demos.positions[rows],
    )


def paired(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Per-episode differences ``a - b`` over the episodes both played (claims over items)."""
    n = min(len(a), len(b))
    return (np.asarray(a[:n], dtype=np.float64) - np.asarray(b[:n], dtype=np.float64)).tolist()


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
