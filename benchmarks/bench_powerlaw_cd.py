"""Benchmark of powerlaw_cd: wall time of PLaCy vs time-domain Granger vs PCMCI+ on the same
stock-like data as N and T grow (ratios to PLaCy), and the vectorised feature extraction vs the
per-window polyfit reference (the spec: ~150x vs curve_fit; PLaCy 2-4 s vs 50-200 s per dataset).
Times are medians after one warm-up, the compared methods timed round-robin
(``icml26.core.interleaved_median_seconds``) so that a load spike slows them alike.

Run: python benchmarks/bench_powerlaw_cd.py [--no-pcmci]
"""

from __future__ import annotations

import sys

import numpy as np

from icml26.core import interleaved_median_seconds
from icml26.powerlaw_cd import (
    granger_pairwise,
    pcmci_plus,
    placy,
    powerlaw_features,
    powerlaw_features_reference,
    simulate_ou,
)


def main(with_pcmci: bool = True) -> None:
    print("| N | T | PLaCy [s] | Granger [s] | Granger / PLaCy | PCMCI+ [s] | PCMCI+ / PLaCy |")
    print("|---|---|---|---|---|---|---|")
    for n, length in [(3, 2000), (5, 2000), (5, 5000), (10, 5000)]:
        X = simulate_ou(n, length + n * 5, stock_like=True, stationary=False, sigma_b=1.0,
                        seed=0).X  # fmt: skip
        times = interleaved_median_seconds(
            {
                "placy": lambda X=X: placy(X, max_lags=20),
                "granger": lambda X=X: granger_pairwise(X, max_lags=20),
            },
            repeats=3,
        )
        t_placy, t_granger = times["placy"], times["granger"]
        if with_pcmci:
            pcmci_run = {"pcmci": lambda X=X: pcmci_plus(X, tau_max=20)}
            t_pcmci = interleaved_median_seconds(pcmci_run, repeats=1)["pcmci"]
            pcmci = f"{t_pcmci:.2f} | {t_pcmci / t_placy:.1f}"
        else:
            pcmci = "— | —"
        print(f"| {n} | {length} | {t_placy:.2f} | {t_granger:.2f} | "
              f"{t_granger / t_placy:.2f} | {pcmci} |")  # fmt: skip

    print("\n| series | windows | vectorised [ms] | polyfit loop [ms] | speed-up |")
    print("|---|---|---|---|---|")
    for shape in [(3, 1500), (5, 5000)]:
        X = np.random.default_rng(0).standard_normal(shape)
        fast = interleaved_median_seconds({"fast": lambda X=X: powerlaw_features(X)}, 3)["fast"]
        slow_run = {"slow": lambda X=X: powerlaw_features_reference(X)}
        slow = interleaved_median_seconds(slow_run, repeats=1)["slow"]
        windows = shape[0] * (shape[1] - 49)
        print(f"| {shape[0]}x{shape[1]} | {windows} | {1e3 * fast:.1f} | {1e3 * slow:.0f} | "
              f"{slow / fast:.0f}x |")  # fmt: skip


if __name__ == "__main__":
    main(with_pcmci="--no-pcmci" not in sys.argv)
