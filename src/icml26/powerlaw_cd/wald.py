"""Granger's Wald test in a VAR(p): do the lags of the driver columns enter the target's equation?

For Y = [y, d_1, ..., d_k] (n × (1 + k)) the VAR(p) with a constant is fitted by OLS. Only the
target's equation matters for H0 "every lag of d_1..d_k has a zero coefficient in y's equation"
(2p restrictions for k = 2), so with that equation's coefficients β, its residual variance
σ² = SSR / (n - p - (1 + k)p - 1) and (Z'Z)^{-1} of the lagged design Z, the statistic is
W = β_r' [σ² (Z'Z)^{-1}_rr]^{-1} β_r ~ χ²(kp). This is exactly statsmodels'
``VAR(Y).fit(maxlags=p).test_causality(caused=[0], causing=[1..k], kind="wald")``, at a
fraction of its cost (no other equations, no result objects).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats

from icml26.core import check_array, check_positive_int

__all__ = ["WaldResult", "lagged_design", "var_wald_test"]


@dataclass(frozen=True)
class WaldResult:
    """Outcome of one Wald test.

    Attributes
    ----------
    statistic
        The χ² statistic W.
    df
        Degrees of freedom (number of restrictions, k·p).
    pvalue
        P(χ²(df) >= W).
    """

    statistic: float
    df: int
    pvalue: float


def lagged_design(Y: np.ndarray, lags: int) -> np.ndarray:
    """The VAR regressors [1, Y_{t-1}, ..., Y_{t-p}] for t = p..n-1, statsmodels' column order.

    Parameters
    ----------
    Y
        Array of shape (n, m).
    lags
        The lag order p.

    Returns
    -------
    numpy.ndarray
        Array of shape (n - p, 1 + m p); column 1 + (l - 1) m + c holds column c at lag l.

    Raises
    ------
    TypeError, ValueError
        If ``Y`` is not a 2-D numeric array or ``lags`` not an integer in ``[0, n]``.

    Examples
    --------
    >>> import numpy as np
    >>> lagged_design(np.arange(8.0).reshape(4, 2), 1)
    array([[1., 0., 1.],
           [1., 2., 3.],
           [1., 4., 5.]])
    """
    Y = check_array("Y", Y, owner="lagged_design", ndim=2, finite=False)
    lags = check_positive_int("lags", lags, owner="lagged_design", minimum=0, maximum=Y.shape[0])
    return _lagged_design(Y, lags)


def _lagged_design(Y: np.ndarray, lags: int) -> np.ndarray:
    n = Y.shape[0]
    blocks = [np.ones((n - lags, 1))]
    blocks += [Y[lags - lag : n - lag] for lag in range(1, lags + 1)]  # (n - p, m) each lag
    return np.hstack(blocks)


def var_wald_test(target: np.ndarray, drivers: np.ndarray, lags: int) -> WaldResult:
    """Wald test that the drivers' lags do not enter the target's equation of a VAR(``lags``).

    Parameters
    ----------
    target
        Array of shape (n,): the caused series (first VAR column).
    drivers
        Array of shape (k, n): the causing series (VAR columns 2..k+1).
    lags
        Fixed lag order p (no information criterion).

    Returns
    -------
    WaldResult
        χ² statistic, df = k·p and p-value.

    Raises
    ------
    TypeError, ValueError
        If ``target`` is not 1-D numeric, ``drivers`` not (k, n) numeric with k >= 1, or
        ``lags`` not an integer >= 1.
    numpy.linalg.LinAlgError
        (A ``ValueError``.) If a series is not finite, the design is rank deficient or it leaves
        no residual degree of freedom.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> d = rng.standard_normal(400)
    >>> y = np.r_[0.0, 0.8 * d[:-1]] + 0.1 * rng.standard_normal(400)
    >>> var_wald_test(y, d[None], lags=2).pvalue < 1e-6
    True
    """
    owner = "var_wald_test"
    target = check_array("target", target, owner=owner, ndim=1, finite=False)
    drivers = check_array("drivers", drivers, owner=owner, ndim=2, finite=False)
    if drivers.shape[0] < 1 or drivers.shape[1] != target.shape[0]:
        raise ValueError(
            f"{owner}: drivers must have shape (k >= 1, n = {target.shape[0]}) like target; "
            f"got {drivers.shape}."
        )
    lags = check_positive_int("lags", lags, owner=owner, maximum=max(1, target.shape[0]))
    return _var_wald_test(target, drivers, lags)


def _var_wald_test(target: np.ndarray, drivers: np.ndarray, lags: int) -> WaldResult:
    Y = np.column_stack([target, *drivers])  # (n, 1 + k)
    if not np.all(np.isfinite(Y)):
        raise np.linalg.LinAlgError(
            "target and drivers must be finite; got NaN/inf (e.g. windows that could not be "
            "fitted)."
        )
    m = Y.shape[1]
    Z = _lagged_design(Y, lags)  # (n - p, 1 + m p)
    y = target[lags:]
    dof = Z.shape[0] - Z.shape[1]
    if dof <= 0:
        raise np.linalg.LinAlgError(
            f"VAR(lags={lags}) of target and {m - 1} drivers needs more than {Z.shape[1]} "
            f"samples after the lags; got {Z.shape[0]}."
        )
    # Centring and scaling the lag columns leaves their coefficients' Wald statistic unchanged
    # (the constant absorbs the shift) and keeps the normal equations well conditioned.
    mean, scale = Z[:, 1:].mean(axis=0), Z[:, 1:].std(axis=0)
    if np.any(scale <= 1e-12 * np.maximum(np.abs(mean), 1.0)):
        raise np.linalg.LinAlgError(
            f"VAR(lags={lags}) design has a constant lag column (a constant target or driver)."
        )
    Z[:, 1:] = (Z[:, 1:] - mean) / scale
    try:
        factor = linalg.cho_factor(Z.T @ Z)
    except linalg.LinAlgError as err:
        raise np.linalg.LinAlgError(
            f"VAR(lags={lags}) design of target and drivers is rank deficient."
        ) from err
    beta = linalg.cho_solve(factor, Z.T @ y)
    resid = y - Z @ beta
    sigma2 = resid @ resid / dof
    # columns of the drivers at every lag
    restricted = np.array([1 + lag * m + c for lag in range(lags) for c in range(1, m)])
    zz_inv_rr = linalg.cho_solve(factor, np.eye(Z.shape[1])[:, restricted])[restricted]
    b = beta[restricted]
    statistic = float(b @ np.linalg.solve(sigma2 * zz_inv_rr, b))
    df = len(restricted)
    return WaldResult(statistic, df, float(stats.chi2.sf(statistic, df)))
