"""VR and VQA protocols of UniPercept-Bench (spec §2.3): SRCC/PLCC and first-letter accuracy.

Cao et al., UniPercept (arXiv:2512.21675), §4 and the official VQA eval script: a VR prediction
is scored per dataset by Spearman (SRCC) and Pearson (PLCC) correlation with the MOS, the summary
uses (SRCC + PLCC) / 2; a VQA prediction is the first character of the stripped, upper-cased
reply and accuracy is exact match with the answer letter.

Deviations: the VQEG 4-parameter logistic PLCC is offered as an option (``logistic=True``);
the paper's default, used everywhere here, is raw PLCC (*inferred*).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core.validation import check_array

if TYPE_CHECKING:
    from icml26.unipercept.items import VQAItem

__all__ = ["parse_choice", "parse_score", "vqa_accuracy", "vr_metrics"]

_NUMBER = r"(\d{1,3}(?:\.\d+)?)"
_SCORE = re.compile(rf"(?<![\d.]){_NUMBER}(?![\d])(?:\s*(?:/|out of)\s*{_NUMBER}(?![\d]))?", re.I)
_OPTION = re.compile(r"^(?:(?:the\s+)?answer(?:\s+is)?\s*[:\-]?\s*)?\(?([A-Z])(?:[).:,\s]|$)", re.I)


def parse_choice(text: str, lenient: bool = False) -> str:
    """The predicted option letter: first character of the stripped, upper-cased reply.

    That is the official evaluation's rule (``vqa_accuracy`` keeps it). ``lenient=True`` (used by
    the RL reward) also reads the common ways of naming an option — ``"(B) blur"``, ``"B. blur"``,
    ``"Answer: B"``, ``"The answer is B"`` — and otherwise falls back to the first character.

    Examples
    --------
    >>> parse_choice(" b) blur")
    'B'
    >>> parse_choice("")
    ''
    >>> parse_choice("(B) blur"), parse_choice("(B) blur", lenient=True)
    ('(', 'B')
    >>> parse_choice("Answer: c", lenient=True)
    'C'
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_choice: text must be a str; got {type(text).__name__}.")
    if not isinstance(lenient, bool):
        raise TypeError(f"parse_choice: lenient must be a bool; got {lenient!r}.")
    stripped = text.strip().upper()
    if lenient and (match := _OPTION.match(stripped)):
        return match.group(1)
    return stripped[:1]


def parse_score(text: str) -> int | None:
    """A 0–100 score from a generated reply: a bare score token, else the first number <= 100.

    A number followed by a scale (``"7.3 out of 10"``, ``"7.3/10"``, ``"4 / 5"``) is rescaled to
    0–100; a decimal is rounded. Returns ``None`` when the reply holds neither (a rating reward
    then gives 0).

    Examples
    --------
    >>> parse_score("cy"), parse_score("I would say 73."), parse_score("no idea")
    (50, 73, None)
    >>> parse_score("7.3 out of 10"), parse_score("4/5"), parse_score("66.6")
    (73, 80, 67)
    """
    from icml26.unipercept.tokens import SCORE_TOKENS, token_to_score

    if not isinstance(text, str):
        raise TypeError(f"parse_score: text must be a str; got {type(text).__name__}.")
    stripped = text.strip()
    if stripped in SCORE_TOKENS:
        return token_to_score(stripped)
    for match in _SCORE.finditer(stripped):
        value, scale = float(match.group(1)), match.group(2)
        if scale is not None and float(scale) > 0:
            value = 100.0 * value / float(scale)
        if value <= 100:
            return math.floor(value + 0.5)
    return None


def _logistic4(x: np.ndarray, b1: float, b2: float, b3: float, b4: float) -> np.ndarray:
    # VQEG: f(x) = (b1 - b2) / (1 + exp(-(x - b3) / |b4|)) + b2
    return (b1 - b2) / (1.0 + np.exp(-(x - b3) / (abs(b4) + 1e-12))) + b2


