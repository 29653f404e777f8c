"""The analytic Gaussian mechanism (Balle & Wang, ICML 2018): exact δ(ε) and the smallest σ.

For N(0, s² I) noise and ℓ2 sensitivity Δ,
δ(ε) = Φ(Δ/(2s) − εs/Δ) − e^ε Φ(−Δ/(2s) − εs/Δ), strictly decreasing in s.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from icml26.core import check_in_interval

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_sigma"]


def analytic_gaussian_delta(eps: float, std: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism with noise standard deviation ``std``.

    Parameters
    ----------
    eps
        Privacy parameter ε >= 0.
    std
        Per-coordinate noise standard deviation s > 0.
    sensitivity
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        Φ(Δ/(2s) − εs/Δ) − e^ε Φ(−Δ/(2s) − εs/Δ).

    Raises
    ------
    ValueError
        If a parameter is out of range.

    Examples
    --------
    >>> round(analytic_gaussian_delta(0.0, 1.0), 6)  # TV distance of N(0,1), N(1,1)
    0.382925
    """
    owner = "analytic_gaussian_delta"
    eps = check_in_interval("eps", eps, low=0.0, owner=owner)
    std = check_in_interval("std", std, low=0.0, closed="neither", owner=owner)
    sensitivity = check_in_interval(
        "sensitivity", sensitivity, low=0, closed="neither", owner=owner
    )
    a = sensitivity / (2 * std)
    b = eps * std / sensitivity
    # e^ε Φ(−a − b) in log space: it can underflow while the difference is still meaningful.
    return float(special.ndtr(a - b) - np.exp(eps + special.log_ndtr(-a - b)))


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest noise standard deviation s with δ(ε) <= ``delta`` (analytic Gaussian mechanism).

    Parameters
    ----------
    eps
        Privacy parameter ε >= 0.
    delta
        Target δ in (0, 1).
    sensitivity
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        The calibrated standard deviation s (the SGG parameter is σ = √2 s).

    Raises
    ------
    ValueError
        If ``eps`` is negative or infinite, ``delta`` is not in (0, 1) or ``sensitivity <= 0``.

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5)
    >>> round(s, 3)
    3.731
    """
    owner = "analytic_gaussian_sigma"
    eps = check_in_interval("eps", eps, low=0.0, high=math.inf, closed="left", owner=owner)
    delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=owner)
    sensitivity = check_in_interval(
        "sensitivity", sensitivity, low=0, closed="neither", owner=owner
    )

    def excess(log_s: float) -> float:
        return analytic_gaussian_delta(eps, math.exp(log_s), sensitivity) - delta

    lo, hi = math.log(sensitivity) - 1.0, math.log(sensitivity) + 1.0
    while excess(lo) <= 0:
        lo -= 1.0
    while excess(hi) > 0:
        hi += 1.0
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12))
