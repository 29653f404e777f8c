"""Issue 42's diagnostic: dense vs static Wanda at 25 % on the same episodes of the shipped
TinyVLA policies, with the drift ||a_pruned - a_dense|| of the first action along the pruned
policy's own trajectory and each episode's failure mode.

    python benchmarks/bench_ecovla_diagnostic.py [--episodes 50] [--ratio 0.25]

Prints, per policy and split, the success rates, the failure modes of both policies and the
pruned policy's drift (mean over its decision steps, and by step: first 4, steps 4-11, 12 on).
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
import torch


def main() -> None:
    from icml26.ecovla import (
        POLICIES,
        DensePolicy,
        FixedPatternPolicy,
        Shift2DPickPlaceEnv,
        evaluate_lockstep,
        initial_frames,
        load_policy,
        static_wanda_pattern,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--ratio", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args()
    torch.set_num_threads(1)
    calib = initial_frames(64, split="clean", seed=np.random.default_rng(args.seed))
    n = args.episodes
    print(f"static Wanda at {args.ratio:.0%} (64 initial-phase clean frames), {n} episodes each")
    for name in POLICIES:
        model = load_policy(name)
        static = FixedPatternPolicy(model, static_wanda_pattern(model, calib, args.ratio))
        for split in ("train", "shift"):
            seeds = [args.seed + i for i in range(n)] * 2
            policies = [DensePolicy(model)] * n + [static] * n
            envs = [Shift2DPickPlaceEnv(split=split) for _ in policies]
            result = evaluate_lockstep(
                policies, envs, seeds, execute=2, trace=[False] * n + [True] * n
            )
            dense_sr = 100 * result.success[:n].mean()
            static_sr = 100 * result.success[n:].mean()
            drift = result.drift[n:]
            steps = [np.mean(d) for d in drift]
            early = np.mean([x for d in drift for x in d[:4]])
            middle = np.mean([x for d in drift for x in d[4:12]] or [np.nan])
            late = np.mean([x for d in drift for x in d[12:]] or [np.nan])
            ok = np.asarray(result.success[n:])
            drift_ok = np.mean([s for s, good in zip(steps, ok, strict=True) if good] or [np.nan])
            drift_bad = np.mean(
                [s for s, good in zip(steps, ok, strict=True) if not good] or [np.nan]
            )
            both = result.success[:n] & ~result.success[n:]
            print(
                f"{name} {split:5s}: dense {dense_sr:5.1f} %  static {static_sr:5.1f} %  "
                f"(dense-only successes {int(both.sum())}, static-only "
                f"{int((~result.success[:n] & result.success[n:]).sum())})"
            )
            print(f"    dense failures:  {dict(Counter(result.failure[:n]))}")
            print(f"    static failures: {dict(Counter(result.failure[n:]))}")
            print(
                f"    drift ||a_static - a_dense||: mean {np.mean(steps):.4f}  "
                f"steps 0-3 {early:.4f}  4-11 {middle:.4f}  12+ {late:.4f}  "
                f"(successful episodes {drift_ok:.4f}, failed {drift_bad:.4f})"
            )


if __name__ == "__main__":
    main()