def vr_metrics(pred: np.ndarray, mos: np.ndarray, logistic: bool = False) -> dict[str, float]:
    """SRCC, PLCC and their mean between predicted scores and ground-truth MOS.

    Parameters
    ----------
    pred, mos
        1-D arrays of the same length (>= 2), both on the 0–100 scale.
    logistic
        Fit the VQEG 4-parameter logistic from ``pred`` to ``mos`` before PLCC (not the paper's
        default); needs at least 4 values (one per parameter).

    Returns
    -------
    dict
        ``{"srcc", "plcc", "mean"}``; a constant prediction has no correlation and gives 0.

    Examples
    --------
    >>> m = vr_metrics(np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 40.0, 80.0]))
    >>> m["srcc"], round(m["plcc"], 4)
    (1.0, 0.9592)
    """
    from scipy import stats

    p = check_array("pred", pred, owner="vr_metrics", ndim=1)
    g = check_array("mos", mos, owner="vr_metrics", ndim=1)
    if p.shape != g.shape:
        raise ValueError(
            f"vr_metrics: pred and mos must have the same shape; got {p.shape} vs {g.shape}."
        )
    if not isinstance(logistic, bool):
        raise TypeError(f"vr_metrics: logistic must be a bool; got {logistic!r}.")
    if p.size < (4 if logistic else 2):
        raise ValueError(
            f"vr_metrics: pred must hold at least {4 if logistic else 2} values"
            f"{' for the 4-parameter logistic' if logistic else ''}; got {p.size}."
        )
    if np.ptp(p) == 0 or np.ptp(g) == 0:
        return {"srcc": 0.0, "plcc": 0.0, "mean": 0.0}
    srcc = float(stats.spearmanr(p, g).statistic)
    fitted = p
    if logistic:
        from scipy.optimize import curve_fit

        start = [g.max(), g.min(), float(np.median(p)), float(np.std(p)) + 1e-6]
        try:
            params, _ = curve_fit(_logistic4, p, g, p0=start, maxfev=10_000)
            fitted = _logistic4(p, *params)
        except RuntimeError:  # no convergence: fall back to the raw prediction
            fitted = p
    plcc = 0.0 if np.ptp(fitted) == 0 else float(stats.pearsonr(fitted, g).statistic)
    srcc, plcc = (0.0 if math.isnan(v) else v for v in (srcc, plcc))
    return {"srcc": srcc, "plcc": plcc, "mean": 0.5 * (srcc + plcc)}


def vqa_accuracy(
    items: Sequence[VQAItem],
    preds: Sequence[str],
    by: Sequence[str] = ("domain", "category", "template"),
) -> dict[str, Any]:
    """First-letter VQA accuracy, overall and grouped by item attributes.

    Parameters
    ----------
    items
        The VQA items (their ``answer`` letters are the ground truth).
    preds
        One reply per item; :func:`parse_choice` reads its letter.
    by
        Attributes of :class:`VQAItem` to group by (``domain``, ``category``, ``criterion``,
        ``template``).

    Returns
    -------
    dict
        ``{"overall": micro accuracy, "domain_mean": mean of per-domain accuracies,
        "<attr>": {value: accuracy}}`` (accuracies in [0, 1]).

    Examples
    --------
    >>> from icml26.unipercept.items import VQAItem
    >>> img = np.zeros((8, 8, 3), dtype=np.float32)
    >>> items = [VQAItem(img, "IQA", "Distortion Type", "Distortion Types Present", "Which",
    ...                  "Which distortion?", ("blur", "noise"), a) for a in "AB"]
    >>> vqa_accuracy(items, ["A", "a"], by=("domain",))["domain"]
    {'IQA': 0.5}
    """
    from icml26.unipercept.items import check_sequence

    items = check_sequence("items", items, "vqa_accuracy", object)
    preds = check_sequence("preds", preds, "vqa_accuracy", str, allow_empty=True)
    fields = ("answer", "domain", "category", "criterion", "template")
    if not all(all(hasattr(it, f) for f in fields) for it in items):
        raise TypeError(f"vqa_accuracy: items must be VQAItem-like (with {', '.join(fields)}).")
    if not all(isinstance(p, str) for p in preds):
        raise TypeError("vqa_accuracy: preds must be strings.")
    if len(preds) != len(items):
        raise ValueError(
            f"vqa_accuracy: preds must have one reply per item; got {len(preds)} for {len(items)}."
        )
    allowed = ("domain", "category", "criterion", "template")
    if isinstance(by, str) or not isinstance(by, list | tuple) or not all(b in allowed for b in by):
        raise ValueError(f"vqa_accuracy: by must be a sequence of {allowed}; got {by!r}.")
    correct = [parse_choice(p) == it.answer for it, p in zip(items, preds, strict=True)]
    result: dict[str, Any] = {"overall": float(np.mean(correct))}
    groups: Mapping[str, dict[str, list[bool]]] = {b: defaultdict(list) for b in {*by, "domain"}}
    for it, ok in zip(items, correct, strict=True):
        for attr, table in groups.items():
            table[getattr(it, attr)].append(ok)
    for attr in by:
        result[attr] = {k: float(np.mean(v)) for k, v in groups[attr].items()}
    result["domain_mean"] = float(np.mean([np.mean(v) for v in groups["domain"].values()]))
    return result
