"""Every example in spinefl's docstrings runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import icml26.spinefl

MODULES = [m.name for m in pkgutil.iter_modules(icml26.spinefl.__path__)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"icml26.spinefl.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
