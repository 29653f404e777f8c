"""Benchmark: size-sensitive cost and wall time of greedy vs the bounded-circuit algorithm, and
GraphicMatroid's oracle-based max-weight basis against networkx.maximum_spanning_tree.

Run: ``python benchmarks/bench_matroid.py`` (about a minute on 2 cores; ``--small`` for seconds).
Costs are the paper's metric; wall times (median of ``--repeats`` after one warm-up, the two
methods of a row timed round-robin with ``icml26.core.interleaved_median_seconds``) are secondary.
"""

from __future__ import annotations

import argparse

import networkx as nx
import numpy as np
from rich.console import Console
from rich.table import Table

from icml26.core import interleaved_median_seconds
from icml26.matroid import (
    CostCounter,
    UniformBlocks,
    bounded_circuit_max_weight_basis,
    max_weight_basis,
)


def greedy_vs_sampling(ns: list[int], repeats: int) -> Table:
    table = Table(title="UniformBlocks, c = 2: greedy vs bounded-circuit (same weights)")
    for column in ("n", "greedy cost", "sampling cost", "cost ratio", "greedy s", "sampling s"):
        table.add_column(column, justify="right")
    for n in ns:
        M = UniformBlocks(nblocks=n // 2, m=2, c=2)
        w = np.random.default_rng(0).random(n)
        greedy, sampling = CostCounter(M), CostCounter(M)
        assert max_weight_basis(greedy, w) == bounded_circuit_max_weight_basis(
            sampling, w, 2, seed=0
        )
        seconds = interleaved_median_seconds(
            {
                "greedy": lambda M=M, w=w: max_weight_basis(M, w),
                "sampling": lambda M=M, w=w: bounded_circuit_max_weight_basis(M, w, 2, seed=0),
            },
            repeats,
        )
        t_greedy, t_sampling = seconds["greedy"], seconds["sampling"]
        table.add_row(
            str(n),
            f"{greedy.total_cost:.3g}",
            f"{sampling.total_cost:.3g}",
            f"{greedy.total_cost / sampling.total_cost:.2f}×",
            f"{t_greedy:.3f}",
            f"{t_sampling:.3f}",
        )
    return table


def graphic_vs_networkx(sizes: list[tuple[int, int]], repeats: int) -> Table:
    table = Table(
        title="GraphicMatroid max-weight basis (oracle greedy) vs nx.maximum_spanning_tree"
    )
    for column in ("vertices", "edges", "oracle greedy s", "networkx s", "slowdown", "same tree"):
        table.add_column(column, justify="right")
    for vertices, edges in sizes:
        G = nx.gnm_random_graph(vertices, edges, seed=0)
        w = np.random.default_rng(1).permutation(G.number_of_edges()).astype(float)
        for (u, v), weight in zip(G.edges(), w, strict=True):
            G[u][v]["weight"] = weight
        ours = {frozenset(e) for e in max_weight_basis(G)}  # the graph path: edges, not ids
        same = ours == {frozenset(e) for e in nx.maximum_spanning_tree(G).edges()}
        seconds = interleaved_median_seconds(
            {
                "ours": lambda G=G: max_weight_basis(G),
                "networkx": lambda G=G: nx.maximum_spanning_tree(G),
            },
            repeats,
        )
        t_ours, t_nx = seconds["ours"], seconds["networkx"]
        table.add_row(
            str(vertices),
            str(edges),
            f"{t_ours:.4f}",
            f"{t_nx:.4f}",
            f"{t_ours / t_nx:.1f}×",
            str(same),
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ns = [2**9, 2**11] if args.small else [2**11, 2**13, 2**15]
    graphs = [(100, 400)] if args.small else [(100, 400), (500, 2000), (2000, 8000)]
    console = Console()
    console.print(greedy_vs_sampling(ns, args.repeats))
    console.print(graphic_vs_networkx(graphs, args.repeats))


if __name__ == "__main__":
    main()
