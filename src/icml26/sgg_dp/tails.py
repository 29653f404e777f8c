"""Logarithms of the regularised incomplete gamma and (symmetric) beta functions, deep in their
tails, for the privacy profile in log space (spec §2.3; issue 17: δ down to 1e-300).

scipy's ``gammainc``/``gammaincc``/``betainc`` are relative-accurate until their result underflows
near 1e-308. Below ``LOG_SAFE`` we switch to the classical expansions written in log space
(Numerical Recipes §6.2, §6.4): the series of P(a, z) for z < a + 1, the continued fraction of
Q(a, z) for z > a + 1, and the continued fraction of I_x(a, b) for x < (a + 1)/(a + b + 2), all
with the prefactor z^a e^{−z}/Γ(a) or x^a (1 − x)^b/(a B(a, b)) taken as a logarithm and the
sums/fractions (which are O(1)) evaluated by modified Lentz. Where the tail is tiny the
expansions converge fast; elsewhere scipy's value is used.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["log_beta_cdf", "log_gamma_cdf", "log_gamma_cdf_of_log", "log_gamma_sf"]

# Below this value scipy's result is replaced by the log-space expansion.
SAFE = 1e-280
MAX_TERMS = 5000
TINY = 1e-300
EPS = 1e-16
LOG_Z_TINY = -200.0


def _lentz_done(delta: np.ndarray) -> np.ndarray:
    return np.abs(delta - 1.0) < EPS


def _log_gamma_cf(a: float, z: np.ndarray) -> np.ndarray:
    """log Q(a, z) by the continued fraction (z > a + 1)."""
    b = z + 1.0 - a
    c = np.full_like(z, 1.0 / TINY)
    d = 1.0 / b
    h = d.copy()
    active = np.ones(z.shape, dtype=bool)
    for i in range(1, MAX_TERMS):
        an = -i * (i - a)
        b = b + 2.0
        d_new = an * d + b
        d_new = np.where(np.abs(d_new) < TINY, TINY, d_new)
        c_new = b + an / c
        c_new = np.where(np.abs(c_new) < TINY, TINY, c_new)
        d_new = 1.0 / d_new
        delta = d_new * c_new
        h = np.where(active, h * delta, h)
        d, c = np.where(active, d_new, d), np.where(active, c_new, c)
        active &= ~_lentz_done(delta)
        if not active.any():
            break
    return -z + a * np.log(z) - special.gammaln(a) + np.log(h)


def _log_gamma_series(a: float, z: np.ndarray) -> np.ndarray:
    """log P(a, z) by its power series (z < a + 1)."""
    term = np.full_like(z, 1.0 / a)
    total = term.copy()
    for n in range(1, MAX_TERMS):
        term = term * z / (a + n)
        total = total + term
        if np.all(term < total * EPS):
            break
    return -z + a * np.log(z) - special.gammaln(a) + np.log(total)


def log_gamma_sf(a: float, z: np.ndarray) -> np.ndarray:
    """log Q(a, z) = log Γ(a, z)/Γ(a), the regularised upper incomplete gamma, for any z >= 0.

    Examples
    --------
    >>> round(float(log_gamma_sf(1.0, np.array(2000.0))), 6)  # Q(1, z) = e^{-z}
    -2000.0
    """
    shape = np.shape(z)
    z = np.asarray(z, dtype=float).ravel()
    q = special.gammaincc(a, z)
    out = np.log(np.where(q > 0, q, 1.0))
    deep = (q < SAFE) & (z > a + 1) & np.isfinite(z)
    if deep.any():
        out[deep] = _log_gamma_cf(a, z[deep])
    return np.where(np.isinf(z), -np.inf, out).reshape(shape)


def log_gamma_cdf(a: float, z: np.ndarray) -> np.ndarray:
    """log P(a, z), the regularised lower incomplete gamma, for any z >= 0 (−inf at z = 0).

    Examples
    --------
    >>> round(float(log_gamma_cdf(1.0, np.array(1e-200))), 6)  # P(1, z) = 1 − e^{-z} ≈ z
    -460.517019
    """
    shape = np.shape(z)
    z = np.asarray(z, dtype=float).ravel()
    pz = special.gammainc(a, z)
    out = np.log(np.where(pz > 0, pz, 1.0))
    deep = (pz < SAFE) & (z < a + 1) & (z > 0)
    if deep.any():
        out[deep] = _log_gamma_series(a, z[deep])
    return np.where(z <= 0, -np.inf, out).reshape(shape)


def log_gamma_cdf_of_log(a: float, log_z: np.ndarray) -> np.ndarray:
    """log P(a, z) given ln z, also where z itself underflows (ln z < ``LOG_Z_TINY``).

    For z < e^{-200}, P(a, z) = z^a e^{−z} (1 + z/(a + 1) + ...)/Γ(a + 1) = z^a/Γ(a + 1) to
    relative ~1e-87, so ln P = a ln z − ln Γ(a + 1).

    Examples
    --------
    >>> round(float(log_gamma_cdf_of_log(1.0, np.array(-2000.0))), 6)  # P(1, z) ≈ z
    -2000.0
    """
    log_z = np.asarray(log_z, dtype=float)
    tiny = log_z < LOG_Z_TINY
    with np.errstate(over="ignore"):
        direct = log_gamma_cdf(a, np.exp(np.where(tiny, 0.0, log_z)))
    return np.where(tiny, a * log_z - special.gammaln(a + 1), direct)


def _log_beta_cf(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """log I_x(a, b) by the continued fraction (x < (a + 1)/(a + b + 2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < TINY, TINY, d)
    h = d.copy()
    active = np.ones(x.shape, dtype=bool)
    for m in range(1, MAX_TERMS):
        m2 = 2 * m
        hh = h
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < TINY, TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < TINY, TINY, c)
            hh = hh * d * c
        delta = hh / h
        h = np.where(active, hh, h)
        active &= ~_lentz_done(delta)
        if not active.any():
            break
    log_front = a * np.log(x) + b * np.log1p(-x) - np.log(a) - special.betaln(a, b)
    return log_front + np.log(h)


def log_beta_cdf(x: np.ndarray, xc: np.ndarray, a: float) -> np.ndarray:
    """log I_x(a, a) for the symmetric Beta(a, a) law, given x and xc = 1 − x (both in [0, 1]).

    Both halves are passed so that neither is formed by a cancelling subtraction: for x <= ½
    the lower tail is computed directly, above ½ as log1p(−I_{xc}(a, a)).

    Examples
    --------
    >>> x = np.array(1e-200)
    >>> round(float(log_beta_cdf(x, 1 - x, 1.0)), 6)  # Beta(1, 1) is uniform: I_x = x
    -460.517019
    """
    x, xc = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(xc, dtype=float))
    shape = x.shape
    x, xc = x.ravel(), xc.ravel()
    small = np.where(x <= 0.5, x, xc)  # the argument of the tail that is computed
    value = special.betainc(a, a, small)
    log_small = np.log(np.where(value > 0, value, 1.0))
    deep = (value < SAFE) & (small > 0)
    if deep.any():
        log_small[deep] = _log_beta_cf(a, a, small[deep])
    log_small = np.where(small <= 0, -np.inf, log_small)
    with np.errstate(divide="ignore"):
        out = np.where(x <= 0.5, log_small, np.log1p(-np.exp(log_small)))
    return out.reshape(shape)
