"""Linear stability of the reversible (McCallum-Foster) coupling of explicit Euler.

On dy/dvarsigma = lam y without the exponential transform, one coupled Euler step with z = h lam,
x' = zeta x + (1 - zeta + z) x_hat and x_hat' = x_hat + z x', is the linear map

    [[zeta, 1 - zeta + z], [z zeta, 1 + z (1 - zeta + z)]],

with det = zeta and trace = 1 + zeta + z (1 - zeta + z). On the real axis it is stable iff
-(1 - zeta) < z < 0; with zeta = 1 it is unstable for every real z != 0. This is why Rex integrates
the stiff linear part of the diffusion drift exactly and couples only the nonlinear remainder.
"""

from __future__ import annotations

import cmath
import numbers

import numpy as np

from icml26.core import check_in_interval

__all__ = ["coupled_euler_matrix", "spectral_radius", "stable_interval"]


def _check_z(z: complex, owner: str) -> complex:
    if isinstance(z, bool) or not isinstance(z, numbers.Complex):
        raise TypeError(f"{owner}: z must be a real or complex number; got {z!r}.")
    z = complex(z)
    if not (cmath.isfinite(z) and abs(z) <= 1e150):
        raise ValueError(f"{owner}: z must be finite (|z| <= 1e150); got {z!r}.")
    return z


def coupled_euler_matrix(z: complex, zeta: float) -> np.ndarray:
    """The 2x2 amplification matrix of coupled Euler at z = h lam.

    Examples
    --------
    >>> round(float(np.linalg.det(coupled_euler_matrix(-0.5, 0.9)).real), 12)
    0.9
    """
    zeta = check_in_interval(
        "zeta", zeta, low=0.0, high=1.0, closed="right", owner="coupled_euler_matrix"
    )
    z = _check_z(z, "coupled_euler_matrix")
    g = 1 - zeta + z
    return np.array([[zeta, g], [z * zeta, 1 + z * g]], dtype=complex)


def spectral_radius(z: complex, zeta: float) -> float:
    """Largest eigenvalue modulus of :func:`coupled_euler_matrix`."""
    return float(np.abs(np.linalg.eigvals(coupled_euler_matrix(z, zeta))).max())


def stable_interval(zeta: float) -> tuple[float, float]:
    """The open real interval of z where the coupled Euler iteration is stable: (-(1 - zeta), 0)."""
    zeta = check_in_interval(
        "zeta", zeta, low=0.0, high=1.0, closed="right", owner="stable_interval"
    )
    return -(1.0 - zeta), 0.0
