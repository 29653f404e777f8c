"""Real-data loaders on synthetic stand-ins in the paper's layouts; sweep; optional baselines."""

import sys

import numpy as np
import pandas as pd
import pytest

from icml26.core import MissingExtraError
from icml26.powerlaw_cd import (
    RIVERS_COLUMNS,
    Dataset,
    granger_pairwise,
    load_airquality,
    load_csv_with_truth,
    load_rivers,
    load_sardine_anchovy_sst,
    pcmci_plus,
    placy,
    run_benchmark,
    simulate_ou,
    var_lingam,
    windowed_scores,
)


def test_csv_with_npy_and_edge_list_truth(tmp_path):
    sim = simulate_ou(3, 700, seed=0)
    pd.DataFrame(sim.X.T, columns=["a", "b", "c"]).to_csv(tmp_path / "x.csv", index=False)
    np.save(tmp_path / "g.npy", sim.adjacency)
    pd.DataFrame({"cause": ["a", "b"], "effect": ["c", "c"]}).to_csv(
        tmp_path / "e.csv", index=False
    )
    data = load_csv_with_truth(tmp_path / "x.csv", tmp_path / "g.npy")
    np.testing.assert_allclose(data.X, sim.X, rtol=1e-15)  # CSV round trip of float64 (repr)
    np.testing.assert_array_equal(data.adjacency, sim.adjacency)
    edges = load_csv_with_truth(tmp_path / "x.csv", tmp_path / "e.csv")
    assert edges.adjacency.tolist() == [[0, 0, 1], [0, 0, 1], [0, 0, 0]]
    pd.DataFrame({"cause": ["a"], "effect": ["z"]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="names an unknown column"):
        load_csv_with_truth(tmp_path / "x.csv", tmp_path / "bad.csv")


def test_rivers_layout(tmp_path):
    rng = np.random.default_rng(0)
    sizes = {"train.csv": 300, "validation.csv": 100, "test.csv": 150}
    parts = {}
    for name, n in sizes.items():
        frame = pd.DataFrame(rng.standard_normal((n, 6)), columns=list(RIVERS_COLUMNS))
        frame.insert(0, "datetime", range(n))  # extra columns are ignored
        frame.to_csv(tmp_path / name, index=False)
        parts[name] = frame[list(RIVERS_COLUMNS)].to_numpy()
    data = load_rivers(tmp_path)
    np.testing.assert_allclose(data.X.T, np.vstack(list(parts.values())), rtol=1e-15)
    assert data.adjacency.sum() == 5
    assert data.adjacency[4, 1] == data.adjacency[1, 0] == data.adjacency[2, 0] == 1


def test_airquality_layout(tmp_path):
    rng = np.random.default_rng(1)
    for k in range(2):
        frame = pd.DataFrame(rng.standard_normal((50, 4)), columns=["s0", "s1", "s2", "s3"])
        frame.insert(0, "time", range(50))
        frame.to_csv(tmp_path / f"part{k}.csv", index=False)
    np.save(tmp_path / "gc_real.npy", np.ones((4, 4)))
    data = load_airquality(tmp_path)
    assert data.X.shape == (4, 100) and data.names == ("s0", "s1", "s2", "s3")
    assert np.all(np.diag(data.adjacency) == 0) and data.adjacency.sum() == 12


def test_windowed_scores_use_consecutive_windows():
    sim = simulate_ou(3, 1300, stock_like=True, sigma_b=0.5, seed=2)
    data = Dataset(sim.X, sim.adjacency, ("a", "b", "c"))
    scores = windowed_scores(data, lambda X: granger_pairwise(X, max_lags=3), window=400)
    assert scores.shape == (3, 2)
    from icml26.powerlaw_cd import f1_tnr

    second = f1_tnr(sim.adjacency, granger_pairwise(sim.X[:, 400:800], max_lags=3).adjacency)
    assert tuple(scores[1]) == second


def test_sardine_case_study_loads():
    from icml26.powerlaw_cd import load_sardine_anchovy_sst

    data = load_sardine_anchovy_sst()
    assert data.X.shape == (4, 78) and data.adjacency.sum() == 4
    assert placy(data.X, max_lags=2, window=16).adjacency.shape == (4, 4)


def test_run_benchmark_is_reproducible_and_cell_seeded():
    grid = [dict(n_vars=3, length=700, sigma_b=0.5), dict(n_vars=3, length=700, strength=1.0)]
    methods = {"granger": lambda X: granger_pairwise(X, max_lags=3)}
    a = run_benchmark(methods, grid, [0, 1], n_jobs=1)
    b = run_benchmark(methods, grid[1:], [1], n_jobs=1)
    assert len(a) == 4 and set(a.columns) >= {"f1", "tnr", "n_edges", "is_dag", "seed"}
    # the data of (cell, seed) do not depend on the rest of the grid
    assert a.iloc[3]["f1"] == b.iloc[0]["f1"] and a.iloc[3]["n_edges"] == b.iloc[0]["n_edges"]


def test_pcmci_plus_finds_a_lagged_link():
    from icml26.powerlaw_cd import pcmci_plus

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, 500))
    X[1, 1:] += 0.8 * X[0, :-1]
    res = pcmci_plus(X, tau_max=2)
    assert res.adjacency[0, 1] == 1 and res.adjacency[1, 0] == 0
    assert res.pvalues[0, 1] < 1e-10 and np.all(np.isnan(np.diag(res.pvalues)))


