"""Every hybrid_seq test runs torch on one thread: its tensors are small, and on shared cores
two OpenMP threads make them several times slower (core's ``torch_threads``)."""

import pytest

from icml26.core import torch_threads


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield
