"""The core v2 contract: a lazy package, a light experiments module, the docstring examples."""

import subprocess
import sys

import pytest

HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "skimage", "PIL", "pywt"}


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.unipercept", "icml26.unipercept.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
