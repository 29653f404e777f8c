"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.cvar_rl.experiments import cliff, frontier, frozen_lake, risky_chain

PRESETS = {
    "risky_chain": risky_chain.RISKY_PRESETS,
    "cliff": cliff.CLIFF_PRESETS,
    "frontier": frontier.FRONTIER_PRESETS,
    "frozen_lake": frozen_lake.LAKE_PRESETS,
}
DEFAULTS = {name: presets["quick"] for name, presets in PRESETS.items()}

BAD = [
    ("risky_chain", "gamma", 2.0, ValueError),  # the example
    ("risky_chain", "gamma", 1.0, ValueError),  # no horizon: the budget grid needs gamma < 1
    ("risky_chain", "gamma", 0.0, ValueError),  # the budget update divides by gamma
    ("risky_chain", "alphas", (0.0, 0.5), ValueError),
    ("risky_chain", "alphas", (), ValueError),
    ("risky_chain", "q_eps", 1.5, ValueError),
    ("risky_chain", "q_lr_schedule", "constant", ValueError),
    ("risky_chain", "K", 1, ValueError),  # BudgetGrid needs two nodes
    ("risky_chain", "q_steps", True, TypeError),
    ("cliff", "slip", -0.1, ValueError),
    ("cliff", "c_lo", 1.0, ValueError),  # above c_hi = 0
    ("cliff", "alphas", (1.5,), ValueError),
    ("cliff", "n_episodes", 0, ValueError),
    ("cliff", "horizon", 10**7, ValueError),
    ("cliff", "replicates", 0, ValueError),
    ("cliff", "gamma", float("nan"), TypeError),  # check_fields: floats must be finite
    ("frontier", "Ks", (301,), ValueError),  # F3 needs a pair of grid sizes
    ("frontier", "Ks", (151, 1), ValueError),
    ("frontier", "slips", (0.0,), ValueError),
    ("frontier", "other_envs", ("Taxi-v3",), ValueError),
    ("frontier", "q_seeds", 0, ValueError),
    ("frontier", "q_grid_size", 1, ValueError),
    ("frontier", "alphas", [0.5], TypeError),  # a list, not the annotated tuple
    ("frozen_lake", "alphas", (), ValueError),
    ("frozen_lake", "q_steps", -5, ValueError),
    ("frozen_lake", "q_grid_size", 1, ValueError),
    ("frozen_lake", "gamma", 1.0, ValueError),
]

# one clearly bad --set per experiment, through the CLI
CLI_BAD = {
    "risky_chain": "gamma=2",
    "cliff": "slip=1.5",
    "frontier": "Ks=[301]",
    "frozen_lake": "alphas=[0]",
}


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_is_a_valid_config(name):
    for config in PRESETS[name].values():
        assert replace(config) == config


@pytest.mark.parametrize(
    ("name", "field", "value", "error"), BAD, ids=[f"{n}.{f}={v!r}" for n, f, v, _ in BAD]
)
def test_bad_fields_are_refused_by_name(name, field, value, error):
    with pytest.raises(error, match=field):
        replace(DEFAULTS[name], **{field: value})


@pytest.mark.parametrize("name", CLI_BAD)
def test_the_cli_refuses_a_bad_set_before_any_task(name, tmp_path):
    assert_cli_refuses(tmp_path, f"cvar_rl.{name}", CLI_BAD[name])
