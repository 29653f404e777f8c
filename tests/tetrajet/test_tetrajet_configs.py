"""Issue 40 for tetrajet: every experiment config validates its fields in ``__post_init__``, so
the CLI refuses a bad ``--set`` (exit 2) before any task runs."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.tetrajet.experiments.common import RECIPE_NAMES
from icml26.tetrajet.experiments.formats import FORMATS, FORMATS_PRESETS
from icml26.tetrajet.experiments.lm import LM, LM_PRESETS
from icml26.tetrajet.experiments.oscillation_toy import TOY, TOY_PRESETS

# one clearly bad --set per experiment, with the field the message must name
CLI_BAD = [
    ("tetrajet.formats", "draws=[200, 50]"),  # the slope's counts must increase
    ("tetrajet.lm", "recipes=[fp32, nvfp5]"),
    ("tetrajet.oscillation_toy", "dim=100"),  # not a multiple of the 16-element NVFP4 block
]

BAD = [
    (FORMATS, "draws", (50,), ValueError),  # one count gives no slope
    (FORMATS, "draws", (0, 50), ValueError),
    (FORMATS, "n_samples", 0, ValueError),
    (FORMATS, "replicates", True, TypeError),  # check_fields: a bool is not an int
    (LM, "tokenizer", "words", ValueError),
    (LM, "prior_recipes", ("naive_nvfp4", "naive_nvfp4"), ValueError),
    (LM, "n_heads", 3, ValueError),  # 128 is not a multiple of 3
    (LM, "test_tokens", 64, ValueError),  # fewer than one 128-token window
    (LM, "warmup", -1, ValueError),
    (LM, "lr", -1e-3, ValueError),
    (LM, "lr", float("inf"), TypeError),
    (TOY, "track_steps", 99, ValueError),  # track_steps + 1 must be < period = 100
    (TOY, "steps", 5, ValueError),
    (TOY, "n_samples", 2**20, ValueError),  # dim * n_samples past 2**27
    (TOY, "osc_start_fraction", 1.5, ValueError),
    (TOY, "lr", 0.0, ValueError),
]


@pytest.mark.parametrize(
    ("config", "field", "value", "error"),
    BAD,
    ids=[f"{type(c).__name__}.{f}={v!r}" for c, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(config, field, value, error):
    with pytest.raises(error, match=field):
        replace(config, **{field: value})


@pytest.mark.parametrize("presets", [FORMATS_PRESETS, LM_PRESETS, TOY_PRESETS])
def test_every_preset_is_a_valid_config(presets):
    assert set(presets) == {"smoke", "quick", "full"}
    for config in presets.values():
        assert replace(config) == config


def test_the_config_knows_the_library_recipes():
    from icml26.tetrajet.recipes import RECIPES

    assert tuple(RECIPES) == RECIPE_NAMES


@pytest.mark.parametrize(("name", "setting"), CLI_BAD, ids=[n for n, _ in CLI_BAD])
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, name, setting):
    assert_cli_refuses(tmp_path, name, setting)
