"""SpineFL's server and communication costs, and the price of Flower's engine (issue 20 benchmark).

1. Server cost per round (select + slice every participant, aggregate, update histories) of
   SpineSelector vs StaticSelector (HeteroFL), MLP 32-256-256-10, 20 clients, 50 % participation;
   clients are replaced by "return the received weights" so only the server is timed.
2. Parameters sent to a client at each width vs the full model (exact counts).
3. One round in-process vs through ``flwr.simulation.run_simulation`` (4 supernodes, Ray): Ray's
   fixed start-up cost is t(1 round) - [t(2 rounds) - t(1 round)], shown apart from the per-round
   cost.

The paper makes no speed claim; every figure is a ratio measured in this process.

Run: python benchmarks/bench_spinefl.py [--no-flower]
"""

from __future__ import annotations

import sys
import time
from functools import partial

import numpy as np
import torch

from icml26.spinefl import (
    ClientUpdate,
    HeteroSimulation,
    SliceableMLP,
    SpineSelector,
    StaticSelector,
    SubmodelServer,
    default_ratios,
    extract_submodel,
    make_task,
    run_flower_simulation,
    sub_width,
)


def best_of(fn, repeats: int = 5) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def server_round_cost(selector_fn, rounds: int = 10) -> float:
    """Seconds per server round with echo clients (select, slice, aggregate, histories)."""
    ratios = default_ratios(20)
    rng = np.random.default_rng(0)

    def run() -> None:
        server = SubmodelServer(SliceableMLP([32, 256, 256, 10]), selector_fn(), ratios, seed=0)
        for t in range(rounds):
            plan = server.plan_round(t)
            updates = []
            for sets in plan.index_sets:
                sub = server.submodel(sets)
                freq = {name: rng.random(idx.size) for name, idx in sets.items()}
                state = {k: v.detach() for k, v in sub.named_parameters()}
                updates.append(ClientUpdate(state, 100, freq, 0.0))
            server.finish_round(plan, updates)

    return best_of(run, repeats=3) / rounds


def main() -> None:
    torch.set_num_threads(1)
    print("1. server cost per round (20 clients, 10 per round, MLP 32-256-256-10)")
    static = server_round_cost(StaticSelector)
    spine = server_round_cost(SpineSelector)
    print(f"   HeteroFL (static) {static * 1e3:8.2f} ms   SpineFL {spine * 1e3:8.2f} ms")
    print(f"   SpineFL / HeteroFL = {spine / static:.2f}x")

    print("2. parameters sent per client (MLP 32-256-256-10)")
    full = SliceableMLP([32, 256, 256, 10])
    n_full = sum(p.numel() for p in full.parameters())
    for r in (1.0, 0.5, 0.25):
        sets = {name: np.arange(sub_width(N, r)) for name, N in full.layer_sizes().items()}
        n = sum(p.numel() for p in extract_submodel(full, sets).parameters())
        print(f"   r = {r:<5} {n:>7d} parameters = {n / n_full:.3f} of the full model")

    if "--no-flower" in sys.argv:
        return
    print("3. one round in-process vs through Flower (4 supernodes, Ray backend)")
    task = make_task("synthetic", 0.5, 0, n_clients=4, n_samples=4_000)
    model_fn = partial(SliceableMLP, list(task.dims), seed=0)

    def in_process(rounds: int) -> float:
        start = time.perf_counter()
        HeteroSimulation(
            model_fn, SpineSelector(), task.clients, task.ratios, rounds, participation=1.0
        ).run()
        return time.perf_counter() - start

    def flower(rounds: int) -> float:
        server = SubmodelServer(model_fn(), SpineSelector(), task.ratios, participation=1.0)
        start = time.perf_counter()
        run_flower_simulation(model_fn, server, task.clients, rounds)
        return time.perf_counter() - start

    local = min(in_process(1) for _ in range(3))
    t1, t2 = flower(1), flower(2)
    per_round = t2 - t1
    print(f"   in-process round {local:.2f} s")
    print(f"   Flower: 1 round {t1:.1f} s, 2 rounds {t2:.1f} s")
    print(f"   Flower per round {per_round:.2f} s = {per_round / local:.1f}x in-process")
    print(f"   Flower/Ray fixed start-up {t1 - per_round:.1f} s = {(t1 - per_round) / local:.0f}x")


if __name__ == "__main__":
    main()
