"""Benchmark of sgg_dp: δ(ε) evaluation and calibration time, the member search against the
implementation before issue 17 (same process), PLD build + 16-fold composition vs dp_accounting's
built-in Gaussian PLD, one release's PLD build time and tightness for k < T, = T, > T, and our
exact ℓ2 σ vs the bound-based calibration of Joseph et al.
(reported ratios from the spec: their σ is 0.2–0.4% above the exact one).

The baseline is the package as of commit 0317671 (spec §2.4 calibration: a top-down scan of 40
log-spaced σ then ``brentq``, every member from scratch), loaded from git history into a
temporary module so that both run in this process. CPU seconds (``time.process_time``) are
reported beside wall seconds: the machine may be shared.

Run: python benchmarks/bench_sgg_dp.py [--skip-baseline]
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from dp_accounting.pld import privacy_loss_distribution as pld_lib

from icml26.core import interleaved_median_seconds
from icml26.sgg_dp import (
    InfeasibleMemberWarning,
    SGGMechanism,
    best_member,
    gaussian_member,
    l2_member,
)

BASELINE_COMMIT = "0317671"
BASELINE_FILES = ("calibration", "gaussian", "mechanism", "profile", "radial", "search")

# google-research dp_l2 get_l2_sigma / exact σ, as reported in the spec (§7, 1000-point grids).
JOSEPH_RATIO = {(3, 1.0, 1e-5): 1.0038, (5, 0.5, 1e-2): 1.0029, (10, 1.0, 1e-3): 1.0019}


def median_time(fn, repeat: int = 3) -> float:
    """Median wall seconds of ``repeat`` runs after one warm-up."""
    return interleaved_median_seconds({"fn": fn}, repeat)["fn"]


def timed(fn):
    """(result or the exception raised, wall seconds, CPU seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        out = fn()
    except ValueError as exc:
        out = exc
    return out, time.perf_counter() - wall, time.process_time() - cpu


def load_baseline(root: Path, tmp: Path):
    """The pre-issue-17 ``search`` module, from git, as package ``sgg_dp_baseline``."""
    pkg = tmp / "sgg_dp_baseline"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in BASELINE_FILES:
        path = f"src/icml26/sgg_dp/{name}.py"
        text = subprocess.run(
            ["git", "-C", str(root), "show", f"{BASELINE_COMMIT}:{path}"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        (pkg / f"{name}.py").write_text(text.replace("icml26.sgg_dp.", "sgg_dp_baseline."))
    sys.path.insert(0, str(tmp))
    return importlib.import_module("sgg_dp_baseline.search"), importlib.import_module(
        "sgg_dp_baseline.mechanism"
    )


def timed_and_counted(module, fn):
    """``timed(fn)`` and the profile evaluations it made (wrapping the module's profile)."""
    name = "log_hockey_stick" if hasattr(module, "log_hockey_stick") else "hockey_stick"
    original, calls = getattr(module, name), [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    setattr(module, name, counted)
    try:
        return (*timed(fn), calls[0])
    finally:
        setattr(module, name, original)


def search_section(skip_baseline: bool) -> None:
    target = (0.5, 1e-2)
    print(f"\nMember search best_member{target}, T = 3, default grid (35 members):\n")
    print("| implementation | best (k, p) | MSE | wall [s] | CPU [s] | profile evaluations |")
    print("|---|---|---|---|---|---|")
    import icml26.sgg_dp.mechanism as new_mechanism

    rows = {}
    runs = [("now", best_member, new_mechanism)]
    if not skip_baseline:
        root = Path(__file__).resolve().parents[1]
        tmp = Path(tempfile.mkdtemp(prefix="sgg_dp_baseline_"))
        old_search, old_mechanism = load_baseline(root, tmp)
        runs.insert(0, (f"before issue 17 ({BASELINE_COMMIT})", old_search.best_member,
                        old_mechanism))  # fmt: skip
    for label, fn, module in runs:
        (best, _table), wall, cpu, n = timed_and_counted(module, lambda fn=fn: fn(*target, T=3))
        rows[label] = cpu
        print(f"| {label} | ({best.k:g}, {best.p:g}) | {best.mse():.4f} | {wall:.1f} | {cpu:.1f} "
              f"| {n} |")  # fmt: skip
    if len(rows) == 2:
        old_cpu, new_cpu = rows.values()
        print(f"\nspeed-up (CPU): {old_cpu / new_cpu:.1f}x")

    # the example: one grid point cannot reach the target
    print("\nbest_member(1.0, 1e-5, T=2, sensitivity=0.5):")
    for label, fn, _ in runs:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InfeasibleMemberWarning)
            out, wall, cpu = timed(lambda fn=fn: fn(1.0, 1e-5, T=2, sensitivity=0.5))
        if isinstance(out, Exception):
            print(f"- {label}: aborted after {cpu:.1f} CPU s: {out}")
        else:
            skipped = [str(w.message) for w in caught if w.category is InfeasibleMemberWarning]
            best = out[0]
            print(f"- {label}: best (k, p) = ({best.k:g}, {best.p:g}), MSE {best.mse():.4f}, "
                  f"{wall:.1f} s wall, {cpu:.1f} CPU s; {' '.join(skipped)}")  # fmt: skip


def pld_section() -> None:
    """PLD build time and tightness for k < T, k = T and k > T (the last with the exact tail)."""
    print("\nPLD of one release (default resolution), ε(δ) from the PLD / exact ε(δ):\n")
    print("| (T, k, p, σ) | build [s] | CPU [s] | δ = 1e-4 | δ = 1e-8 | δ = 1e-12 |")
    print("|---|---|---|---|---|---|")
    for T, k, p, sigma in [(3, 2.5, 1.35, 3.0), (3, 3.0, 1.35, 3.0), (3, 3.5, 1.35, 3.0),
                           (1, 1.5, 1.35, 2.0)]:  # fmt: skip
        m = SGGMechanism(T, k, p, sigma)
        pld, wall, cpu = timed(m.to_pld)
        ratios = " | ".join(
            f"{pld.get_epsilon_for_delta(d) / m.epsilon(d):.4f}" for d in (1e-4, 1e-8, 1e-12)
        )
        print(f"| ({T}, {k:g}, {p:g}, {sigma:g}) | {wall:.1f} | {cpu:.1f} | {ratios} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-baseline", action="store_true", help="do not run the old search")
    args = parser.parse_args()

    rows = []
    for T, k, p in [
        (1, 1.0, 1.35),
        (3, 3.0, 1.35),
        (3, 2.5, 1.35),
        (3, 3.5, 1.35),
        (50, 49.0, 1.5),
    ]:
        m = SGGMechanism(T, k, p, sigma=3.0)
        t_delta = median_time(lambda m=m: m.delta(0.5))
        t_cal = median_time(lambda m=m: m.calibrate(0.5, 1e-2), repeat=1)
        rows.append(f"| ({T}, {k:g}, {p:g}) | {1e3 * t_delta:.1f} | {t_cal:.2f} |")
    print("| (T, k, p) | δ(ε) [ms] | calibrate [s] |\n|---|---|---|\n" + "\n".join(rows))

    search_section(args.skip_baseline)

    std = 2.0
    vdi = 1e-3  # one loss grid for both
    times = interleaved_median_seconds(
        {
            "ours": lambda: (
                gaussian_member(5, std=std)
                .to_pld(value_discretization_interval=vdi, M=1000)
                .self_compose(16)
            ),
            "ref": lambda: pld_lib.from_gaussian_mechanism(
                std, value_discretization_interval=vdi
            ).self_compose(16),
        },
        repeats=1,
    )
    ours, ref = times["ours"], times["ref"]
    print(f"\nPLD build + 16-fold composition: SGG Gaussian member {ours:.2f} s, "
          f"dp_accounting Gaussian {ref:.2f} s, ratio {ours / ref:.1f}x")  # fmt: skip

    pld_section()

    print("\n| (T, ε, δ) | exact ℓ2 σ (ours) | Joseph et al. σ (spec ratio) |\n|---|---|---|")
    for (T, eps, delta), ratio in JOSEPH_RATIO.items():
        sigma = l2_member(T).calibrate(eps, delta).sigma
        print(f"| ({T}, {eps}, {delta:g}) | {sigma:.5f} | {sigma * ratio:.5f} ({ratio}) |")


if __name__ == "__main__":
    main()
