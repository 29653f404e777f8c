"""Issue 40 for ecovla: every experiment config validates its fields in ``__post_init__``, so the
CLI refuses a bad ``--set`` (exit 2) before any task runs."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.ecovla.experiments import common
from icml26.ecovla.experiments.flops import FLOPS_PRESETS
from icml26.ecovla.experiments.latency import LATENCY_DEFAULT, LATENCY_PRESETS

FLOPS_QUICK = FLOPS_PRESETS["quick"]

# one clearly bad --set per experiment, with the field the message must name
CLI_BAD = [
    ("ecovla.indist", "alpha=1.5"),
    ("ecovla.shift", "episodes=0"),
    ("ecovla.flops", "n_heads=5"),  # d_model 96 is not 5 times an even head size
    ("ecovla.latency", "p=101"),  # a percentile
]

BAD = [
    (common.DEFAULT, "openloop_ratio", 0.99, ValueError),  # once reported as "ratios"
    (common.DEFAULT, "episodes", True, TypeError),  # check_fields: a bool is not an int
    (common.DEFAULT, "noise", float("nan"), TypeError),
    (FLOPS_QUICK, "ratios", (), ValueError),
    (FLOPS_QUICK, "ratios", (0.4, 0.401), ValueError),  # both would be metric tag "40"
    (FLOPS_QUICK, "ratios", (1.0,), ValueError),
    (FLOPS_QUICK, "patch", 12, ValueError),  # not a multiple of 4
    (FLOPS_QUICK, "patch", 24, ValueError),  # does not divide the 64 px image
    (FLOPS_QUICK, "token_keep", 0.0, ValueError),
    (FLOPS_QUICK, "token_layer", 7, ValueError),  # past the 6 layers
    (FLOPS_QUICK, "d_ff", 0, ValueError),
    (LATENCY_DEFAULT, "repeats", 0, ValueError),
    (LATENCY_DEFAULT, "episode_steps", 1, ValueError),  # the pruner calibrates on 2 frames
    (LATENCY_DEFAULT, "d_model", 130, ValueError),
]


@pytest.mark.parametrize(
    ("config", "field", "value", "error"),
    BAD,
    ids=[f"{type(c).__name__}.{f}={v!r}" for c, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(config, field, value, error):
    with pytest.raises(error, match=field):
        replace(config, **{field: value})


@pytest.mark.parametrize("presets", [common.PRESETS, FLOPS_PRESETS, LATENCY_PRESETS])
def test_every_preset_is_a_valid_config(presets):
    assert set(presets) == {"smoke", "quick", "full"}
    for config in presets.values():
        assert replace(config) == config


def test_the_mirrored_sizes_are_tinyvlas():
    from icml26.ecovla import TinyVLAConfig
    from icml26.ecovla.model import MAX_WIDTH

    assert (MAX_WIDTH, TinyVLAConfig().image_size) == (common.MAX_WIDTH, common.IMAGE_SIZE)
    for config in (*FLOPS_PRESETS.values(), *LATENCY_PRESETS.values()):
        sizes = ("d_model", "n_layers", "n_heads", "d_ff", "patch")
        TinyVLAConfig(**{k: getattr(config, k) for k in sizes}, n_kv_heads=config.n_heads)


@pytest.mark.parametrize(("name", "setting"), CLI_BAD, ids=[n for n, _ in CLI_BAD])
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, name, setting):
    assert_cli_refuses(tmp_path, name, setting)
