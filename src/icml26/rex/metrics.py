"""Metrics for the reproduction: round-trip error, observed order, sample-quality distances."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from icml26.core import Seed, check_one_of, torch_generator

__all__ = ["mmd_rbf", "observed_order", "roundtrip_error", "sliced_wasserstein"]


def roundtrip_error(a: torch.Tensor, b: torch.Tensor, kind: str = "mse") -> float:
    """Mean squared (``"mse"``) or max-abs (``"max"``) difference of two same-shape tensors.

    Example
    -------
    >>> roundtrip_error(torch.zeros(2), torch.tensor([0.0, 2.0]))
    2.0
    """
    check_one_of("kind", kind, ("mse", "max"), owner="roundtrip_error")
    if a.shape != b.shape:
        raise ValueError(f"roundtrip_error: shapes differ: {tuple(a.shape)} vs {tuple(b.shape)}.")
    diff = (a.double() - b.double()).abs()
    return float(diff.pow(2).mean() if kind == "mse" else diff.max())


def observed_order(errors: Sequence[float], n_steps: Sequence[int]) -> float:
    """Convergence order: minus the least-squares slope of log(error) against log(N).

    Example
    -------
    >>> round(observed_order([1e-2, 2.5e-3, 6.25e-4], [10, 20, 40]), 6)
    2.0
    """
    e, n = np.asarray(errors, dtype=float), np.asarray(n_steps, dtype=float)
    if e.shape != n.shape or e.size < 2 or np.any(e <= 0):
        raise ValueError("observed_order: need >= 2 positive errors, one per step count.")
    slope = np.polyfit(np.log(n), np.log(e), 1)[0]
    return float(-slope)


def sliced_wasserstein(
    x: torch.Tensor, y: torch.Tensor, n_projections: int = 256, seed: Seed = 0
) -> float:
    """Sliced 2-Wasserstein distance between two equal-size point clouds of shape (n, d)."""
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"sliced_wasserstein: need two (n, d) clouds; got {x.shape}, {y.shape}.")
    g = torch_generator(seed)
    dirs = torch.randn(x.shape[1], n_projections, generator=g, dtype=torch.float64)
    dirs = dirs / dirs.norm(dim=0, keepdim=True)
    px = torch.sort(x.double() @ dirs, dim=0).values  # (n, n_projections)
    py = torch.sort(y.double() @ dirs, dim=0).values
    return float((px - py).pow(2).mean().sqrt())


def mmd_rbf(x: torch.Tensor, y: torch.Tensor, bandwidth: float = 1.0) -> float:
    """Unbiased squared MMD with an RBF kernel exp(-|a - b|^2 / (2 bandwidth^2))."""
    x, y = x.double(), y.double()

    def k(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-torch.cdist(a, b).pow(2) / (2 * bandwidth**2))

    n, m = x.shape[0], y.shape[0]
    kxx = (k(x, x).sum() - n) / (n * (n - 1))
    kyy = (k(y, y).sum() - m) / (m * (m - 1))
    return float(kxx + kyy - 2 * k(x, y).mean())
