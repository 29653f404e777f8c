"""Power-law spectral features of sliding windows (PLaCy's ``fft_with_fit``, vectorised).

Each window's raw periodogram P_m = |F_m|^2 (no detrending, taper or normalisation) over the bins
m = 1..⌊W/2⌋-1 (f_m = m/W, DC dropped) is fitted by least squares in log10-log10,
log10 P_m = a + β log10 f_m, and gives the exponent λ = -β and the log-amplitude A = a.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from icml26.core import check_array, check_in_interval, check_positive_int

__all__ = [
    "Series",
    "as_series",
    "feature_frame",
    "n_windows",
    "powerlaw_features",
    "powerlaw_features_reference",
    "read_series",
    "window_frequencies",
]


@dataclass(frozen=True)
class Series:
    """Series read by :func:`read_series`: the values and, for a labelled input, its labels.

    Attributes
    ----------
    X
        Float64 array (N, T), one row per variable.
    names
        The N variable names (a DataFrame's columns, tigramite's ``var_names``), or None for an
        array.
    index
        The T time labels of a pandas DataFrame (its index), else None.
    """

    X: np.ndarray
    names: tuple[Hashable, ...] | None = None
    index: pd.Index | None = None


def _tigramite_frame() -> type | None:
    """tigramite's DataFrame class if tigramite is imported already (else nothing can be one)."""
    return getattr(sys.modules.get("tigramite.data_processing"), "DataFrame", None)


def _unique_names(names: tuple, *, owner: str) -> tuple:
    if len(set(names)) != len(names):
        raise ValueError(f"{owner}: X must have distinct variable names; got {list(names)}.")
    return names


def read_series(X: object, *, owner: str, min_vars: int = 2) -> Series:
    """Read ``X`` (an (N, T) array, a T×N pandas DataFrame or a tigramite DataFrame).

    An array keeps its (N, T) layout, one row per variable, and must be wider than tall
    (T > N): a T × N array, or a square one, is refused with a message rather than read as T
    variables (time-series causal discovery needs more time points than variables; issue 49).
    A pandas DataFrame has the layout of
    pandas, statsmodels and tigramite: T rows (time) × N named columns; it is transposed, and
    its column names and index are kept. A tigramite ``DataFrame`` must hold one dataset
    without mask or missing values; its ``var_names`` are kept.

    Parameters
    ----------
    X
        The series.
    owner
        Name used in error messages.
    min_vars
        Smallest accepted N.

    Returns
    -------
    Series
        ``X`` as float64 (N, T), with the names and the time index when it had them.

    Raises
    ------
    TypeError
        If ``X`` is not numeric (a DataFrame column of strings, for instance).
    ValueError
        If ``X`` is not 2-D, has fewer than ``min_vars`` variables, holds NaN/inf, repeats a
        column name, or is a tigramite DataFrame with a mask, missing values or several datasets.

    Examples
    --------
    >>> import pandas as pd
    >>> s = read_series(pd.DataFrame({"a": [1.0, 2, 3], "b": [4.0, 5, 6]}), owner="demo")
    >>> s.X.shape, s.names
    ((2, 3), ('a', 'b'))
    """
    tigramite_frame = _tigramite_frame()
    if isinstance(X, pd.DataFrame):
        try:
            values = X.to_numpy(dtype=np.float64)  # (T, N)
        except (TypeError, ValueError):
            kinds = sorted({str(dtype) for dtype in X.dtypes})
            raise TypeError(
                f"{owner}: X must hold numbers only (one numeric column per variable); "
                f"got column dtypes {kinds}."
            ) from None
        names = _unique_names(tuple(X.columns), owner=owner)
        return Series(_as_series(values.T, owner, min_vars, "columns"), names, X.index)
    if tigramite_frame is not None and isinstance(X, tigramite_frame):
        if len(X.values) != 1 or X.mask is not None or X.missing_flag is not None:
            raise ValueError(
                f"{owner}: a tigramite DataFrame X must hold one dataset without mask or "
                f"missing_flag; got {len(X.values)} datasets, mask "
                f"{'set' if X.mask is not None else 'None'}, missing_flag {X.missing_flag!r}."
            )
        (values,) = X.values.values()  # (T, N)
        names = _unique_names(tuple(X.var_names), owner=owner)
        return Series(_as_series(np.asarray(values).T, owner, min_vars, "columns"), names)
    return Series(_as_series(X, owner, min_vars, "rows"))


