"""The handcrafted IQA specialist (issue 44): 21 features, HistGradientBoosting on top."""

import numpy as np
import pytest

from icml26.unipercept import HandcraftedIQA, clean_crops, degrade, make_iqa_vr, vr_metrics
from icml26.unipercept.baseline import FEATURE_NAMES, handcrafted_features


@pytest.fixture(scope="module")
def crops():
    return np.stack(clean_crops(6, 32, "train", np.random.default_rng(0)))


def feature(images, name):
    return handcrafted_features(images)[:, FEATURE_NAMES.index(name)]


def test_twenty_one_named_features_computed_per_image(crops):
    together = handcrafted_features(crops)
    alone = np.concatenate([handcrafted_features(c[None]) for c in crops])
    assert together.shape == (len(crops), 21) == (len(crops), len(FEATURE_NAMES))
    np.testing.assert_allclose(together, alone, rtol=1e-12, atol=1e-12)  # no mixing across images
    assert np.isfinite(together).all()


@pytest.mark.parametrize(
    ("kind", "name", "sign"),
    [
        ("blur", "log_band_0", -1),
        ("blur", "log_laplacian_var", -1),
        ("blur", "grad_p90", -1),
        ("noise", "noise_sigma", +1),
        ("exposure", "clip_high", +1),
        ("contrast", "grey_std", -1),
        ("pixelate", "flat_steps", +1),
    ],
)
def test_each_degradation_moves_its_feature_the_right_way(crops, kind, name, sign):
    degraded = np.stack([degrade(c, kind, 0.8, rng=i) for i, c in enumerate(crops)])
    change = feature(degraded, name) - feature(crops, name)
    assert np.all(sign * change > 0), (kind, name, change)


def test_jpeg_raises_blockiness_on_a_smooth_ramp():
    ramp = np.broadcast_to(np.linspace(0.1, 0.9, 32)[None, :, None], (32, 32, 3))
    ramp = (ramp + 0.3 * np.linspace(0, 1, 32)[:, None, None]).clip(0, 1).astype(np.float32)
    jpeg = degrade(ramp, "jpeg", 1.0)
    assert feature(jpeg[None], "blockiness")[0] > feature(ramp[None], "blockiness")[0]


def test_hgb_specialist_tracks_quality_and_beats_the_ridge():
    train = make_iqa_vr(400, seed=0, size=32)
    test = make_iqa_vr(200, seed=1, size=32, split="test")
    mos = np.array([it.mos for it in test])
    hgb = vr_metrics(HandcraftedIQA().fit(train).predict(test), mos)["srcc"]
    ridge = vr_metrics(HandcraftedIQA("ridge").fit(train).predict(test), mos)["srcc"]
    assert hgb > 0.5 and hgb > ridge  # a wrong sign anywhere would give a negative SRCC


def test_specialist_checks_its_inputs():
    with pytest.raises(ValueError, match="regressor"):
        HandcraftedIQA("gbr")
    with pytest.raises(ValueError, match="fit"):
        HandcraftedIQA().predict(make_iqa_vr(2, seed=0, size=16))
    with pytest.raises(ValueError, match="images"):
        handcrafted_features(np.zeros((1, 4, 4, 3)))
