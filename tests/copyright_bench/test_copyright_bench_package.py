"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import pytest

from icml26.core import Resources, discover

EXTRA = ("pydantic", "pandas", "statsmodels", "scipy")
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "openai", "httpx", *EXTRA}


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("hidden", ["pydantic", "statsmodels"])
def test_import_without_a_required_module_names_the_extra(hidden):
    result = _python(f"import sys\nsys.modules[{hidden!r}] = None\nimport icml26.copyright_bench")
    assert result.returncode != 0
    assert "MissingExtraError" in result.stderr and f"needs {hidden}" in result.stderr
    assert "pip install 'icml26[copyright_bench]'" in result.stderr


@pytest.mark.parametrize("module", ["icml26.copyright_bench", "icml26.copyright_bench.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_experiments_declare_the_extra_and_their_cpus():
    experiments = {e.name: e for e in discover().of_system("copyright_bench")}
    assert "copyright_bench.scripted" in experiments
    for e in experiments.values():
        assert set(EXTRA) <= set(e.requires)
        assert isinstance(e.resources, Resources)
