"""The paper's baselines as its driver configures them: PCMCI+ (tigramite), RCV-VarLiNGAM (lingam).

Both libraries are imported when a baseline is called. tigramite is in the ``powerlaw_cd``
extra; lingam is not (lingam 1.13 pins ``scipy<=1.13.1``) and comes with the ``test-refs``
extra: ``pip install 'icml26[test-refs]'``. The time-domain Granger baseline is
:func:`icml26.powerlaw_cd.granger_pairwise`.
"""

from __future__ import annotations

import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator, require
from icml26.powerlaw_cd.features import read_series
from icml26.powerlaw_cd.pairwise import CDResult

__all__ = ["pcmci_plus", "var_lingam"]


def pcmci_plus(X: object, tau_max: int = 20, pc_alpha: float = 0.05) -> CDResult:
    """PCMCI+ with partial-correlation tests (tigramite); edge j → i if any lag τ >= 1 has -->.

    Parameters
    ----------
    X
        Array (N, T), finite, N >= 2; or a pandas DataFrame (T rows × N named columns) or a
        tigramite DataFrame, as in :func:`~icml26.powerlaw_cd.placy`.
    tau_max
        Largest lag τ_max (the paper sets it to PLaCy's p).
    pc_alpha
        Significance level of the PC stage, in (0, 1).

    Returns
    -------
    CDResult
        ``pvalues[j, i]`` is the smallest lagged p-value of j → i (τ = 1..τ_max); diagonal zero.

    Raises
    ------
    MissingExtraError
        If tigramite is not installed (an ``ImportError``; the fix:
        ``pip install 'icml26[powerlaw_cd]'``).
    ValueError
        If X or a parameter is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2, 400))
    >>> X[1, 1:] += 0.8 * X[0, :-1]
    >>> pcmci_plus(X, tau_max=2).adjacency.tolist()  # doctest: +SKIP
    [[0, 1], [0, 0]]
    """
    owner = "pcmci_plus"
    series = read_series(X, owner=owner)
    X = series.X
    tau_max = check_positive_int("tau_max", tau_max, owner=owner)
    pc_alpha = check_in_interval("pc_alpha", pc_alpha, low=0.0, high=1.0, closed="neither",
                                 owner=owner)  # fmt: skip
    require("tigramite", "powerlaw_cd", owner=owner)
    from tigramite.data_processing import DataFrame
    from tigramite.independence_tests.parcorr import ParCorr
    from tigramite.pcmci import PCMCI

    var_names = None if series.names is None else [str(name) for name in series.names]
    dataframe = DataFrame(X.T, var_names=var_names)  # tigramite's layout: (T, N)
    pcmci = PCMCI(dataframe=dataframe, cond_ind_test=ParCorr(), verbosity=0)
    out = pcmci.run_pcmciplus(tau_min=1, tau_max=tau_max, pc_alpha=pc_alpha)
    graph = out["graph"]  # (N, N, tau_max + 1) strings
    adjacency = np.any(graph[:, :, 1:] == "-->", axis=2).astype(int)
    np.fill_diagonal(adjacency, 0)
    pvalues = np.min(out["p_matrix"][:, :, 1:], axis=2)
    np.fill_diagonal(pvalues, np.nan)
    meta = {"method": "pcmci_plus", "tau_max": tau_max, "pc_alpha": pc_alpha}
    return CDResult(adjacency, pvalues, None, meta, series.names)


def var_lingam(
    X: object,
    lags: int = 20,
    *,
    n_subsets: int = 7,
    subset_length: int = 300,
    sign_consistency: float = 0.7,
    max_variability: float = 0.4,
    assume_order: bool = False,
    seed: Seed = None,
) -> CDResult:
    """RCV-VarLiNGAM: VARLiNGAM on random subsequences, keeping edges that are stable across them.

    On each of k random contiguous subsequences, lingam's ``VARLiNGAM(lags)`` (DirectLiNGAM on
    the VAR residuals) gives B_0, ..., B_p; the lags are combined by the entry of largest
    magnitude. An edge is kept when the fraction of subsequences agreeing with its majority sign
    exceeds ``sign_consistency`` and std/|mean| of its weight is below ``max_variability``.

    Parameters
    ----------
    X
        Array (N, T), finite, N >= 2, T >= ``subset_length``; or a DataFrame (T, N) as in
        :func:`~icml26.powerlaw_cd.placy`.
    lags
        VAR order p.
    n_subsets, subset_length
        k subsequences of this length (the reference: 7 of 300).
    sign_consistency, max_variability
        τ_c and τ_v of the stability rule (the reference: 0.7 and 0.4).
    assume_order
        Keep only edges j → i with j < i, as the reference driver does (it presumes that the
        variables are given in causal order, which favours it on the synthetic DAGs).
    seed
        Seed or generator for the subsequence starts.

    Returns
    -------
    CDResult
        Without p-values (all NaN); ``meta["weights"]`` holds the mean combined weights.

    Raises
    ------
    MissingExtraError
        If lingam is not installed (an ``ImportError``; the fix:
        ``pip install 'icml26[test-refs]'``).
    ValueError
        If X or a parameter is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((3, 600))
    >>> var_lingam(X, lags=1, seed=0).adjacency.shape  # doctest: +SKIP
    (3, 3)
    """
    owner = "var_lingam"
    series = read_series(X, owner=owner)
    X = series.X
    lags = check_positive_int("lags", lags, owner=owner)
    n_subsets = check_positive_int("n_subsets", n_subsets, owner=owner)
    subset_length = check_positive_int("subset_length", subset_length, owner=owner)
    check_in_interval("sign_consistency", sign_consistency, low=0.0, high=1.0, owner=owner)
    check_in_interval("max_variability", max_variability, low=0.0, owner=owner)
    n, length = X.shape
    if length < subset_length:
        raise ValueError(f"{owner}: T must be >= subset_length; got T={length}, {subset_length=}.")
    lingam = require("lingam", "test-refs", owner=owner)
    rng = numpy_generator(seed)
    starts = rng.integers(0, length - subset_length + 1, size=n_subsets)
    weights = np.empty((n_subsets, n, n))
    for k, start in enumerate(starts):
        model = lingam.VARLiNGAM(lags=lags).fit(X[:, start : start + subset_length].T)
        B = model.adjacency_matrices_  # (p + 1, N, N), B[τ][effect, cause]
        strongest = np.take_along_axis(B, np.abs(B).argmax(axis=0)[None], axis=0)[0]
        weights[k] = strongest.T  # (cause, effect)
    mean = weights.mean(axis=0)
    majority = np.where(mean >= 0, 1.0, -1.0)
    agree = np.mean(np.sign(weights) == majority, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        variability = weights.std(axis=0) / np.abs(mean)
    adjacency = ((agree > sign_consistency) & (variability < max_variability)).astype(int)
    if assume_order:
        adjacency = np.triu(adjacency, k=1)
    np.fill_diagonal(adjacency, 0)
    meta = {"method": "var_lingam", "lags": lags, "n_subsets": n_subsets, "weights": mean}
    return CDResult(adjacency, np.full((n, n), np.nan), None, meta, series.names)
