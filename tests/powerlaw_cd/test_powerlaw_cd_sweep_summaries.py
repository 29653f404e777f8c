"""Per-cell summaries of a sweep, pooled over runs, and the worst cell's gain, against numpy and
pandas computed on the raw per-dataset scores."""

import numpy as np
import pandas as pd
import pytest

from icml26.powerlaw_cd import (
    granger_pairwise,
    min_cell_gain,
    placy,
    pool_summaries,
    run_benchmark,
    summarize_benchmark,
)

CELL = {"data": "ou_stationary", "strength": 0.5, "sigma_g": 1.0, "sigma_b": 1.0}


def _raw(rng, sizes):
    """Per-dataset F1/TNR of one cell for runs of the given sizes, and their summaries."""
    f1s = [rng.uniform(size=n) for n in sizes]
    tnrs = [rng.uniform(size=n) for n in sizes]
    summaries = [
        [{**CELL, "method": "placy", "f1": f.mean(), "f1_std": f.std(ddof=1),
          "tnr": t.mean(), "tnr_std": t.std(ddof=1), "n": f.size}]
        for f, t in zip(f1s, tnrs, strict=True)
    ]  # fmt: skip
    return f1s, tnrs, summaries


def test_pooled_summaries_equal_the_statistics_of_all_datasets_together():
    f1s, tnrs, summaries = _raw(np.random.default_rng(0), (5, 3))
    row = pool_summaries(summaries).iloc[0]
    every_f1, every_tnr = np.concatenate(f1s), np.concatenate(tnrs)
    assert row["n"] == 8
    assert row["f1"] == pytest.approx(every_f1.mean(), abs=1e-12)
    assert row["f1_std"] == pytest.approx(every_f1.std(ddof=1), abs=1e-12)
    assert row["tnr_std"] == pytest.approx(every_tnr.std(ddof=1), abs=1e-12)
    # one run is passed through unchanged; a DataFrame is as good as its records
    single = pool_summaries([pd.DataFrame(summaries[0])]).iloc[0]
    assert single["f1_std"] == pytest.approx(f1s[0].std(ddof=1), abs=1e-12)


def test_summaries_of_a_sweep_pool_to_the_summary_of_the_whole_sweep():
    grid = [dict(n_vars=3, length=700, sigma_b=0.5), dict(n_vars=3, length=700, sigma_b=1.0)]
    methods = {"granger": lambda X: granger_pairwise(X, max_lags=3)}
    frame = run_benchmark(methods, grid, [0, 1, 2, 3], n_jobs=1)
    whole = summarize_benchmark(frame)  # cells: every simulate_ou keyword of the grid
    assert list(whole.columns[:3]) == ["n_vars", "length", "sigma_b"] and len(whole) == 2
    expected = frame.groupby("sigma_b")["f1"].agg(["mean", "std", "size"])
    assert whole["f1"].tolist() == pytest.approx(expected["mean"].tolist())
    assert whole["f1_std"].tolist() == pytest.approx(expected["std"].tolist())
    assert whole["n"].tolist() == expected["size"].tolist()
    early = frame["seed"] < 1
    parts = [summarize_benchmark(frame[early]), summarize_benchmark(frame[~early])]
    pooled = pool_summaries(parts)
    for value in ("f1", "f1_std", "tnr", "tnr_std"):
        assert pooled[value].tolist() == pytest.approx(whole[value].tolist(), nan_ok=True)
    assert summarize_benchmark(frame, by=["sigma_b"]).columns[0] == "sigma_b"


def test_min_cell_gain_uses_the_seeds_the_other_method_ran_on():
    frame = pd.DataFrame(
        {
            "cell": [1, 1, 1, 1, 1, 2, 2],
            "seed": [0, 0, 1, 1, 2, 0, 0],
            "method": ["a", "b", "a", "b", "a", "a", "b"],
            "f1": [0.9, 0.5, 0.7, 0.5, 0.0, 0.6, 0.55],
        }
    )
    # cell 1: seeds 0, 1 only (b did not run on seed 2): mean gain 0.3; cell 2: 0.05
    assert min_cell_gain(frame, "a", "b") == pytest.approx(0.05)
    assert min_cell_gain(frame[frame["cell"] == 1], "a", "b") == pytest.approx(0.3)
    assert np.isnan(min_cell_gain(frame, "a", "pcmci"))  # other never ran


def test_a_real_sweep_gain_matches_a_direct_computation():
    grid = [dict(n_vars=3, length=800, stock_like=True, stationary=False, sigma_b=1.0)]
    methods = {
        "placy": lambda X: placy(X, max_lags=3, window=30),
        "granger": lambda X: granger_pairwise(X, max_lags=3),
    }
    frame = run_benchmark(methods, grid, [0, 1, 2], n_jobs=1)
    f1 = frame.pivot_table(index="seed", columns="method", values="f1")
    assert min_cell_gain(frame, "placy", "granger") == pytest.approx(
        float((f1["placy"] - f1["granger"]).mean())
    )


def test_summaries_reject_bad_input():
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        summarize_benchmark([{"f1": 1.0}])
    with pytest.raises(ValueError, match=r"frame lacks the columns \['tnr'\]"):
        summarize_benchmark(pd.DataFrame({"method": ["a"], "f1": [1.0]}))
    with pytest.raises(ValueError, match="by must name cell columns"):
        summarize_benchmark(pd.DataFrame({"method": ["a"], "f1": [1.0], "tnr": [1.0]}), ["seed"])
    with pytest.raises(ValueError, match="summaries must not be empty"):
        pool_summaries([])
    with pytest.raises(TypeError, match=r"summaries\[0\] must be a DataFrame or a list"):
        pool_summaries([3])
    _, _, summaries = _raw(np.random.default_rng(1), (2,))
    with pytest.raises(ValueError, match="counts n >= 1"):
        pool_summaries([[{**summaries[0][0], "n": 0}]])
    frame = pd.DataFrame({"cell": [1], "seed": [0], "method": ["b"], "f1": [0.5]})
    with pytest.raises(ValueError, match="ours='a' has no f1 in frame"):
        min_cell_gain(frame, "a", "b")
    with pytest.raises(ValueError, match="score must be one of"):
        min_cell_gain(frame, "a", "b", score="auc")


def test_a_process_that_ran_a_parallel_benchmark_exits_without_waiting_on_its_pool():
    # A spawned worker (as icml26's runner uses) joins its children on exit; loky's default
    # 300 s idle timeout kept the run's last worker, and so the whole run, waiting.
    import multiprocessing

    args = ({"granger": granger_pairwise}, [{"n_vars": 5, "length": 200}], [0, 1])
    process = multiprocessing.get_context("spawn").Process(
        target=run_benchmark, args=args, kwargs={"n_jobs": 2}
    )
    process.start()
    process.join(timeout=120)  # far above a normal exit, far below loky's 300 s
    hung = process.is_alive()
    if hung:
        process.kill()
        process.join()
    assert not hung and process.exitcode == 0
