"""One torch thread per test: the tensors are small and the machine's cores are shared."""

import pytest

from icml26.core import torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield
