"""Issue 40 for omnifit: every experiment config validates its fields in ``__post_init__``, so
the CLI refuses a bad ``--set`` (exit 2) before any task runs."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.omnifit.experiments.accuracy import ACCURACY, ACCURACY_PRESETS
from icml26.omnifit.experiments.efficiency import EFFICIENCY, EFFICIENCY_PRESETS
from icml26.omnifit.experiments.profile import PROFILE, PROFILE_PRESETS
from icml26.omnifit.experiments.scene import SCENE, SCENE_PRESETS
from icml26.omnifit.experiments.score_once import SCORE_ONCE, SCORE_ONCE_PRESETS

# one clearly bad --set per experiment, with the field the message must name
CLI_BAD = [
    ("omnifit.accuracy", "mus=[0.2, 0.0]"),  # a retention of nothing
    ("omnifit.profile", "delta=1.0"),  # lahp_calibrate's delta is in (0, 1)
    ("omnifit.score_once", "mu=0.01"),  # below r_min = 0.02
    ("omnifit.efficiency", "fastv_layer=4"),  # the quick model has 4 layers: 0-3
    ("omnifit.scene", "windows=1"),
]

BAD = [
    (ACCURACY, "n_heads", 5, ValueError),  # 96 / 5 is not an even head size
    (ACCURACY, "windows", 1, ValueError),
    (ACCURACY, "train_samples", 0, ValueError),  # only the latency config runs untrained
    (ACCURACY, "lr", 0.0, ValueError),
    (ACCURACY, "clutter", 1.5, ValueError),
    (ACCURACY, "r_min", 0.0, ValueError),
    (ACCURACY, "mus", (), ValueError),
    (ACCURACY, "mus", (0.2, 0.2), ValueError),
    (ACCURACY, "epochs", True, TypeError),  # check_fields: a bool is not an int
    (PROFILE, "M", 0, ValueError),
    (PROFILE, "infonce_weight", float("nan"), TypeError),
    (SCORE_ONCE, "timing_batch", 0, ValueError),
    (EFFICIENCY, "train_samples", -1, ValueError),
    (EFFICIENCY, "warmup", -1, ValueError),
    (EFFICIENCY, "mu", 1.5, ValueError),
    (SCENE, "standins", ("scene_s0", ""), ValueError),
    (SCENE, "batch_size", 1.5, TypeError),
]


@pytest.mark.parametrize(
    ("config", "field", "value", "error"),
    BAD,
    ids=[f"{type(c).__name__}.{f}={v!r}" for c, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(config, field, value, error):
    with pytest.raises(error, match=field):
        replace(config, **{field: value})


@pytest.mark.parametrize(
    "presets",
    [ACCURACY_PRESETS, EFFICIENCY_PRESETS, PROFILE_PRESETS, SCENE_PRESETS, SCORE_ONCE_PRESETS],
)
def test_every_preset_is_a_valid_config(presets):
    assert set(presets) == {"smoke", "quick", "full"}
    for config in presets.values():
        assert replace(config) == config


def test_the_mirrored_model_checks_are_tinyomnis():
    from icml26.omnifit import TinyOmniConfig

    for bad in ({"n_heads": 5}, {"d": 0}, {"n_layers": 257}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            TinyOmniConfig(**bad)
        with pytest.raises(ValueError, match=next(iter(bad))):
            replace(ACCURACY, **bad)


@pytest.mark.parametrize(("name", "setting"), CLI_BAD, ids=[n for n, _ in CLI_BAD])
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, name, setting):
    assert_cli_refuses(tmp_path, name, setting)
