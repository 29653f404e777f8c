"""Questions as text for the tiny InternVL (issue 44): a template bank, prompts, letter answers.

Cao et al., UniPercept (arXiv:2512.21675), §3: every VQA item is a question written from a
Question Template Bank, options written "A. ... B. ..." and the answer is the letter; a rating
is asked with one prompt per domain and answered by a score token. Here each PerceptToy
question has paraphrases (:data:`QUESTION_BANK`), and :func:`make_text_dependent_vqa` adds
items whose answer depends on the question's wording (a Yes/No question about one named
distortion or one named region of the same image): a model that does not read the question
is at chance on them.

Deviations: the rating prompts are short paraphrases of the paper's (its full wording, with the
score-token mapping spelled out, is :data:`~icml26.unipercept.real.VR_PROMPTS`); the tiny model
reads words of a closed vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import numpy as np

from icml26.core.validation import Seed, numpy_generator
from icml26.unipercept.degradations import QUADRANTS, degrade, degrade_quadrant
from icml26.unipercept.items import LETTERS, GenericQAItem, VQAItem, VRItem

__all__ = [
    "PRETRAIN_QUESTIONS",
    "QUESTION_BANK",
    "RATING_QUESTIONS",
    "bank_texts",
    "make_pretrain_set",
    "make_text_dependent_vqa",
    "prompt_text",
]

QUESTION_BANK: Final[Mapping[str, tuple[str, ...]]] = {
    "Which distortion is most evident in this image?": (
        "What kind of degradation does this picture show most?",
        "Which artefact dominates this image?",
    ),
    "How severe is the distortion in this image?": (
        "How strong is the degradation of this picture?",
        "To what degree is this image degraded?",
    ),
    "Which region of the image is degraded?": (
        "Where in this picture is the distortion?",
        "Which part of the image shows the artefact?",
    ),
    "What is the base morphology of the first object's surface?": (
        "Which texture covers the first object?",
        "What surface pattern does the first object show?",
    ),
    "Which 2-D contour does the first object have?": (
        "What is the outline of the first object?",
        "Which shape does the first object have?",
    ),
    "What material is the first object made of?": (
        "Which material is the first object?",
        "What is the first object made of?",
    ),
    "Is this a composite scene of several objects?": (
        "Does this image show more than one object?",
        "Is this scene composed of several objects?",
    ),
    "Is the main subject placed on a rule-of-thirds point?": (
        "Does the main subject sit on a third point?",
    ),
    "How is the exposure of this image?": ("How well exposed is this picture?",),
}
RATING_QUESTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "IAA": ("Rate the aesthetics of this image.", "How beautiful is this picture?"),
    "IQA": ("Rate the quality of this image.", "How good is the quality of this picture?"),
    "ISTA": (
        "Rate the structure and texture richness of this image.",
        "How rich are the structure and texture of this picture?",
    ),
}
PRETRAIN_QUESTIONS: Final = {
    "kind": "What kind of picture is this?",
    "count": "How many objects are in this image?",
    "shape": "Which shape does the first object have?",
    "colour": "What is the main colour of this picture?",
}
_KINDS_OF_PICTURE: Final = ("photograph", "drawing")
_COUNTS: Final = ("one", "two", "three", "four")
_COLOURS: Final = ("red", "green", "blue")
_KIND_NAMES: Final = {"blur": "blur", "noise": "noise", "jpeg": "JPEG"}
_ASK_KIND: Final = "Does this image show {}?"
_ASK_REGION: Final = "Is the {} region degraded?"
_RATE_SUFFIX: Final = "Answer with a score token."
_CHOOSE_SUFFIX: Final = "Answer with the letter."


def _question(item: VQAItem | GenericQAItem, rng: np.random.Generator | None) -> str:
    paraphrases = QUESTION_BANK.get(item.question)
    if rng is None or paraphrases is None:
        return item.question
    choices = (item.question, *paraphrases)
    return choices[int(rng.integers(len(choices)))]


def prompt_text(
    item: VRItem | VQAItem | GenericQAItem, rng: Seed | None = None, *, question_blind: bool = False
) -> str:
    """The text prompt of an item: question, lettered options, and what to answer.

    Parameters
    ----------
    item
        A rating or question item.
    rng
        Draws a paraphrase from the bank when given; ``None`` keeps the item's own wording.
    question_blind
        Leave the question out (options and instruction only): the control of the
        text-dependent items.

    Examples
    --------
    >>> item = VQAItem(np.zeros((8, 8, 3), np.float32), "IQA", "Distortion Type",
    ...                "Distortion Types Present", "Yes-No", "Does this image show blur?",
    ...                ("Yes", "No"), "A")
    >>> prompt_text(item)
    'Does this image show blur? A. Yes B. No Answer with the letter.'
    >>> prompt_text(item, question_blind=True)
    'A. Yes B. No Answer with the letter.'
    """
    if not isinstance(item, VRItem | VQAItem | GenericQAItem):
        raise TypeError(
            f"prompt_text: item must be a VRItem, VQAItem or GenericQAItem; got {item!r}."
        )
    generator = None if rng is None else numpy_generator(rng)
    if isinstance(item, VRItem):
        asks = RATING_QUESTIONS[item.domain]
        question = asks[0] if generator is None else asks[int(generator.integers(len(asks)))]
        return f"{question} {_RATE_SUFFIX}"
    options = " ".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(item.options))
    parts = ([] if question_blind else [_question(item, generator)]) + [options, _CHOOSE_SUFFIX]
    return " ".join(parts)


def make_text_dependent_vqa(
    n: int, seed: Seed = None, size: int = 48, split: Literal["train", "val", "test"] = "train"
) -> list[VQAItem]:
    """IQA Yes/No items whose answer depends on the question text (issue 44).

    Even items degrade the crop by one kind (blur, noise or JPEG, severity in [0.4, 1]) and ask
    "Does this image show {kind}?" about that kind or another, odd items degrade one quadrant
    (severity in [0.5, 1]) and ask "Is the {region} region degraded?" about it or another, each
    with probability 1/2: the image alone does not tell the answer (``meta["text_dependent"]``).

    Examples
    --------
    >>> items = make_text_dependent_vqa(4, seed=0, size=32)
    >>> [it.options for it in items[:2]], all(it.meta["text_dependent"] for it in items)
    ([('Yes', 'No'), ('Yes', 'No')], True)
    """
    from icml26.unipercept.images import crops, sources_for
    from icml26.unipercept.perceptoy import _check

    n, size = _check(n, size, split, "make_text_dependent_vqa")
    rng = numpy_generator(seed)
    items = []
    kinds = tuple(_KIND_NAMES)
    for i, (source, crop) in enumerate(crops(sources_for(split), n, size, max(4 * size, 96), rng)):
        same = bool(rng.integers(2))
        if i % 2 == 0:
            shown = kinds[int(rng.integers(len(kinds)))]
            others = [k for k in kinds if k != shown]
            asked = shown if same else others[int(rng.integers(len(others)))]
            image = degrade(crop, shown, float(rng.uniform(0.4, 1.0)), rng)
            path = ("Distortion Type", "Distortion Types Present")
            text = _ASK_KIND.format(_KIND_NAMES[asked])
            meta = {"shown": shown, "asked": asked}
        else:
            shown = QUADRANTS[int(rng.integers(4))]
            others = [q for q in QUADRANTS if q != shown]
            asked = shown if same else others[int(rng.integers(len(others)))]
            kind = ("blur", "noise", "pixelate")[int(rng.integers(3))]
            image = degrade_quadrant(crop, kind, float(rng.uniform(0.5, 1.0)), shown, rng)
            path = ("Distortion Location", "Location Description")
            text = _ASK_REGION.format(asked)
            meta = {"shown": shown, "asked": asked, "kind": kind}
        answer = "A" if same else "B"
        meta["text_dependent"] = True
        items.append(
            VQAItem(image, "IQA", *path, "Yes-No", text, ("Yes", "No"), answer, source, meta)
        )
    return items


def bank_texts() -> tuple[str, ...]:
    """Every text the prompts can hold (questions, paraphrases, options, instructions)."""
    from icml26.unipercept.perceptoy import OPTION_VOCAB

    texts = [*QUESTION_BANK, *(p for ps in QUESTION_BANK.values() for p in ps)]
    texts += [p for ps in RATING_QUESTIONS.values() for p in ps]
    texts += [_ASK_KIND.format(k) for k in _KIND_NAMES.values()]
    texts += [_ASK_REGION.format(q) for q in QUADRANTS]
    texts += [*PRETRAIN_QUESTIONS.values(), *_KINDS_OF_PICTURE, *_COUNTS, *_COLOURS]
    texts += [*OPTION_VOCAB, _RATE_SUFFIX, _CHOOSE_SUFFIX, *(f"{c}." for c in LETTERS[:4])]
    return tuple(texts)


def make_pretrain_set(
    n: int, seed: Seed = None, size: int = 48, split: Literal["train", "val", "test"] = "train"
) -> list[GenericQAItem]:
    """Generic "pretraining" questions without perceptual labels (issue 44).

    What a pretrained VLM knows before DAPT: the kind of picture (a photograph crop or a
    procedural drawing), and on drawings the number of objects and the first object's shape;
    the main colour (the largest mean channel) of either. Nothing about quality, texture or the
    ISTA rating is asked. Question kinds cycle kind, count, shape, colour.

    Examples
    --------
    >>> items = make_pretrain_set(4, seed=0, size=32)
    >>> [it.question.split()[0] for it in items]
    ['What', 'How', 'Which', 'What']
    """
    from icml26.unipercept.images import crops, sources_for
    from icml26.unipercept.perceptoy import _check, _lettered
    from icml26.unipercept.scenes import CONTOURS, render_scene, sample_scene

    n, size = _check(n, size, split, "make_pretrain_set")
    rng = numpy_generator(seed)
    photos = iter(crops(sources_for(split), n, size, max(4 * size, 96), rng))
    items = []
    for i in range(n):
        question = tuple(PRETRAIN_QUESTIONS)[i % 4]
        photo = (question == "kind" and bool(rng.integers(2))) or (
            question == "colour" and i % 8 == 3
        )
        if photo:
            source, image = next(photos)
            scene = None
        else:
            scene = sample_scene(rng)
            image, source = render_scene(scene, size, rng, split), f"scene:{split}"
        if question == "kind":
            answer = _KINDS_OF_PICTURE[0 if photo else 1]
            options = _KINDS_OF_PICTURE
        elif question == "count":
            answer, options = _COUNTS[len(scene.components) - 1], _COUNTS
        elif question == "shape":
            options, letter = _lettered(scene.components[0].contour, list(CONTOURS), rng)
            answer = options[LETTERS.index(letter)]
        else:
            answer, options = _COLOURS[int(np.argmax(image.mean(axis=(0, 1))))], _COLOURS
        letter = LETTERS[options.index(answer)]
        text = PRETRAIN_QUESTIONS[question]
        items.append(GenericQAItem(image, text, tuple(options), letter, source, {"kind": question}))
    return items
