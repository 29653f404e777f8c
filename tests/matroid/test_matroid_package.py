"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import pytest

from icml26.core import REGISTRY, Resources, RunContext, discover
from icml26.matroid import experiments as matroid_experiments
from icml26.matroid import run_scaling_experiment

EXTRA = ("networkx",)
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", *EXTRA}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.matroid", "icml26.matroid.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_public_name_loads_its_module_on_first_use():
    code = (
        "import sys, icml26.matroid as m\n"
        "assert 'icml26.matroid.partition' not in sys.modules\n"
        "from icml26.matroid import partition_size_exact\n"
        "assert 'icml26.matroid.partition' in sys.modules and 'networkx' not in sys.modules\n"
        "assert 'GraphicMatroid' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_one_cpu():
    experiments = discover().of_system("matroid")
    assert len(experiments) == 4
    for experiment in experiments:
        assert experiment.requires == EXTRA
        assert experiment.resources == Resources(cpus=1)  # numpy and pure Python only
        assert REGISTRY.get(experiment.name) is experiment


def test_e1_draws_its_instances_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed), which is what the harness made
    # of the integer seed the old run(config, seed) passed on: the same instances and costs.
    config = matroid_experiments.E1_PRESETS["smoke"]
    metrics = matroid_experiments.bounded_circuit_scaling(
        config, RunContext(seed=5, artifact_dir=tmp_path)
    )
    records = run_scaling_experiment(
        matroid_experiments.blocks_instance(config.c, config.block_size),
        config.ns,
        matroid_experiments.greedy_vs_sampling(config.c, config.growth),
        repeats=config.repeats,
        seed=5,
    )
    expected = matroid_experiments.summarize_scaling(records, config.c)
    assert metrics["sampling_cost"] == expected["sampling_cost"]
    assert metrics["greedy_cost"] == expected["greedy_cost"]


def test_partition_size_reports_one_progress_step_per_instance(tmp_path):
    events = []
    config = matroid_experiments.E3_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = matroid_experiments.partition_size(config, ctx)
    n = len(matroid_experiments.FAMILIES) * len(config.ks) * config.instances
    assert metrics["instances"] == n
    assert [e[0] for e in events] == ["start"] + ["advance"] * n + ["stop"]
    assert events[0][2] == n


def test_scaling_harness_calls_back_once_per_instance():
    calls = []
    run_scaling_experiment(
        matroid_experiments.blocks_instance(2, 2),
        [8, 16],
        matroid_experiments.greedy_vs_sampling(2, 2.0),
        repeats=[2, 3],
        seed=0,
        on_instance=lambda: calls.append(1),
    )
    assert len(calls) == 5
