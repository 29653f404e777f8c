"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.matroid.experiments import (
    bounded_circuit_scaling,
    c3_scaling,
    greedy_cost,
    partition_size,
)

MODULES = {
    "bounded_circuit_scaling": bounded_circuit_scaling,
    "c3_scaling": c3_scaling,
    "greedy_cost": greedy_cost,
    "partition_size": partition_size,
}

BAD = [
    ("bounded_circuit_scaling", "c", 1, ValueError),  # circuits have at least 2 elements
    ("bounded_circuit_scaling", "block_size", 1, ValueError),  # a block holds a circuit: m >= c
    ("bounded_circuit_scaling", "ns", (1, 4096), ValueError),  # below one block
    ("bounded_circuit_scaling", "ns", (4096, 4096, 4096), ValueError),  # no slope to fit
    ("bounded_circuit_scaling", "ns", (), ValueError),
    ("bounded_circuit_scaling", "repeats", (1, 1), ValueError),  # one count per n
    ("bounded_circuit_scaling", "repeats", (1, 0, 1), ValueError),
    ("bounded_circuit_scaling", "growth", 1.0, ValueError),  # the sample would never grow
    ("bounded_circuit_scaling", "growth", float("inf"), TypeError),
    ("c3_scaling", "block_size", 2, ValueError),  # below c = 3
    ("c3_scaling", "triangle_ns", (512,), ValueError),
    ("c3_scaling", "ns", (1024, 10**9), ValueError),
    ("c3_scaling", "c", "3", TypeError),
    ("greedy_cost", "mean_degree", -3.0, ValueError),  # the example
    ("greedy_cost", "mean_degree", 0.0, ValueError),  # no edges: rank 0, no slope
    ("greedy_cost", "mean_degree", 32.0, ValueError),  # above n_v - 1 = 31 at n_v = 32
    ("greedy_cost", "uniform_ns", (1, 256), ValueError),  # U_{0,1} has rank 0
    ("greedy_cost", "graph_vertices", (32, 10**5), ValueError),
    ("greedy_cost", "graph_vertices", [32, 64], TypeError),  # a list, not the annotated tuple
    ("partition_size", "n_max", 3, ValueError),  # n is drawn in [4, n_max]
    ("partition_size", "instances", 0, ValueError),
    ("partition_size", "ks", (), ValueError),
    ("partition_size", "ks", (0, 2), ValueError),
    ("partition_size", "ks", (True,), TypeError),
]

# one clearly bad --set per experiment, through the CLI
CLI_BAD = {
    "bounded_circuit_scaling": "growth=1",
    "c3_scaling": "block_size=2",
    "greedy_cost": "mean_degree=-3",
    "partition_size": "n_max=2",
}


@pytest.mark.parametrize("name", MODULES)
def test_every_preset_is_a_valid_config(name):
    for config in MODULES[name].PRESETS.values():
        assert replace(config) == config


@pytest.mark.parametrize(
    ("name", "field", "value", "error"), BAD, ids=[f"{n}.{f}={v!r}" for n, f, v, _ in BAD]
)
def test_bad_fields_are_refused_by_name(name, field, value, error):
    with pytest.raises(error, match=field):
        replace(MODULES[name].DEFAULT, **{field: value})


@pytest.mark.parametrize("name", CLI_BAD)
def test_the_cli_refuses_a_bad_set_before_any_task(name, tmp_path):
    assert_cli_refuses(tmp_path, f"matroid.{name}", CLI_BAD[name])
