"""One intra-op thread for this system's tests: tiny convolutions on a shared 2-core machine run
several times faster on one thread than on two (see experiments/common.py, RESOURCES)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
