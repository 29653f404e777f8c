"""Offline image sources for PerceptToy (spec §5): scikit-image and scikit-learn bundled photos.

Every source loads from files shipped inside the installed packages (no pooch, no network). The
sources are split by image: train / val / test never share a source. Each source is converted to
RGB float32 in [0, 1] and resized so that its short side is ``short_side`` pixels, so that a
32–48 px crop holds structure rather than a flat patch.

Deviations: ``lfw_subset`` (25 x 25) and ``load_digits`` (8 x 8) are too small for 32–48 px crops
and are not used; brick, grass and gravel are reserved as ISTA material textures and split by
disjoint horizontal bands of the image instead of by image (they are the only real textures).
A crop whose grey-level standard deviation is below 0.05 is redrawn (*inferred*): on a flat patch
blur, JPEG and pixelation leave no trace and the quality label would be unobservable.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final, Literal

import numpy as np

from icml26.core.validation import Seed, check_one_of, check_positive_int, numpy_generator

__all__ = [
    "IQA_SOURCES",
    "SPLITS",
    "TEXTURE_SOURCES",
    "load_source",
    "random_crop",
    "sources_for",
    "texture_band",
]

# Photographs for IQA/IAA crops, assigned to splits once (by image).
IQA_SOURCES: Final[dict[str, tuple[str, ...]]] = {
    "train": (
        "astronaut", "camera", "cell", "chelsea", "clock", "coins", "colorwheel",
        "hubble_deep_field", "immunohistochemistry", "logo", "microaneurysms", "page", "retina",
        "text", "sklearn:china",
    ),
    "val": ("checkerboard", "horse", "moon"),
    "test": ("coffee", "rocket", "sklearn:flower"),
}  # fmt: skip
TEXTURE_SOURCES: Final = ("brick", "grass", "gravel")
SPLITS: Final = ("train", "val", "test")
# Disjoint horizontal bands (fractions of the height) of each texture image per split.
_BANDS: Final = {"train": (0.0, 0.6), "val": (0.6, 0.8), "test": (0.8, 1.0)}


def sources_for(split: Literal["train", "val", "test"]) -> tuple[str, ...]:
    """The photo sources of ``split`` (disjoint across splits)."""
    check_one_of("split", split, SPLITS, owner="sources_for")
    return IQA_SOURCES[split]


def _to_rgb_float(array: np.ndarray) -> np.ndarray:
    image = np.asarray(array)
    if image.dtype == bool:
        image = image.astype(np.float32)
    elif image.dtype.kind in "ui":
        image = image.astype(np.float32) / 255.0
    else:
        image = image.astype(np.float32)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.shape[2] == 4:  # RGBA logo: composite on white
        rgb, a = image[:, :, :3], image[:, :, 3:4]
        image = rgb * a + (1.0 - a)
    return np.clip(image[:, :, :3], 0.0, 1.0)


def _resize(image: np.ndarray, short_side: int) -> np.ndarray:
    from PIL import Image

    h, w = image.shape[:2]
    scale = short_side / min(h, w)
    size = (max(short_side, round(w * scale)), max(short_side, round(h * scale)))
    pil = Image.fromarray(np.round(image * 255).astype(np.uint8))
    resized = pil.resize(size, Image.Resampling.LANCZOS)
    return np.asarray(resized, dtype=np.float32) / 255.0


@functools.lru_cache(maxsize=64)
def _load_raw(name: str) -> np.ndarray:
    if name.startswith("sklearn:"):
        from sklearn.datasets import load_sample_image

        return _to_rgb_float(load_sample_image(name.split(":", 1)[1] + ".jpg"))
    import skimage.data

    return _to_rgb_float(getattr(skimage.data, name)())


@functools.lru_cache(maxsize=128)
def _load_resized(name: str, short_side: int) -> np.ndarray:
    image = _resize(_load_raw(name), short_side)
    image.setflags(write=False)
    return image


def load_source(name: str, short_side: int = 128) -> np.ndarray:
    """A bundled image as (H, W, 3) float32 in [0, 1], short side resized to ``short_side``.

    Examples
    --------
    >>> load_source("camera", short_side=64).shape
    (64, 64, 3)
    """
    known = (*IQA_SOURCES["train"], *IQA_SOURCES["val"], *IQA_SOURCES["test"], *TEXTURE_SOURCES)
    check_one_of("name", name, known, owner="load_source")
    short_side = check_positive_int("short_side", short_side, owner="load_source", minimum=16,
                                    maximum=1024)  # fmt: skip
    return _load_resized(name, short_side)


def texture_band(
    name: str, split: Literal["train", "val", "test"], short_side: int = 256
) -> np.ndarray:
    """The split's horizontal band of a texture image (brick, grass, gravel)."""
    check_one_of("name", name, TEXTURE_SOURCES, owner="texture_band")
    check_one_of("split", split, SPLITS, owner="texture_band")
    image = load_source(name, short_side)
    lo, hi = _BANDS[split]
    h = image.shape[0]
    return image[int(lo * h) : int(hi * h)]


def random_crop(image: np.ndarray, size: int, seed: Seed = None) -> np.ndarray:
    """A uniformly placed ``size`` x ``size`` crop (a copy)."""
    size = check_positive_int("size", size, owner="random_crop", minimum=4, maximum=1024)
    if not isinstance(image, np.ndarray) or image.ndim != 3:
        raise TypeError("random_crop: image must be an (H, W, C) numpy array.")
    h, w = image.shape[:2]
    if h < size or w < size:
        raise ValueError(
            f"random_crop: size must be <= the image's sides {image.shape[:2]}; got {size}."
        )
    rng = numpy_generator(seed)
    top, left = int(rng.integers(0, h - size + 1)), int(rng.integers(0, w - size + 1))
    return image[top : top + size, left : left + size].copy()


def crops(
    names: Sequence[str],
    n: int,
    size: int,
    short_side: int,
    seed: Seed = None,
    min_std: float = 0.05,
) -> list[tuple[str, np.ndarray]]:
    """``n`` random crops, each from a uniformly drawn source of ``names``.

    A crop whose grey-level standard deviation is below ``min_std`` is redrawn (up to 20
    times): on a flat patch blur, JPEG and pixelation leave no trace, so its quality label
    would be unobservable (threshold *inferred*).
    """
    rng = numpy_generator(seed)
    out = []
    for _ in range(n):
        name = names[int(rng.integers(len(names)))]
        source = load_source(name, short_side)
        crop = random_crop(source, size, rng)
        for _attempt in range(20):
            if crop.mean(axis=2).std() >= min_std:
                break
            crop = random_crop(source, size, rng)
        out.append((name, crop))
    return out
