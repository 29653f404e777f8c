"""How long the main job takes: every quick experiment once, CPU and wall seconds vs the budget.

    python benchmarks/bench_reproduce.py                 # every available quick experiment
    python benchmarks/bench_reproduce.py taco scale.cost # systems or experiments by name
    python benchmarks/bench_reproduce.py --jobs 1 --out runs/bench
    python benchmarks/bench_reproduce.py --write-task-seconds  # also refresh the task order

It runs the tasks `icml26 reproduce --preset quick` runs (default seeds, every core unless
--jobs), in a fresh folder unless --out names one, and prints per experiment the summed wall and
CPU seconds of its tasks, then the totals, the machine's load before and after, and whether the
budget of issue 51 holds: median <= 15 CPU-s per experiment, none over 60 CPU-s, total <= 15
CPU-minutes and <= 10 minutes of wall time on 2 idle cores. Timings depend on the machine and its
load: this is a benchmark, never a test. ``--write-task-seconds`` stores the mean CPU seconds per
task of each measured experiment in ``icml26/core/task_seconds.json``, from which runs with more
than one job start the longest tasks first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from icml26.core import discover, plan, run_tasks
from icml26.core.results import TASK_SECONDS
from icml26.core.runner import available_cores

MEDIAN_CPU_S, MAX_CPU_S, TOTAL_CPU_S, TOTAL_WALL_S = 15.0, 60.0, 15 * 60.0, 10 * 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="systems or experiments (default: all)")
    parser.add_argument("--jobs", type=int, default=available_cores())
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--write-task-seconds", action="store_true")
    args = parser.parse_args()
    registry = discover()
    chosen = [
        e for e in registry if not args.names or e.name in args.names or e.system in args.names
    ]
    runnable = [e for e in chosen if e.unavailable_for("quick") is None]
    for e in chosen:
        if e not in runnable:
            print(f"skipped {e.name}: {e.unavailable_for('quick')}")
    tasks = [t for e in runnable for t in plan(e, "quick", e.seeds)]
    out = args.out or Path(tempfile.mkdtemp(prefix="icml26-bench-"))
    load_before = os.getloadavg()
    start = time.perf_counter()
    records = run_tasks(tasks, out, jobs=args.jobs, progress=True)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    cpu, walls, failed = defaultdict(float), defaultdict(float), defaultdict(int)
    for record in records:
        cpu[record.experiment] += record.cpu_time_s
        walls[record.experiment] += record.wall_time_s
        failed[record.experiment] += not record.ok
    print(f"\n{'experiment':40s} {'tasks':>5s} {'wall s':>8s} {'CPU s':>8s}  budget")
    for name in sorted(cpu, key=cpu.get, reverse=True):
        n = sum(r.experiment == name for r in records)
        flag = "over 60 CPU-s" if cpu[name] > MAX_CPU_S else ""
        flag += f" ({failed[name]} failed)" if failed[name] else ""
        print(f"{name:40s} {n:5d} {walls[name]:8.1f} {cpu[name]:8.1f}  {flag}")
    total_cpu = sum(cpu.values())
    median = statistics.median(cpu.values()) if cpu else 0.0
    over = [n for n, c in cpu.items() if c > MAX_CPU_S]
    print(
        f"\n{len(cpu)} experiments, {len(records)} tasks, jobs={args.jobs}, run folder {out}\n"
        f"wall {wall:.0f} s (budget {TOTAL_WALL_S:.0f}), CPU {total_cpu:.0f} s "
        f"(budget {TOTAL_CPU_S:.0f}), median {median:.1f} CPU-s per experiment "
        f"(budget {MEDIAN_CPU_S:.0f}), {len(over)} over {MAX_CPU_S:.0f} CPU-s\n"
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"on {os.cpu_count()} cores"
    )
    held = wall <= TOTAL_WALL_S and total_cpu <= TOTAL_CPU_S and median <= MEDIAN_CPU_S and not over
    print("budget: " + ("met" if held else "NOT met"))
    if args.write_task_seconds:
        write_task_seconds(records)


def write_task_seconds(records) -> None:
    """Merge the mean CPU seconds per task of the measured experiments into the runner's table."""
    table = json.loads(TASK_SECONDS.read_text()) if TASK_SECONDS.exists() else {}
    per_task = defaultdict(list)
    for record in records:
        if record.ok:
            per_task[record.experiment].append(record.cpu_time_s)
    for name, seconds in per_task.items():
        table.setdefault(name, {})["quick"] = round(statistics.mean(seconds), 1)
    TASK_SECONDS.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n")
    print(f"task seconds of {len(per_task)} experiment(s) written to {TASK_SECONDS}")


if __name__ == "__main__":
    main()
