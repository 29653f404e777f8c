"""The reproductions' own behaviour beyond the contract test: report hooks show the measured
cells, and factor recovery does not depend on the number of worker processes."""

from dataclasses import replace

import pytest

from icml26.copyright_bench.experiments import client_path, factor_recovery, llm_agents, scripted
from icml26.core import RunContext


def test_scripted_report_hooks_show_the_measured_cells(tmp_path):
    config = scripted.SCRIPTED_PRESETS["smoke"]
    metrics = scripted.scripted(config, RunContext(seed=0, artifact_dir=tmp_path))
    cells, human, claims = scripted.scripted_tables([metrics], config)
    assert len(cells.rows) == 12 and cells.rows[0][:2] == ["neutral", "none"]
    assert cells.rows[0][2] == "0.00 [0.00, 0.39]"  # LawfulAgent: 0 of 6 episodes in the cell
    assert [r[0] for r in human.rows] == ["GreedyAgent", "HeuristicAgent", "LawfulAgent"]
    assert [r[2] for r in claims.rows][:2] == [
        "copyright_bench.llm_agents H1 (headline)",
        "copyright_bench.llm_agents L2a, L2b",
    ]
    assert all(r[3].startswith("not measured here") for r in claims.rows)
    figure = scripted.scripted_plot([metrics], config)["violation_heatmaps"]
    greedy = figure.axes[1].images[0].get_array()
    assert greedy.shape == (4, 3) and float(greedy.min()) == 1.0


def test_factor_recovery_does_not_depend_on_the_number_of_workers(tmp_path):
    config = replace(factor_recovery.FACTOR_PRESETS["smoke"], n_per_family=1, replicates=2)
    serial = factor_recovery.factor_recovery(config, RunContext(seed=4, artifact_dir=tmp_path))
    pooled = factor_recovery.factor_recovery(
        replace(config, workers=2), RunContext(seed=4, artifact_dir=tmp_path, threads=2)
    )
    assert serial == pooled


def test_factor_recovery_runs_no_more_workers_than_its_thread_budget(tmp_path, monkeypatch):
    from concurrent import futures

    def refuse(*args, **kwargs):
        raise AssertionError("a pool was started with a thread budget of one")

    monkeypatch.setattr(futures, "ProcessPoolExecutor", refuse)
    config = replace(factor_recovery.FACTOR_PRESETS["smoke"], n_per_family=1, replicates=2)
    ctx = RunContext(seed=4, artifact_dir=tmp_path, threads=1)
    assert factor_recovery.factor_recovery(replace(config, workers=2), ctx)["replicates"] == 2


@pytest.mark.parametrize(
    ("presets", "field", "value", "message"),
    [
        (factor_recovery.FACTOR_PRESETS, "replicates", -5, r"replicates must be an integer in"),
        (factor_recovery.FACTOR_PRESETS, "level", "task", "level must be one of"),
        (factor_recovery.FACTOR_PRESETS, "workers", True, "workers must be int"),
        (scripted.SCRIPTED_PRESETS, "p_check", 2.0, r"p_check must be in \[0, 1\]"),
        (scripted.SCRIPTED_PRESETS, "high", 99.0, r"high must be in \[-20, 20\]"),
        (llm_agents.LLM_PRESETS, "intents", ("nope",), "intents must be distinct levels"),
        (client_path.CLIENT_PRESETS, "pressures", (), "pressures must be distinct levels"),
    ],
)
def test_configs_refuse_bad_fields_before_any_task(presets, field, value, message):
    """Issue 40: a bad --set value fails in the config (the CLI exits 2), naming the field."""
    with pytest.raises((ValueError, TypeError), match=message):
        replace(presets["quick"], **{field: value})
