"""PerceptToy: offline VR and VQA sets with ground truth known by construction (spec §5).

The small-machine stand-in for UniPercept-Bench (arXiv:2512.21675):

* IQA-VR: crops of bundled photographs with 0–2 degradations of known severity, MOS
  g = 100 * prod_k (1 - c_k s_k) (+ optional observer noise N(0, observer_sd^2), clipped).
* IQA-VQA: distortion type (blur / noise / JPEG / none), severity level (None / Slight /
  Obvious) and location (one degraded quadrant).
* ISTA: procedural scenes of 1–4 components; VR MOS = ista_score(annotation); VQA on base
  morphology, 2-D contour, material (of the first component in reading order) and scene type.
* IAA (proxy, **synthetic**): one salient disc and a small counterweight on a hued background;
  the proxy score mixes rule-of-thirds distance, left/right balance, hue harmony and exposure.
  It only exercises the three-domain machinery and measures no aesthetics.

Deviations (*inferred*): severities for VR are uniform in [0, 1]; for the severity question the
level is drawn first and s uniformly inside it (Slight: (0.05, 0.35], as s < 0.05 is invisible at
32 px); options are shuffled with the item's generator; ISTA questions ask about the first
component in reading order because TinyPercept does not read question text.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from typing import Final, Literal

import numpy as np

from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.unipercept.degradations import (
    KINDS,
    QUADRANTS,
    degrade,
    degrade_many,
    degrade_quadrant,
    quality_from_severity,
    severity_level,
)
from icml26.unipercept.images import SPLITS, crops, sources_for
from icml26.unipercept.ista import ista_score
from icml26.unipercept.items import LETTERS, VQAItem, VRItem
from icml26.unipercept.scenes import (
    CONTOURS,
    MATERIAL_NAMES,
    MORPHOLOGIES,
    render_scene,
    sample_scene,
)

__all__ = [
    "DOMAINS",
    "MAX_ITEMS",
    "OPTION_VOCAB",
    "clean_crops",
    "make_domain_sets",
    "make_iaa_proxy",
    "make_iqa_vqa",
    "make_iqa_vr",
    "make_ista",
]

MAX_ITEMS: Final = 200_000  # largest set one call builds (memory: 200k x 48 x 48 x 3 float32)
_TYPE_OPTIONS: Final = ("blur", "noise", "JPEG", "none")
_TYPE_KIND: Final = {"blur": "blur", "noise": "noise", "JPEG": "jpeg"}
_LEVELS: Final = ("None", "Slight", "Obvious")
_EXPOSURE: Final = ("underexposed", "well exposed", "overexposed")
# Every option text a PerceptToy item can show: TinyPercept's closed option vocabulary.
OPTION_VOCAB: Final[tuple[str, ...]] = tuple(
    dict.fromkeys(
        (*_TYPE_OPTIONS, *_LEVELS, *QUADRANTS, *MORPHOLOGIES, *CONTOURS, *MATERIAL_NAMES,
         "Yes", "No", *_EXPOSURE)
    )
)  # fmt: skip


def _check(n: int, size: int, split: str, owner: str) -> tuple[int, int]:
    n = check_positive_int("n", n, owner=owner, maximum=MAX_ITEMS)
    size = check_positive_int("size", size, owner=owner, minimum=16, maximum=128)
    check_one_of("split", split, SPLITS, owner=owner)
    return n, size


def _short_side(size: int) -> int:
    return max(4 * size, 96)  # a crop covers about a quarter of the source's short side


def _lettered(
    correct: str, distractors: list[str], rng: np.random.Generator, k: int = 4
) -> tuple[tuple[str, ...], str]:
    """``k`` shuffled options holding ``correct`` and the answer letter."""
    pool = [d for d in dict.fromkeys(distractors) if d != correct]
    chosen = [pool[i] for i in rng.permutation(len(pool))[: k - 1]]
    options = [correct, *chosen]
    order = rng.permutation(len(options))
    options = [options[i] for i in order]
    return tuple(options), LETTERS[options.index(correct)]


def make_iqa_vr(
    n: int,
    seed: Seed = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    observer_sd: float = 0.0,
) -> list[VRItem]:
    """IQA visual-rating items: crops with 0–2 graded degradations and their quality MOS.

    Parameters
    ----------
    n
        Number of items (at most ``MAX_ITEMS``).
    seed
        Seed or generator.
    size
        Crop side in pixels (16–128).
    split
        Which source images to crop (train / val / test never share a source).
    observer_sd
        Standard deviation of the observer noise added to the MOS (clipped to [0, 100]).

    Examples
    --------
    >>> items = make_iqa_vr(3, seed=0, size=32)
    >>> [round(it.mos, 1) for it in items] == [
    ...     round(100 * np.prod([1 - c for c in it.meta["coefficients"]]), 1) for it in items]
    True
    """
    n, size = _check(n, size, split, "make_iqa_vr")
    observer_sd = check_in_interval(
        "observer_sd", observer_sd, low=0.0, high=20.0, owner="make_iqa_vr"
    )
    rng = numpy_generator(seed)
    from icml26.unipercept.degradations import SEVERITY_COEFFICIENTS

    items = []
    for source, crop in crops(sources_for(split), n, size, _short_side(size), rng):
        n_deg = int(rng.integers(0, 3))
        kinds = [KINDS[i] for i in rng.choice(len(KINDS), size=n_deg, replace=False)]
        severities = {k: float(rng.uniform(0.0, 1.0)) for k in kinds}
        g = quality_from_severity(severities)
        mos = (
            float(np.clip(g + observer_sd * rng.standard_normal(), 0.0, 100.0))
            if observer_sd
            else g
        )
        image = degrade_many(crop, severities, rng)
        coefficients = [SEVERITY_COEFFICIENTS[k] * s for k, s in severities.items()]
        meta = {"severities": severities, "quality": g, "coefficients": coefficients}
        items.append(VRItem(image, "IQA", mos, source, meta))
    return items


def make_iqa_vqa(
    n: int,
    seed: Seed = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    questions: tuple[str, ...] = ("type", "severity", "location"),
) -> list[VQAItem]:
    """IQA multiple-choice items on distortion type, severity and location.

    Parameters
    ----------
    n
        Number of items; question kinds cycle through ``questions``.
    questions
        A non-empty subset of ``("type", "severity", "location")``.

    Examples
    --------
    >>> items = make_iqa_vqa(3, seed=0, size=32)
    >>> [it.category for it in items]
    ['Distortion Type', 'Distortion Severity', 'Distortion Location']
    """
    n, size = _check(n, size, split, "make_iqa_vqa")
    if not isinstance(questions, list | tuple) or not questions:
        raise ValueError("make_iqa_vqa: questions must be a non-empty tuple of question kinds.")
    for q in questions:
        check_one_of("questions", q, ("type", "severity", "location"), owner="make_iqa_vqa")
    rng = numpy_generator(seed)
    items = []
    for i, (source, crop) in enumerate(crops(sources_for(split), n, size, _short_side(size), rng)):
        question = questions[i % len(questions)]
        if question == "type":
            answer = _TYPE_OPTIONS[int(rng.integers(4))]
            s = float(rng.uniform(0.3, 1.0)) if answer != "none" else 0.0
            image = crop if answer == "none" else degrade(crop, _TYPE_KIND[answer], s, rng)
            options, letter = _lettered(answer, list(_TYPE_OPTIONS), rng)
            path = ("Distortion Type", "Distortion Types Present", "Which")
            text = "Which distortion is most evident in this image?"
            meta = {"severity": s, "kind": answer}
        elif question == "severity":
            level = _LEVELS[int(rng.integers(3))]
            s = {"None": 0.0, "Slight": float(rng.uniform(0.05, 0.35)),
                 "Obvious": float(rng.uniform(0.36, 1.0))}[level]  # fmt: skip
            kind = ("blur", "noise", "jpeg")[int(rng.integers(3))]
            image = degrade(crop, kind, s, rng)
            if severity_level(s) != level:  # guards the level/threshold consistency
                raise AssertionError("severity level drawn outside its range")
            options, letter = tuple(_LEVELS), LETTERS[_LEVELS.index(level)]
            path = ("Distortion Severity", "Severity Level", "Lv.Pred")
            text = "How severe is the distortion in this image?"
            meta = {"severity": s, "kind": kind}
        else:
            quadrant = QUADRANTS[int(rng.integers(4))]
            kind = ("blur", "noise", "pixelate")[int(rng.integers(3))]
            s = float(rng.uniform(0.5, 1.0))
            image = degrade_quadrant(crop, kind, s, quadrant, rng)
            options, letter = _lettered(quadrant, list(QUADRANTS), rng)
            path = ("Distortion Location", "Location Description", "Which")
            text = "Which region of the image is degraded?"
            meta = {"severity": s, "kind": kind, "quadrant": quadrant}
        items.append(VQAItem(image, "IQA", *path[:2], path[2], text, options, letter, source, meta))
    return items


def make_ista(
    n: int,
    seed: Seed = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    task: Literal["vr", "vqa"] = "vr",
) -> list[VRItem] | list[VQAItem]:
    """ISTA items on procedural scenes: ratings (``task="vr"``) or questions (``"vqa"``).

    The VR MOS is the exact ISTA-10K score of the scene's annotation (in ``meta``).

    Examples
    --------
    >>> from icml26.unipercept.ista import ista_score
    >>> it = make_ista(1, seed=0, size=32)[0]
    >>> it.mos == ista_score(it.meta["annotation"])
    True
    """
    n, size = _check(n, size, split, "make_ista")
    check_one_of("task", task, ("vr", "vqa"), owner="make_ista")
    rng = numpy_generator(seed)
    items: list = []
    for i in range(n):
        scene = sample_scene(rng)
        image = render_scene(scene, size, rng, split)
        annotation = scene.annotation()
        meta = {"annotation": annotation}
        source = f"ista:{split}"
        if task == "vr":
            items.append(VRItem(image, "ISTA", float(ista_score(annotation)), source, meta))
            continue
        first = scene.components[0]
        question = ("morphology", "contour", "material", "scene")[i % 4]
        if question == "morphology":
            options, letter = _lettered(first.morphology[0], list(MORPHOLOGIES), rng)
            path = ("Physical Structure", "Base Morphology", "What")
            text = "What is the base morphology of the first object's surface?"
        elif question == "contour":
            options, letter = _lettered(first.contour, list(CONTOURS), rng)
            path = ("Geometric Composition", "2D Contour", "Which")
            text = "Which 2-D contour does the first object have?"
        elif question == "material":
            options, letter = _lettered(first.material, list(MATERIAL_NAMES), rng)
            path = ("Material Representation", "Material Identification", "What")
            text = "What material is the first object made of?"
        else:
            answer = "Yes" if len(scene.components) > 1 else "No"
            options, letter = ("Yes", "No"), "A" if answer == "Yes" else "B"
            path = ("Scene Decomposition", "Scene Classification", "Yes-No")
            text = "Is this a composite scene of several objects?"
        items.append(
            VQAItem(image, "ISTA", path[0], path[1], path[2], text, options, letter, source, meta)
        )
    return items


def _hue_harmony(delta_deg: float) -> float:
    """1 for complementary (180 deg) or analogous (30 deg) hue pairs, decaying away from them."""
    comp = np.exp(-((delta_deg - 180.0) ** 2) / (2 * 25.0**2))
    analog = np.exp(-((delta_deg - 30.0) ** 2) / (2 * 15.0**2))
    return float(max(comp, analog))


def make_iaa_proxy(
    n: int,
    seed: Seed = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    task: Literal["vr", "vqa"] = "vr",
) -> list[VRItem] | list[VQAItem]:
    """Synthetic IAA **proxy** items (not aesthetics): composition-parameter scores and questions.

    proxy = 100 * (0.4 thirds + 0.2 balance + 0.25 harmony + 0.15 exposure) with
    thirds = exp(-d^2 / (2 * 0.08^2)) (d: distance of the subject to the nearest third point),
    balance = 1 - |sum_i m_i (x_i - 0.5)| / 0.5, harmony from the hue difference, exposure =
    1 - 2 |mean brightness - 0.5|. Questions: subject on a third point (Yes/No), exposure level.
    """
    n, size = _check(n, size, split, "make_iaa_proxy")
    check_one_of("task", task, ("vr", "vqa"), owner="make_iaa_proxy")
    rng = numpy_generator(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(float) / (size - 1)
    thirds = np.array([(a, b) for a in (1 / 3, 2 / 3) for b in (1 / 3, 2 / 3)])
    items: list = []
    for i in range(n):
        cx, cy = rng.uniform(0.15, 0.85, size=2)
        radius = rng.uniform(0.1, 0.18)
        wx, wy = rng.uniform(0.1, 0.9, size=2)  # the small counterweight
        hue_bg, hue_obj = rng.uniform(0, 1, size=2)
        gain = float(rng.uniform(0.45, 1.6))
        bg = np.asarray(colorsys.hsv_to_rgb(hue_bg, 0.45, 0.6))
        fg = np.asarray(colorsys.hsv_to_rgb(hue_obj, 0.8, 0.85))
        image = np.broadcast_to(bg * (0.8 + 0.2 * yy[:, :, None]), (size, size, 3)).copy()
        image[(xx - cx) ** 2 + (yy - cy) ** 2 <= radius**2] = fg
        image[(xx - wx) ** 2 + (yy - wy) ** 2 <= (radius / 2.5) ** 2] = fg * 0.7
        image = np.clip(image * gain, 0.0, 1.0).astype(np.float32)
        d = float(np.min(np.hypot(thirds[:, 0] - cx, thirds[:, 1] - cy)))
        thirds_term = float(np.exp(-(d**2) / (2 * 0.08**2)))
        m_main, m_small = radius**2, (radius / 2.5) ** 2
        moment = (m_main * (cx - 0.5) + m_small * (wx - 0.5)) / (m_main + m_small)
        balance = 1.0 - min(abs(moment) / 0.5, 1.0)
        delta = abs(hue_bg - hue_obj) * 360.0
        harmony = _hue_harmony(min(delta, 360.0 - delta))
        brightness = float(image.mean())
        exposure = 1.0 - min(2.0 * abs(brightness - 0.5), 1.0)
        proxy = 100.0 * (0.4 * thirds_term + 0.2 * balance + 0.25 * harmony + 0.15 * exposure)
        meta = {"thirds": thirds_term, "balance": balance, "harmony": harmony, "exposure": exposure}
        source = f"iaa:{split}"
        if task == "vr":
            items.append(VRItem(image, "IAA", float(np.clip(proxy, 0.0, 100.0)), source, meta))
        elif i % 2 == 0:
            answer = "Yes" if d < 0.08 else "No"
            text = "Is the main subject placed on a rule-of-thirds point?"
            path = ("Composition & Design", "Structural Organization", "Yes-No")
            letter = "A" if answer == "Yes" else "B"
            items.append(VQAItem(image, "IAA", *path, text, ("Yes", "No"), letter, source, meta))
        else:
            level = (
                _EXPOSURE[0]
                if brightness < 0.3
                else _EXPOSURE[2]
                if brightness > 0.6
                else _EXPOSURE[1]
            )
            text = "How is the exposure of this image?"
            path = ("Technical Execution", "Tonal and Exposure Control", "Lv.Pred")
            letter = LETTERS[_EXPOSURE.index(level)]
            items.append(VQAItem(image, "IAA", *path, text, _EXPOSURE, letter, source, meta))
    return items


DOMAINS: Final = ("IAA", "IQA", "ISTA")


def make_domain_sets(
    domains: Sequence[str],
    n: int,
    seed: Seed = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    observer_sd: float = 0.0,
) -> tuple[list[VRItem], list[VQAItem]]:
    """The rating and question items of several domains, ``n`` of each per domain.

    For each domain in order: IQA -> :func:`make_iqa_vr` (with ``observer_sd``) and
    :func:`make_iqa_vqa`; ISTA -> :func:`make_ista` (``"vr"``, then ``"vqa"``); IAA ->
    :func:`make_iaa_proxy`. All draws come from one generator, in that order.

    Parameters
    ----------
    domains
        A non-empty sequence of ``"IAA"``, ``"IQA"``, ``"ISTA"``.
    n
        Items per domain and task.
    seed, size, split, observer_sd
        As for the single-domain makers.

    Returns
    -------
    tuple of lists
        ``(vr_items, vqa_items)``.

    Examples
    --------
    >>> vr, vqa = make_domain_sets(("IQA", "ISTA"), 2, seed=0, size=16)
    >>> [it.domain for it in vr], len(vqa)
    (['IQA', 'IQA', 'ISTA', 'ISTA'], 4)
    """
    owner = "make_domain_sets"
    if isinstance(domains, str) or not isinstance(domains, Sequence) or not domains:
        raise TypeError(f"{owner}: domains must be a non-empty sequence of {DOMAINS}.")
    for domain in domains:
        check_one_of("domains", domain, DOMAINS, owner=owner)
    n, size = _check(n, size, split, owner)
    check_in_interval("observer_sd", observer_sd, low=0.0, high=20.0, owner=owner)
    rng = numpy_generator(seed)
    vr: list[VRItem] = []
    vqa: list[VQAItem] = []
    for domain in domains:
        if domain == "IQA":
            vr += make_iqa_vr(n, rng, size, split, observer_sd)
            vqa += make_iqa_vqa(n, rng, size, split)
        elif domain == "ISTA":
            vr += make_ista(n, rng, size, split, "vr")
            vqa += make_ista(n, rng, size, split, "vqa")
        else:
            vr += make_iaa_proxy(n, rng, size, split, "vr")
            vqa += make_iaa_proxy(n, rng, size, split, "vqa")
    return vr, vqa


def clean_crops(
    n: int, size: int = 48, split: Literal["train", "val", "test"] = "train", seed: Seed = None
) -> list[np.ndarray]:
    """``n`` undegraded crops of the split's photographs, as the IQA items draw them.

    The clean inputs of :func:`~icml26.unipercept.render_iqa_knobs`.

    Examples
    --------
    >>> [c.shape for c in clean_crops(2, size=16, split="test", seed=0)]
    [(16, 16, 3), (16, 16, 3)]
    """
    n, size = _check(n, size, split, "clean_crops")
    return [crop for _, crop in crops(sources_for(split), n, size, _short_side(size), seed)]
