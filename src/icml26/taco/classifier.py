"""scikit-learn classifier around a (meta-trained) TACO or POT model (spec §2.2, §6).

TACO (arXiv:2602.05649). ``fit`` shuffles the training rows, and for TACO compresses them into a
:class:`CompressedContext` (the raw table is then dropped); ``predict_proba`` runs the predictor on
the test rows against that context. ``use_compressor=False`` is the uncompressed baseline POT,
which keeps the training table as its context. With ``n_estimators > 1`` each member sees its own
feature and class permutation (member 0 the identity) and the probabilities are averaged.

Deviations: the TabPFN preprocessing variants of the official ensemble (power transforms, etc.)
are left out; members differ only by feature/class permutations and row shuffles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator
from icml26.taco.encoder import as_device
from icml26.taco.model import TACOModel
from icml26.taco.training import load_checkpoint, shipped_checkpoint

__all__ = ["TACOClassifier"]

_PREDICT_BATCH = 1024  # test rows per forward; test rows are independent, so any size is exact


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
        Ensemble members (feature/class permutations), probabilities averaged.
    device
        Torch device for the model and data.
    checkpoint
        Path stem of a checkpoint written by ``save_checkpoint``; ``None`` loads the small
        checkpoint shipped with the package (TACO or POT to match ``use_compressor``).
    seed
        Seeds row shuffling and the members' permutations.

    Attributes
    ----------
    classes_ : ndarray
        Class labels seen in ``fit``.
    model_ : TACOModel
        The loaded model.
    compressed_contexts_ : list of CompressedContext
        One per member (TACO only).
    K_total_ : int
        Context rows the predictor attends to (K_total for TACO, N for POT).

    Example
    -------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TACOClassifier(row_compression_percentage=10).fit(X, y)
    >>> clf.predict_proba(X[:3]).shape, clf.K_total_
    ((3, 3), 15)
    """

    def __init__(
        self,
        *,
        use_compressor: bool = True,
        row_compression_percentage: float = 4,
        max_chunk_size: int = 10_000,
        n_estimators: int = 1,
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
        return tags

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
        return model.to(self.device).eval()

    def fit(self, X: Any, y: Any) -> TACOClassifier:
        """Load the model and build the context from training rows ``X`` (n, F) and labels ``y``.

        Raises
        ------
        TypeError, ValueError
            On a parameter out of range (``device`` included), ``X``/``y`` that are not a table
            and its labels, fewer than 2 classes, or more classes or features than the model
            supports.
        """
        owner = "TACOClassifier"
        p = check_in_interval(
            "row_compression_percentage",
            self.row_compression_percentage,
            low=0,
            high=100,
            closed="right",
            owner=owner,
        )
        check_positive_int("max_chunk_size", self.max_chunk_size, owner=owner)
        n_estimators = check_positive_int("n_estimators", self.n_estimators, owner=owner)
        as_device(self.device, owner=owner)
        try:
            X, y = validate_data(self, X, y, dtype=np.float32, ensure_all_finite=False)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{owner}.fit: X and y are not a table and its labels: {err}") from None
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        n_classes = len(self.classes_)
        if n_classes < 2:
            raise ValueError(f"{owner}: y must contain at least 2 classes; got {n_classes} class.")
        model = self._load_model()
        if n_classes > model.config.max_classes:
            raise ValueError(
                f"{owner}: the model supports at most {model.config.max_classes} classes; "
                f"got {n_classes} classes."
            )
        if X.shape[1] > model.config.max_features:
            raise ValueError(
                f"{owner}: the model supports at most {model.config.max_features} features; "
                f"got {X.shape[1]} features."
            )
        rng = numpy_generator(self.seed)
        self.model_ = model
        self.members_, self.compressed_contexts_ = [], []
        for i in range(n_estimators):
            rows = rng.permutation(len(X))
            features = np.arange(X.shape[1]) if i == 0 else rng.permutation(X.shape[1])
            classes = np.arange(n_classes) if i == 0 else rng.permutation(n_classes)
            X_i = torch.as_tensor(X[rows][:, features], device=self.device)[None]
            y_i = torch.as_tensor(classes[y_enc[rows]], device=self.device)[None]
            if model.use_compressor:
                with torch.no_grad():
                    context = model.compress(X_i, y_i, percentage=p)
                self.compressed_contexts_.append(context)
                self.members_.append((features, classes, None))
            else:
                self.members_.append((features, classes, (X_i, y_i)))
        first = self.compressed_contexts_[0].n_latents if model.use_compressor else len(X)
        self.K_total_ = int(first)
        return self

    def _member_proba(self, i: int, X: np.ndarray) -> np.ndarray:
        features, classes, table = self.members_[i]
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
        return np.concatenate(out)[:, classes]  # column c = member class classes[c]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (n, n_classes), columns ordered as ``classes_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If X has a different number of features than in ``fit``.
        """
        check_is_fitted(self)
        try:
            X = validate_data(self, X, dtype=np.float32, ensure_all_finite=False, reset=False)
        except (TypeError, ValueError) as err:
            raise type(err)(f"TACOClassifier.predict_proba: X is refused: {err}") from None
        with torch.no_grad():
            proba = sum(self._member_proba(i, X) for i in range(len(self.members_)))
        return proba / len(self.members_)

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class label of each row."""
        proba = self.predict_proba(X)  # checks fitted-ness before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]