def _as_series(X: object, owner: str, min_vars: int, axis: str) -> np.ndarray:
    arr = check_array("X", X, owner=owner, dtype=np.float64)
    # core's ndim check would not say which axis is which
    if arr.ndim != 2:
        raise ValueError(
            f"{owner}: X must be 2-D of shape (N, T) (one row per variable), or a DataFrame of "
            f"shape (T, N) (one column per variable); got shape {arr.shape}."
        )
    if arr.shape[0] < min_vars:
        raise ValueError(
            f"{owner}: X must have N >= {min_vars} variables ({axis}); got N = {arr.shape[0]}."
        )
    if axis == "rows" and arr.shape[0] >= arr.shape[1]:
        # an array is (N, T); a T x N array (pandas' and tigramite's layout) would otherwise
        # read as T variables of N time points and fail later as "too short"
        shape = "square" if arr.shape[0] == arr.shape[1] else "taller than wide"
        raise ValueError(
            f"{owner}: an array X is (N, T), one row per variable, with T > N time points; got "
            f"shape {arr.shape} ({shape}), which reads as N = {arr.shape[0]} variables of "
            f"T = {arr.shape[1]} points. If its rows are time points, pass X.T, or a pandas "
            "DataFrame (T rows x N named columns), whose orientation is unambiguous."
        )
    return arr


def as_series(X: object, *, owner: str, min_vars: int = 2) -> np.ndarray:
    """Return ``X`` as a finite float64 array of shape (N, T) with N >= ``min_vars``.

    Parameters
    ----------
    X
        Array-like of shape (N, T), one row per variable, or a DataFrame of shape (T, N) (see
        :func:`read_series`).
    owner
        Name used in error messages.
    min_vars
        Smallest accepted N.

    Returns
    -------
    numpy.ndarray
        The float64 array (a copy only when a conversion was needed).

    Raises
    ------
    TypeError
        If ``X`` is not numeric.
    ValueError
        If ``X`` is not 2-D, has fewer than ``min_vars`` variables, or holds NaN/inf.

    Examples
    --------
    >>> as_series([[1, 2, 3], [4, 5, 6]], owner="demo").shape
    (2, 3)
    """
    return read_series(X, owner=owner, min_vars=min_vars).X


def feature_frame(
    values: np.ndarray, series: Series, window: int, stride: int
) -> np.ndarray | pd.DataFrame:
    """Features (N, n_w) of a pandas input as a DataFrame: n_w rows × the input's columns.

    Row k is labelled by the input's index at the last sample of window k, t = ks + W - 1 (the
    feature is known from that time on). An array input (no index) is returned unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> s = read_series(pd.DataFrame({"a": range(6), "b": range(6)}), owner="demo")
    >>> feature_frame(np.zeros((2, 3)), s, window=4, stride=1).index.tolist()
    [3, 4, 5]
    """
    if series.index is None:
        return values
    index = series.index[window - 1 :: stride][: values.shape[1]]
    return pd.DataFrame(values.T, index=index, columns=pd.Index(series.names))


MAX_WINDOW = 2**24  # window_frequencies: samples per window (a 128 MiB frequency grid)


def n_windows(length: int, window: int, stride: int) -> int:
    """Number of windows n_w = ⌊(T - W)/s⌋ + 1 (0 when T < W).

    Raises
    ------
    TypeError, ValueError
        If ``length`` is not an integer >= 0 or ``window``/``stride`` not an integer >= 1.

    Examples
    --------
    >>> n_windows(5000, 50, 1)
    4951
    """
    length = check_positive_int("length", length, owner="n_windows", minimum=0)
    window = check_positive_int("window", window, owner="n_windows")
    stride = check_positive_int("stride", stride, owner="n_windows")
    return 0 if length < window else (length - window) // stride + 1


