"""The handcrafted IQA "specialist" anchor of spec §5 E1 (not a method of the paper).

21 features of each image (issue 44), computed on the grey image g = mean over channels:

* sharpness and frequency content: log variance and log mean |.| of the Laplacian, the log
  energies of three difference-of-Gaussians bands (sigma 0 - 0.5, 0.5 - 1, 1 - 2 px) and the log
  ratio of the finest to the coarsest band;
* noise: Immerkaer's estimate sigma = sqrt(pi/2) / (6 (H-2)(W-2)) * sum |g * N|, N the
  [[1, -2, 1], [-2, 4, -2], [1, -2, 1]] mask;
* gradients: the 10/25/50/75/90th percentiles and the mean of the Sobel magnitude;
* clipping: the shares of pixels >= 0.98 and <= 0.02;
* blocking: 8x8 blockiness (mean absolute step across block borders over the mean step) and the
  share of flat steps (|step| < 1/255, what pixelation leaves);
* exposure and contrast: grey mean and standard deviation;
* colour spread: mean and standard deviation of the per-pixel channel range max - min.

A scikit-learn ``HistGradientBoostingRegressor`` (default) or a ridge regression maps them to
the MOS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import numpy as np

from icml26.core.validation import check_array, check_one_of, check_positive_int
from icml26.unipercept.items import VRItem, check_sequence

__all__ = ["FEATURE_NAMES", "HandcraftedIQA", "handcrafted_features"]

FEATURE_NAMES: Final = (
    "log_laplacian_var", "log_laplacian_abs", "log_band_0", "log_band_1", "log_band_2",
    "log_band_ratio", "noise_sigma", "grad_p10", "grad_p25", "grad_p50", "grad_p75", "grad_p90",
    "grad_mean", "clip_high", "clip_low", "blockiness", "flat_steps", "grey_mean", "grey_std",
    "colour_range_mean", "colour_range_std",
)  # fmt: skip
_EPS: Final = 1e-8


def _blockiness(dx: np.ndarray, dy: np.ndarray, block: int = 8) -> np.ndarray:
    """(N,) mean step across 8-px block borders over the mean step, from |steps| (N, H, W-1)."""
    border_x = dx[:, :, block - 1 :: block].mean(axis=(1, 2))
    border_y = dy[:, block - 1 :: block].mean(axis=(1, 2))
    inside = 0.5 * (dx.mean(axis=(1, 2)) + dy.mean(axis=(1, 2))) + 1e-6
    return 0.5 * (border_x + border_y) / inside


def handcrafted_features(images: np.ndarray) -> np.ndarray:
    """(N, 21) features of (N, H, W, 3) float images in [0, 1], columns ``FEATURE_NAMES``.

    Examples
    --------
    >>> flat = handcrafted_features(np.full((2, 16, 16, 3), 0.5, np.float32))
    >>> flat.shape, float(flat[0, FEATURE_NAMES.index("noise_sigma")])
    ((2, 21), 0.0)
    """
    from scipy.ndimage import convolve, gaussian_filter

    x = check_array("images", images, owner="handcrafted_features", ndim=4)
    if x.shape[-1] != 3 or x.shape[1] < 8 or x.shape[2] < 8:
        raise ValueError(f"handcrafted_features: images must be (N, H>=8, W>=8, 3); got {x.shape}.")
    x = x.astype(np.float64)
    grey = x.mean(axis=3)  # (N, H, W)
    per_image = (1, 2)

    def log_energy(a: np.ndarray) -> np.ndarray:
        return np.log((a**2).mean(axis=per_image) + _EPS)

    def filter2d(kernel: list[list[float]]) -> np.ndarray:  # per image: no mixing across N
        return convolve(grey, np.asarray(kernel, dtype=float)[None], mode="reflect")

    lap = filter2d([[0, 1, 0], [1, -4, 1], [0, 1, 0]])
    blurred = [grey] + [gaussian_filter(grey, (0, s, s), mode="reflect") for s in (0.5, 1.0, 2.0)]
    bands = [log_energy(blurred[i] - blurred[i + 1]) for i in range(3)]
    response = np.abs(filter2d([[1, -2, 1], [-2, 4, -2], [1, -2, 1]]))[:, 1:-1, 1:-1]
    noise = np.sqrt(np.pi / 2) * response.mean(axis=per_image) / 6.0
    sobel = [[1, 0, -1], [2, 0, -2], [1, 0, -1]]
    grad = np.hypot(filter2d(sobel), filter2d(np.transpose(sobel).tolist()))
    percentiles = np.percentile(grad.reshape(len(x), -1), (10, 25, 50, 75, 90), axis=1)
    dx, dy = np.abs(np.diff(grey, axis=2)), np.abs(np.diff(grey, axis=1))
    flat = 0.5 * ((dx < 1 / 255).mean(axis=per_image) + (dy < 1 / 255).mean(axis=per_image))
    spread = x.max(axis=3) - x.min(axis=3)
    columns = [
        np.log(lap.var(axis=per_image) + _EPS), np.log(np.abs(lap).mean(axis=per_image) + _EPS),
        *bands, bands[0] - bands[2], noise, *percentiles, grad.mean(axis=per_image),
        (grey >= 0.98).mean(axis=per_image), (grey <= 0.02).mean(axis=per_image),
        _blockiness(dx, dy), flat, grey.mean(axis=per_image), grey.std(axis=per_image),
        spread.mean(axis=per_image), spread.std(axis=per_image),
    ]  # fmt: skip
    return np.stack(columns, axis=1)


class HandcraftedIQA:
    """Handcrafted features -> scikit-learn regressor, fitted on rating items.

    Parameters
    ----------
    regressor
        ``"hgb"`` (``HistGradientBoostingRegressor``, the anchor of the experiments) or
        ``"ridge"`` (standardised features, ``Ridge(alpha=1)``).
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

    def __init__(self, regressor: Literal["hgb", "ridge"] = "hgb", seed: int = 0) -> None:
        self.regressor = check_one_of(
            "regressor", regressor, ("hgb", "ridge"), owner="HandcraftedIQA"
        )
        self.seed = check_positive_int(
            "seed", seed, owner="HandcraftedIQA", minimum=0, maximum=2**32 - 1
        )

    def fit(self, items: Sequence[VRItem]) -> HandcraftedIQA:
        """Fit the regressor on the items' features and MOS."""
        from sklearn.ensemble import HistGradientBoostingRegressor
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        items = self._check(items)
        features = handcrafted_features(np.stack([it.image for it in items]))
        mos = np.array([it.mos for it in items])
        if self.regressor == "ridge":
            self.model_ = make_pipeline(StandardScaler(), Ridge(alpha=1.0))
        else:
            self.model_ = HistGradientBoostingRegressor(random_state=self.seed)
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
