"""The registered experiments' smoke presets, their report hooks, and what importing costs."""

import subprocess
import sys

import matplotlib
import pytest

from icml26.core import RunContext, discover

matplotlib.use("Agg")
REGISTRY = discover()
EXTRA = ("statsmodels", "threadpoolctl", "pandas", "joblib", "tigramite")
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "lingam", "pyEDM", *EXTRA}


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
    assert table.rows[0][-1] == f"{sum(m['placy_ge_granger'] for m in metrics):.0f}/2"
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
    # one bar over the (cell, seed) datasets: 2 cells x 2 seeds, each advanced once, then closed
    assert [e[0] for e in events] == ["start", *["advance"] * 4, "stop"]
    assert events[0][2] == 4 and sum(e[2] for e in events if e[0] == "advance") == 4


def test_experiments_declare_the_extra_and_their_cores():
    robustness, grid = REGISTRY.get("powerlaw_cd.robustness"), REGISTRY.get("powerlaw_cd.grid")
    assert robustness.requires == grid.requires == EXTRA
    assert robustness.resources.cpus == 1 and grid.resources.cpus == 2  # grid: 2 joblib workers
    assert robustness.unavailable_reason is None and grid.install_extra == "powerlaw_cd"


def test_importing_the_package_and_experiments_imports_nothing_heavy():
    code = f"""
import sys
import icml26.powerlaw_cd as package
assert not [m for m in sys.modules if m.startswith("icml26.powerlaw_cd.")], "eager submodule"
import icml26.powerlaw_cd.experiments
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({sorted(HEAVY)!r}))
assert heavy == [], heavy
from icml26.powerlaw_cd import placy
assert "icml26.powerlaw_cd.pairwise" in sys.modules and callable(placy)
print("ok")
"""
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


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


def test_grid_report_pools_every_run_like_one_sample():
    # Two runs of the grid, each summarising its own datasets of one cell: the report's mean and
    # standard deviation must be those of all datasets together (numpy on the raw values).
    import numpy as np

    from icml26.powerlaw_cd.experiments import _grid_frame

    rng = np.random.default_rng(0)
    runs = [rng.uniform(size=n) for n in (5, 3)]
    tnrs = [rng.uniform(size=n) for n in (5, 3)]
    cell = {"data": "ou_stationary", "strength": 0.5, "sigma_g": 1.0, "sigma_b": 1.0}
    metrics = [
        {"summary": [{**cell, "method": "placy", "f1": f.mean(), "f1_std": f.std(ddof=1),
                      "tnr": t.mean(), "tnr_std": t.std(ddof=1), "n": f.size}]}
        for f, t in zip(runs, tnrs, strict=True)
    ]  # fmt: skip
    row = _grid_frame(metrics).iloc[0]
    every_f1, every_tnr = np.concatenate(runs), np.concatenate(tnrs)
    assert row["n"] == 8
    assert row["f1"] == pytest.approx(every_f1.mean(), abs=1e-12)
    assert row["f1_std"] == pytest.approx(every_f1.std(ddof=1), abs=1e-12)
    assert row["tnr_std"] == pytest.approx(every_tnr.std(ddof=1), abs=1e-12)
    # One run is passed through unchanged.
    single = _grid_frame(metrics[:1]).iloc[0]
    assert single["f1_std"] == pytest.approx(runs[0].std(ddof=1), abs=1e-12)
