"""PerceptToy degradations and data hygiene (spec §7)."""

import socket

import numpy as np
import pytest

from icml26.unipercept import (
    KINDS,
    clean_crops,
    degrade,
    degrade_quadrant,
    ista_score,
    make_domain_sets,
    make_iaa_proxy,
    make_iqa_vqa,
    make_iqa_vr,
    make_ista,
    quality_from_severity,
    severity_level,
)
from icml26.unipercept.images import IQA_SOURCES, TEXTURE_SOURCES, load_source, texture_band

IMAGE = np.random.default_rng(0).uniform(0.1, 0.9, size=(32, 32, 3)).astype(np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_severity_zero_is_the_identity(kind):
    np.testing.assert_array_equal(degrade(IMAGE, kind, 0.0, rng=0), IMAGE)


def test_jpeg_at_low_severity_is_close_to_the_input():
    photo = load_source("camera", 64)[:32, :32].copy()
    # quality 95 - 90 * 0.01 = 94 on a natural crop: mean error of a few grey levels (< 0.02)
    assert np.abs(degrade(photo, "jpeg", 0.01) - photo).mean() < 0.02
    assert (
        np.abs(degrade(photo, "jpeg", 1.0) - photo).mean()
        > np.abs(degrade(photo, "jpeg", 0.01) - photo).mean()
    )


@pytest.mark.parametrize("kind", KINDS)
def test_quality_is_non_increasing_in_every_severity(kind):
    s = np.linspace(0, 1, 11)
    other = {"noise": 0.3} if kind == "blur" else {"blur": 0.3}
    g = [quality_from_severity({kind: float(v), **other}) for v in s]
    assert np.all(np.diff(g) <= 0)


def test_degradation_strength_grows_with_severity():
    for kind in ("blur", "noise", "pixelate", "contrast"):
        errors = [np.abs(degrade(IMAGE, kind, s, rng=1) - IMAGE).mean() for s in (0.2, 0.5, 1.0)]
        assert errors[0] < errors[1] < errors[2], kind


def test_severity_levels_follow_the_thresholds():
    assert [severity_level(s) for s in (0.0, 1e-9, 0.35, 0.3500001, 1.0)] == [
        "None", "Slight", "Slight", "Obvious", "Obvious"]  # fmt: skip
    for item in make_iqa_vqa(9, seed=0, size=16, questions=("severity",)):
        assert item.answer_text == severity_level(item.meta["severity"])


def test_quadrant_degradation_changes_only_that_quadrant():
    out = degrade_quadrant(IMAGE, "noise", 1.0, "bottom-left", rng=0)
    changed = np.any(out != IMAGE, axis=2)
    assert changed[16:, :16].mean() > 0.9
    assert not changed[:16].any() and not changed[:, 16:].any()


def test_vr_mos_is_the_closed_form_quality():
    for item in make_iqa_vr(10, seed=3, size=16):
        assert item.mos == pytest.approx(quality_from_severity(item.meta["severities"]), abs=1e-12)
    for item in make_ista(10, seed=3, size=16):
        assert item.mos == ista_score(item.meta["annotation"])


def test_splits_share_no_source_and_load_without_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    splits = [set(IQA_SOURCES[s]) for s in ("train", "val", "test")]
    assert not (splits[0] & splits[1] or splits[0] & splits[2] or splits[1] & splits[2])
    for name in sorted(set().union(*splits)) + list(TEXTURE_SOURCES):
        image = load_source(name, 64)
        assert image.dtype == np.float32 and image.min() >= 0 and image.max() <= 1
    for split in ("train", "test"):
        sources = {it.source for it in make_iqa_vr(20, seed=0, size=16, split=split)}
        assert sources <= set(IQA_SOURCES[split])
    train, test = texture_band("brick", "train"), texture_band("brick", "test")
    full = load_source("brick", 256)
    assert train.shape[0] + test.shape[0] < full.shape[0]  # disjoint bands (val in between)


def test_domain_sets_are_the_single_domain_makers_on_one_generator():
    vr, vqa = make_domain_sets(("IAA", "IQA", "ISTA"), 3, seed=5, size=16, split="test")
    rng = np.random.default_rng(5)
    expected_vr, expected_vqa = [], []
    for make_vr, make_vqa in (
        (
            lambda: make_iaa_proxy(3, rng, 16, "test"),
            lambda: make_iaa_proxy(3, rng, 16, "test", "vqa"),
        ),
        (lambda: make_iqa_vr(3, rng, 16, "test"), lambda: make_iqa_vqa(3, rng, 16, "test")),
        (lambda: make_ista(3, rng, 16, "test"), lambda: make_ista(3, rng, 16, "test", "vqa")),
    ):
        expected_vr += make_vr()
        expected_vqa += make_vqa()
    assert [it.mos for it in vr] == [it.mos for it in expected_vr]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(vr, expected_vr, strict=True))
    assert [it.answer for it in vqa] == [it.answer for it in expected_vqa]


def test_clean_crops_come_from_the_split_and_are_undegraded():
    crops = clean_crops(4, size=16, split="test", seed=0)
    assert len(crops) == 4 and all(c.shape == (16, 16, 3) for c in crops)
    again = clean_crops(4, size=16, split="test", seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(crops, again, strict=True))
    # make_iqa_vr draws the same crops first, so its undegraded items (quality 100) are them
    crops = clean_crops(20, size=16, split="test", seed=1)
    items = make_iqa_vr(20, seed=1, size=16, split="test")
    clean = [i for i, it in enumerate(items) if not it.meta["severities"]]
    assert clean and all(np.array_equal(items[i].image, crops[i]) for i in clean)
    assert all(items[i].mos == 100.0 for i in clean)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: make_domain_sets(("IQA", "AES"), 2), ValueError, "domains must be one of"),
        (lambda: make_domain_sets("IQA", 2), TypeError, "domains must be a non-empty"),
        (lambda: make_domain_sets((), 2), TypeError, "domains must be a non-empty"),
        (lambda: clean_crops(2, size=8), ValueError, "size must be an integer"),
        (lambda: degrade(IMAGE, "sepia", 0.5), ValueError, "kind must be one of"),
        (lambda: degrade(IMAGE, "blur", 1.5), ValueError, "severity must be in"),
        (lambda: degrade(IMAGE[:, :, 0], "blur", 0.5), ValueError, r"img must have shape"),
        (lambda: degrade((IMAGE * 255).astype(np.uint8), "blur", 0.5), TypeError, "dtype"),
        (lambda: quality_from_severity({"blur": -0.1}), ValueError, "severities value"),
        (lambda: make_iqa_vr(0), ValueError, "n must be an integer"),
        (lambda: make_ista(2, size=8), ValueError, "size must be an integer"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