def window_frequencies(window: int, fmin: float = 1e-5) -> np.ndarray:
    """Frequencies f_m = m/W, m = 0..⌊W/2⌋-1, that exceed ``fmin`` (the DC bin is dropped).

    Raises
    ------
    TypeError, ValueError
        If ``window`` is not an integer in ``[1, MAX_WINDOW = 2**24]`` or ``fmin`` is negative
        or NaN.

    Examples
    --------
    >>> window_frequencies(50).size
    24
    """
    window = check_positive_int("window", window, owner="window_frequencies", maximum=MAX_WINDOW)
    fmin = check_in_interval("fmin", fmin, low=0.0, owner="window_frequencies")
    f = np.arange(window // 2) / window
    return f[f > fmin]


def _check(window: int, stride: int, fmin: float, owner: str) -> np.ndarray:
    window = check_positive_int("window", window, owner=owner)
    check_positive_int("stride", stride, owner=owner)
    check_in_interval("fmin", fmin, low=0.0, owner=owner)
    f = window_frequencies(window, fmin)
    if f.size < 2:
        raise ValueError(
            f"{owner}: window must leave >= 2 frequencies above fmin for a line fit; "
            f"got window={window}, fmin={fmin!r} ({f.size} frequencies)."
        )
    return f


def _log_power(X: np.ndarray, window: int, stride: int, n_freq: int, first: int) -> np.ndarray:
    windows = sliding_window_view(X, window, axis=-1)[:, ::stride]  # (N, n_w, W)
    spectrum = np.fft.rfft(windows, axis=-1)[..., first : first + n_freq]  # (N, n_w, M)
    with np.errstate(divide="ignore"):
        return np.log10(np.abs(spectrum) ** 2)


def _weighted_line(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares of y = a + β x along the last axis; returns (β, a)."""
    sw = w.sum(-1)
    xbar = (w * x).sum(-1) / sw
    ybar = (w * y).sum(-1) / sw
    dx = x - xbar[..., None]
    # β = Σw(x-x̄)(y-ȳ) / Σw(x-x̄)²,  a = ȳ - β x̄
    beta = (w * dx * (y - ybar[..., None])).sum(-1) / (w * dx**2).sum(-1)
    return beta, ybar - beta * xbar


def _forward_fill(values: np.ndarray) -> np.ndarray:
    """Replace each NaN by the last finite value before it on the last axis; leading NaNs stay."""
    idx = np.where(np.isnan(values), 0, np.arange(values.shape[-1]))
    np.maximum.accumulate(idx, axis=-1, out=idx)
    filled = np.take_along_axis(values, idx, axis=-1)
    return filled


def powerlaw_features(
    X: object,
    window: int = 50,
    stride: int = 1,
    *,
    fmin: float = 1e-5,
    weight_exponent: float = 0.0,
    remove_outliers: bool = False,
) -> tuple[np.ndarray | pd.DataFrame, np.ndarray | pd.DataFrame]:
    """Power-law exponent λ and log10 amplitude A of every sliding window of every series.

    For window k of series i, x = X[i, ks : ks + W], the periodogram P_m = |FFT(x)_m|^2 at
    f_m = m/W (m = 1..⌊W/2⌋-1 for the default ``fmin``) is fitted by
    log10 P_m = A + β log10 f_m and λ = -β. All windows are fitted at once in closed form.

    Parameters
    ----------
    X
        Array of shape (N, T), one row per variable (N >= 1), finite; or a pandas DataFrame
        (T rows × N named columns), or a tigramite DataFrame (see :func:`read_series`).
    window
        Window length W (>= 6 so that two non-DC frequencies remain).
    stride
        Step s between window starts.
    fmin
        Frequencies f <= fmin are dropped (the default drops only the DC bin).
    weight_exponent
        w: the squared residual at f is weighted by |log10 f|^(-w); 0 is ordinary least squares.
    remove_outliers
        Refit after dropping points whose residual lies outside [q1 - 1.5 IQR, q3 + 1.5 IQR].

    Returns
    -------
    lam, amp : numpy.ndarray or pandas.DataFrame
        Arrays of shape (N, n_w), n_w = ⌊(T - W)/s⌋ + 1. A window with a zero-power bin cannot be
        fitted; its features are forward-filled from the previous window (NaN if none precedes).
        For a pandas DataFrame: DataFrames of n_w rows × the same columns, row k labelled by
        ``X.index[k s + W - 1]`` (the window's last time); ``lam.to_numpy().T`` is the array.

    Raises
    ------
    ValueError
        If X is not a finite 2-D array, T < W, or the parameters are out of range.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((2, 300)).cumsum(axis=1)
    >>> lam, amp = powerlaw_features(X, window=50)
    >>> lam.shape, bool(1.5 < np.median(lam) < 2.3)
    ((2, 251), True)
    """
    owner = "powerlaw_features"
    series = read_series(X, owner=owner, min_vars=1)
    X = series.X
    f = _check(window, stride, fmin, owner)
    check_in_interval("weight_exponent", weight_exponent, owner=owner)
    if X.shape[1] < window:
        raise ValueError(f"{owner}: T must be >= window; got T={X.shape[1]}, window={window}.")
    first = window // 2 - f.size  # index of the first kept bin
    y = _log_power(X, window, stride, f.size, first)  # (N, n_w, M)
    x = np.log10(f)  # (M,)
    w = np.broadcast_to(np.abs(x) ** -weight_exponent, y.shape).copy()
    failed = ~np.all(np.isfinite(y), axis=-1)  # (N, n_w): a zero-power bin
    y[failed] = 0.0
    beta, amp = _weighted_line(x, y, w)
    if remove_outliers:
        resid = y - (amp[..., None] + beta[..., None] * x)
        q1, q3 = np.quantile(resid, [0.25, 0.75], axis=-1)
        iqr = q3 - q1
        keep = (resid >= (q1 - 1.5 * iqr)[..., None]) & (resid <= (q3 + 1.5 * iqr)[..., None])
        beta, amp = _weighted_line(x, y, w * keep)
    lam = np.where(failed, np.nan, -beta)
    amp = np.where(failed, np.nan, amp)
    lam, amp = _forward_fill(lam), _forward_fill(amp)
    return feature_frame(lam, series, window, stride), feature_frame(amp, series, window, stride)


def powerlaw_features_reference(
    X: object, window: int = 50, stride: int = 1, *, fmin: float = 1e-5
) -> tuple[np.ndarray | pd.DataFrame, np.ndarray | pd.DataFrame]:
    """The same unweighted features by a per-window ``numpy.polyfit`` loop (slow reference).

    Parameters
    ----------
    X
        Array of shape (N, T), finite, or a DataFrame (T, N), as in :func:`powerlaw_features`.
    window, stride, fmin
        As in :func:`powerlaw_features`.

    Returns
    -------
    lam, amp : numpy.ndarray or pandas.DataFrame
        Arrays of shape (N, n_w); DataFrames (n_w, N) for a pandas DataFrame.

    Raises
    ------
    ValueError
        As :func:`powerlaw_features`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(1).standard_normal((1, 120))
    >>> ref = powerlaw_features_reference(X, window=50)[0]
    >>> bool(np.allclose(ref, powerlaw_features(X, window=50)[0]))
    True
    """
    owner = "powerlaw_features_reference"
    series = read_series(X, owner=owner, min_vars=1)
    X = series.X
    f = _check(window, stride, fmin, owner)
    if X.shape[1] < window:
        raise ValueError(f"{owner}: T must be >= window; got T={X.shape[1]}, window={window}.")
    keep = np.arange(window // 2) / window > fmin
    n_w = n_windows(X.shape[1], window, stride)
    lam = np.empty((X.shape[0], n_w))
    amp = np.empty((X.shape[0], n_w))
    for i in range(X.shape[0]):
        for k in range(n_w):
            segment = X[i, k * stride : k * stride + window]
            power = np.abs(np.fft.fft(segment)[: window // 2][keep]) ** 2
            slope, intercept = np.polyfit(np.log10(f), np.log10(power), 1)
            lam[i, k], amp[i, k] = -slope, intercept
    return feature_frame(lam, series, window, stride), feature_frame(amp, series, window, stride)
