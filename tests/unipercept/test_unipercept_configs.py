"""Issue 40 for unipercept: every experiment config validates its fields in ``__post_init__``, so
the CLI refuses a bad ``--set`` (exit 2) before any task runs."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.unipercept.experiments.common import MAIN_DEFAULT, PIPELINE_PRESETS
from icml26.unipercept.experiments.reward_ablation import REWARD_DEFAULT, REWARD_PRESETS
from icml26.unipercept.experiments.reward_model import (
    REWARD_MODEL_DEFAULT,
    REWARD_MODEL_PRESETS,
)
from icml26.unipercept.experiments.vlm import VLM_PRESETS, VLM_QUICK

# one clearly bad --set per experiment, with the field the message must name
CLI_BAD = [
    ("unipercept.main", "n_group=1"),  # GRPO needs a group of >= 2 responses
    ("unipercept.joint", "domains=[IQA, XQA]"),
    ("unipercept.dapt_ablation", "size=8"),  # PerceptToy renders >= 16 px
    ("unipercept.reward_ablation", "short_dapt_epochs=2"),  # = dapt_epochs: no epochs left
    ("unipercept.reward_model", "iqa_init=[0.0, 0.0]"),  # render_iqa_knobs has 3 knobs
    ("unipercept.vlm", "n=2"),  # the recipe draws at least 4 items per set
]

BAD = [
    (MAIN_DEFAULT, "n_train", 0, ValueError),
    (MAIN_DEFAULT, "observer_sd", -1.0, ValueError),
    (MAIN_DEFAULT, "clip_eps", 0.0, ValueError),
    (MAIN_DEFAULT, "grpo_lr", float("nan"), TypeError),
    (MAIN_DEFAULT, "dapt_batch", True, TypeError),
    (MAIN_DEFAULT, "domains", ("IQA",), ValueError),  # the experiments read IQA and ISTA
    (MAIN_DEFAULT, "domains", ("IQA", "ISTA", "IQA"), ValueError),
    (MAIN_DEFAULT, "channels", (8, 8, 8), ValueError),
    (MAIN_DEFAULT, "channels", (8, 8, 8, 0), ValueError),
    (REWARD_DEFAULT, "short_dapt_epochs", 0, ValueError),
    (REWARD_DEFAULT, "grpo_steps", -1, ValueError),  # the parent's checks still run
    (REWARD_MODEL_DEFAULT, "generator_queries", 0, ValueError),
    (REWARD_MODEL_DEFAULT, "ista_init", (0.0, 0.0, 0.0), ValueError),
    (VLM_QUICK, "grpo_steps", 0, ValueError),
    (VLM_QUICK, "train_in_task", 1, TypeError),
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
    "presets", [PIPELINE_PRESETS, REWARD_PRESETS, REWARD_MODEL_PRESETS, VLM_PRESETS]
)
def test_every_preset_is_a_valid_config(presets):
    assert set(presets) == {"smoke", "quick", "full"}
    for config in presets.values():
        assert replace(config) == config


@pytest.mark.parametrize(("name", "setting"), CLI_BAD, ids=[n for n, _ in CLI_BAD])
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, name, setting):
    assert_cli_refuses(tmp_path, name, setting)
