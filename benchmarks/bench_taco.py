"""Predict-time speed and memory of TACO vs the uncompressed POT (TACO, arXiv:2602.05649).

Same architecture (spec §5.1 small config, random weights: cost does not depend on the weights),
one process; prints times (median of 3 after a warm-up), speed-up ratios, analytic activation
savings and the measured peak-RSS increase of a spawned predict process (MB; at small N it is
dominated by first-call allocations that both models pay, so it understates the saving).

    python benchmarks/bench_taco.py [--n-train 1024 2048 4096] [--threads 1]
"""

import argparse

import torch

from icml26.taco import TACOConfig, TACOModel, benchmark_inference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-train", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--percentages", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument("--n-test", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-rss", action="store_true", help="skip the spawned RSS runs")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # this script is the process: nothing to restore
    model = TACOModel(TACOConfig.small(), seed=0).eval()
    print("N      p%   K     POT s   cache s  TACO s   ×POT    ×cache  act.saved  ", end="")
    print("peak RSS +MB POT/TACO")
    for n in args.n_train:
        costs = benchmark_inference(
            model, n, tuple(args.percentages), n_test=args.n_test, measure_rss=not args.no_rss
        )
        for c in costs:
            rss = (
                "n/a"
                if c.rss_pot is None
                else f"{c.rss_pot / 2**20:.1f} / {c.rss_taco / 2**20:.1f}"
            )
            print(
                f"{n:<6} {c.percentage:<4g} {c.n_latents:<5} {c.time_pot:<7.3f} "
                f"{c.time_pot_cache:<8.3f} {c.time_taco:<8.4f} {c.time_pot / c.time_taco:<7.1f} "
                f"{c.time_pot_cache / c.time_taco:<7.1f} "
                f"{1 - c.activations_taco / c.activations_pot:<10.1%} {rss}"
            )


if __name__ == "__main__":
    main()
