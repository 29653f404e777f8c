"""Synthetic 4-intent prompts from real words, for pretrained encoders (spec §5.2).

Each prompt fills one of 5 templates with 2 keywords of its intent (weather, music, alarm, news)
and 1 distractor keyword of another intent. :func:`intent_perturbation` is the spec's recipe:
filler prefix and suffix always, casing with probability 0.5, adjacent-character typos with
probability 0.15 on every word that is not a keyword (keywords decide the label).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator
from icml26.debias.perturb import Perturbation, casing, char_swap, compose, filler

__all__ = ["INTENTS", "IntentTexts", "intent_perturbation", "make_intent_texts"]

INTENTS = {
    "weather": ("forecast", "rain", "sunny", "temperature", "umbrella", "snow", "humidity",
                "windy", "storm", "degrees"),
    "music": ("song", "playlist", "jazz", "album", "guitar", "volume", "singer", "melody",
              "radio", "track"),
    "alarm": ("alarm", "wake", "snooze", "timer", "reminder", "clock", "morning", "ring",
              "schedule", "minutes"),
    "news": ("headlines", "politics", "election", "article", "report", "journalist",
             "breaking", "economy", "newspaper", "sports"),
}  # fmt: skip
TEMPLATES = (
    "i need the {a} and {b} for today, maybe {c}",
    "what about {a} {b} {c}",
    "tell me the {a} with {b}, not {c}",
    "could you check {a} {b} or {c}",
    "{a} {b} {c} now",
)


@dataclass(frozen=True)
class IntentTexts:
    """Prompts, labels (index into ``intents``) and the protected keywords."""

    texts: list[str]
    labels: list[int]
    intents: tuple[str, ...]
    keywords: frozenset[str]


MAX_TEXTS = 10**6  # most prompts one call draws


def make_intent_texts(n: int, seed: Seed = 0) -> IntentTexts:
    """Draw ``n`` labelled intent prompts (``n <= MAX_TEXTS`` = 10**6).

    Examples
    --------
    >>> data = make_intent_texts(3, seed=0)
    >>> len(data.texts), data.intents
    (3, ('weather', 'music', 'alarm', 'news'))
    """
    n = check_positive_int("n", n, owner="make_intent_texts", maximum=MAX_TEXTS)
    rng = numpy_generator(seed)
    intents = tuple(INTENTS)
    texts, labels = [], []
    for _ in range(n):
        y = int(rng.integers(len(intents)))
        other = (y + int(rng.integers(1, len(intents)))) % len(intents)
        a, b = rng.choice(INTENTS[intents[y]], size=2, replace=False)
        c = INTENTS[intents[other]][int(rng.integers(len(INTENTS[intents[other]])))]
        texts.append(TEMPLATES[int(rng.integers(len(TEMPLATES)))].format(a=a, b=b, c=c))
        labels.append(y)
    keywords = frozenset(w for words in INTENTS.values() for w in words)
    return IntentTexts(texts, labels, intents, keywords)


def intent_perturbation(
    keywords: frozenset[str], *, p_case: float = 0.5, p_typo: float = 0.15
) -> Perturbation:
    """The spec recipe: fillers always, casing w.p. ``p_case``, typos off keywords w.p. ``p_typo``.

    Examples
    --------
    >>> import random
    >>> pert = intent_perturbation(frozenset({"jazz"}))
    >>> "jazz" in pert("play jazz", random.Random(0)).lower()
    True
    """
    p_case = check_in_interval("p_case", p_case, low=0.0, high=1.0, owner="intent_perturbation")
    p_typo = check_in_interval("p_typo", p_typo, low=0.0, high=1.0, owner="intent_perturbation")
    if isinstance(keywords, str) or not isinstance(keywords, Iterable):
        raise TypeError(f"intent_perturbation: keywords must be a set of words; got {keywords!r}.")
    keywords = tuple(keywords)
    if not all(isinstance(w, str) for w in keywords):
        raise TypeError("intent_perturbation: keywords must hold strings.")
    keywords = frozenset(keywords)
    return compose(filler(p=1.0), casing(p_case), char_swap(p_typo, protected=keywords))
