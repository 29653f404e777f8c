"""Perturbation generators: deterministic, label-preserving, protected keywords (spec §7.9)."""

import random

import pytest

from icml26.debias import (
    casing,
    char_swap,
    compose,
    filler,
    perturb_many,
    punctuation,
    whitespace,
)

TEXTS = ["set an alarm for seven", "play some jazz music", "what is the weather in Oslo"]


def _words(text):
    return [w.strip(".,!?").lower() for w in text.split()]


def test_generators_are_deterministic_per_seed():
    pert = compose(filler(), casing(0.5), char_swap(0.3), whitespace(0.3), punctuation(0.5))
    assert perturb_many(TEXTS, pert, 5, seed=3) == perturb_many(TEXTS, pert, 5, seed=3)
    assert perturb_many(TEXTS, pert, 5, seed=3) != perturb_many(TEXTS, pert, 5, seed=4)
    # one stream per text: a prefix of the list gets the same copies
    assert perturb_many(TEXTS[:1], pert, 5, seed=3)[0] == perturb_many(TEXTS, pert, 5, seed=3)[0]


def test_filler_and_casing_always_change_the_text():
    rng = random.Random(0)
    for text in TEXTS:
        for _ in range(20):
            assert filler()(text, rng) != text
            assert casing(1.0)(text, rng) != text
            assert casing(1.0)(text, rng).lower() == text.lower()  # same words, other case


def test_char_swap_keeps_protected_keywords_and_word_multisets():
    protected = {"alarm", "jazz", "weather"}
    pert = char_swap(1.0, protected=protected)
    rng = random.Random(1)
    for text in TEXTS:
        out = pert(text, rng)
        for w_in, w_out in zip(text.split(), out.split(), strict=True):
            if w_in.lower() in protected:
                assert w_out == w_in
            assert sorted(w_in) == sorted(w_out)  # a swap permutes letters inside a word


def test_label_keywords_survive_the_spec_recipe():
    # §5.2 recipe: filler prefix+suffix always, casing 50%, typos 15% off the keywords
    keywords = {"alarm", "jazz", "weather"}
    pert = compose(filler(), casing(0.5), char_swap(0.15, protected=keywords))
    for text, copies in zip(TEXTS, perturb_many(TEXTS, pert, 50, seed=0), strict=True):
        want = keywords & set(_words(text))
        for copy in copies:
            assert want <= set(_words(copy))


def test_whitespace_and_punctuation_keep_the_words():
    rng = random.Random(2)
    for text in TEXTS:
        assert whitespace(1.0)(text, rng).split() == text.split()
        assert punctuation(1.0)(text, rng).startswith(text)


def test_p_zero_is_the_identity():
    rng = random.Random(3)
    for pert in (filler(p=0.0), casing(0.0), char_swap(0.0), whitespace(0.0), punctuation(0.0)):
        assert all(pert(t, rng) == t for t in TEXTS)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: perturb_many([], casing(1.0), 2, seed=0), "texts is empty"),
        (lambda: perturb_many(["a"], casing(1.0), 0, seed=0), "k must be"),
        (lambda: perturb_many("abc", casing(1.0), 1), "not one string"),
        (lambda: casing(1.5), r"p must be in \[0, 1\]"),
        (lambda: filler([], []), "both empty"),
        (lambda: char_swap(0.1, protected="alarm"), "not one string"),
        (lambda: compose(), "at least one"),
        (lambda: compose(3), "must be callable"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
