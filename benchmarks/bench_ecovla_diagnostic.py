"""Issue 42's diagnostic: dense vs static Wanda on the same episodes of the shipped TinyVLA
policies, with the drift ||a_pruned - a_dense|| along the pruned policy's own trajectory and each
episode's failure mode.

    python benchmarks/bench_ecovla_diagnostic.py [--episodes 50] [--ratio 0.25]
        [--splits train] [--policies tinyvla_s0 ...] [--out FILE.jsonl]

Static Wanda is calibrated as in ``ecovla.indist`` (its 64 initial-phase frames, the same dense
calibration energy), and episode i resets with ``eval_seed + i`` for both policies, as in the
quick experiments (whose 24 episodes are the first 24 here). At every decision step of the pruned
policy the dense policy is run on the same observation; drift is the norm of the difference of
the first actions of the two chunks (dx, dy, grip). Failure modes are read from the environment's
state (``icml26.ecovla.FAILURE_MODES``). With ``--out`` every finished (policy, split) is
appended as a JSON line and skipped when the command is run again; the tables (per policy and
pooled) are printed from the file.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

BINS = ((0, 1), (1, 4), (4, 8), (8, 16), (16, 10_000))  # decision steps (2 env steps each)


def measure(name: str, split: str, episodes: int, ratio: float) -> dict:
    """Play dense and static Wanda on ``episodes`` paired episodes of one policy and split."""
    from icml26.ecovla import DensePolicy, FixedPatternPolicy, calibration_energy
    from icml26.ecovla.experiments.common import PRESETS, calibration_sets, play
    from icml26.ecovla.standins import load_policy

    config = replace(PRESETS["quick"], policies=(name,), episodes=episodes)
    initial, _ = calibration_sets(config)
    model = load_policy(name)
    pattern = model.pattern_from_energy(*calibration_energy(model, initial), ratio)
    start = time.process_time()
    methods = {"dense": DensePolicy(model), "static": FixedPatternPolicy(model, pattern)}
    played = play(model, methods, split, config, trace=("static",))
    dense, static = played["dense"], played["static"]
    return {
        "policy": name,
        "split": split,
        "ratio": ratio,
        "episodes": episodes,
        "eval_seed": config.eval_seed,
        "dense_success": dense.success.tolist(),
        "static_success": static.success.tolist(),
        "dense_failure": dense.failure,
        "static_failure": static.failure,
        "static_length": static.length.tolist(),
        "drift": static.drift,
        "dense_closest": dense.closest.tolist(),
        "static_closest": static.closest.tolist(),
        "cpu_s": time.process_time() - start,
    }


def summarise(records: list[dict]) -> dict:
    """Success, paired counts and difference (bootstrap over episodes), failure modes, the
    closest approach of never-reached episodes (median, in grasp radii) and drift statistics."""
    from icml26.ecovla.env import GRASP_RADIUS

    dense = np.concatenate([r["dense_success"] for r in records]).astype(bool)
    static = np.concatenate([r["static_success"] for r in records]).astype(bool)
    drift = [d for r in records for d in r["drift"]]
    by_bin = []
    for lo, hi in BINS:
        values = np.asarray([x for d in drift for x in d[lo:hi]])
        episodes_in = sum(1 for d in drift if len(d) > lo)
        stats = np.percentile(values, [50, 90]) if values.size else (np.nan, np.nan)
        by_bin.append((values.mean() if values.size else np.nan, *stats, episodes_in))
    per_episode = np.asarray([np.mean(d) for d in drift])
    gap = 100.0 * (static.astype(float) - dense)
    draws = np.random.default_rng(0).integers(0, gap.size, size=(10_000, gap.size))
    low, high = np.percentile(gap[draws].mean(axis=1), [2.5, 97.5])
    closest = {}
    for method in ("dense", "static"):
        modes = [f for r in records for f in r[f"{method}_failure"]]
        values = np.concatenate([r[f"{method}_closest"] for r in records])
        never = values[np.asarray(modes) == "never reached"] / GRASP_RADIUS
        closest[method] = np.median(never) if never.size else np.nan
    return {
        "gap": (gap.mean(), low, high),
        "closest": closest,
        "n": dense.size,
        "dense_sr": 100 * dense.mean(),
        "static_sr": 100 * static.mean(),
        "dense_only": int((dense & ~static).sum()),
        "static_only": int((~dense & static).sum()),
        "dense_failure": Counter(f for r in records for f in r["dense_failure"]),
        "static_failure": Counter(f for r in records for f in r["static_failure"]),
        "drift_mean": float(np.mean([x for d in drift for x in d])),
        "by_bin": by_bin,
        "drift_ok": float(per_episode[static].mean()) if static.any() else np.nan,
        "drift_failed": float(per_episode[~static].mean()) if (~static).any() else np.nan,
    }


def report(records: list[dict]) -> None:
    from icml26.ecovla import FAILURE_MODES

    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["policy"].removeprefix("tinyvla_"), r["split"]), []).append(r)
    for split in dict.fromkeys(r["split"] for r in records):
        pooled = [r for r in records if r["split"] == split]
        if len({r["policy"] for r in pooled}) > 1:
            groups[("pooled", split)] = pooled
    cpu = sum(r["cpu_s"] for r in records)
    print(f"static Wanda at {records[0]['ratio']:.0%}; {cpu:.0f} CPU-s of evaluation")
    print(
        "| policy | split | n | dense SR | static SR | static - dense [95 % CI] | "
        "dense-only / static-only | "
        "drift mean | drift mean / p50 / p90 at decision step "
        + " | ".join(f"{lo}-{hi - 1}" if hi - lo > 1 else f"{lo}" for lo, hi in BINS[:-1])
        + f" | {BINS[-1][0]}+ | drift: successful / failed episodes |"
    )
    for (policy, split), rs in groups.items():
        s = summarise(rs)
        cells = " | ".join(f"{m:.3f} / {a:.3f} / {b:.3f} ({k})" for m, a, b, k in s["by_bin"])
        print(
            f"| {policy} | {split} | {s['n']} | {s['dense_sr']:.0f} | {s['static_sr']:.0f} | "
            f"{s['gap'][0]:+.1f} [{s['gap'][1]:+.1f}, {s['gap'][2]:+.1f}] | "
            f"{s['dense_only']} / {s['static_only']} | {s['drift_mean']:.3f} | {cells} | "
            f"{s['drift_ok']:.3f} / {s['drift_failed']:.3f} |"
        )
    modes = [m for m in FAILURE_MODES if m != "success"]
    print(
        "\n| policy | split | method | "
        + " | ".join(modes)
        + " | never reached: median closest approach (grasp radii) |"
    )
    for (policy, split), rs in groups.items():
        s = summarise(rs)
        for method in ("dense", "static"):
            counts = s[f"{method}_failure"]
            row = " | ".join(str(counts.get(m, 0)) for m in modes)
            print(f"| {policy} | {split} | {method} | {row} | {s['closest'][method]:.2f} |")


def main() -> None:
    from icml26.ecovla import POLICIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--ratio", type=float, default=0.25)
    parser.add_argument("--splits", nargs="+", default=["train"], choices=["train", "shift"])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--out", type=Path, default=None, help="JSON lines; finished runs skipped")
    args = parser.parse_args()
    torch.set_num_threads(1)
    records = []
    if args.out is not None and args.out.exists():
        records = [json.loads(line) for line in args.out.read_text().splitlines() if line]
    for name in args.policies:
        for split in args.splits:
            key = (name, split, args.ratio, args.episodes)
            if any((r["policy"], r["split"], r["ratio"], r["episodes"]) == key for r in records):
                continue
            record = measure(name, split, args.episodes, args.ratio)
            print(f"{name} {split}: {record['cpu_s']:.0f} CPU-s", flush=True)
            records.append(record)
            if args.out is not None:
                with args.out.open("a") as f:
                    f.write(json.dumps(record) + "\n")
    wanted = [
        r
        for r in records
        if r["policy"] in args.policies
        and r["split"] in args.splits
        and (r["ratio"], r["episodes"]) == (args.ratio, args.episodes)
    ]
    report(wanted)


if __name__ == "__main__":
    main()
