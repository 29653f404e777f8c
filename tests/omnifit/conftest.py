"""Every omnifit test runs torch on one thread: the tensors are small and the cores are shared."""

import pytest

from icml26.core import torch_threads


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield
