"""Scoped control of torch's intra-op thread count.

Small tensor workloads (tabular problems, toy MLPs, element-wise fake quantisation) run several
times faster on one thread than on two when the cores are shared, because of OpenMP
synchronisation; experiments opt in with ``with torch_threads(1): ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from icml26.core.validation import check_positive_int

__all__ = ["torch_threads"]


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(n)`` and restore the previous count after.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    import torch

    n = check_positive_int("n", n, owner="torch_threads")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
