"""Regression tests for inputs the fuzz test (issue 16) found crashing deep or returning NaN."""

import numpy as np
import pytest

from icml26.ecovla import Demonstrations, QuantileTrigger, TinyVLA, TinyVLAConfig


def _frames(n=2, **overrides):
    fields = {
        "images": np.zeros((n, 4, 4, 3), np.uint8),
        "instruction": np.zeros((n, 2), np.int64),
        "proprio": np.zeros((n, 3), np.float32),
        "chunks": np.zeros((n, 4, 3), np.float32),
        "episode": np.zeros(n, np.int64),
        "positions": np.zeros((n, 4), np.float32),
    }
    fields.update(overrides)
    return fields


def test_demonstrations_keep_valid_integer_frames_exactly():
    images = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3) % 256
    demos = Demonstrations(**_frames(images=images, episode=np.array([0.0, 1.0])))
    assert demos.images.dtype == np.uint8 and np.array_equal(demos.images, images)
    assert demos.episode.dtype == np.int64 and demos.episode.tolist() == [0, 1]


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("images", np.full((2, 4, 4, 3), -1), r"images must hold values in \[0, 255\]"),
        ("images", np.full((2, 4, 4, 3), 256), r"images must hold values in \[0, 255\]"),
        ("images", np.full((2, 4, 4, 3), np.nan), "images must hold whole numbers"),
        ("episode", np.array([0.5, 1.0]), "episode must hold whole numbers"),
        ("instruction", np.zeros(2, np.int64), "instruction must be 2-D"),
    ],
)
def test_demonstrations_refuse_out_of_range_integer_fields(name, value, match):
    with pytest.raises(ValueError, match=match):
        Demonstrations(**_frames(**{name: value}))


def test_demonstrations_refuse_non_numeric_fields():
    with pytest.raises(TypeError, match="images must be an array of uint8"):
        Demonstrations(**_frames(images=np.array(["x"] * 2)))


def test_quantile_trigger_threshold_is_minus_inf_while_warming_up_then_numpy_quantile():
    trig = QuantileTrigger(p=30.0, window=5, warmup=3)
    history = [0.9, 0.2, 0.7, 0.4, 0.8, 0.1]
    for i, s in enumerate(history):
        expected = -np.inf if i < 3 else np.quantile(history[max(0, i - 5) : i], 0.3)
        assert trig.threshold() == pytest.approx(expected)
        assert trig.update(s) == bool(s < expected)


@pytest.mark.parametrize("pattern", [2.5, "x", {}])
def test_install_refuses_a_pattern_that_is_not_a_sparsity_pattern(pattern):
    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=8), seed=0)
    with pytest.raises(TypeError, match="pattern must be a SparsityPattern or None"):
        model.install(pattern)
    assert model.installed_key is None  # the dense weights stay installed
