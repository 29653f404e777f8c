"""The registered experiments' smoke presets, their report hooks, their needs, and the package's
lazy names (no submodule hides a public name)."""

import subprocess
import sys

import matplotlib

from icml26.core import RunContext, discover

matplotlib.use("Agg")
REGISTRY = discover()


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_robustness_smoke_metrics_and_hooks(tmp_path):
    experiment = REGISTRY.get("powerlaw_cd.robustness")
    config = experiment.presets["smoke"]
    metrics = [experiment.run(config, RunContext(seed=s, artifact_dir=tmp_path)) for s in (0, 1)]
    for m in metrics:
        assert 0 <= m["f1_placy"] <= 1 and m["placy_ge_granger"] in (0.0, 1.0)
        assert m["f1_gain"] == m["f1_placy"] - m["f1_granger"]
        assert m["feature_max_abs_err"] < 1e-9  # two float64 OLS solvers
    (table,) = experiment.tables(metrics, config)
    wins = sum(m["placy_ge_granger"] for m in metrics)
    strict = sum(m["placy_beats_granger"] for m in metrics)
    assert table.rows[0][-1] == f"{wins:.0f}/2 ({strict:.0f} strict)"
    assert set(experiment.plot(metrics, config)) == {"f1_per_seed"}


def test_grid_smoke_metrics_hooks_and_progress(tmp_path):
    experiment = REGISTRY.get("powerlaw_cd.grid")
    config = experiment.presets["smoke"]
    events = []
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = [experiment.run(config, ctx)]
    m = metrics[0]
    assert m["f3_bh_extra_edges"] <= 0 and m["f3_acyclic_cycles"] == 0  # hold by construction
    assert len(m["summary"]) == 2 * 4  # two cells x four light methods
    f1_table, tnr_table = experiment.tables(metrics, config)
    assert len(f1_table.rows) == len(tnr_table.rows) == 2 and "granger" in f1_table.columns
    assert set(experiment.plot(metrics, config)) == {"f1_gain_heatmap"}
    # one bar over the sweeps' (cell, seed) datasets: PLaCy/Granger, then F3's two variants,
    # 2 cells x 2 seeds each, each advanced once, then closed
    assert [e[0] for e in events] == ["start", *["advance"] * 8, "stop"]
    assert events[0][2] == 8 and sum(e[2] for e in events if e[0] == "advance") == 8


def test_grid_uses_no_more_processes_than_its_thread_budget(tmp_path, monkeypatch):
    from dataclasses import replace

    import icml26.powerlaw_cd as pcd

    used, real = [], pcd.run_benchmark

    def recording(*args, n_jobs, **kwargs):
        used.append(n_jobs)
        return real(*args, n_jobs=n_jobs, **kwargs)

    monkeypatch.setattr(pcd, "run_benchmark", recording)
    experiment = REGISTRY.get("powerlaw_cd.grid")
    config = replace(experiment.presets["smoke"], n_jobs=2)
    experiment.run(config, RunContext(seed=0, artifact_dir=tmp_path, threads=1))
    assert used and set(used) == {1}


def test_quick_pcmci_graphs_are_shipped_for_exactly_its_datasets():
    """Issue 51: quick's six PCMCI+ datasets hit the shipped cache, and a hit is PCMCI+'s own
    answer (recomputed for one dataset)."""
    import json
    from importlib import resources

    import numpy as np

    from icml26.powerlaw_cd import pcmci_plus
    from icml26.powerlaw_cd.experiments.grid import GRID_PRESETS
    from icml26.powerlaw_cd.experiments.grid_data import (
        PCMCI_CACHE,
        cached_pcmci,
        data_key,
        quick_pcmci_datasets,
    )

    quick = GRID_PRESETS["quick"]
    text = resources.files("icml26.powerlaw_cd").joinpath("data", PCMCI_CACHE).read_text()
    graphs = json.loads(text)["graphs"]
    data = quick_pcmci_datasets(quick)
    assert sorted(data_key(X) for X in data) == sorted(graphs)
    cached = cached_pcmci(quick.max_lags)(data[0])
    assert cached.meta["cached"]
    np.testing.assert_array_equal(cached.adjacency, pcmci_plus(data[0], tau_max=20).adjacency)


def test_experiments_declare_the_extra_and_their_cores():
    robustness, grid = REGISTRY.get("powerlaw_cd.robustness"), REGISTRY.get("powerlaw_cd.grid")
    assert robustness.install_extra == grid.install_extra == "powerlaw_cd"
    assert robustness.resources.cpus == 1 and grid.resources.cpus == 2  # grid: 2 joblib workers
    assert robustness.unavailable_reason is None


def test_no_public_name_is_shadowed_by_a_submodule():
    # importing a submodule sets it as an attribute of the package, which would hide a lazily
    # loaded public name of the same name (the old module placy.py hid the function placy)
    code = """
import importlib, pkgutil, types
import icml26.powerlaw_cd as package
for info in pkgutil.iter_modules(package.__path__):
    importlib.import_module(f"icml26.powerlaw_cd.{info.name}")
shadowed = [n for n in package.__all__ if isinstance(getattr(package, n), types.ModuleType)]
assert shadowed == [], shadowed
print("ok")
"""
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr
