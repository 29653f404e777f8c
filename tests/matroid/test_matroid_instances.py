"""The experiments' random instances (public generators) and the harness's progress reports."""

from functools import partial

import networkx as nx
import numpy as np
import pytest

from icml26.core import RunContext
from icml26.matroid import (
    MAX_GNP_VERTICES,
    MAX_SMALL_MATROID,
    SMALL_FAMILIES,
    GraphicMatroid,
    UniformBlocks,
    gnp_graphic_instance,
    greedy_basis,
    random_small_matroid,
    rank,
    run_scaling_experiment,
    triangles_instance,
    uniform_blocks_instance,
)
from icml26.matroid.experiments import bounded_circuit_scaling, partition_size
from icml26.matroid.experiments.common import greedy_vs_sampling, summarize_scaling


def _is_permutation(weights, n):
    return weights.dtype == np.float64 and sorted(weights.tolist()) == list(range(n))


@pytest.mark.parametrize(("c", "m"), [(2, 2), (3, 4)])
def test_uniform_blocks_instance_has_circuits_of_size_c_and_distinct_weights(c, m):
    matroid, weights = uniform_blocks_instance(40, seed=0, c=c, m=m)
    assert isinstance(matroid, UniformBlocks) and matroid.n == (40 // m) * m
    assert _is_permutation(weights, matroid.n)
    # any c elements of one block are dependent, any c - 1 independent
    assert not matroid.is_independent(list(range(c))) and matroid.is_independent(list(range(c - 1)))
    again = uniform_blocks_instance(40, seed=0, c=c, m=m)[1]
    assert np.array_equal(weights, again)


def test_triangles_instance_is_disjoint_triangles_with_parallel_edges():
    matroid, weights = triangles_instance(60, seed=1)
    assert isinstance(matroid, GraphicMatroid) and _is_permutation(weights, matroid.n)
    triangles = 60 // 6
    assert len(matroid.vertices) == 3 * triangles and 3 * triangles <= matroid.n <= 9 * triangles
    assert rank(matroid) == 2 * triangles  # a spanning forest keeps 2 edges of each triangle
    # the only cycles are parallel pairs and triangles (c = 3): one edge per side of the first
    # triangle is a circuit, two of them are independent
    sides = {}
    for e, (u, v) in enumerate(matroid.endpoints.tolist()):
        if max(u, v) < 3:
            sides.setdefault((min(u, v), max(u, v)), e)
    assert len(sides) == 3
    first = list(sides.values())
    assert not matroid.is_independent(first) and matroid.is_independent(first[:2])


@pytest.mark.parametrize("family", SMALL_FAMILIES)
def test_random_small_matroid_is_reproducible_and_sized(family):
    a = random_small_matroid(family, 12, seed=3)
    b = random_small_matroid(family, 12, seed=np.random.default_rng(3))
    assert a.n == b.n == 12
    assert greedy_basis(a) == greedy_basis(b)  # same seed, same matroid


def test_gnp_graphic_instance_is_networkx_gnp_with_a_seed_drawn_from_seed():
    matroid, weights = gnp_graphic_instance(40, seed=7, mean_degree=4.0)
    rng = np.random.default_rng(7)
    graph = nx.gnp_random_graph(40, 4.0 / 39, seed=int(rng.integers(2**31)))
    assert matroid.n == graph.number_of_edges()
    assert np.array_equal(weights, rng.random(matroid.n))  # the weights come after the graph
    assert rank(matroid) == 40 - nx.number_connected_components(graph)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: uniform_blocks_instance(1, c=2, m=2), ValueError, r"\bn must"),
        (lambda: uniform_blocks_instance(10, c=5, m=2), ValueError, "c"),
        (lambda: triangles_instance(0), ValueError, r"\bn must"),
        (lambda: random_small_matroid("matching", 10), ValueError, "family"),
        (lambda: random_small_matroid("uniform", MAX_SMALL_MATROID + 1), ValueError, r"\bn must"),
        (lambda: gnp_graphic_instance(MAX_GNP_VERTICES + 1), ValueError, "n_vertices"),
        (lambda: gnp_graphic_instance(10, mean_degree=10.0), ValueError, "mean_degree"),
        (lambda: gnp_graphic_instance(10, seed="x"), TypeError, "seed"),
    ],
)
def test_bad_instance_arguments_raise_named_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_e1_draws_its_instances_from_the_task_seed(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed): the harness with the integer
    # seed and the library's instance generator gives the same instances and costs.
    config = bounded_circuit_scaling.PRESETS["smoke"]
    metrics = bounded_circuit_scaling.bounded_circuit_scaling(
        config, RunContext(seed=5, artifact_dir=tmp_path)
    )
    records = run_scaling_experiment(
        partial(uniform_blocks_instance, c=config.c, m=config.block_size),
        config.ns,
        greedy_vs_sampling(config.c, config.growth),
        repeats=config.repeats,
        seed=5,
    )
    expected = summarize_scaling(records, config.c)
    assert metrics["sampling_cost"] == expected["sampling_cost"]
    assert metrics["greedy_cost"] == expected["greedy_cost"]


def test_partition_size_reports_one_progress_step_per_instance(tmp_path):
    events = []
    config = partition_size.PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = partition_size.partition_size(config, ctx)
    n = len(SMALL_FAMILIES) * len(config.ks) * config.instances
    assert metrics["instances"] == n
    assert [e[0] for e in events] == ["start"] + ["advance"] * n + ["stop"]
    assert events[0][2] == n


def test_scaling_harness_reports_progress_once_per_instance():
    calls = []
    run_scaling_experiment(
        partial(uniform_blocks_instance, c=2, m=2),
        [8, 16],
        greedy_vs_sampling(2, 2.0),
        repeats=[2, 3],
        seed=0,
        progress=lambda done, total, metrics: calls.append((done, total, dict(metrics))),
    )
    assert calls == [(i, 5, {}) for i in range(1, 6)]
    with pytest.raises(TypeError, match="progress must be"):
        run_scaling_experiment(
            partial(uniform_blocks_instance), [8], greedy_vs_sampling(2, 2.0), progress=3
        )
