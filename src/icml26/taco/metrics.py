"""Scores of predicted class probabilities: ROC-AUC and held-out cross-entropy (spec §5.3 E2/E3).

TACO (arXiv:2602.05649) reports ROC-AUC: binary AUC for two classes, macro one-vs-rest over the
classes otherwise. Each binary AUC is scikit-learn's ``roc_auc_score``.

Deviation: the macro average runs over the classes present in ``y`` only. A prior task's test
split can miss a class the model scores; scikit-learn's ``multi_class="ovr"`` with every column
returns NaN then (one AUC is undefined), while the mean over the present classes is the same
number whenever every class is present.
"""

from __future__ import annotations

import numpy as np

from icml26.core import check_array

__all__ = ["cross_entropy_nats", "roc_auc"]

PROBA_FLOOR = 1e-12  # cross_entropy_nats: float32 softmax underflows to 0 for confident rows


def _labels_and_proba(y: object, proba: object, owner: str) -> tuple[np.ndarray, np.ndarray]:
    # dtype=None keeps proba's precision (a float32 softmax is scored as float32)
    y = check_array("y", y, owner=owner, ndim=1, dtype=None)
    proba = check_array("proba", proba, owner=owner, ndim=2, dtype=None)
    for name, array in (("y", y), ("proba", proba)):
        if array.dtype.kind not in "iuf":
            raise TypeError(f"{owner}: {name} must be a numeric array; got dtype {array.dtype}.")
    if len(y) != len(proba):
        raise ValueError(
            f"{owner}: y and proba must have one row per sample; got {len(y)} and {len(proba)}."
        )
    if proba.shape[1] < 2:
        raise ValueError(f"{owner}: proba must have >= 2 class columns; got {proba.shape[1]}.")
    if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= proba.shape[1]):
        raise ValueError(
            f"{owner}: y must hold class indices in [0, {proba.shape[1]}) (proba's columns)."
        )
    return y.astype(np.int64), proba


def roc_auc(y: np.ndarray, proba: np.ndarray) -> float:
    """Binary ROC-AUC, or the macro one-vs-rest ROC-AUC over the classes present in ``y``.

    Two columns: ``roc_auc_score(y, proba[:, 1])``. More: the mean over the classes ``c`` that
    occur in ``y`` (and not in every row) of ``roc_auc_score(y == c, proba[:, c])``.

    Parameters
    ----------
    y
        (n,) class indices into ``proba``'s columns.
    proba
        (n, C) predicted probabilities (or any scores; only their order per column counts).

    Returns
    -------
    float
        The AUC in [0, 1].

    Raises
    ------
    TypeError, ValueError
        If the shapes disagree, ``y`` is not a class index of ``proba``, ``proba`` is not finite
        or not numeric, or fewer than two classes occur in ``y`` (the AUC is undefined).

    Examples
    --------
    >>> proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.65, 0.35], [0.2, 0.8]])
    >>> roc_auc(np.array([0, 0, 1, 1]), proba)
    0.75
    """
    from sklearn.metrics import roc_auc_score

    owner = "roc_auc"
    y, proba = _labels_and_proba(y, proba, owner)
    if len(np.unique(y)) < 2:
        raise ValueError(f"{owner}: y must contain at least two classes; got {np.unique(y)}.")
    if proba.shape[1] == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    present = [c for c in range(proba.shape[1]) if 0 < (y == c).sum() < len(y)]
    return float(np.mean([roc_auc_score(y == c, proba[:, c]) for c in present]))


def cross_entropy_nats(y: np.ndarray, proba: np.ndarray) -> float:
    """Mean cross-entropy −log p(y) over rows, in nats; p floored at 1e-12.

    Parameters
    ----------
    y
        (n,) class indices into ``proba``'s columns.
    proba
        (n, C) predicted probabilities.

    Returns
    -------
    float
        The mean of ``-log(max(proba[i, y[i]], 1e-12))``.

    Raises
    ------
    TypeError, ValueError
        As :func:`roc_auc` (one class in ``y`` is allowed here).

    Examples
    --------
    >>> round(cross_entropy_nats(np.array([0, 1]), np.array([[0.5, 0.5], [0.5, 0.5]])), 4)
    0.6931
    """
    y, proba = _labels_and_proba(y, proba, "cross_entropy_nats")
    return float(-np.log(np.maximum(proba[np.arange(len(y)), y], PROBA_FLOOR)).mean())
