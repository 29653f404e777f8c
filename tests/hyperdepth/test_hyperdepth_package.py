"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import pytest

from icml26.core import Resources, RunContext, discover
from icml26.hyperdepth import experiments as hd_experiments

HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "hypergraphx", "dhg", "pandas"}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.hyperdepth", "icml26.hyperdepth.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_experiments_declare_requires_and_one_cpu():
    experiments = discover().of_system("hyperdepth")
    assert {e.name for e in experiments} >= {"hyperdepth.synthetic"}
    for experiment in experiments:
        assert "sklearn" in experiment.requires
        assert experiment.resources == Resources(cpus=1)


def test_synthetic_smoke_reports_progress_per_method(tmp_path):
    events = []
    config = hd_experiments.SYN_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = hd_experiments.synthetic(config, ctx)
    assert [e[0] for e in events] == ["start"] + ["advance"] * len(config.methods) + ["stop"]
    assert metrics["sfi_minus_hypergrace"] == metrics["hyperdepth_sfi"] - metrics["hypergrace_sfi"]
