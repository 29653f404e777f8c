"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.floatnet.experiments import depth3, exact_vs_float, full, width

PRESETS = {
    "depth3": depth3.DEPTH3_PRESETS,
    "exact_vs_float": exact_vs_float.EXACT_VS_FLOAT_PRESETS,
    "full": full.FULL_PRESETS,
    "width": width.WIDTH_PRESETS,
}
D3, EVF, FULL, W = depth3.DEPTH3, exact_vs_float.EXACT_VS_FLOAT, full.FULL, width.WIDTH

BAD = [
    (D3, "cases", (), ValueError),
    (D3, "cases", ("3,3",), ValueError),
    (D3, "cases", ("3,3,1,positive",), ValueError),
    (D3, "cases", ("1,3,1",), ValueError),  # FloatFormat: p >= 2
    (D3, "cases", ("11,15,2",), ValueError),  # |F|^2 > 2^26 points
    (D3, "cases", ("2,2,2",), ValueError),  # 2 emax < p + 3: C3 refuses it
    (D3, "cases", [("3,3,1")], TypeError),
    (D3, "n_tables", 0, ValueError),
    (D3, "failing_case", "2,2", ValueError),
    (EVF, "n_points", (), ValueError),
    (EVF, "n_points", (16, 1), ValueError),  # an interpolant needs 2 points
    (EVF, "n_points", (10**6,), ValueError),
    (EVF, "x_range", -8.0, ValueError),
    (EVF, "x_range", 1e6, ValueError),  # past float16's max: draws round to inf
    (EVF, "x_range", float("nan"), TypeError),
    (EVF, "p", 10, ValueError),  # the integer toy needs 4 M N + M < 2^p
    (EVF, "emax", 6, ValueError),  # 2 emax < p + 3
    (FULL, "c3_cases", ("2,2,2",), ValueError),
    (FULL, "cw_cases", (), ValueError),
    (FULL, "float16_low", 0.0, ValueError),
    (FULL, "float16_high", 0.5, ValueError),  # below float16_low
    (FULL, "float16_high", 1e5, ValueError),
    (W, "cases", ("3,3,0",), ValueError),
    (W, "code_d", 12, ValueError),  # > code_p = 11: codes not exact
    (W, "code_p", 30, ValueError),
    (W, "n_monotone", 0, ValueError),
    (W, "monotone_depth", True, TypeError),
]


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_is_a_valid_config(name):
    for config in PRESETS[name].values():
        assert replace(config) == config


@pytest.mark.parametrize(
    ("config", "field", "value", "error"),
    BAD,
    ids=[f"{type(c).__name__}.{f}={v!r}" for c, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(config, field, value, error):
    with pytest.raises(error, match=field):
        replace(config, **{field: value})


@pytest.mark.parametrize(
    ("experiment", "override", "field"),
    [
        ("depth3", "cases=['2,2,2']", "cases"),
        ("exact_vs_float", "x_range=0", "x_range"),
        ("full", "float16_low=2.0", "float16_high"),
        ("width", "code_d=0", "code_d"),
    ],
)
def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path, experiment, override, field):
    assert_cli_refuses(tmp_path, f"floatnet.{experiment}", override, field)
