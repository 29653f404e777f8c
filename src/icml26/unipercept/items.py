"""Benchmark items: a Visual Rating item (image, domain, MOS) and a multiple-choice VQA item.

Cao et al., UniPercept (arXiv:2512.21675), §3: every VQA item carries its taxonomy path
(domain, category, criterion), a question template, the question, 2–4 options and the answer
letter; a VR item carries the image, its domain and a MOS on the 0–100 scale.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GenericQAItem", "VQAItem", "VRItem", "check_image"]

LETTERS = string.ascii_uppercase


def check_sequence(
    name: str, value: Any, owner: str, types: type | tuple[type, ...], *, allow_empty: bool = False
) -> list[Any]:
    """``value`` as a list after checking it is a list/tuple of ``types`` (not a string)."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise TypeError(f"{owner}: {name} must be a list or tuple; got {type(value).__name__}.")
    if not value and not allow_empty:
        raise ValueError(f"{owner}: {name} must not be empty.")
    if not all(isinstance(v, types) for v in value):
        raise TypeError(f"{owner}: {name} must hold {types} only.")
    return list(value)


def check_image(name: str, image: Any, owner: str) -> np.ndarray:
    """An (H, W, 3) float image with values in [0, 1] (float32), else a clear error."""
    if not isinstance(image, np.ndarray):
        raise TypeError(f"{owner}: {name} must be a numpy array; got {type(image).__name__}.")
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] < 4 or image.shape[1] < 4:
        raise ValueError(
            f"{owner}: {name} must have shape (H, W, 3) with H, W >= 4; got {image.shape}."
        )
    if image.dtype.kind != "f":
        raise TypeError(
            f"{owner}: {name} must be a float array in [0, 1]; got dtype {image.dtype}."
        )
    if not np.all(np.isfinite(image)) or image.min() < 0.0 or image.max() > 1.0:
        raise ValueError(f"{owner}: {name} must hold finite values in [0, 1].")
    return image.astype(np.float32, copy=False)


@dataclass(frozen=True)
class VRItem:
    """A Visual Rating item.

    Parameters
    ----------
    image
        (H, W, 3) float image in [0, 1].
    domain
        ``"IAA"``, ``"IQA"`` or ``"ISTA"``.
    mos
        Ground-truth score on the 0–100 scale.
    source
        Name of the source image (used for split hygiene).
    meta
        Generator details (degradations, annotation, ...).

    Examples
    --------
    >>> VRItem(np.zeros((8, 8, 3), np.float32), "IQA", 87.5).mos
    87.5
    """

    image: np.ndarray
    domain: str
    mos: float
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "image", check_image("image", self.image, "VRItem"))
        if not isinstance(self.domain, str):
            raise TypeError(f"VRItem: domain must be a str; got {type(self.domain).__name__}.")
        if self.domain not in ("IAA", "IQA", "ISTA"):
            raise ValueError(f"VRItem: domain must be one of IAA, IQA, ISTA; got {self.domain!r}.")
        if isinstance(self.mos, bool) or not isinstance(self.mos, int | float | np.number):
            raise TypeError(f"VRItem: mos must be a number; got {type(self.mos).__name__}.")
        if not 0.0 <= float(self.mos) <= 100.0:
            raise ValueError(f"VRItem: mos must be in [0, 100]; got {self.mos!r}.")
        object.__setattr__(self, "mos", float(self.mos))


