"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import pytest

from icml26.core import Resources, RunContext, discover
from icml26.spinefl import experiments as spine_experiments

EXTRA = ("sklearn",)
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "flwr", "pandas", "ray"}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.spinefl", "icml26.spinefl.experiments"])
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
        "import sys, icml26.spinefl as m\n"
        "from icml26.spinefl import gumbel_topk\n"
        "assert 'icml26.spinefl.selection' in sys.modules\n"
        "assert 'icml26.spinefl.flower' not in sys.modules\n"
        "assert 'flwr' not in sys.modules\n"
        "assert 'HeteroSimulation' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_one_cpu():
    experiments = discover().of_system("spinefl")
    assert {e.name for e in experiments} >= {
        "spinefl.synthetic",
        "spinefl.main",
        "spinefl.fashion_mnist",
    }
    for experiment in experiments:
        assert experiment.requires == EXTRA
        assert experiment.resources == Resources(cpus=1)


def test_every_seed_comes_from_the_context(tmp_path):
    config = spine_experiments.SYNTHETIC_PRESETS["smoke"]
    a = spine_experiments.synthetic(config, RunContext(seed=3, artifact_dir=tmp_path))
    b = spine_experiments.synthetic(config, RunContext(seed=3, artifact_dir=tmp_path))
    c = spine_experiments.synthetic(config, RunContext(seed=4, artifact_dir=tmp_path))
    assert a == b
    assert a["curves"] != c["curves"]
