"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import numpy as np
import pytest

from icml26.core import Resources, RunContext, discover
from icml26.floatnet import FloatFormat
from icml26.floatnet import experiments as floatnet_experiments

EXTRA = ("ml_dtypes",)
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", *EXTRA}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.floatnet", "icml26.floatnet.experiments"])
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
        "import sys, icml26.floatnet as m\n"
        "assert 'icml26.floatnet.formats' not in sys.modules\n"
        "from icml26.floatnet import FloatFormat\n"
        "assert 'icml26.floatnet.formats' in sys.modules\n"
        "assert 'icml26.floatnet.constructions' not in sys.modules\n"
        "assert 'build_depth3' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_one_cpu():
    experiments = discover().of_system("floatnet")
    assert len(experiments) == 4
    for experiment in experiments:
        assert experiment.requires == EXTRA
        assert experiment.resources == Resources(cpus=1)  # numpy on small arrays only


def test_depth3_draws_its_tables_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed), the generator the old
    # run(config, seed) made: the first random table is the same as before.
    config = floatnet_experiments.DEPTH3_PRESETS["smoke"]
    ctx = RunContext(seed=11, artifact_dir=tmp_path)
    fmt = FloatFormat(3, 3)
    expected = np.random.default_rng(11).choice(fmt.values(), size=len(fmt.grid(1)))
    drawn = floatnet_experiments._random_table(fmt, len(fmt.grid(1)), ctx.numpy_generator())
    assert np.array_equal(drawn, expected)
    metrics = floatnet_experiments.depth3(config, ctx)
    assert metrics["exact_fraction_min"] == 1.0
    assert metrics["widths"] == {"3,3,1": [232, 55, 1]}


def test_width_reports_one_progress_step_per_network(tmp_path):
    events = []
    config = floatnet_experiments.WIDTH_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = floatnet_experiments.width(config, ctx)
    assert metrics["monotone_fraction"] == 1.0
    n = len(config.cases) + 1 + config.n_monotone
    assert [e[0] for e in events] == ["start"] + ["advance"] * n + ["stop"]
    assert events[0][2] == n
