"""debias tests run torch on one thread: the tensors are tiny, and on a shared 2-core machine a
second intra-op thread made small matrix products ~100x slower (measured)."""

import pytest

from icml26.core import torch_threads


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    with torch_threads(1):
        yield
