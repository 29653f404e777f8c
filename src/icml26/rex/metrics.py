"""Metrics for the reproduction: round-trip errors, observed order, sample-quality distances."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from icml26.core import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    torch_generator,
)

if TYPE_CHECKING:
    from icml26.rex.solver import RexSolver

__all__ = ["mmd_rbf", "observed_order", "roundtrip_error", "roundtrip_errors", "sliced_wasserstein"]


def roundtrip_error(a: torch.Tensor, b: torch.Tensor, kind: str = "mse") -> float:
    """Mean squared (``"mse"``) or max-abs (``"max"``) difference of two same-shape tensors.

    Examples
    --------
    >>> roundtrip_error(torch.zeros(2), torch.tensor([0.0, 2.0]))
    2.0
    """
    check_one_of("kind", kind, ("mse", "max"), owner="roundtrip_error")
    check_tensor("a", a, owner="roundtrip_error")
    check_tensor("b", b, owner="roundtrip_error")
    if a.shape != b.shape:
        raise ValueError(
            f"roundtrip_error: a and b must share a shape; got {tuple(a.shape)} vs "
            f"{tuple(b.shape)}."
        )
    if a.numel() == 0:
        raise ValueError("roundtrip_error: a and b must not be empty.")
    diff = (a.double() - b.double()).abs()
    return float(diff.pow(2).mean() if kind == "mse" else diff.max())


def roundtrip_errors(
    solver: RexSolver, data: torch.Tensor, noise: torch.Tensor, kind: str = "max"
) -> tuple[float, float]:
    """Errors of both round trips of a reversible solver on its own grid.

    Returns ``(data_error, noise_error)``: data -> noise -> data (``encode`` then ``decode``)
    against ``data``, and noise -> data -> noise (``decode`` then ``backward_solve``) against
    ``noise``, the worse of the two coupled states. ``kind`` as in :func:`roundtrip_error`.

    Examples
    --------
    >>> from icml26.rex import GaussianData, RexSolver, VPSchedule
    >>> schedule = VPSchedule()
    >>> model = GaussianData().denoiser(schedule)
    >>> solver = RexSolver(model, schedule, tableau="rk4", model_output="data", n_steps=10)
    >>> g = torch.Generator().manual_seed(0)
    >>> data, noise = (torch.randn(8, 2, dtype=torch.float64, generator=g) for _ in range(2))
    >>> [err < 1e-10 for err in roundtrip_errors(solver, data, noise)]
    [True, True]
    """
    from icml26.rex.solver import RexSolver

    owner = "roundtrip_errors"
    if not isinstance(solver, RexSolver):
        raise TypeError(f"{owner}: solver must be a RexSolver; got {type(solver).__name__}.")
    check_one_of("kind", kind, ("mse", "max"), owner=owner)
    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    data_back, _ = solver.decode(x_T, x_T_hat, ts)
    x_0, x_0_hat = solver.decode(noise, noise.clone(), ts)
    noise_back, noise_back_hat = solver.backward_solve(x_0, x_0_hat, ts)
    data_err = roundtrip_error(data_back, data, kind)
    noise_err = max(
        roundtrip_error(noise_back, noise, kind), roundtrip_error(noise_back_hat, noise, kind)
    )
    return data_err, noise_err


def observed_order(errors: Sequence[float], n_steps: Sequence[int]) -> float:
    """Convergence order: minus the least-squares slope of log(error) against log(N).

    Examples
    --------
    >>> round(observed_order([1e-2, 2.5e-3, 6.25e-4], [10, 20, 40]), 6)
    2.0
    """
    e = check_array("errors", errors, owner="observed_order", ndim=1)
    n = check_array("n_steps", n_steps, owner="observed_order", ndim=1)
    if e.shape != n.shape or e.size < 2 or np.any(e <= 0) or np.any(n <= 0):
        raise ValueError(
            "observed_order: errors and n_steps need >= 2 positive entries, one error per step "
            f"count; got {e.size} errors and {n.size} step counts."
        )
    if np.unique(n).size < 2:
        raise ValueError("observed_order: n_steps must hold at least two different step counts.")
    slope = np.polyfit(np.log(n), np.log(e), 1)[0]
    return float(-slope)


def sliced_wasserstein(
    x: torch.Tensor, y: torch.Tensor, n_projections: int = 256, seed: Seed = 0
) -> float:
    """Sliced 2-Wasserstein distance between two equal-size point clouds of shape (n, d)."""
    owner = "sliced_wasserstein"
    check_tensor("x", x, owner=owner, ndim=2, finite=True)
    check_tensor("y", y, owner=owner, ndim=2, finite=True)
    if x.shape != y.shape or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(
            f"{owner}: x and y must be non-empty (n, d) clouds of one shape; got "
            f"{tuple(x.shape)}, {tuple(y.shape)}."
        )
    n_projections = check_positive_int("n_projections", n_projections, owner=owner, maximum=10**5)
    g = torch_generator(seed)
    dirs = torch.randn(x.shape[1], n_projections, generator=g, dtype=torch.float64)
    dirs = dirs / dirs.norm(dim=0, keepdim=True)
    px = torch.sort(x.double() @ dirs, dim=0).values  # (n, n_projections)
    py = torch.sort(y.double() @ dirs, dim=0).values
    return float((px - py).pow(2).mean().sqrt())


def mmd_rbf(x: torch.Tensor, y: torch.Tensor, bandwidth: float = 1.0) -> float:
    """Unbiased squared MMD with an RBF kernel exp(-|a - b|^2 / (2 bandwidth^2))."""
    owner = "mmd_rbf"
    check_tensor("x", x, owner=owner, ndim=2, finite=True)
    check_tensor("y", y, owner=owner, ndim=2, finite=True)
    if x.shape[0] < 2 or y.shape[0] < 2 or x.shape[1] != y.shape[1] or x.shape[1] == 0:
        raise ValueError(
            f"{owner}: x and y must be (n, d) and (m, d) with n, m >= 2 and d >= 1; got "
            f"{tuple(x.shape)}, {tuple(y.shape)}."
        )
    if x.shape[0] * y.shape[0] > 10**8 or x.shape[0] ** 2 > 10**8 or y.shape[0] ** 2 > 10**8:
        raise ValueError(f"{owner}: x and y are too large for the O(n m) kernel (> 1e8 pairs).")
    bandwidth = check_in_interval(
        "bandwidth", bandwidth, low=0.0, high=1e150, closed="right", owner=owner
    )
    x, y = x.double(), y.double()

    def k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-torch.cdist(a, b).pow(2) / (2 * bandwidth**2))

    n, m = x.shape[0], y.shape[0]
    kxx = (k(x, x).sum() - n) / (n * (n - 1))
    kyy = (k(y, y).sum() - m) / (m * (m - 1))
    return float(kxx + kyy - 2 * k(x, y).mean())
