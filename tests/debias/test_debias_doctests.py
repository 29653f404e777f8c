"""Every docstring example of the package runs and prints what it says."""

import doctest
import importlib

import pytest

MODULES = ["analysis", "certification", "correct", "hf", "perturb", "text_task", "toy"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"icml26.debias.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_package_example():
    import icml26.debias

    result = doctest.testmod(icml26.debias)
    assert result.attempted > 0 and result.failed == 0
