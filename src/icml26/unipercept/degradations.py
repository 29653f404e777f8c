"""Graded synthetic degradations with known severity, and the ground-truth quality (spec §5).

The IQA stand-in of UniPercept (arXiv:2512.21675): each degradation k has a severity s_k in
[0, 1] and the ground-truth quality of an image degraded by a set K is

    g = 100 * prod_{k in K} (1 - c_k * s_k),      c_k in [0.6, 0.9] fixed per type.

Kinds: Gaussian blur (sigma = 3 s px), additive Gaussian noise (std 0.15 s), JPEG (Pillow,
quality 95 - 90 s), pixelation (block 1 + 7 s, rounded), contrast loss and over-exposure.

Deviations (*inferred*): the spec does not give c_k nor the contrast and exposure formulas; we
use c = blur 0.8, noise 0.8, jpeg 0.7, pixelate 0.75, contrast 0.6, exposure 0.65, contrast loss
x' = m + (1 - 0.8 s)(x - m) (m the image mean) and over-exposure x' = min(1, (1 + 2 s) x).
Severity 0 returns the input unchanged for every kind (JPEG at quality 95 would not).
Two degradations are applied in the fixed camera-like order of ``KINDS``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Final, Literal

import numpy as np

from icml26.core.validation import Seed, check_in_interval, check_one_of, numpy_generator
from icml26.unipercept.items import check_image

__all__ = [
    "KINDS",
    "QUADRANTS",
    "SEVERITY_COEFFICIENTS",
    "degrade",
    "degrade_many",
    "degrade_quadrant",
    "quality_from_severity",
    "severity_level",
]

KINDS: Final = ("blur", "pixelate", "contrast", "exposure", "noise", "jpeg")
SEVERITY_COEFFICIENTS: Final[Mapping[str, float]] = {
    "blur": 0.8, "pixelate": 0.75, "contrast": 0.6, "exposure": 0.65, "noise": 0.8, "jpeg": 0.7,
}  # fmt: skip
QUADRANTS: Final = ("top-left", "top-right", "bottom-left", "bottom-right")
Kind = Literal["blur", "pixelate", "contrast", "exposure", "noise", "jpeg"]


def _blur(x: np.ndarray, s: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    return gaussian_filter(x, sigma=(3.0 * s, 3.0 * s, 0.0), mode="reflect")


def _jpeg(x: np.ndarray, s: float) -> np.ndarray:
    from PIL import Image

    quality = round(95 - 90 * s)
    buffer = io.BytesIO()
    Image.fromarray(np.round(x * 255).astype(np.uint8)).save(buffer, "JPEG", quality=quality)
    buffer.seek(0)
    return np.asarray(Image.open(buffer).convert("RGB"), dtype=np.float32) / 255.0


def _pixelate(x: np.ndarray, s: float) -> np.ndarray:
    block = round(1 + 7 * s)
    if block <= 1:
        return x
    h, w = x.shape[:2]
    hb, wb = -(-h // block), -(-w // block)
    padded = np.pad(x, ((0, hb * block - h), (0, wb * block - w), (0, 0)), mode="edge")
    means = padded.reshape(hb, block, wb, block, 3).mean(axis=(1, 3))  # (hb, wb, 3)
    return np.repeat(np.repeat(means, block, axis=0), block, axis=1)[:h, :w]


def _rng(rng: Seed, owner: str) -> np.random.Generator:
    try:
        return numpy_generator(rng)
    except TypeError:
        raise TypeError(f"{owner}: rng must be an int, a numpy/torch Generator or None.") from None


def degrade(img: np.ndarray, kind: Kind, severity: float, rng: Seed = None) -> np.ndarray:
    """Apply one degradation of known severity to an (H, W, 3) float image in [0, 1].

    Parameters
    ----------
    img
        The clean image.
    kind
        One of ``KINDS``.
    severity
        s in [0, 1]; 0 returns the input unchanged.
    rng
        Seed or generator for the noise.

    Examples
    --------
    >>> x = np.full((8, 8, 3), 0.5, np.float32)
    >>> bool(np.array_equal(degrade(x, "noise", 0.0, rng=0), x))
    True
    >>> float(degrade(x, "exposure", 0.5).max())
    1.0
    """
    x = check_image("img", img, "degrade")
    check_one_of("kind", kind, KINDS, owner="degrade")
    s = check_in_interval("severity", severity, low=0.0, high=1.0, owner="degrade")
    if s == 0.0:
        return x.copy()
    if kind == "blur":
        out = _blur(x, s)
    elif kind == "noise":
        noise = _rng(rng, "degrade").normal(0.0, 0.15 * s, size=x.shape)
        out = x + noise.astype(np.float32)
    elif kind == "jpeg":
        out = _jpeg(x, s)
    elif kind == "pixelate":
        out = _pixelate(x, s)
    elif kind == "contrast":
        mean = x.mean()
        out = mean + (1.0 - 0.8 * s) * (x - mean)
    else:  # exposure
        out = (1.0 + 2.0 * s) * x
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def degrade_many(img: np.ndarray, severities: Mapping[str, float], rng: Seed = None) -> np.ndarray:
    """Apply several degradations in the fixed order of ``KINDS``."""
    quality_from_severity(severities)  # validates the kinds and severities
    generator = _rng(rng, "degrade_many")
    out = check_image("img", img, "degrade_many")
    for kind in KINDS:
        if kind in severities:
            out = degrade(out, kind, severities[kind], generator)
    return out


def degrade_quadrant(
    img: np.ndarray, kind: Kind, severity: float, quadrant: str, rng: Seed = None
) -> np.ndarray:
    """Degrade one quadrant only; the other three are returned unchanged."""
    x = check_image("img", img, "degrade_quadrant")
    check_one_of("quadrant", quadrant, QUADRANTS, owner="degrade_quadrant")
    full = degrade(x, kind, severity, _rng(rng, "degrade_quadrant"))
    h, w = x.shape[0] // 2, x.shape[1] // 2
    rows = slice(0, h) if quadrant.startswith("top") else slice(h, None)
    cols = slice(0, w) if quadrant.endswith("left") else slice(w, None)
    out = x.copy()
    out[rows, cols] = full[rows, cols]
    return out


def quality_from_severity(severities: Mapping[str, float]) -> float:
    """Ground-truth quality g = 100 * prod_k (1 - c_k s_k) on the 0–100 scale.

    Examples
    --------
    >>> quality_from_severity({}), round(quality_from_severity({"blur": 0.5, "noise": 0.25}), 4)
    (100.0, 48.0)
    """
    if not isinstance(severities, Mapping):
        raise TypeError(
            f"quality_from_severity: severities must be a dict; got {type(severities).__name__}."
        )
    g = 100.0
    for kind, s in severities.items():
        check_one_of("severities key", kind, KINDS, owner="quality_from_severity")
        s = check_in_interval(
            "severities value", s, low=0.0, high=1.0, owner="quality_from_severity"
        )
        g *= 1.0 - SEVERITY_COEFFICIENTS[kind] * s
    return g


def severity_level(severity: float) -> str:
    """Severity class of the benchmark: None (s = 0), Slight (0 < s <= 0.35), Obvious (s > 0.35).

    Examples
    --------
    >>> severity_level(0.0), severity_level(0.35), severity_level(0.36)
    ('None', 'Slight', 'Obvious')
    """
    s = check_in_interval("severity", severity, low=0.0, high=1.0, owner="severity_level")
    if s == 0.0:
        return "None"
    return "Slight" if s <= 0.35 else "Obvious"
