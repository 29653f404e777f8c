"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.sgg_dp import search
from icml26.sgg_dp.experiments import common, composition, low_dim_win, profile, sampler, table

MODULES = (composition, low_dim_win, profile, sampler, table)

BAD = [
    (composition, "T", 0, ValueError),
    (composition, "std", 0.0, ValueError),
    (composition, "eps", -0.1, ValueError),
    (composition, "counts", (), ValueError),
    (composition, "counts", (1, 0), ValueError),
    (composition, "M", 1, ValueError),  # make_pld: M >= 2
    (composition, "n_panels", 2.5, TypeError),
    (composition, "value_discretization_interval", 0.0, ValueError),
    (low_dim_win, "delta", 1.0, ValueError),
    (low_dim_win, "T", 10**7, ValueError),  # past best_member's MAX_T
    (low_dim_win, "k_grid", (), ValueError),
    (low_dim_win, "p_grid", (1.0, -2.0), ValueError),
    (low_dim_win, "p_grid", (1.0,) * 3400, ValueError),  # 3 × 3400 > 10 000 grid points
    (profile, "dims", (2,), ValueError),  # T = 2 is judged apart: Q1a would have no T
    (profile, "dims", (0, 3), ValueError),
    (profile, "stds", (), ValueError),
    (profile, "laplace_scales", (0.0,), ValueError),
    (profile, "laplace_eps", (-1.0,), ValueError),
    (profile, "eps", float("inf"), TypeError),
    (sampler, "k", 0.0, ValueError),
    (sampler, "p", -1.35, ValueError),
    (sampler, "calibrate_delta", 0.0, ValueError),
    (sampler, "n_samples", 1, ValueError),
    (sampler, "eps_grid", (), ValueError),
    (table, "rows", ((0.5, 1.5, 3),), ValueError),
    (table, "rows", ((0.5, 1e-2, 0),), ValueError),
    (table, "rows", ((0.5, 1e-2, 3.0),), TypeError),
    (table, "k_offsets", (-5.0,), ValueError),  # no k = T + offset > 0 for T = 3
    (table, "p_grid", (), ValueError),
    (table, "mc_deltas", (0.1, 1.0), ValueError),
    (table, "mc_samples", 15, ValueError),  # under 2 draws for each of the 10 batches
    (table, "target_delta", 0.0, ValueError),
    (table, "n_compositions", 0, ValueError),
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_preset_is_a_valid_config(module):
    for config in module.PRESETS.values():
        assert replace(config) == config


def test_the_configs_mirror_the_search_limits():
    assert (common.MAX_T, common.MAX_GRID_POINTS) == (search.MAX_T, search.MAX_GRID_POINTS)


def test_an_empty_table_is_allowed():  # its verdicts read NaN (not run) rather than crash
    assert replace(table.DEFAULT, rows=()).rows == ()


@pytest.mark.parametrize(
    ("module", "field", "value", "error"),
    BAD,
    ids=[f"{m.__name__.rsplit('.', 1)[-1]}.{f}={str(v)[:20]}" for m, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(module, field, value, error):
    with pytest.raises(error, match=field):
        replace(module.DEFAULT, **{field: value})


@pytest.mark.parametrize(
    ("experiment", "override", "field"),
    [
        ("composition", "counts=[1, -4]", "counts"),
        ("low_dim_win", "delta=0", "delta"),
        ("profile", "stds=[0]", "stds"),
        ("sampler", "n_samples=0", "n_samples"),
        ("table", "mc_deltas=[2]", "mc_deltas"),
    ],
)
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, experiment, override, field):
    assert_cli_refuses(tmp_path, f"sgg_dp.{experiment}", override, field)
