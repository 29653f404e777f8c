"""Semantically neutral text perturbations (spec §2.6): pure ``(text, rng) -> text`` functions.

Each generator is deterministic given its ``random.Random`` and never changes the label: fillers
and politeness markers are added around the prompt, casing and whitespace keep every word, and
character swaps skip the task's ``protected`` keywords. ``perturb_many`` draws ``k`` perturbed
copies of each text from a seed, one independent stream per text (so a prefix of the list gets
the same copies as the whole list).

Deviations: the instruction-paraphrase generator of spec §2.6 is left out (its fixed list would
be task specific); punctuation noise is its own generator, :func:`punctuation`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator

__all__ = [
    "POLITE_PREFIXES",
    "POLITE_SUFFIXES",
    "Perturbation",
    "batch_perturber",
    "casing",
    "char_swap",
    "compose",
    "filler",
    "perturb_many",
    "punctuation",
    "whitespace",
]

POLITE_PREFIXES = (
    "hey there, quick question:",
    "hi!",
    "hello, could you help me?",
    "please,",
    "so, um,",
    "excuse me,",
)
POLITE_SUFFIXES = ("thanks a lot!!", "thank you.", "please.", "cheers", "if you can :)", "ok?")
_CASINGS = ("upper", "lower", "title")
_PUNCT = ("!", "!!", "...", " .", "?!")
_WORD = re.compile(r"\S+")


@runtime_checkable
class Perturbation(Protocol):
    """A random semantically neutral edit: ``perturbation(text, rng) -> text``."""

    def __call__(self, text: str, rng: random.Random) -> str:
        """Return a perturbed copy of ``text`` drawn with ``rng``."""
        ...


def _check_p(p: float, owner: str) -> float:
    return check_in_interval("p", p, low=0.0, high=1.0, owner=owner)


def _check_strings(name: str, values: Iterable[str], owner: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError(f"{owner}: {name} must be a sequence of strings, not one string.")
    if not isinstance(values, Iterable):
        raise TypeError(f"{owner}: {name} must be a sequence of strings; got {values!r}.")
    values = tuple(values)
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise TypeError(f"{owner}: {name} must contain non-empty strings; got {values!r}.")
    return values


def _check_text(text: object, owner: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{owner}: text must be a str; got {type(text).__name__}.")
    return text


def filler(
    prefixes: Sequence[str] = POLITE_PREFIXES,
    suffixes: Sequence[str] = POLITE_SUFFIXES,
    p: float = 1.0,
) -> Perturbation:
    """Filler phrases: with probability ``p`` add a random prefix and (independently) a suffix.

    Parameters
    ----------
    prefixes, suffixes
        Candidate phrases (non-empty strings); at least one of the two lists is non-empty.
    p
        Probability, in ``[0, 1]``, of adding each of the prefix and the suffix.

    Returns
    -------
    Perturbation
        ``(text, rng) -> text``; at ``p = 1`` the output always differs from the input.

    Examples
    --------
    >>> import random
    >>> filler(["hi!"], ["thanks."])("set an alarm", random.Random(0))
    'hi! set an alarm thanks.'
    """
    owner = "filler"
    prefixes = _check_strings("prefixes", prefixes, owner)
    suffixes = _check_strings("suffixes", suffixes, owner)
    if not prefixes and not suffixes:
        raise ValueError("filler: prefixes and suffixes are both empty; give at least one phrase.")
    p = _check_p(p, owner)

    def apply(text: str, rng: random.Random) -> str:
        text = _check_text(text, owner)
        if prefixes and rng.random() < p:
            text = f"{rng.choice(prefixes)} {text}"
        if suffixes and rng.random() < p:
            text = f"{text} {rng.choice(suffixes)}"
        return text

    return apply


def casing(p: float = 0.5) -> Perturbation:
    """Re-case the whole text (upper, lower or title) with probability ``p``.

    Only casings that change the text are drawn, so at ``p = 1`` a text with letters always
    changes.

    Examples
    --------
    >>> import random
    >>> casing(1.0)("Set an alarm", random.Random(1))
    'SET AN ALARM'
    """
    p = _check_p(p, "casing")

    def apply(text: str, rng: random.Random) -> str:
        text = _check_text(text, "casing")
        if rng.random() >= p:
            return text
        options = [c for c in (text.upper(), text.lower(), text.title()) if c != text]
        return rng.choice(options) if options else text

    return apply


def _key(word: str) -> str:
    return word.strip(".,!?;:'\"()").lower()


def char_swap(p: float = 0.15, protected: Iterable[str] = frozenset()) -> Perturbation:
    """Typos: swap two adjacent characters inside each unprotected word with probability ``p``.

    Parameters
    ----------
    p
        Per-word probability in ``[0, 1]``.
    protected
        Keywords that decide the label; compared case-insensitively without surrounding
        punctuation, and never edited.

    Examples
    --------
    >>> import random
    >>> char_swap(1.0, protected={"alarm"})("alarm please", random.Random(0))
    'alarm plesae'
    """
    p = _check_p(p, "char_swap")
    if isinstance(protected, str):
        raise TypeError("char_swap: protected must be a set of words, not one string.")
    if not isinstance(protected, Iterable):
        raise TypeError(f"char_swap: protected must be a set of words; got {protected!r}.")
    words = tuple(protected)
    if not all(isinstance(w, str) for w in words):
        raise TypeError(f"char_swap: protected must hold strings; got {words!r}.")
    keep = frozenset(_key(w) for w in words)

    def swap(match: re.Match, rng: random.Random) -> str:
        word = match.group(0)
        if len(word) < 2 or _key(word) in keep or rng.random() >= p:
            return word
        i = rng.randrange(len(word) - 1)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]

    def apply(text: str, rng: random.Random) -> str:
        text = _check_text(text, "char_swap")
        return _WORD.sub(lambda m: swap(m, rng), text)

    return apply


def whitespace(p: float = 0.2) -> Perturbation:
    """Whitespace noise: each gap between words is doubled with probability ``p``.

    Examples
    --------
    >>> import random
    >>> whitespace(1.0)("a b c", random.Random(0))
    'a  b  c'
    """
    p = _check_p(p, "whitespace")

    def apply(text: str, rng: random.Random) -> str:
        text = _check_text(text, "whitespace")
        words = text.split(" ")
        out = words[0]
        for word in words[1:]:
            out += ("  " if rng.random() < p else " ") + word
        return out

    return apply


def punctuation(p: float = 0.3) -> Perturbation:
    """Trailing punctuation noise (``"!"``, ``"..."``, ``" ."`` …) with probability ``p``.

    Examples
    --------
    >>> import random
    >>> punctuation(1.0)("play jazz", random.Random(0)).startswith("play jazz")
    True
    """
    p = _check_p(p, "punctuation")

    def apply(text: str, rng: random.Random) -> str:
        text = _check_text(text, "punctuation")
        return text + rng.choice(_PUNCT) if rng.random() < p else text

    return apply


def compose(*perturbations: Perturbation) -> Perturbation:
    """Apply ``perturbations`` in order, all drawing from the same ``rng``.

    Examples
    --------
    >>> import random
    >>> compose(filler(["hi!"], []), casing(1.0))("play jazz", random.Random(0))
    'Hi! Play Jazz'
    """
    if not perturbations:
        raise ValueError("compose: perturbations is empty; give at least one perturbation.")
    for i, pert in enumerate(perturbations):
        if not callable(pert):
            raise TypeError(
                f"compose: perturbations[{i}] must be callable (text, rng) -> text; "
                f"got {type(pert).__name__}."
            )

    def apply(text: str, rng: random.Random) -> str:
        for pert in perturbations:
            text = pert(text, rng)
        return text

    return apply


def _text_rngs(n: int, seed: Seed) -> list[random.Random]:
    base = int(numpy_generator(seed).integers(0, 2**62))
    # one independent, order-free stream per text: a prefix of the list gets the same draws
    return [random.Random(f"{base}/{i}") for i in range(n)]


def perturb_many(
    texts: Sequence[str], perturbation: Perturbation, k: int, seed: Seed = 0
) -> list[list[str]]:
    """Draw ``k`` perturbed copies of every text.

    Parameters
    ----------
    texts
        Non-empty list of prompts.
    perturbation
        A :class:`Perturbation`.
    k
        Copies per text (``>= 1``).
    seed
        ``int``, numpy/torch generator or ``None`` (fresh entropy); text ``i`` gets its own stream.

    Returns
    -------
    list of list of str
        ``out[i][j]`` is the ``j``-th perturbed copy of ``texts[i]``.

    Raises
    ------
    ValueError
        If ``texts`` is empty or ``k < 1``.
    TypeError
        If ``perturbation`` is not callable or a text is not a ``str``.

    Examples
    --------
    >>> perturb_many(["play jazz"], casing(1.0), k=2, seed=0) == perturb_many(
    ...     ["play jazz"], casing(1.0), k=2, seed=0)
    True
    """
    if isinstance(texts, str):
        raise TypeError("perturb_many: texts must be a list of strings, not one string.")
    texts = list(texts)
    if not texts:
        raise ValueError("perturb_many: texts is empty; give at least one text.")
    if not callable(perturbation):
        raise TypeError(
            f"perturb_many: perturbation must be callable; got {type(perturbation).__name__}."
        )
    k = check_positive_int("k", k, owner="perturb_many")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"perturb_many: texts[{i}] must be a str; got {type(text).__name__}.")
    rngs = _text_rngs(len(texts), seed)
    return [[perturbation(t, rng) for _ in range(k)] for t, rng in zip(texts, rngs, strict=True)]


def batch_perturber(
    perturbation: Perturbation,
) -> Callable[[Sequence[str], np.random.Generator], list[str]]:
    """Lift a text :class:`Perturbation` to the batch form ``debias_finetune`` takes.

    Returns
    -------
    callable
        ``(texts, np_rng) -> texts``: each text perturbed with its own ``random.Random`` seeded
        from ``np_rng``.

    Examples
    --------
    >>> import numpy as np
    >>> batch_perturber(casing(1.0))(["a b"], np.random.default_rng(0))[0] != "a b"
    True
    """
    if not callable(perturbation):
        raise TypeError(
            f"batch_perturber: perturbation must be callable; got {type(perturbation).__name__}."
        )

    def apply(texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        seeds = rng.integers(0, 2**62, size=len(texts))
        return [perturbation(t, random.Random(int(s))) for t, s in zip(texts, seeds, strict=True)]

    return apply
