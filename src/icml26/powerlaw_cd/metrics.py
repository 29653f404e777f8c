"""Scores of an estimated causal graph against the truth: F1 and true-negative rate."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.powerlaw_cd.graph import check_adjacency

__all__ = ["f1_tnr"]


def f1_tnr(adj_true: object, adj_est: object, ignore_diagonal: bool = True) -> tuple[float, float]:
    """F1 of the edges and TNR = TN / (TN + FP) of the non-edges.

    F1 = 2 TP / (2 TP + FP + FN). As in scikit-learn's defaults, a score whose denominator is 0
    (no true and no predicted edge for F1, no true non-edge for TNR) is 0.

    Parameters
    ----------
    adj_true, adj_est
        Square arrays of the same shape; nonzero means an edge (row = cause, column = effect).
        When both are labelled DataFrames (e.g. ``Dataset.adjacency_frame()`` and
        ``CDResult.adjacency_frame()``), ``adj_est`` is first aligned to ``adj_true``'s labels.
    ignore_diagonal
        Score the off-diagonal entries only (the diagonal adds true negatives, never edges).

    Returns
    -------
    (f1, tnr) : tuple of float

    Raises
    ------
    TypeError
        If an adjacency is not numeric.
    ValueError
        If an adjacency is not finite and square, or the shapes differ.

    Examples
    --------
    >>> f1_tnr([[0, 1], [0, 0]], [[0, 1], [1, 0]])
    (0.6666666666666666, 0.0)
    """
    if isinstance(adj_true, pd.DataFrame) and isinstance(adj_est, pd.DataFrame):
        adj_est = _aligned_to(adj_est, adj_true)
    t = check_adjacency("adj_true", adj_true, owner="f1_tnr")
    e = check_adjacency("adj_est", adj_est, owner="f1_tnr")
    if e.shape != t.shape:
        raise ValueError(
            f"f1_tnr: adj_est must have the shape of adj_true {t.shape}; got {e.shape}."
        )
    mask = ~np.eye(t.shape[0], dtype=bool) if ignore_diagonal else np.ones(t.shape, dtype=bool)
    t, e = t[mask], e[mask]
    tp, fp = int(np.sum(t & e)), int(np.sum(~t & e))
    fn, tn = int(np.sum(t & ~e)), int(np.sum(~t & ~e))
    f1 = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 0.0
    tnr = tn / (tn + fp) if (tn + fp) else 0.0
    return f1, tnr


def _aligned_to(est: pd.DataFrame, true: pd.DataFrame) -> pd.DataFrame:
    same = set(est.index) == set(true.index) and set(est.columns) == set(true.columns)
    if not same or not est.index.is_unique or not est.columns.is_unique:
        raise ValueError(
            f"f1_tnr: a labelled adj_est must name the variables of adj_true "
            f"{list(true.index)}; got {list(est.index)} × {list(est.columns)}."
        )
    return est.loc[true.index, true.columns]
