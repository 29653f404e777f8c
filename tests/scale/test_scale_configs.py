"""Issue 40 for scale: every experiment config validates its fields in ``__post_init__``, so the
CLI refuses a bad ``--set`` (exit 2) before any task runs."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.scale.experiments.common import REACH_DEFAULT
from icml26.scale.experiments.cost import COST_DEFAULT
from icml26.scale.experiments.reach_v1 import MAIN_DEFAULT

BAD = [
    (REACH_DEFAULT, "episodes", 0),
    (REACH_DEFAULT, "n_walls", (2, 1)),
    (REACH_DEFAULT, "lr", float("nan")),
    (REACH_DEFAULT, "d_model", 10),
    (REACH_DEFAULT, "decoders", ("nope",)),
    (REACH_DEFAULT, "splits", ()),
    (COST_DEFAULT, "batch", -1),
    (COST_DEFAULT, "best_of", True),
    (MAIN_DEFAULT, "episodes", 10**9),
    (MAIN_DEFAULT, "splits", ("mars",)),
    (MAIN_DEFAULT, "policies", ("",)),
]


@pytest.mark.parametrize(("config", "field", "value"), BAD, ids=[f"{f}={v!r}" for _, f, v in BAD])
def test_bad_fields_are_refused_by_name(config, field, value):
    with pytest.raises(ValueError, match=field):
        replace(config, **{field: value})


def test_lists_from_the_cli_become_tuples():
    assert replace(REACH_DEFAULT, n_walls=[1, 1]).n_walls == (1, 1)
    assert replace(MAIN_DEFAULT, splits=["id"]).splits == ("id",)


def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path):
    assert_cli_refuses(tmp_path, "scale.reach_v1", "episodes=0")
