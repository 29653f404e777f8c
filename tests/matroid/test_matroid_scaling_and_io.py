"""Slope fitting, the scaling harness, the real-graph loading path, and the experiments' hooks."""

import networkx as nx
import numpy as np
import pytest

from icml26.core import RunContext, discover
from icml26.matroid import (
    GraphicMatroid,
    UniformBlocks,
    fit_loglog_slope,
    max_weight_basis,
    rank,
    run_scaling_experiment,
)


def test_fit_loglog_slope_recovers_power_laws_exactly():
    xs = np.array([10.0, 100.0, 1000.0, 10_000.0])
    for a in (1.0, 1.5, 2.0):
        # Noise-free power law: the least-squares fit is exact up to float round-off.
        assert fit_loglog_slope(xs, 3.0 * xs**a) == pytest.approx(a, abs=1e-12)


def test_run_scaling_experiment_records_costs_and_bases():
    def make(n, rng):
        return UniformBlocks(n // 2, 2, 2), rng.random(n)

    algorithms = {"greedy": lambda oracle, w, rng: max_weight_basis(oracle, w)}
    records = run_scaling_experiment(make, [8, 16], algorithms, repeats=[2, 1], seed=0)
    assert [(r.n, r.repeat) for r in records] == [(8, 0), (8, 1), (16, 0)]
    for r in records:
        assert len(r.basis) == r.n // 2 and r.calls == r.n
        # Greedy on r = n/2: every query is at most r + 1 and the total is at least r(r+1)/2 + ...
        assert r.max_query <= r.n // 2 + 1 and r.cost >= r.n
    again = run_scaling_experiment(make, [8, 16], algorithms, repeats=[2, 1], seed=0)
    assert [r.basis for r in again] == [r.basis for r in records]


def test_from_edgelist_reads_snap_format_like_networkx(tmp_path):
    G = nx.gnm_random_graph(25, 60, seed=4)
    path = tmp_path / "graph.txt"
    lines = [
        "# Directed graph (each unordered pair of nodes is saved once)",
        "# FromNodeId ToNodeId",
    ]
    lines += [f"{u}\t{v}" for u, v in G.edges()] + ["3\t3", "5\t7", "5\t7"]
    path.write_text("\n".join(lines) + "\n")
    M = GraphicMatroid.from_edgelist(path)
    assert M.n == G.number_of_edges() + 3
    H = nx.read_edgelist(path, create_using=nx.MultiGraph)
    touched = H.subgraph({v for e in H.edges() for v in e})
    assert rank(M) == touched.number_of_nodes() - nx.number_connected_components(touched)


@pytest.mark.parametrize(
    "name", ["matroid.bounded_circuit_scaling", "matroid.c3_scaling", "matroid.greedy_cost"]
)
def test_experiment_hooks_draw_figures_and_tables(name, tmp_path):
    import matplotlib.pyplot as plt

    experiment = discover().get(name)
    config = experiment.presets["smoke"]
    metrics = [experiment.run(config, RunContext(seed=0, artifact_dir=tmp_path))]
    figures = experiment.plot(metrics, config)
    assert figures and all(len(f.axes) == 1 for f in figures.values())
    for fig in figures.values():
        plt.close(fig)
    if experiment.tables is not None:
        table = experiment.tables(metrics, config)[0]
        assert all(len(row) == len(table.columns) for row in table.rows)
