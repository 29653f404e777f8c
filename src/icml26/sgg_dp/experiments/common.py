"""Pieces the SGG experiments share: the paper reference, resources, the baselines' MSE."""

from __future__ import annotations

from icml26.core import Resources

PAPER = (
    "Wei, Bienstock & Polychroniadou, Asymptotic Optimality of the High-Dimensional Gaussian "
    "Mechanism and Improved Low-Dimensional Mechanisms for DP, ICML 2026 (arXiv:2606.08681)"
)
RESOURCES = Resources(cpus=1)  # numpy / scipy quadrature: no torch threads to spend


def rel_err(value: float, reference: float) -> float:
    """|value − reference| / reference (the absolute error where the reference is 0)."""
    return abs(value - reference) / reference if reference > 0 else abs(value)


def baselines(eps: float, delta: float, T: int) -> tuple[float, float]:
    """MSE of the analytic Gaussian mechanism and of the calibrated ℓ2 mechanism at (ε, δ, T)."""
    from icml26.sgg_dp import analytic_gaussian_sigma, l2_member

    gauss = T * analytic_gaussian_sigma(eps, delta) ** 2
    return gauss, l2_member(T).calibrate(eps, delta).mse()
