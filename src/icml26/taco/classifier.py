"""scikit-learn classifier around a (meta-trained) TACO or POT model (spec §2.2, §6).

TACO (arXiv:2602.05649). ``fit`` shuffles the training rows, and for TACO compresses them into a
:class:`CompressedContext` (the raw table is then dropped); ``predict_proba`` runs the predictor on
the test rows against that context. ``use_compressor=False`` is the uncompressed baseline POT,
which keeps the training table as its context.

Ensemble (``n_estimators``), as in TabPFN: member i sees the features rotated by i positions and
the class ids shifted cyclically by i, both from one seeded random base order, so every feature
takes every position and every class every output slot equally often; probabilities are averaged.
A pandas DataFrame's category/object/string columns become ordinal codes (``tables.py``); every
member but the first also reorders the codes of each unordered categorical column at random.

Deviations: the TabPFN preprocessing variants of the official ensemble (power transforms, etc.)
are left out; members differ only by feature/class/category orders and row shuffles.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator
from icml26.taco.encoder import as_device
from icml26.taco.model import TACOModel
from icml26.taco.tables import OrdinalCodes, categorical_mask, is_frame, recode
from icml26.taco.training import load_checkpoint, shipped_checkpoint

__all__ = ["TACOClassifier"]

_PREDICT_BATCH = 1024  # test rows per forward; test rows are independent, so any size is exact
MAX_ESTIMATORS = 1024  # each member is one compression at fit and one forward per test batch


def member_orders(
    rng: np.random.Generator,
    n_features: int,
    n_classes: int,
    n_members: int,
    *,
    width: int | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(feature columns, class map) of each ensemble member: rotations of one random base order.

    Member i gives class c the output slot ``base_c[(c + i) % C]``. With F <= ``width`` it reads
    the features ``base_f`` rotated by i (position j holds ``base_f[(j + i) % F]``), so with F (C)
    members every feature (class) sits at every position (slot) once. With F > ``width`` (wider
    than the model), member i reads the ``width`` features that follow ``base_f`` rotated by
    i·``width``: consecutive members see disjoint blocks, and ⌈F / width⌉ members see every
    feature.
    """
    base_f, base_c = rng.permutation(n_features), rng.permutation(n_classes)
    wide = width is not None and n_features > width
    step, keep = (width, width) if wide else (1, n_features)
    return [
        (np.roll(base_f, -i * step)[:keep], base_c[(np.arange(n_classes) + i) % n_classes])
        for i in range(n_members)
    ]


def _has_columns(X: Any, n_columns: int | None) -> bool:
    """Whether ``X`` is a 2-D table (with ``n_columns`` columns, when given) to encode."""
    if is_frame(X):
        return n_columns is None or X.shape[1] == n_columns
    try:
        shape = np.shape(X)
    except ValueError:  # ragged nested lists: validate_data names the problem
        return False
    return len(shape) == 2 and shape[1] == n_columns


def _hyperparameter_error(err: Exception, method: str) -> Exception:
    """``err`` re-raised from ``method`` (the message says that a constructor argument is wrong)."""
    kind = TypeError if isinstance(err, TypeError) else ValueError
    return kind(
        f"TACOClassifier.{method}(X, y) refused a constructor parameter "
        f"(change it with set_params): {err}"
    )


