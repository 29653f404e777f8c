"""The handcrafted IQA "specialist" anchor of spec §5 E1 (not a method of the paper).

Features of each image: variance of the Laplacian (sharpness), the wavelet noise estimate of
``skimage.restoration.estimate_sigma``, 8x8 blockiness (mean absolute step across block borders
over the mean step inside blocks), plus the grey-level mean and standard deviation (exposure and
contrast); a scikit-learn ridge regression (or gradient boosting) maps them to the MOS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from icml26.core.validation import check_array, check_one_of, check_positive_int
from icml26.unipercept.items import VRItem, check_sequence

__all__ = ["HandcraftedIQA", "handcrafted_features"]


def _blockiness(grey: np.ndarray, block: int = 8) -> float:
    dx = np.abs(np.diff(grey, axis=1))  # (H, W-1): step between columns j and j+1
    dy = np.abs(np.diff(grey, axis=0))
    border_x = dx[:, block - 1 :: block].mean() if dx.shape[1] >= block else 0.0
    border_y = dy[block - 1 :: block].mean() if dy.shape[0] >= block else 0.0
    inside = 0.5 * (dx.mean() + dy.mean()) + 1e-6
    return float(0.5 * (border_x + border_y) / inside)


def handcrafted_features(images: np.ndarray) -> np.ndarray:
    """(N, 5) features of (N, H, W, 3) float images in [0, 1].

    Columns: log Laplacian variance, estimated noise sigma, 8x8 blockiness, grey mean, grey std.

    Examples
    --------
    >>> handcrafted_features(np.full((2, 16, 16, 3), 0.5, np.float32)).shape
    (2, 5)
    """
    from scipy.ndimage import laplace
    from skimage.restoration import estimate_sigma

    x = check_array("images", images, owner="handcrafted_features", ndim=4)
    if x.shape[-1] != 3 or x.shape[1] < 8 or x.shape[2] < 8:
        raise ValueError(f"handcrafted_features: images must be (N, H>=8, W>=8, 3); got {x.shape}.")
    rows = []
    for image in x:
        grey = image.mean(axis=2)
        rows.append([
            np.log(laplace(grey).var() + 1e-8),
            float(estimate_sigma(grey)),
            _blockiness(grey),
            grey.mean(),
            grey.std(),
        ])  # fmt: skip
    return np.asarray(rows, dtype=float)


class HandcraftedIQA:
    """Handcrafted features -> scikit-learn regressor, fitted on rating items.

    Parameters
    ----------
    regressor
        ``"ridge"`` (standardised features, ``Ridge(alpha=1)``) or ``"gbr"``
        (``GradientBoostingRegressor``).
    seed
        Seed of the gradient-boosting regressor.

    Examples
    --------
    >>> from icml26.unipercept.perceptoy import make_iqa_vr
    >>> items = make_iqa_vr(40, seed=0, size=32)
    >>> model = HandcraftedIQA().fit(items)
    >>> model.predict(items).shape
    (40,)
    """

    def __init__(self, regressor: Literal["ridge", "gbr"] = "ridge", seed: int = 0) -> None:
        self.regressor = check_one_of(
            "regressor", regressor, ("ridge", "gbr"), owner="HandcraftedIQA"
        )
        self.seed = check_positive_int(
            "seed", seed, owner="HandcraftedIQA", minimum=0, maximum=2**32 - 1
        )

    def fit(self, items: Sequence[VRItem]) -> HandcraftedIQA:
        """Fit the regressor on the items' features and MOS."""
        from sklearn.ensemble import GradientBoostingRegressor
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        items = self._check(items)
        features = handcrafted_features(np.stack([it.image for it in items]))
        mos = np.array([it.mos for it in items])
        if self.regressor == "ridge":
            self.model_ = make_pipeline(StandardScaler(), Ridge(alpha=1.0))
        else:
            self.model_ = GradientBoostingRegressor(random_state=self.seed)
        self.model_.fit(features, mos)
        return self

    def predict(self, items: Sequence[VRItem]) -> np.ndarray:
        """Predicted MOS of the items, clipped to [0, 100]."""
        if not hasattr(self, "model_"):
            raise ValueError("HandcraftedIQA: call fit(items) before predict(items).")
        items = self._check(items)
        features = handcrafted_features(np.stack([it.image for it in items]))
        return np.clip(self.model_.predict(features), 0.0, 100.0)

    @staticmethod
    def _check(items: Sequence[VRItem]) -> list[VRItem]:
        items = check_sequence("items", items, "HandcraftedIQA", VRItem)
        if any(min(it.image.shape[:2]) < 8 for it in items):
            raise ValueError("HandcraftedIQA: items must hold images of at least 8 x 8 pixels.")
        if len({it.image.shape for it in items}) != 1:
            raise ValueError("HandcraftedIQA: items must share one image shape.")
        return items
