"""PLaCy: pairwise Granger causality on power-law spectral features, and the raw-series ablation.

For every ordered pair j → i (j ≠ i) a VAR(p) on Y = [λ_i, λ_j, A_j] is fitted and the Wald test
asks whether the lags of (λ_j, A_j) enter λ_i's equation; P[j, i] is its p-value. An edge is
kept when P[j, i] < α (or by Benjamini–Hochberg over the N(N-1) p-values), and cycles are
optionally broken by deleting their least significant edge. Time-domain Granger is the same
procedure on Y = [x_i, x_j].
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from icml26.core import (
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    require,
)
from icml26.powerlaw_cd.features import n_windows, powerlaw_features, read_series
from icml26.powerlaw_cd.graph import benjamini_hochberg, check_adjacency, make_acyclic

if TYPE_CHECKING:
    import networkx as nx
from icml26.powerlaw_cd.wald import _var_wald_test

__all__ = ["CDResult", "granger_on_features", "granger_pairwise", "placy"]

log = logging.getLogger(__name__)
FDR_METHODS = ("none", "bh")


@dataclass(frozen=True)
class CDResult:
    """A causal graph estimate, as arrays and (by its methods) as labelled pandas / networkx.

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
    names
        The N variable names: a DataFrame input's columns; None for an array input (then the
        labelled views use 0..N-1).

    Raises
    ------
    TypeError
        If an array is not numeric, ``meta`` is not a dict or a name is not hashable.
    ValueError
        If ``adjacency`` is not a finite square array, ``pvalues`` differs in shape, the
        features are not two (N, n_w) arrays, or ``names`` are not N distinct labels.

    Examples
    --------
    >>> r = CDResult([[0, 1], [0, 0]], [[np.nan, 0.01], [0.7, np.nan]], names=("x", "y"))
    >>> int(r.adjacency_frame().loc["x", "y"]), list(r.to_networkx().edges(data=True))
    (1, [('x', 'y', {'pvalue': 0.01})])
    """

    adjacency: np.ndarray
    pvalues: np.ndarray
    features: tuple[np.ndarray, np.ndarray] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    names: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        owner = "CDResult"
        adjacency = check_adjacency("adjacency", self.adjacency, owner=owner).astype(int)
        n = adjacency.shape[0]
        pvalues = check_array("pvalues", self.pvalues, owner=owner, finite=False)
        if pvalues.shape != (n, n):
            raise ValueError(
                f"{owner}: pvalues must have the shape of adjacency {(n, n)}; got {pvalues.shape}."
            )
        features = self.features
        if features is not None:
            if not isinstance(features, tuple | list) or len(features) != 2:
                raise TypeError(f"{owner}: features must be a pair (lam, amp) of arrays or None.")
            features = tuple(
                check_array(name, value, owner=owner, ndim=2, finite=False)
                for name, value in zip(("features[0]", "features[1]"), features, strict=True)
            )
            if features[0].shape != features[1].shape or features[0].shape[0] != n:
                raise ValueError(
                    f"{owner}: features must be two ({n}, n_w) arrays; "
                    f"got {features[0].shape} and {features[1].shape}."
                )
        if not isinstance(self.meta, dict):
            raise TypeError(f"{owner}: meta must be a dict; got {type(self.meta).__name__}.")
        names = None if self.names is None else check_names(self.names, n, owner=owner)
        object.__setattr__(self, "adjacency", adjacency)
        object.__setattr__(self, "pvalues", pvalues)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "names", names)

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The variable names, or 0..N-1 when the input had none."""
        return self.names if self.names is not None else tuple(range(self.adjacency.shape[0]))

    def _frame(self, values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(
            values,
            index=pd.Index(self.labels, name="cause"),
            columns=pd.Index(self.labels, name="effect"),
        )

    def adjacency_frame(self) -> pd.DataFrame:
        """The adjacency as an N × N DataFrame: row = cause, column = effect, labelled by name.

        Examples
        --------
        >>> CDResult([[0, 1], [0, 0]], np.full((2, 2), np.nan)).adjacency_frame().to_numpy()
        array([[0, 1],
               [0, 0]])
        """
        return self._frame(self.adjacency)

    def pvalue_frame(self) -> pd.DataFrame:
        """The p-values as an N × N DataFrame labelled like :meth:`adjacency_frame`.

        Examples
        --------
        >>> CDResult([[0, 1], [0, 0]], [[1, 0.01], [0.7, 1]]).pvalue_frame().loc[0, 1]
        np.float64(0.01)
        """
        return self._frame(self.pvalues)

    def to_networkx(self) -> nx.DiGraph:
        """The graph as a ``networkx.DiGraph``: nodes are the names, edge j → i per adjacency.

        Every edge carries its p-value as the attribute ``pvalue`` (NaN for methods without
        p-values); the graph's attributes are :attr:`meta`.

        Raises
        ------
        MissingExtraError
            If networkx is not installed (an ``ImportError``; the fix:
            ``pip install 'icml26[powerlaw_cd]'``).

        Examples
        --------
        >>> g = CDResult([[0, 1], [0, 0]], [[1, 0.01], [0.7, 1]], names=("a", "b")).to_networkx()
        >>> list(g.nodes), g.edges["a", "b"]["pvalue"]
        (['a', 'b'], 0.01)
        """
        nx = require("networkx", "powerlaw_cd", owner="CDResult.to_networkx")
        graph = nx.DiGraph()
        graph.graph.update(self.meta)
        graph.add_nodes_from(self.labels)
        labels = self.labels
        for j, i in zip(*np.nonzero(self.adjacency), strict=True):
            graph.add_edge(labels[j], labels[i], pvalue=float(self.pvalues[j, i]))
        return graph


def check_names(names: object, n: int, *, owner: str) -> tuple[Hashable, ...]:
    """``names`` as a tuple of ``n`` distinct hashable labels.

    Raises
    ------
    TypeError
        If ``names`` is not a sequence (a string is not) or a label is not hashable.
    ValueError
        If there are not ``n`` labels or one repeats.

    Examples
    --------
    >>> check_names(["a", "b"], 2, owner="demo")
    ('a', 'b')
    """
    if isinstance(names, str | bytes) or not isinstance(names, Sequence | np.ndarray | pd.Index):
        raise TypeError(f"{owner}: names must be a sequence of labels; got {type(names).__name__}.")
    names = tuple(names)
    if not all(isinstance(name, Hashable) for name in names):
        raise TypeError(f"{owner}: names must be hashable labels; got {names!r}.")
    if len(names) != n or len(set(names)) != n:
        raise ValueError(f"{owner}: names must be {n} distinct labels; got {names!r}.")
    return names


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

    Examples
    --------
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
        Array (N, T), one row per variable, finite, N >= 2; or a pandas DataFrame of T rows ×
        N named columns (the layout of pandas, statsmodels and tigramite), or a tigramite
        DataFrame. Results on ``df`` equal those on ``df.to_numpy().T`` and carry its names.
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
        ``adjacency[j, i] = 1`` means j → i; ``features = (lam, amp)``, each (N, n_w);
        ``adjacency_frame()`` and ``to_networkx()`` give the graph labelled by the names.

    Raises
    ------
    ValueError
        If X is not a finite (N, T) array with N >= 2, if the number of windows
        ⌊(T - W)/s⌋ + 1 is below p + 3 (T < W + p + 2 at s = 1), or a parameter is out of range.

    Examples
    --------
    >>> from icml26.powerlaw_cd import placy, simulate_ou
    >>> sim = simulate_ou(3, 1500, stock_like=True, stationary=False, sigma_b=1.0, seed=0)
    >>> res = placy(sim.X, max_lags=5)
    >>> res.adjacency.shape, res.features[0].shape
    ((3, 3), (3, 1436))
    >>> import pandas as pd
    >>> df = pd.DataFrame(sim.X.T, columns=["a", "b", "c"])  # T rows × N columns
    >>> res_df = placy(df, max_lags=5)
    >>> bool((res_df.adjacency == res.adjacency).all()), list(res_df.to_networkx().nodes)
    (True, ['a', 'b', 'c'])
    """
    owner = "placy"
    series = read_series(X, owner=owner)
    X = series.X
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
    return CDResult(result.adjacency, result.pvalues, (lam, amp), meta, series.names)


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
        Array (N, T), finite, N >= 2, T >= max_lags + 3; or a DataFrame (T, N) as in
        :func:`placy`.
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

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2, 500))
    >>> X[1, 1:] += 0.9 * X[0, :-1]
    >>> granger_pairwise(X, max_lags=2).adjacency.tolist()
    [[0, 1], [0, 0]]
    """
    owner = "granger_pairwise"
    series = read_series(X, owner=owner)
    X = series.X
    _check_decision(max_lags, alpha, fdr, owner)
    if X.shape[1] < max_lags + 3:
        raise ValueError(
            f"{owner}: X is too short: T must be >= max_lags + 3; "
            f"got T={X.shape[1]}, max_lags={max_lags}."
        )
    result = granger_on_features(X, X[:, None, :], max_lags, alpha, fdr, acyclic)
    meta = {"method": "granger", **result.meta}
    return CDResult(result.adjacency, result.pvalues, None, meta, series.names)
