"""ecovla.latency: the sliced-weight speed-up and the I²O overhead δ on CPU (spec §5, C5).

Timed on random-init weights (latency does not depend on training) with ``ctx.median_seconds``
(round-robin medians on the task's clock); every metric read from the clock is declared in
``timing_metrics``, so smoke runs the same timing code as quick and the contract test skips those
metrics. The analytic costs beside them (``backbone_flops``, ``pattern_update_flops``) are
deterministic: the FLOPs speed-up a sliced step should give and the share of a dense step that
one pattern update costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import RunContext, Table, check_in_interval, check_positive_int, register
from icml26.ecovla.experiments.common import (
    PAPER,
    RESOURCES,
    check_backbone,
    pct,
    spec_claim,
)


@dataclass(frozen=True)
class LatencyConfig:
    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 4
    d_ff: int = 512
    patch: int = 8
    ratios: tuple[float, ...] = (0.25, 0.4)
    repeats: int = 30
    episode_steps: int = 40  # control steps of the I²O timing loop
    p: float = 50.0  # frequent triggers, so the pattern work matters

    def __post_init__(self) -> None:
        owner = "LatencyConfig"
        check_backbone(self)
        check_positive_int("repeats", self.repeats, maximum=10_000, owner=owner)
        # the pruner calibrates on the trajectory's first two frames
        check_positive_int(
            "episode_steps", self.episode_steps, minimum=2, maximum=10_000, owner=owner
        )
        check_in_interval("p", self.p, low=0.0, high=100.0, owner=owner)  # QuantileTrigger's


LATENCY_DEFAULT = LatencyConfig()
LATENCY_PRESETS = {
    "smoke": replace(
        LATENCY_DEFAULT,
        d_model=32,
        n_layers=2,
        d_ff=64,
        patch=16,
        repeats=3,
        episode_steps=8,
        ratios=(0.4,),
    ),  # seconds
    "quick": replace(LATENCY_DEFAULT, repeats=15, episode_steps=24),
    "full": LATENCY_DEFAULT,
}
TIMING_METRICS = ("t_*_ms", "speedup_*", "delta_ms", "i2o_over_serial")
DETERMINISTIC = ("flops_speedup_*", "pattern_flops_fraction")
BLOCKS = 3  # independent timing blocks: each gives one value of every timing claim
LATENCY_CLAIMS = (
    spec_claim(
        "C5a",
        "Sliced-weight backbone step at 40 %: >= 1.15x faster than dense (CPU; one ratio of "
        "medians per block of timed rounds)",
        "speedup_40",
        ">=",
        1.15,
        "1.26-1.60x (GPU, 7B models)",
        "spec §5 C5 (paper Tables 1-3)",
        control="the dense step timed against itself",
        control_value=1.0,
    ),
    spec_claim(
        "C5b",
        "I²O: threaded pattern computation makes a control step faster than serial (ratio < 1, "
        "one per timed trajectory)",
        "i2o_over_serial",
        "<",
        1.0,
        "parallel paradigm: 215.24 -> 179.20 ms (0.83); with the other optimisations "
        "148.06 ms (0.69)",
        "spec §5 C5 (paper latency breakdown, §4.3)",
        control="serial pattern computation (the same schedule without the thread)",
        control_value=1.0,
    ),
)


def latency_tables(metrics: list[dict[str, Any]], config: LatencyConfig) -> list[Table]:
    rows = []
    for ratio in config.ratios:
        tag = pct(ratio)
        rows.append(
            [
                f"{tag} %",
                *(
                    f"{np.mean([m[k] for m in metrics]):.2f}"
                    for k in (
                        "t_dense_ms",
                        f"t_sliced_{tag}_ms",
                        f"t_masked_{tag}_ms",
                        f"speedup_{tag}",
                    )
                ),
            ]
        )
    m = {
        k: np.mean([x[k] for x in metrics])
        for k in ("t_serial_ms", "t_thread_ms", "t_infer_ms", "delta_ms", "t_prune_ms")
    }
    return [
        Table(
            "Backbone step latency on CPU (median ms; ratio = dense / sliced)",
            ["ratio", "dense", "sliced", "masked (not sliced)", "speed-up"],
            rows,
            note="paper: 1.26x (25 %) and 1.41x (40 %) for OpenVLA-OFT on an RTX 3090",
        ),
        Table(
            "I²O: mean control-step latency (ms) over a trajectory with frequent triggers",
            ["no pattern work", "serial", "threaded", "δ = threaded − none", "pattern work"],
            [
                [
                    f"{m['t_infer_ms']:.2f}",
                    f"{m['t_serial_ms']:.2f}",
                    f"{m['t_thread_ms']:.2f}",
                    f"{m['delta_ms']:.2f}",
                    f"{m['t_prune_ms']:.2f}",
                ]
            ],
            note="paper: δ = 4.50 ms (143.56 → 148.06 ms); CPU threads, not CUDA streams",
        ),
    ]


@register(
    name="ecovla.latency",
    title="Sliced-weight speed-up and the I²O overhead δ on CPU (C5, informational)",
    paper=PAPER,
    claims=LATENCY_CLAIMS,
    presets=LATENCY_PRESETS,
    tables=latency_tables,
    seeds=1,  # timing of random-init weights: latency does not depend on training
    resources=RESOURCES,
    timing_metrics=TIMING_METRICS,
    deterministic_metrics=DETERMINISTIC,
)
def run(config: LatencyConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.ecovla import (
        EcoVLAPruner,
        InterleavedOrchestrator,
        Shift2DPickPlaceEnv,
        TinyVLA,
        TinyVLAConfig,
        backbone_flops,
        pattern_update_flops,
        random_pattern,
    )

    model = TinyVLA(
        TinyVLAConfig(
            d_model=config.d_model,
            n_layers=config.n_layers,
            n_heads=config.n_heads,
            n_kv_heads=config.n_heads,
            d_ff=config.d_ff,
            patch=config.patch,
        ),
        seed=ctx.torch_generator("init"),
    )
    env = Shift2DPickPlaceEnv(split="shift")
    rng = ctx.numpy_generator("trajectory")
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    features = model.visual_features(obs)
    n_tokens = model.config.n_tokens

    def step_with(pattern: Any) -> Any:
        def step() -> None:
            model.install(pattern)  # a swap of cached modules: no work when already installed
            model.act(obs, features=features)

        return step

    patterns = {
        pct(r): random_pattern(model, r, seed=ctx.torch_generator(f"pattern{pct(r)}"))
        for r in config.ratios
    }
    # dense and every sliced pattern timed round-robin: a load spike hits all of a round alike
    steps = {"dense": step_with(None)} | {tag: step_with(p) for tag, p in patterns.items()}
    per_block = max(1, config.repeats // BLOCKS)
    blocks = [
        ctx.median_seconds(steps, per_block, warmup=3 if b == 0 else 1) for b in range(BLOCKS)
    ]
    seconds = {name: float(np.median([b[name] for b in blocks])) for name in steps}
    out: dict[str, Any] = {"t_dense_ms": 1e3 * seconds["dense"]}
    dense_flops = backbone_flops(model, None, n_tokens)
    for tag, pattern in patterns.items():
        out[f"t_sliced_{tag}_ms"] = 1e3 * seconds[tag]
        model.install(None)
        with model.masked(pattern):  # masks compute every channel
            masked = ctx.median_seconds({"masked": step_with(None)}, config.repeats, warmup=3)
        out[f"t_masked_{tag}_ms"] = 1e3 * masked["masked"]
        out[f"speedup_{tag}"] = [b["dense"] / b[tag] for b in blocks]
        out[f"flops_speedup_{tag}"] = dense_flops / backbone_flops(model, pattern, n_tokens)
    out.setdefault("speedup_40", math.nan)

    frames = [obs]
    for _ in range(config.episode_steps - 1):
        frames.append(env.step(rng.uniform(-1, 1, 3))[0])
    ratio = config.ratios[-1]
    timings: dict[str, list[float]] = {"none": [], "serial": [], "thread": []}
    for _ in range(BLOCKS):  # each block times the three modes on the same trajectory
        for mode in timings:  # "none": the same schedule, no pattern work
            pruner = EcoVLAPruner(model, ratio, config.p, warmup=2, update_pattern=mode != "none")
            orch = InterleavedOrchestrator(
                pruner.calibrate(frames[:2]), mode="serial" if mode == "none" else mode
            )
            orch.reset()
            start = ctx.clock()
            for frame in frames:
                orch.step(frame)
            orch.drain()
            timings[mode].append(1e3 * (ctx.clock() - start) / len(frames))
            orch.close()
    pruner = EcoVLAPruner(model, ratio, config.p).calibrate(frames[:2])
    pruner.run_backbone(frames[0], model.visual_features(frames[0]), dense=True)
    _, captured = pruner.run_backbone(frames[1], model.visual_features(frames[1]), dense=True)
    prune = ctx.median_seconds(
        {"prune": lambda: pruner.make_pattern(captured)}, max(3, config.repeats // 3), warmup=3
    )
    out["t_prune_ms"] = 1e3 * prune["prune"]
    out["pattern_flops_fraction"] = pattern_update_flops(model, n_tokens) / dense_flops
    out["t_infer_ms"] = float(np.median(timings["none"]))
    out["t_serial_ms"] = float(np.median(timings["serial"]))
    out["t_thread_ms"] = float(np.median(timings["thread"]))
    out["delta_ms"] = out["t_thread_ms"] - out["t_infer_ms"]
    out["i2o_over_serial"] = [
        t / s for t, s in zip(timings["thread"], timings["serial"], strict=True)
    ]
    model.install(None)
    return out
