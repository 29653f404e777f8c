"""Benchmark: throughput of the Copyright-Bench harness, measured in one process.

* episodes per second of the environment with each scripted agent (and relative to GreedyAgent,
  the cheapest);
* harness overhead of the real client path: OpenAIChatAgent against the local fake
  OpenAI-compatible server vs the same script run in process (time per episode, ratio);
* statistics: the slot-level factor model and a B = 2000 task-clustered bootstrap, each as a ratio
  to the time of running the 720 episodes they summarise.

Run: ``python benchmarks/bench_copyright_bench.py`` (about a minute on 2 cores; ``--small`` for
seconds). Times are medians of ``--repeats`` round-robin rounds after one warm-up round
(``icml26.core.interleaved_median_seconds``).
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from icml26.copyright_bench import (
    FakeOpenAIServer,
    GreedyAgent,
    HeuristicAgent,
    LawfulAgent,
    OpenAIChatAgent,
    SimulatedHuman,
    cluster_bootstrap_ci,
    copyright_task,
    evaluate,
    factor_grid,
    fit_factor_model,
)
from icml26.core import interleaved_median_seconds


def scripted_throughput(n_per_family: int, repeats: int) -> Table:
    task = copyright_task(n_per_family=n_per_family)
    n = len(task.dataset)
    agents = {
        "GreedyAgent": GreedyAgent,
        "LawfulAgent": LawfulAgent,
        "HeuristicAgent": lambda: HeuristicAgent(seed=0),
        "SimulatedHuman": lambda: SimulatedHuman(seed=0),
    }
    times = interleaved_median_seconds(
        {name: lambda m=make: evaluate(task, m()) for name, make in agents.items()}, repeats
    )
    table = Table(title=f"Scripted agents: {n} episodes (env + agent + scorer)")
    for column in ("agent", "episodes/s", "time vs GreedyAgent"):
        table.add_column(column, justify="right")
    for name, t in times.items():
        table.add_row(name, f"{n / t:.0f}", f"{t / times['GreedyAgent']:.2f}×")
    return table


def client_overhead(n_per_family: int, repeats: int) -> Table:
    task = copyright_task(n_per_family=n_per_family, grid=factor_grid(["neutral"], ["none"]))
    n = len(task.dataset)
    table = Table(title=f"Client path vs in-process script: {n} episodes each")
    for column in ("script", "in process ms/ep", "via HTTP ms/ep", "overhead ratio", "requests/ep"):
        table.add_column(column, justify="right")
    with FakeOpenAIServer() as server:
        for script, make in (("lawful", LawfulAgent), ("greedy", GreedyAgent)):
            agent = OpenAIChatAgent(script, base_url=server.base_url)
            before = len(server.requests)
            t = interleaved_median_seconds(
                {
                    "direct": lambda m=make: evaluate(task, m()),
                    "served": lambda a=agent: evaluate(task, a),
                },
                repeats,
            )
            direct, served = t["direct"], t["served"]
            per_episode = (len(server.requests) - before) / ((repeats + 1) * n)
            table.add_row(
                script,
                f"{1e3 * direct / n:.2f}",
                f"{1e3 * served / n:.2f}",
                f"{served / direct:.1f}×",
                f"{per_episode:.1f}",
            )
    return table


def statistics_cost(repeats: int) -> Table:
    task = copyright_task(n_per_family=20)
    result = evaluate(task, HeuristicAgent(seed=0))
    t = interleaved_median_seconds(
        {
            "run": lambda: evaluate(task, HeuristicAgent(seed=0)),
            "fit": lambda: fit_factor_model(result.slots, level="slot"),
            "boot": lambda: cluster_bootstrap_ci(result.episodes, "violation", B=2000, seed=0),
        },
        repeats,
    )
    run_time, fit, boot = t["run"], t["fit"], t["boot"]
    table = Table(title="Statistics on 720 HeuristicAgent episodes")
    for column in ("step", "seconds", "vs running the 720 episodes"):
        table.add_column(column, justify="right")
    table.add_row("run 720 episodes", f"{run_time:.2f}", "1.00×")
    table.add_row(
        f"slot-level Logit ({len(result.slots)} rows)", f"{fit:.3f}", f"{fit / run_time:.3f}×"
    )
    table.add_row("cluster bootstrap, B = 2000", f"{boot:.3f}", f"{boot / run_time:.3f}×")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a few tasks: seconds")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = 1 if args.small else 5
    console = Console()
    console.print(scripted_throughput(n, args.repeats))
    console.print(client_overhead(n, args.repeats))
    console.print(statistics_cost(args.repeats))


if __name__ == "__main__":
    main()