def test_var_lingam_stability_rule_and_order_restriction():
    from icml26.powerlaw_cd import var_lingam

    rng = np.random.default_rng(0)
    e = rng.uniform(-1, 1, (3, 900))  # non-Gaussian noise, as LiNGAM needs
    X = e.copy()
    for t in range(1, 900):
        X[1, t] += 0.8 * X[0, t - 1]
        X[2, t] += 0.8 * X[1, t - 1]
    res = var_lingam(X, lags=1, seed=0, assume_order=True)
    assert np.all(np.tril(res.adjacency) == 0)
    assert res.adjacency[0, 1] == 1 and res.adjacency[1, 2] == 1


def test_run_benchmark_accepts_method_names():
    cell = [dict(n_vars=3, length=1200)]
    by_name = run_benchmark(["granger"], cell, [0], n_jobs=1)
    explicit = run_benchmark({"granger": granger_pairwise}, cell, [0], n_jobs=1)
    assert by_name["f1"].tolist() == explicit["f1"].tolist()
    with pytest.raises(ValueError, match="run_benchmark: methods must be one of"):
        run_benchmark(["lasso"], cell, [0], n_jobs=1)


def test_run_benchmark_on_two_processes_equals_one_and_reports_progress():
    grid = [dict(n_vars=3, length=700, sigma_b=0.5), dict(n_vars=3, length=700, strength=1.0)]
    methods = {"granger": lambda X: granger_pairwise(X, max_lags=3)}
    calls = {1: [], 2: []}

    def counter(n_jobs):
        def progress(done, total, metrics):
            calls[n_jobs].append((done, total))

        return progress

    one = run_benchmark(methods, grid, [0, 1, 2], n_jobs=1, progress=counter(1))
    two = run_benchmark(methods, grid, [0, 1, 2], n_jobs=2, progress=counter(2))
    columns = ["strength", "sigma_b", "seed", "f1", "tnr", "n_edges"]
    pd.testing.assert_frame_equal(one[columns], two[columns])  # data seeded per (cell, seed)
    # the progress convention: (done, total) once per (cell, seed), in this process
    assert calls[1] == calls[2] == [(k, 6) for k in range(1, 7)]


@pytest.mark.parametrize(
    ("module", "call"),
    [
        ("lingam", lambda: var_lingam(np.zeros((2, 400)), lags=1)),
        ("pyEDM", lambda: load_sardine_anchovy_sst()),
        ("tigramite", lambda: pcmci_plus(np.zeros((2, 400)), tau_max=1)),
    ],
)
def test_a_missing_optional_library_names_its_extra(monkeypatch, module, call):
    extra = "powerlaw_cd" if module == "tigramite" else "test-refs"  # lingam, pyEDM: test refs
    monkeypatch.setitem(sys.modules, module, None)  # import of `module` now fails
    hint = rf"needs {module}, which is not installed: pip install 'icml26\[{extra}\]'"
    with pytest.raises(MissingExtraError, match=hint):
        call()