class TACOClassifier(ClassifierMixin, BaseEstimator):
    """In-context tabular classifier with end-to-end training-set compression (TACO) or without.

    Parameters
    ----------
    use_compressor
        ``True`` for TACO, ``False`` for the uncompressed baseline (POT).
    row_compression_percentage
        p in (0, 100]: each chunk of n rows becomes K = max(1, min(n, ⌈n·p/100⌉)) latents.
    max_chunk_size
        Training rows compressed together; larger tables are split into chunks.
    n_estimators
        Ensemble members (feature/class rotations, see the module docstring), probabilities
        averaged; 1 to 1024. A table wider than the model (``max_features``, 32 for the
        shipped checkpoints) is split across members: each reads a different block of
        ``max_features`` columns, so ⌈F / max_features⌉ members see every column. The default
        4 was chosen by measurement (docs/taco.md): mean ROC-AUC 0.84 / 0.95 / 0.97 with
        1 / 4 / 8 members on three small real tables, at 1 / ~4 / ~9 times the predict time.
    device
        Torch device for the model and data.
    checkpoint
        Path stem of a checkpoint written by ``save_checkpoint``; ``None`` loads the small
        checkpoint shipped with the package (TACO or POT to match ``use_compressor``).
    seed
        Seeds row shuffling and the members' base orders.

    Attributes
    ----------
    classes_ : ndarray
        Class labels seen in ``fit``.
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``fit`` was given a DataFrame with string column names.
    categorical_features_ : ndarray of bool
        (n_features_in_,) which columns were read as categories (a DataFrame's category, object
        or string columns; always all False for an array).
    categories_ : list of tuple of str
        The categories of each categorical column in code order (codes 0..k-1; missing or
        unseen categories are NaN, i.e. missing cells, for the model).
    model_ : TACOModel
        The loaded model.
    compressed_contexts_ : list of CompressedContext
        One per member (TACO only).
    K_total_ : int
        Context rows the predictor attends to (K_total for TACO, N for POT).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TACOClassifier(row_compression_percentage=10).fit(X, y)
    >>> clf.predict_proba(X[:3]).shape, clf.K_total_
    ((3, 3), 15)

    A DataFrame may mix numeric and categorical columns:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"size": X[:, 0], "kind": pd.Categorical(["a", "b", "c"] * 50)})
    >>> TACOClassifier().fit(df, y).categorical_features_.tolist()
    [False, True]
    """

    def __init__(
        self,
        *,
        use_compressor: bool = True,
        row_compression_percentage: float = 4,
        max_chunk_size: int = 10_000,
        n_estimators: int = 4,
        device: str = "cpu",
        checkpoint: str | Path | None = None,
        seed: Seed = 0,
    ) -> None:
        self.use_compressor = use_compressor
        self.row_compression_percentage = row_compression_percentage
        self.max_chunk_size = max_chunk_size
        self.n_estimators = n_estimators
        self.device = device
        self.checkpoint = checkpoint
        self.seed = seed

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True  # DataFrame category/object columns (see tables.py)
        return tags

    def _checked_parameters(self) -> tuple[float, int, np.random.Generator]:
        """(p, n_estimators, rng) after checking every constructor parameter."""
        owner = "TACOClassifier"
        if not isinstance(self.use_compressor, bool | np.bool_):
            raise TypeError(f"{owner}: use_compressor must be a bool; got {self.use_compressor!r}.")
        p = check_in_interval(
            "row_compression_percentage",
            self.row_compression_percentage,
            low=0,
            high=100,
            closed="right",
            owner=owner,
        )
        check_positive_int("max_chunk_size", self.max_chunk_size, owner=owner)
        n_estimators = check_positive_int(
            "n_estimators", self.n_estimators, owner=owner, maximum=MAX_ESTIMATORS
        )
        as_device(self.device, owner=owner)
        if self.checkpoint is not None and not isinstance(self.checkpoint, str | Path):
            raise TypeError(f"{owner}: checkpoint must be None or a path; got {self.checkpoint!r}.")
        return p, n_estimators, numpy_generator(self.seed)

    def _load_model(self) -> TACOModel:
        path = (
            shipped_checkpoint(self.use_compressor) if self.checkpoint is None else self.checkpoint
        )
        model = load_checkpoint(path)
        if model.use_compressor != bool(self.use_compressor):
            raise ValueError(
                f"TACOClassifier: checkpoint {str(path)!r} has use_compressor="
                f"{model.use_compressor}; got use_compressor={self.use_compressor!r}."
            )
        model.max_chunk_size = self.max_chunk_size
        try:
            return model.to(self.device).eval()
        except (RuntimeError, AssertionError) as err:  # e.g. "cuda" without CUDA
            raise ValueError(f"TACOClassifier: device {self.device!r} is unusable: {err}") from None

    def _table(self, X: Any, y: Any = None, *, reset: bool, method: str) -> Any:
        """X (n, F) float32 (categoricals as codes) and, in ``fit``, y; names kept from a frame."""
        if reset:
            frame = is_frame(X)
            mask = categorical_mask(X) if frame else None
            codes = OrdinalCodes.fit(X, mask) if frame and mask.any() else None
            self._ordinal_codes = codes
        codes = self._ordinal_codes
        if codes is not None and _has_columns(X, self.n_features_in_ if not reset else None):
            X = codes.transform(X)  # a frame stays a frame: validate_data checks its names
        try:
            if reset:
                X, y = validate_data(self, X, y, dtype=np.float32, ensure_all_finite=False)
            else:
                X = validate_data(self, X, dtype=np.float32, ensure_all_finite=False, reset=False)
        except (TypeError, ValueError) as err:
            what = "X and y are not a table and its labels" if reset else "X is refused"
            raise type(err)(f"TACOClassifier.{method}: {what}: {err}") from None
        if reset:
            self.categorical_features_ = np.zeros(X.shape[1], dtype=bool)
            self.categorical_features_[list(codes.columns) if codes else []] = True
            self.categories_ = list(codes.categories) if codes else []
        return (X, y) if reset else X

    def fit(self, X: Any, y: Any) -> TACOClassifier:
        """Load the model and build the context from training rows ``X`` (n, F) and labels ``y``.

        ``X`` is an array-like of numbers (NaN and ±inf allowed) or a pandas DataFrame whose
        category/object/string columns are read as ordinal category codes.

        Raises
        ------
        TypeError, ValueError
            On a constructor parameter out of range (``device`` included), ``X``/``y`` that are
            not a table and its labels, a continuous ``y``, fewer than 2 classes, or more classes
            than the model supports (wrap it in ``OneVsRestClassifier`` for more).
        OSError
            If ``checkpoint`` names no checkpoint file.
        """
        owner = "TACOClassifier"
        try:
            p, n_estimators, rng = self._checked_parameters()
        except (TypeError, ValueError) as err:
            raise _hyperparameter_error(err, "fit") from None
        X, y = self._table(X, y, reset=True, method="fit")
        try:
            check_classification_targets(y)  # scikit-learn's "Unknown label type: ..." message
            self.classes_, y_enc = np.unique(y, return_inverse=True)
        except (TypeError, ValueError) as err:  # e.g. labels that do not sort (None and str)
            raise type(err)(f"{owner}.fit: y must hold class labels: {err}") from None
        n_classes = len(self.classes_)
        if n_classes < 2:
            raise ValueError(f"{owner}: y must contain at least 2 classes; got {n_classes} class.")
        try:
            model = self._load_model()
        except (TypeError, ValueError) as err:
            raise _hyperparameter_error(err, "fit") from None
        if n_classes > model.config.max_classes:
            raise ValueError(
                f"{owner}: the model supports at most {model.config.max_classes} classes; "
                f"y has {n_classes} classes (wrap the classifier in scikit-learn's "
                f"OneVsRestClassifier or OutputCodeClassifier for more)."
            )
        width = model.config.max_features
        if X.shape[1] > width and n_estimators * width < X.shape[1]:
            warnings.warn(
                f"{owner}: X has {X.shape[1]} features but {n_estimators} members of "
                f"{width} features see only {n_estimators * width} of them; use "
                f"n_estimators >= {-(-X.shape[1] // width)} to use every feature.",
                UserWarning,
                stacklevel=2,
            )
        codes = self._ordinal_codes
        self.model_ = model
        self.members_, self.compressed_contexts_ = [], []
        orders = member_orders(rng, X.shape[1], n_classes, n_estimators, width=width)
        for i, (features, classes) in enumerate(orders):
            shuffles = codes.shuffles(rng) if codes is not None and i > 0 else {}
            rows = rng.permutation(len(X))
            X_i = torch.as_tensor(recode(X, shuffles)[rows][:, features], device=self.device)
            y_i = torch.as_tensor(classes[y_enc[rows]], device=self.device)
            if model.use_compressor:
                with torch.no_grad():
                    context = model.compress(X_i[None], y_i[None], percentage=p)
                self.compressed_contexts_.append(context)
                self.members_.append((features, classes, shuffles, None))
            else:
                self.members_.append((features, classes, shuffles, (X_i[None], y_i[None])))
        first = self.compressed_contexts_[0].n_latents if model.use_compressor else len(X)
        self.K_total_ = int(first)
        return self

    def _member_proba(self, i: int, X: np.ndarray) -> np.ndarray:
        features, classes, shuffles, table = self.members_[i]
        X = recode(X, shuffles)
        out = []
        for start in range(0, len(X), _PREDICT_BATCH):
            X_b = torch.as_tensor(
                X[start : start + _PREDICT_BATCH][:, features], device=self.device
            )
            if table is None:
                logits = self.model_.predict_logits(self.compressed_contexts_[i], X_b[None])
            else:
                X_train, y_train = table
                logits = self.model_.predictor(torch.cat([X_train, X_b[None]], dim=1), y_train)
            out.append(logits[0, :, : len(classes)].softmax(-1).cpu().numpy())
        return np.concatenate(out)[:, classes]  # column c = the slot of class c

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (n, n_classes), columns ordered as ``classes_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If X has a different number of features (or, for a DataFrame, other column names)
            than in ``fit``.
        """
        check_is_fitted(self)
        X = self._table(X, reset=False, method="predict_proba")
        with torch.no_grad():
            proba = sum(self._member_proba(i, X) for i in range(len(self.members_)))
        return proba / len(self.members_)

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class label of each row."""
        proba = self.predict_proba(X)  # checks fitted-ness before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]