@dataclass(frozen=True)
class VQAItem:
    """A multiple-choice VQA item on one taxonomy path.

    Parameters
    ----------
    image
        (H, W, 3) float image in [0, 1].
    domain, category, criterion
        The taxonomy path (see :class:`~icml26.unipercept.taxonomy.Taxonomy`).
    template
        The question template (``What``, ``Which``, ``How``, ``Why``, ``Yes-No``, ``Lv.Pred``).
    question
        The question text.
    options
        2–4 option texts, lettered A, B, C, D in order.
    answer
        The correct letter.

    Examples
    --------
    >>> item = VQAItem(np.zeros((8, 8, 3), np.float32), "ISTA", "Scene Decomposition",
    ...                "Scene Classification", "Yes-No", "Is this a composite scene?",
    ...                ("Yes", "No"), "B")
    >>> item.answer_index, item.answer_text
    (1, 'No')
    """

    image: np.ndarray
    domain: str
    category: str
    criterion: str
    template: str
    question: str
    options: tuple[str, ...]
    answer: str
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        from icml26.unipercept.taxonomy import TEMPLATES, Taxonomy

        object.__setattr__(self, "image", check_image("image", self.image, "VQAItem"))
        if not Taxonomy.load_default().contains(self.domain, self.category, self.criterion):
            raise ValueError(
                "VQAItem: (domain, category, criterion) must be a taxonomy path; got "
                f"({self.domain!r}, {self.category!r}, {self.criterion!r})."
            )
        if self.template not in TEMPLATES:
            raise ValueError(
                f"VQAItem: template must be one of {TEMPLATES}; got {self.template!r}."
            )
        if isinstance(self.options, str) or not isinstance(self.options, list | tuple):
            raise TypeError("VQAItem: options must be a tuple of option texts.")
        if not isinstance(self.answer, str):
            raise TypeError(f"VQAItem: answer must be a letter; got {type(self.answer).__name__}.")
        for field_name in ("domain", "category", "criterion", "template", "question"):
            if not isinstance(getattr(self, field_name), str):
                raise TypeError(f"VQAItem: {field_name} must be a str.")
        object.__setattr__(self, "options", _check_choice("VQAItem", self.options, self.answer))

    @property
    def answer_index(self) -> int:
        """Index of the correct option."""
        return LETTERS.index(self.answer)

    @property
    def answer_text(self) -> str:
        """Text of the correct option."""
        return self.options[self.answer_index]


@dataclass(frozen=True)
class GenericQAItem:
    """A multiple-choice question without a perceptual label (generic pretraining, issue 44).

    Parameters
    ----------
    image
        (H, W, 3) float image in [0, 1].
    question
        The question text.
    options
        2–4 distinct option texts, lettered A, B, C, D in order.
    answer
        The correct letter.

    Examples
    --------
    >>> GenericQAItem(np.zeros((8, 8, 3), np.float32), "How many objects are in this image?",
    ...               ("one", "two"), "B").answer_index
    1
    """

    image: np.ndarray
    question: str
    options: tuple[str, ...]
    answer: str
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "image", check_image("image", self.image, "GenericQAItem"))
        if not isinstance(self.question, str) or not self.question:
            raise TypeError("GenericQAItem: question must be a non-empty str.")
        if isinstance(self.options, str) or not isinstance(self.options, list | tuple):
            raise TypeError("GenericQAItem: options must be a tuple of option texts.")
        object.__setattr__(
            self, "options", _check_choice("GenericQAItem", self.options, self.answer)
        )

    @property
    def answer_index(self) -> int:
        """Index of the correct option."""
        return LETTERS.index(self.answer)


def _check_choice(owner: str, options: Any, answer: Any) -> tuple[str, ...]:
    """``options`` as a tuple of 2-4 distinct non-empty strings, ``answer`` one of their letters."""
    options = tuple(options)
    if not 2 <= len(options) <= 4 or not all(isinstance(o, str) and o for o in options):
        raise ValueError(f"{owner}: options must be 2-4 non-empty strings; got {options!r}.")
    if len(set(options)) != len(options):
        raise ValueError(f"{owner}: options must be distinct; got {options!r}.")
    if answer not in LETTERS[: len(options)]:
        raise ValueError(
            f"{owner}: answer must be one of {tuple(LETTERS[: len(options)])}; got {answer!r}."
        )
    return options
