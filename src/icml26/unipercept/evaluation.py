"""Benchmark evaluation of any perceptual model (spec §2.3 and §2.7 step 9).

A model is anything with ``rate(images, domain) -> scores`` (Token-As-Score ratings on 0–100)
and ``choose(items) -> letters`` (or replies whose first letter is read): TinyPercept and the
real-scale :class:`~icml26.unipercept.real.UniPerceptScorer` both are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml26.unipercept.items import VQAItem, VRItem, check_sequence
from icml26.unipercept.metrics import vqa_accuracy, vr_metrics

__all__ = ["evaluate_vqa", "evaluate_vr"]


def evaluate_vr(
    model: Any, dataset: Sequence[VRItem], logistic: bool = False
) -> dict[str, dict[str, float]]:
    """SRCC / PLCC / mean per domain of ``model``'s ratings of the rating items.

    Parameters
    ----------
    model
        Has ``rate(images: (N, H, W, 3) array, domain: str) -> (N,) scores``.
    dataset
        Rating items (at least 2 per domain present).
    logistic
        Use the VQEG logistic-fit PLCC (not the paper default).

    Returns
    -------
    dict
        ``{domain: {"srcc", "plcc", "mean"}}``.
    """
    if not callable(getattr(model, "rate", None)):
        raise TypeError("evaluate_vr: model must have a rate(images, domain) method.")
    items = check_sequence("dataset", dataset, "evaluate_vr", VRItem)
    out = {}
    for domain in dict.fromkeys(it.domain for it in items):
        group = [it for it in items if it.domain == domain]
        shapes = {it.image.shape for it in group}
        if len(shapes) == 1:
            preds = np.asarray(
                model.rate(np.stack([it.image for it in group]), domain), dtype=float
            )
        else:  # real benchmarks mix sizes: rate one by one
            preds = np.concatenate(
                [np.asarray(model.rate(it.image[None], domain), float) for it in group]
            )
        out[domain] = vr_metrics(preds, np.array([it.mos for it in group]), logistic=logistic)
    return out


def evaluate_vqa(
    model: Any, dataset: Sequence[VQAItem], by: Sequence[str] = ("domain", "category", "template")
) -> dict[str, Any]:
    """First-letter accuracy of ``model.choose(items)`` overall and by domain/category/template."""
    if not callable(getattr(model, "choose", None)):
        raise TypeError("evaluate_vqa: model must have a choose(items) method.")
    items = check_sequence("dataset", dataset, "evaluate_vqa", object)
    if not all(hasattr(it, "answer") and hasattr(it, "options") for it in items):
        raise TypeError("evaluate_vqa: dataset must be a non-empty sequence of VQAItem/BenchItem.")
    return vqa_accuracy(items, list(model.choose(items)), by=by)
