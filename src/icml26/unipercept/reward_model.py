"""UniPercept as a plug-and-play perceptual reward for generators (spec §2.6, §2.7 step 10).

Cao et al., UniPercept (arXiv:2512.21675), §5: the three VR outputs (IAA, IQA, ISTA on 0–100)
serve singly or jointly ("All") as the reward of Flow-GRPO fine-tuning of a text-to-image model.
With domain weights w_d >= 0 (not all zero) the reward of an image x is

    R(x) = sum_d w_d * score_d(x) / (100 * sum_d w_d)        in [0, 1].

Deviations: the paper does not say how "All" combines the scores; equal weights are the default
(*inferred*), and the weights are a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["DOMAIN_KEYS", "PerceptualReward"]

DOMAIN_KEYS = {"iaa": "IAA", "iqa": "IQA", "ista": "ISTA"}


class PerceptualReward:
    """Weighted mean of a perceptual model's domain ratings, divided by 100.

    Parameters
    ----------
    model
        Anything with ``rate(images, domain) -> (N,) scores on 0–100`` (TinyPercept,
        :class:`~icml26.unipercept.real.UniPerceptScorer`).
    weights
        ``{"iaa": w, "iqa": w, "ista": w}`` (missing keys weigh 0); non-negative, not all zero.

    Examples
    --------
    >>> class Fixed:
    ...     def rate(self, images, domain):
    ...         return np.full(len(images), {"IAA": 20.0, "IQA": 60.0, "ISTA": 40.0}[domain])
    >>> reward = PerceptualReward(Fixed(), weights={"iqa": 3, "ista": 1})
    >>> reward(np.zeros((2, 8, 8, 3), np.float32)).tolist()
    [0.55, 0.55]
    """

    def __init__(self, model: Any, weights: Mapping[str, float] | None = None) -> None:
        if not callable(getattr(model, "rate", None)):
            raise TypeError("PerceptualReward: model must have a rate(images, domain) method.")
        weights = {"iaa": 1.0, "iqa": 1.0, "ista": 1.0} if weights is None else weights
        if not isinstance(weights, Mapping):
            raise TypeError(
                f"PerceptualReward: weights must be a dict; got {type(weights).__name__}."
            )
        clean: dict[str, float] = {}
        for key, value in weights.items():
            if key not in DOMAIN_KEYS:
                raise ValueError(
                    f"PerceptualReward: weights keys must be in {tuple(DOMAIN_KEYS)}; got {key!r}."
                )
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise TypeError(f"PerceptualReward: weights[{key!r}] must be a number.")
            if not np.isfinite(value) or value < 0:
                raise ValueError(
                    f"PerceptualReward: weights[{key!r}] must be finite and >= 0; got {value!r}."
                )
            clean[key] = float(value)
        if sum(clean.values()) <= 0:
            raise ValueError("PerceptualReward: weights must not be all zero.")
        self.model = model
        self.weights = clean

    def scores(self, images: np.ndarray) -> dict[str, np.ndarray]:
        """The model's rating of every weighted domain, ``{"iqa": (N,), ...}`` on 0–100."""
        if not isinstance(images, np.ndarray) or images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError("PerceptualReward: images must be an (N, H, W, 3) numpy array.")
        if images.dtype.kind != "f":
            raise TypeError(
                f"PerceptualReward: images must be float in [0, 1]; got dtype {images.dtype}."
            )
        if len(images) == 0:
            return {k: np.zeros(0) for k, w in self.weights.items() if w > 0}
        return {
            key: np.asarray(self.model.rate(images, DOMAIN_KEYS[key]), dtype=float)
            for key, w in self.weights.items()
            if w > 0
        }

    def __call__(self, images: np.ndarray) -> np.ndarray:
        """R(x) = sum_d w_d score_d(x) / (100 sum_d w_d) for each of the (N, H, W, 3) images."""
        scores = self.scores(images)
        total = sum(self.weights.values())
        combined = sum(self.weights[k] * s for k, s in scores.items())
        return np.asarray(combined, dtype=float) / (100.0 * total)
