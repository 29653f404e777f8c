"""Checks the systems' stand-in tests share: "retraining with the recorded command gives the
shipped weights", on any CPU.

On the machine that trained a stand-in the retrained weights are equal bit for bit. On another
x86 CPU (AVX-512 instead of AVX2 kernels, found 2026-12-08) torch, MKL and oneDNN sum in another
order: evaluation differs in the 7th-8th digit and training amplifies that round-off step by
step (quantised training flips rounding boundaries and data-dependent index choices). So the
weights are compared by their relative L2 distance over the floating tensors, against a bar set
well below the distance between two trainings that differ only in their seed, and metrics with a
relative tolerance.
"""

from collections.abc import Mapping

import torch

# evaluation of fixed weights: round-off of another CPU's kernels only
EVALUATION_RTOL = 1e-5


def relative_distance(trained: Mapping[str, torch.Tensor], shipped: Mapping[str, torch.Tensor]):
    """‖trained − shipped‖ / ‖shipped‖ over every floating tensor (float64), after checking that
    both hold the same names, shapes and dtypes (integer buffers, e.g. chosen channels, may differ
    with the round-off)."""
    assert trained.keys() == shipped.keys()
    diff = norm = torch.zeros((), dtype=torch.float64)
    for name, value in trained.items():
        other = shipped[name]
        assert value.shape == other.shape and value.dtype == other.dtype, name
        if not value.is_floating_point():
            continue
        diff = diff + (value.double() - other.double()).square().sum()
        norm = norm + other.double().square().sum()
    return float(diff.sqrt() / norm.sqrt())


def assert_retrained(
    trained: Mapping[str, torch.Tensor], shipped: Mapping[str, torch.Tensor], max_distance: float
) -> None:
    """The retrained weights are the shipped ones up to another CPU's round-off grown through
    training: relative L2 distance at most ``max_distance`` (0 on the training machine)."""
    distance = relative_distance(trained, shipped)
    assert distance <= max_distance, (
        f"retrained weights are {distance:.3g} (relative L2) from the shipped ones; "
        f"round-off alone stays under {max_distance}"
    )
