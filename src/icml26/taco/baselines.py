"""Baselines: context reduction for POT (spec §5.3 E2) and a linear model for real tables.

TACO (arXiv:2602.05649) is compared with the uncompressed model given K rows chosen without
learning: a random K-subset, or per-class k-means centroids (K rows in total, allocated to classes
proportionally to their frequency, at least one each). On real tables with categorical columns
the anchor of issue 19 is logistic regression on standardised numbers and one-hot categories
(:func:`linear_baseline`).

Deviations: the k-means allocation rule (largest remainder, at least one centroid per class) is
ours; the paper's exact baselines were not retrievable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import KMeans

from icml26.core import Seed, check_array, check_one_of, check_positive_int, numpy_generator

__all__ = ["class_allocation", "linear_baseline", "subsample_context"]


def class_allocation(counts: np.ndarray, k: int) -> np.ndarray:
    """Split k rows over classes proportionally to ``counts`` (largest remainder, >= 1, <= count).

    Raises
    ------
    TypeError, ValueError
        If ``counts`` is not a non-empty 1-D array of integer counts >= 1 or ``k`` is not an
        integer >= 1.

    Examples
    --------
    >>> class_allocation(np.array([90, 10]), 10).tolist()
    [9, 1]
    """
    owner = "class_allocation"
    k = check_positive_int("k", k, owner=owner)
    counts = check_array("counts", counts, owner=owner, ndim=1)
    if counts.size == 0 or np.any(counts < 1) or np.any(counts != np.round(counts)):
        raise ValueError(
            f"{owner}: counts must hold one integer count >= 1 per class; got {counts!r}."
        )
    counts = counts.astype(np.int64)
    share = np.maximum(1, np.floor(k * counts / counts.sum())).astype(int)
    share = np.minimum(share, counts)
    order = np.argsort(-(k * counts / counts.sum() - share))
    i = 0
    while share.sum() < min(k, counts.sum()):
        c = order[i % len(order)]
        if share[c] < counts[c]:
            share[c] += 1
        i += 1
    while share.sum() > k and (share > 1).any():
        share[np.argmax(share)] -= 1
    return share


def subsample_context(
    X: np.ndarray, y: np.ndarray, k: int, *, strategy: str = "random", seed: Seed = 0
) -> tuple[np.ndarray, np.ndarray]:
    """K context rows for the uncompressed model.

    Parameters
    ----------
    X, y
        Training rows (n, F) and integer labels (n,).
    k
        Rows to keep (at most n).
    strategy
        ``"random"`` (uniform K-subset) or ``"kmeans"`` (per-class centroids).
    seed
        Randomness of the subset or of k-means initialisation.

    Returns
    -------
    (ndarray, ndarray)
        ``(X_k, y_k)`` with min(k, n) rows (k-means: at least one row per class).

    Raises
    ------
    TypeError, ValueError
        If ``X`` is not a numeric (n >= 1, F) array (finite for ``"kmeans"``), ``y`` not n
        labels, ``strategy`` unknown or ``k`` < 1.

    Examples
    --------
    >>> Xk, yk = subsample_context(np.zeros((50, 2)), np.arange(50) % 2, 4)
    >>> Xk.shape
    (4, 2)
    """
    owner = "subsample_context"
    k = check_positive_int("k", k, owner=owner)
    check_one_of("strategy", strategy, ("random", "kmeans"), owner=owner)
    check_array("X", X, owner=owner, ndim=2, finite=strategy == "kmeans")
    X = np.asarray(X)  # the caller's dtype, which the rows (and centroids) keep
    if len(X) == 0:
        raise ValueError(f"{owner}: X must have at least one row; got shape {X.shape}.")
    y = np.asarray(y)
    if (
        y.shape != (len(X),)
        or y.dtype.kind not in "biuf"
        or (y.dtype.kind == "f" and not np.all(np.isfinite(y)))
    ):
        raise ValueError(
            f"{owner}: y must hold one finite label per row of X; got shape {y.shape}."
        )
    rng = numpy_generator(seed)
    if strategy == "random":
        rows = rng.choice(len(X), size=min(k, len(X)), replace=False)
        return X[rows], y[rows]
    labels, counts = np.unique(y, return_counts=True)
    Xs, ys = [], []
    for label, n_c in zip(labels, class_allocation(counts, k), strict=True):
        members = X[y == label]
        km = KMeans(n_clusters=int(n_c), n_init=1, random_state=int(rng.integers(2**31)))
        Xs.append(km.fit(members).cluster_centers_.astype(X.dtype))
        ys.append(np.full(int(n_c), label, dtype=y.dtype))
    return np.concatenate(Xs), np.concatenate(ys)


def linear_baseline() -> Any:
    """StandardScaler + LogisticRegression for a table with numeric and categorical columns.

    A scikit-learn pipeline: numeric columns are mean-imputed and standardised, ``category``
    columns of a DataFrame imputed with their most frequent value and one-hot encoded (unknown
    categories ignored), then ``LogisticRegression(max_iter=2000)``.

    Returns
    -------
    sklearn.pipeline.Pipeline
        An unfitted pipeline.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "c": pd.Categorical(list("abab"))})
    >>> linear_baseline().fit(X, [0, 0, 1, 1]).predict_proba(X).shape
    (4, 2)
    """
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    columns = make_column_transformer(
        (
            make_pipeline(SimpleImputer(), StandardScaler()),
            make_column_selector(dtype_include="number"),
        ),
        (
            make_pipeline(
                SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")
            ),
            make_column_selector(dtype_include="category"),
        ),
    )
    return make_pipeline(columns, LogisticRegression(max_iter=2000))
