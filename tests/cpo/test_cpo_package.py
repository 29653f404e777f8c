"""The package is lazy: importing it needs the cpo extra but loads nothing heavy until used."""

import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "scipy", "matplotlib", "sklearn", "trl", "datasets")


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_package_and_experiments_import_nothing_heavy():
    out = run_python(
        "import sys, icml26.cpo, icml26.cpo.experiments\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_name_loads_only_its_own_module():
    out = run_python(
        "import sys\n"
        "from icml26.cpo import dpo_loss\n"
        "print(dpo_loss.__module__, 'torch' in sys.modules, 'trl' in sys.modules)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["icml26.cpo.losses", "True", "False"]


def test_the_public_names_are_the_stubs():
    import icml26.cpo

    assert "ConstrainedPOTrainer" in icml26.cpo.__all__ and "dpo_loss" in dir(icml26.cpo)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        icml26.cpo.no_such_name  # noqa: B018
