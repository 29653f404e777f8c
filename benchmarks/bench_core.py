"""How long the CLI takes to answer without running anything (`--help`, `list`), against a bare
interpreter start and a bare `import torch`, measured in one process, as ratios.

Run: python benchmarks/bench_core.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import torch'": [sys.executable, "-c", "import torch"],
    "icml26 --help": [sys.executable, "-c", "from icml26.cli import main; main()", "--help"],
    "icml26 list": [sys.executable, "-c", "from icml26.cli import main; main()", "list"],
}


def _seconds(command: list[str], repeats: int = 5) -> float:
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    times = {name: _seconds(command) for name, command in COMMANDS.items()}
    base = times["python -c pass"]
    print(f"{'command':<28} {'median s':>9} {'x bare python':>14}")
    for name, seconds in times.items():
        print(f"{name:<28} {seconds:>9.3f} {seconds / base:>14.1f}")


if __name__ == "__main__":
    main()
