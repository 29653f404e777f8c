"""The registered experiments' smoke presets and their report hooks (tables and figures)."""

import matplotlib

from icml26.core import discover

matplotlib.use("Agg")
REGISTRY = discover()


def test_robustness_smoke_metrics_and_hooks():
    experiment = REGISTRY.get("powerlaw_cd.robustness")
    config = experiment.presets["smoke"]
    metrics = [experiment.run(config, seed) for seed in (0, 1)]
    for m in metrics:
        assert 0 <= m["f1_placy"] <= 1 and m["placy_ge_granger"] in (0.0, 1.0)
        assert m["f1_gain"] == m["f1_placy"] - m["f1_granger"]
        assert m["feature_max_abs_err"] < 1e-9  # two float64 OLS solvers
    (table,) = experiment.tables(metrics, config)
    assert table.rows[0][-1] == f"{sum(m['placy_ge_granger'] for m in metrics):.0f}/2"
    assert set(experiment.plot(metrics, config)) == {"f1_per_seed"}


def test_grid_smoke_metrics_and_hooks():
    experiment = REGISTRY.get("powerlaw_cd.grid")
    config = experiment.presets["smoke"]
    metrics = [experiment.run(config, 0)]
    m = metrics[0]
    assert m["f3_bh_extra_edges"] <= 0 and m["f3_acyclic_cycles"] == 0  # hold by construction
    assert len(m["summary"]) == 2 * 4  # two cells x four light methods
    f1_table, tnr_table = experiment.tables(metrics, config)
    assert len(f1_table.rows) == len(tnr_table.rows) == 2 and "granger" in f1_table.columns
    assert set(experiment.plot(metrics, config)) == {"f1_gain_heatmap"}
