"""Predict-time speed and memory of TACO vs the uncompressed POT (TACO, arXiv:2602.05649).

Same architecture (spec §5.1 small config, random weights: cost does not depend on the weights),
one process; prints times (median of 3 round-robin repeats after a warm-up), speed-up ratios, the
analytic multiply-add ratio, analytic activation savings and the measured peak-RSS increase of a
spawned predict process (MB; at small N it is dominated by first-call allocations that both
models pay, so it understates the saving).

A second table gives the predict-time cost of the ensemble (issue 19): ``TACOClassifier`` with the
shipped checkpoints, fitted on N synthetic rows, ``predict_proba`` on the test rows for each
``n_estimators`` (TACO@4 % and POT timed round-robin, median of 3 after a warm-up), and each
time relative to one member.

    python benchmarks/bench_taco.py [--n-train 1024 2048 4096] [--threads 1]
        [--ensemble-n 1024] [--members 1 2 4 8] [--no-ensemble]
"""

import argparse

import numpy as np
import torch

from icml26.core import interleaved_median_seconds
from icml26.taco import TACOClassifier, TACOConfig, TACOModel, benchmark_inference


def ensemble_table(n_train: int, n_test: int, members: list[int]) -> None:
    """Predict time of TACOClassifier (TACO@4 % and POT) for each ensemble size."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_train + n_test, 8))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    print(f"\nensemble cost, N = {n_train}, {n_test} test rows, 8 features (shipped checkpoints)")
    print("members  TACO s   ×1 member  POT s    ×1 member  POT/TACO")
    base = {}
    for m in members:
        fitted = {
            compress: TACOClassifier(use_compressor=compress, n_estimators=m).fit(
                X[:n_train], y[:n_train]
            )
            for compress in (True, False)
        }
        seconds = interleaved_median_seconds(
            {c: (lambda clf=clf: clf.predict_proba(X[n_train:])) for c, clf in fitted.items()},
            repeats=3,
        )
        row = []
        for compress, t in seconds.items():
            base.setdefault(compress, t)
            row.append((t, t / base[compress]))
        (t_taco, r_taco), (t_pot, r_pot) = row
        print(
            f"{m:<8} {t_taco:<8.4f} {r_taco:<10.2f} {t_pot:<8.3f} {r_pot:<10.2f} "
            f"{t_pot / t_taco:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-train", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--percentages", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument("--n-test", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-rss", action="store_true", help="skip the spawned RSS runs")
    parser.add_argument("--ensemble-n", type=int, default=1024)
    parser.add_argument("--members", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--no-ensemble", action="store_true", help="skip the ensemble table")
    parser.add_argument("--no-speed", action="store_true", help="skip the TACO vs POT table")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # this script is the process: nothing to restore
    if not args.no_speed:
        speed_table(args)
    if not args.no_ensemble:
        ensemble_table(args.ensemble_n, args.n_test, args.members)


def speed_table(args: argparse.Namespace) -> None:
    """Predict time, activations and peak RSS of TACO vs POT (same random-weight architecture)."""
    model = TACOModel(TACOConfig.small(), seed=0).eval()
    print(
        "N      p%   K     POT s   cache s  TACO s   ×POT    ×cache  MACs×POT  act.saved  ", end=""
    )
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
                f"{c.time_pot_cache / c.time_taco:<7.1f} {c.macs_pot / c.macs_taco:<9.1f} "
                f"{1 - c.activations_taco / c.activations_pot:<10.1%} {rss}"
            )


if __name__ == "__main__":
    main()
