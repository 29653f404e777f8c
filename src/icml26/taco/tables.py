"""Categorical DataFrame columns as ordinal codes, the way in-context tabular models read them.

TabPFN v2 and TabICL encode a categorical column by ordinal codes 0..k-1 (missing and unseen
categories become NaN, which the cell encoder marks with its NaN indicator) and let ensemble
members see the codes in different orders ("ordinal, shuffled"). Our prior draws categorical
features the same way: integer codes 0..k-1 of quantile bins (``MLPSCMPrior.categorical_prob``).

A column is categorical when its dtype is ``category``, ``object`` or ``string``; numeric and
boolean columns pass through unchanged. The codes follow the dtype's category
order for a ``category`` column and the sorted distinct values (as text) for the others, so the
same column gives the same codes in ``fit`` and ``predict``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__: list[str] = []  # private helpers of TACOClassifier


def is_frame(X: Any) -> bool:
    """Whether ``X`` is a pandas DataFrame (without importing pandas when it is not loaded)."""
    import sys

    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(X, pandas.DataFrame)


def categorical_mask(frame: Any) -> np.ndarray:
    """(F,) bool: which columns of ``frame`` hold categories (category, object or string dtype)."""
    import pandas as pd

    return np.array(
        [
            isinstance(dtype, pd.CategoricalDtype)
            or pd.api.types.is_object_dtype(dtype)
            or pd.api.types.is_string_dtype(dtype)
            for dtype in frame.dtypes
        ],
        dtype=bool,
    )


def _as_text(values: Any) -> Any:
    """A pandas Series of the values as text, missing values kept missing."""
    import pandas as pd

    series = pd.Series(np.asarray(values, dtype=object))
    return series.astype(str).where(series.notna())


@dataclass(frozen=True)
class OrdinalCodes:
    """Ordinal codes of the categorical columns seen in ``fit``.

    Attributes
    ----------
    columns
        Positions of the categorical columns.
    categories
        The categories of each of those columns, in code order (as text).
    ordered
        Whether each column is an ordered ``category`` dtype (its codes are never shuffled).
    """

    columns: tuple[int, ...]
    categories: tuple[tuple[str, ...], ...]
    ordered: tuple[bool, ...]

    @classmethod
    def fit(cls, frame: Any, mask: np.ndarray) -> OrdinalCodes:
        """Learn the categories of the columns of ``frame`` that ``mask`` marks."""
        import pandas as pd

        columns, categories, ordered = [], [], []
        for j in np.flatnonzero(mask):
            column = frame.iloc[:, j]
            if isinstance(column.dtype, pd.CategoricalDtype):
                cats = tuple(str(c) for c in column.dtype.categories)
                is_ordered = bool(column.dtype.ordered)
            else:
                cats = tuple(sorted(_as_text(column).dropna().unique()))
                is_ordered = False
            columns.append(int(j))
            categories.append(cats)
            ordered.append(is_ordered)
        return cls(tuple(columns), tuple(categories), tuple(ordered))

    def transform(self, X: Any) -> Any:
        """``X`` with the categorical columns as float codes (NaN: missing or unseen category).

        A DataFrame stays a DataFrame (same columns and index, so that ``validate_data`` still
        checks the names); any other 2-D array-like becomes an object array. The other columns
        are left as they are: their conversion to float is ``validate_data``'s.
        """
        import pandas as pd

        out = X.copy() if is_frame(X) else np.array(X, dtype=object)
        for j, cats in zip(self.columns, self.categories, strict=True):
            column = X.iloc[:, j] if is_frame(X) else out[:, j]
            codes = pd.Index(cats, dtype=object).get_indexer(
                _as_text(column)
            )  # -1: missing, unseen
            codes = np.where(codes < 0, np.nan, codes.astype(np.float64))
            if is_frame(X):
                out.isetitem(j, codes)
            else:
                out[:, j] = codes
        return out

    def shuffles(self, rng: np.random.Generator) -> dict[int, np.ndarray]:
        """One random reordering of the codes of every unordered categorical column."""
        return {
            j: rng.permutation(len(cats))
            for j, cats, is_ordered in zip(self.columns, self.categories, self.ordered, strict=True)
            if not is_ordered and len(cats) > 1
        }


def recode(X: np.ndarray, shuffles: dict[int, np.ndarray]) -> np.ndarray:
    """``X`` with the codes of column j mapped through ``shuffles[j]`` (NaN stays NaN)."""
    if not shuffles:
        return X
    X = X.copy()
    for j, order in shuffles.items():
        codes = X[:, j]
        known = np.isfinite(codes) & (codes >= 0) & (codes < len(order))
        codes[known] = order[codes[known].astype(np.int64)]
    return X
