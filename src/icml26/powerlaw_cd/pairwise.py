"""PLaCy: pairwise Granger causality on power-law spectral features, and the raw-series ablation.

For every ordered pair j → i (j ≠ i) a VAR(p) on Y = [λ_i, λ_j, A_j] is fitted and the Wald test
asks whether the lags of (λ_j, A_j) enter λ_i's equation; P[j, i] is its p-value. An edge is
kept when P[j, i] < α (or by Benjamini–Hochberg over the N(N-1) p-values), and cycles are
optionally broken by deleting their least significant edge. Time-domain Granger is the same
procedure on Y = [x_i, x_j].
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from icml26.core import check_array, check_in_interval, check_one_of, check_positive_int
from icml26.powerlaw_cd.features import as_series, n_windows, powerlaw_features
from icml26.powerlaw_cd.graph import benjamini_hochberg, make_acyclic
from icml26.powerlaw_cd.wald import _var_wald_test

__all__ = ["CDResult", "granger_on_features", "granger_pairwise", "placy"]

log = logging.getLogger(__name__)
FDR_METHODS = ("none", "bh")


@dataclass(frozen=True)
class CDResult:
    """A causal graph estimate.

    Attributes
    ----------
    adjacency
        Int array (N, N); adjacency[j, i] = 1 means j → i (row = cause, column = effect).
    pvalues
        Float array (N, N) of the pair tests' p-values (NaN on the diagonal, for failed fits, and
        for methods without p-values).
    features
        PLaCy's (λ, A), each of shape (N, n_w); None for the other methods.
    meta
        The method's name and settings.
    """

    adjacency: np.ndarray
    pvalues: np.ndarray
    features: tuple[np.ndarray, np.ndarray] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def _decide(pvalues: np.ndarray, alpha: float, fdr: str, acyclic: bool) -> np.ndarray:
    off = ~np.eye(pvalues.shape[0], dtype=bool)
    tested = np.where(off, np.nan_to_num(pvalues, nan=1.0), np.nan)  # a failed fit counts as p = 1
    if fdr == "bh":
        adjacency = benjamini_hochberg(tested, alpha).astype(int)
    else:
        adjacency = (off & (tested < alpha)).astype(int)
    return make_acyclic(adjacency, pvalues) if acyclic else adjacency


def _check_decision(max_lags: int, alpha: float, fdr: str, owner: str) -> None:
    check_positive_int("max_lags", max_lags, owner=owner)
    check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)
    check_one_of("fdr", fdr, FDR_METHODS, owner=owner)


def granger_on_features(
    targets: object,
    drivers: object,
    max_lags: int = 20,
    alpha: float = 0.05,
    fdr: str = "none",
    acyclic: bool = False,
) -> CDResult:
    """Pairwise VAR Wald tests of ``drivers[j]`` → ``targets[i]`` for every ordered pair j ≠ i.

    Parameters
    ----------
    targets
        Array (N, n): the series of each variable tested as an effect (PLaCy: λ).
    drivers
        Array (N, k, n): the k series of each variable tested as a cause (PLaCy: λ and A).
    max_lags
        Fixed VAR lag order p; each test has k·p degrees of freedom.
    alpha
        Significance level in (0, 1).
    fdr
        ``"none"`` (edge iff p < α) or ``"bh"`` (Benjamini–Hochberg at level α).
    acyclic
        Break directed cycles by deleting their largest-p-value edge.

    Returns
    -------
    CDResult
        A pair whose VAR cannot be fitted (rank deficient, too short) gets p = NaN and no edge.

    Raises
    ------
    ValueError
        If the shapes disagree or a parameter is out of range.

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2, 500))
    >>> X[1, 1:] += 0.9 * X[0, :-1]
    >>> granger_on_features(X, X[:, None, :], max_lags=2).adjacency.tolist()
    [[0, 1], [0, 0]]
    """
    owner = "granger_on_features"
    _check_decision(max_lags, alpha, fdr, owner)
    # non-finite features are allowed: their pairs get p = NaN (see Returns)
    targets = check_array("targets", targets, owner=owner, finite=False)
    drivers = check_array("drivers", drivers, owner=owner, finite=False)
    if targets.ndim != 2 or drivers.ndim != 3 or drivers.shape[::2] != targets.shape:
        raise ValueError(
            f"{owner}: targets must be (N, n) and drivers (N, k, n); "
            f"got {targets.shape} and {drivers.shape}."
        )
    n = targets.shape[0]
    pvalues = np.full((n, n), np.nan)
    # Small (n × 1 + kp) products: multithreaded BLAS only adds contention (25x slower measured).
    with threadpool_limits(limits=1, user_api="blas"):
        for j in range(n):
            for i in range(n):
                if i == j:
                    continue
                try:
                    pvalues[j, i] = _var_wald_test(targets[i], drivers[j], max_lags).pvalue
                except np.linalg.LinAlgError as err:
                    log.warning("pair %d -> %d: VAR fit failed (%s); edge left out", j, i, err)
    adjacency = _decide(pvalues, alpha, fdr, acyclic)
    meta = {"max_lags": max_lags, "alpha": alpha, "fdr": fdr, "acyclic": acyclic}
    return CDResult(adjacency, pvalues, None, meta)


def placy(
    X: object,
    max_lags: int = 20,
    window: int = 50,
    stride: int = 1,
    alpha: float = 0.05,
    fdr: str = "none",
    acyclic: bool = False,
) -> CDResult:
    """PLaCy: causal graph of N series from Granger tests on their power-law spectral features.

    Features λ_i, A_i come from :func:`powerlaw_features`; the pair j → i is tested in a VAR(p)
    on [λ_i, λ_j, A_j] (Wald χ² with 2p degrees of freedom, H0: no lag of λ_j or A_j enters
    λ_i's equation).

    Parameters
    ----------
    X
        Array (N, T), one row per variable, finite, N >= 2.
    max_lags
        VAR lag order p (the paper's experiments: 20).
    window, stride
        Sliding window length W and step s of the features.
    alpha
        Significance level in (0, 1).
    fdr
        ``"none"`` or ``"bh"`` (Benjamini–Hochberg over the N(N-1) p-values).
    acyclic
        Break directed cycles by deleting their largest-p-value edge.

    Returns
    -------
    CDResult
        ``adjacency[j, i] = 1`` means j → i; ``features = (lam, amp)``.

    Raises
    ------
    ValueError
        If X is not a finite (N, T) array with N >= 2, if the number of windows
        ⌊(T - W)/s⌋ + 1 is below p + 3 (T < W + p + 2 at s = 1), or a parameter is out of range.

    Example
    -------
    >>> from icml26.powerlaw_cd import placy, simulate_ou
    >>> sim = simulate_ou(3, 1500, stock_like=True, stationary=False, sigma_b=1.0, seed=0)
    >>> res = placy(sim.X, max_lags=5)
    >>> res.adjacency.shape, res.features[0].shape
    ((3, 3), (3, 1436))
    """
    owner = "placy"
    X = as_series(X, owner=owner)
    _check_decision(max_lags, alpha, fdr, owner)
    check_positive_int("window", window, owner=owner)
    check_positive_int("stride", stride, owner=owner)
    n_w = n_windows(X.shape[1], window, stride)
    if n_w < max_lags + 3:
        raise ValueError(
            f"{owner}: X is too short: T must give >= max_lags + 3 windows "
            f"(T >= window + max_lags + 2 at stride 1); got T={X.shape[1]}, window={window}, "
            f"stride={stride}, max_lags={max_lags} ({n_w} windows)."
        )
    lam, amp = powerlaw_features(X, window, stride)
    result = granger_on_features(lam, np.stack([lam, amp], axis=1), max_lags, alpha, fdr, acyclic)
    meta = {"method": "placy", "window": window, "stride": stride, **result.meta}
    return CDResult(result.adjacency, result.pvalues, (lam, amp), meta)


def granger_pairwise(
    X: object,
    max_lags: int = 20,
    alpha: float = 0.05,
    fdr: str = "none",
    acyclic: bool = False,
) -> CDResult:
    """Time-domain pairwise Granger causality: PLaCy's test on the raw series (the ablation).

    For each ordered pair j → i a bivariate VAR(p) on [x_i, x_j] is fitted and the Wald test
    (p degrees of freedom) asks whether x_j's lags enter x_i's equation.

    Parameters
    ----------
    X
        Array (N, T), finite, N >= 2, T >= max_lags + 3.
    max_lags, alpha, fdr, acyclic
        As in :func:`placy`.

    Returns
    -------
    CDResult

    Raises
    ------
    ValueError
        If X is not a finite (N, T) array with N >= 2 and T >= max_lags + 3, or a parameter is
        out of range.

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2, 500))
    >>> X[1, 1:] += 0.9 * X[0, :-1]
    >>> granger_pairwise(X, max_lags=2).adjacency.tolist()
    [[0, 1], [0, 0]]
    """
    owner = "granger_pairwise"
    X = as_series(X, owner=owner)
    _check_decision(max_lags, alpha, fdr, owner)
    if X.shape[1] < max_lags + 3:
        raise ValueError(
            f"{owner}: X is too short: T must be >= max_lags + 3; "
            f"got T={X.shape[1]}, max_lags={max_lags}."
        )
    result = granger_on_features(X, X[:, None, :], max_lags, alpha, fdr, acyclic)
    return CDResult(result.adjacency, result.pvalues, None, {"method": "granger", **result.meta})
