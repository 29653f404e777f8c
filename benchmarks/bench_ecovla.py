"""EcoVLA cost ratios measured in one process (issue 27 benchmark).

At keep ratios 0.75 and 0.6 (pruning 25 % and 40 %) on the spec's full-size TinyVLA backbone
(d = 128, 6 Llama blocks, 4 heads, d_ff = 512, 70 tokens), random-init weights (cost does not
depend on training):

* backbone step latency of physically sliced weights vs dense vs masked-but-not-sliced weights
  (masks alone give no speed-up: the Wanda issue tracker's reports), as dense / method;
* memory per step: weight bytes the step reads and activation bytes its linear layers write;
* the cost of a dense trigger step with activation capture and the pattern computation (Eqs.
  8-11 + gathering the sliced weights), relative to a sparse step;
* serial vs threaded (I²O) pattern computation over a trajectory with frequent triggers;
* all of it combined with FastV (50 % of the visual tokens after block 2).

CPU timings on shared cores are noisy: read the ratios, not the milliseconds. Run:
``python benchmarks/bench_ecovla.py [--repeats 30]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from icml26.core import interleaved_median_seconds
from icml26.ecovla import (
    EcoVLAPruner,
    InterleavedOrchestrator,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
    backbone_flops,
    random_pattern,
)


def step_memory(model: TinyVLA, obs: dict, features: torch.Tensor) -> tuple[int, int]:
    """(weight bytes read by the backbone's linears, activation bytes they write) for one step."""
    weights, acts, handles = 0, [0], []
    for layer in model.layers:
        for module in (
            layer.mlp.gate_proj,
            layer.mlp.up_proj,
            layer.mlp.down_proj,
            layer.self_attn.q_proj,
            layer.self_attn.k_proj,
            layer.self_attn.v_proj,
            layer.self_attn.o_proj,
        ):
            weights += module.weight.numel() * module.weight.element_size()

            def count(m, args, output):
                acts[0] += output.numel() * output.element_size()

            handles.append(module.register_forward_hook(count))
    model.act(obs, features=features)
    for h in handles:
        h.remove()
    return weights, acts[0]


def trajectory(env: Shift2DPickPlaceEnv, n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    frames = [env.reset(seed=seed)[0]]
    for _ in range(n - 1):
        frames.append(env.step(rng.uniform(-1, 1, 3))[0])
    return frames


def i2o_ms(model: TinyVLA, frames: list[dict], ratio: float, mode: str) -> float:
    # "none": the same dense/sparse schedule with the pattern work skipped
    pruner = EcoVLAPruner(model, ratio, p=50.0, warmup=2, update_pattern=mode != "none")
    pruner.calibrate(frames[:2])
    orch = InterleavedOrchestrator(pruner, mode="serial" if mode == "none" else mode)
    orch.reset()
    start = time.perf_counter()
    for frame in frames:
        orch.step(frame)
        time.sleep(0.002)  # the env/robot phase where the inference stream idles
    orch.drain()
    elapsed = 1e3 * (time.perf_counter() - start) / len(frames)
    orch.close()
    return elapsed


def median_ms(fn, repeats: int) -> float:
    return 1e3 * interleaved_median_seconds({"fn": fn}, repeats, warmup=3)["fn"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = TinyVLA(TinyVLAConfig(), seed=0)
    env = Shift2DPickPlaceEnv(split="shift")
    frames = trajectory(env, 40, seed=0)
    obs = frames[0]
    features = model.visual_features(obs)

    def step() -> None:
        model.act(obs, features=features)

    print(f"{'setting':<34}{'keep':>6}{'ms':>9}{'dense/x':>9}{'weights':>9}{'acts':>9}{'FLOPs':>8}")
    for fastv in (1.0, 0.5):
        model.set_token_pruning(fastv, 2)
        n = model.config.n_tokens
        pruned = n - model.config.n_visual + round(fastv * model.config.n_visual)
        tokens = [n, n] + [pruned] * (model.config.n_layers - 2)
        tag = "" if fastv == 1.0 else " + FastV 50 %"
        model.install(None)
        dense_ms = median_ms(step, args.repeats)
        dense_w, dense_a = step_memory(model, obs, features)
        dense_flops = backbone_flops(model, None, [n] * model.config.n_layers)
        rows = [
            ("dense" + tag, 1.0, dense_ms, dense_w, dense_a, backbone_flops(model, None, tokens))
        ]
        for keep in (0.75, 0.6):
            pattern = random_pattern(model, 1.0 - keep, seed=0)
            model.install(pattern)
            ms = median_ms(step, args.repeats)
            w, a = step_memory(model, obs, features)
            rows.append(("sliced" + tag, keep, ms, w, a, backbone_flops(model, pattern, tokens)))
            model.install(None)
            with model.masked(pattern):
                ms = median_ms(step, args.repeats)
                w, a = step_memory(model, obs, features)
            rows.append(
                ("masked, not sliced" + tag, keep, ms, w, a, backbone_flops(model, None, tokens))
            )
            pruner = EcoVLAPruner(model, 1.0 - keep, p=50.0).calibrate(frames[:2])

            def trigger_step(p=pruner) -> None:
                _, captured = p.run_backbone(obs, features, dense=True)
                p.make_pattern(captured)

            ms = median_ms(trigger_step, max(3, args.repeats // 3))
            rows.append(
                (
                    "dense trigger step + pattern" + tag,
                    keep,
                    ms,
                    dense_w,
                    dense_a,
                    backbone_flops(model, None, tokens),
                )
            )
        for name, keep, ms, w, a, flops in rows:
            print(
                f"{name:<34}{keep:>6.2f}{ms:>9.2f}{dense_ms / ms:>9.2f}"
                f"{w / dense_w:>9.2f}{a / dense_a:>9.2f}{flops / dense_flops:>8.2f}"
            )
    model.set_token_pruning(1.0, 2)
    print("\nI²O over a 40-step trajectory (p = 50, keep 0.6), ms per control step:")
    none = i2o_ms(model, frames, 0.4, "none")
    serial = i2o_ms(model, frames, 0.4, "serial")
    thread = i2o_ms(model, frames, 0.4, "thread")
    print(
        f"  no pattern work {none:.2f} | serial {serial:.2f} ({serial / none:.2f}x) | "
        f"threaded {thread:.2f} ({thread / none:.2f}x); delta = {thread - none:.2f} ms"
    )


if __name__ == "__main__":
    main()
