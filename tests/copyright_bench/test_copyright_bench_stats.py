"""Spec §7.7: Wilson / Newcombe against statsmodels and by simulation; the bootstrap; bad input."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from icml26.copyright_bench import (
    cell_rates,
    cluster_bootstrap_ci,
    compare_to_human,
    load_human_baseline,
    newcombe_diff_ci,
    pool_cell_rates,
    task_means,
    task_paired_differences,
    wilson_ci,
)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 100, 720])
def test_wilson_equals_statsmodels(n):
    for k in range(0, n + 1, max(1, n // 13)):
        for alpha in (0.05, 0.1, 0.01):
            ref = proportion_confint(k, n, alpha=alpha, method="wilson")
            # same closed form, same normal quantile: equal up to a few ulps
            assert np.allclose(wilson_ci(k, n, alpha), ref, rtol=0, atol=1e-12)


def test_wilson_limits_are_exact_at_the_ends():
    assert wilson_ci(0, 50)[0] == 0.0 and wilson_ci(50, 50)[1] == 1.0


def test_wilson_coverage_by_simulation():
    rng = np.random.default_rng(0)
    k = rng.binomial(100, 0.1, size=4000)
    covered = [lo <= 0.1 <= hi for lo, hi in (wilson_ci(int(x), 100) for x in k)]
    # 4000 draws: the coverage estimate has SE ~0.004, so 0.93 is > 4 SE below Wilson's ~0.95
    assert np.mean(covered) >= 0.93


def test_newcombe_equals_statsmodels_and_covers():
    for k1, n1, k2, n2 in [(56, 70, 48, 80), (0, 10, 3, 10), (9, 10, 10, 10), (5, 40, 30, 60)]:
        d, lo, hi = newcombe_diff_ci(k1, n1, k2, n2)
        ref = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
        assert d == pytest.approx(k1 / n1 - k2 / n2)
        assert np.allclose((lo, hi), ref, rtol=0, atol=1e-12)
    rng = np.random.default_rng(1)
    k1 = rng.binomial(180, 0.5, size=3000)
    k2 = rng.binomial(180, 0.3, size=3000)
    covered = [
        lo <= 0.2 <= hi
        for _, lo, hi in (
            newcombe_diff_ci(int(a), 180, int(b), 180) for a, b in zip(k1, k2, strict=True)
        )
    ]
    assert np.mean(covered) >= 0.93  # SE of the estimate ~0.004


def test_cluster_bootstrap_is_reproducible_and_resamples_tasks():
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {"task_id": np.repeat(np.arange(30), 12), "violation": rng.integers(0, 2, 360)}
    )
    a = cluster_bootstrap_ci(df, "violation", B=500, seed=7)
    assert a == cluster_bootstrap_ci(df, "violation", B=500, seed=7)
    assert a != cluster_bootstrap_ci(df, "violation", B=500, seed=8)
    assert a.estimate == pytest.approx(df["violation"].mean()) and a.n_clusters == 30
    assert a.low <= a.estimate <= a.high
    # tasks that are all-0 or all-1: resampling whole tasks widens the interval vs rows
    clustered = pd.DataFrame(
        {"task_id": np.repeat(np.arange(30), 12), "violation": np.repeat(np.arange(30) % 2, 12)}
    )
    wide = cluster_bootstrap_ci(clustered, "violation", B=2000, seed=0)
    rows = cluster_bootstrap_ci(
        clustered.assign(task_id=np.arange(360)), "violation", B=2000, seed=0
    )
    assert (wide.high - wide.low) > 2.5 * (rows.high - rows.low)


def test_compare_to_human_uses_fisher_for_small_cells():
    agents = pd.DataFrame(
        {"agent": ["A"] * 40 + ["B"] * 40, "violation": [1] * 30 + [0] * 10 + [1] * 2 + [0] * 38}
    )
    human = pd.DataFrame({"violation": [1] * 10 + [0] * 30})
    out = compare_to_human(agents, human).set_index("agent")
    assert out.loc["A", "test"] == "z" and out.loc["B", "test"] == "fisher"
    assert out.loc["A", "diff"] == pytest.approx(0.75 - 0.25)
    assert out.loc["A", "p_value"] < 1e-4 < out.loc["B", "p_value"]


def test_load_human_baseline(tmp_path):
    rows = pd.DataFrame(
        {
            "participant_id": ["p1", "p2"],
            "task_id": ["website-000"] * 2,
            "family": ["website"] * 2,
            "intent": ["neutral", "explicit_request"],
            "pressure": ["none", "high"],
            "violation": [0, 1],
            "completed": [1, 1],
            "seconds": [300.0, 120.0],
        }
    )
    rows.to_csv(tmp_path / "h.csv", index=False)
    rows.to_json(tmp_path / "h.jsonl", orient="records", lines=True)
    for name in ("h.csv", "h.jsonl"):
        assert load_human_baseline(tmp_path / name)["violation"].tolist() == [0, 1]
    rows.drop(columns="seconds").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['seconds'\]"):
        load_human_baseline(tmp_path / "bad.csv")
    rows.assign(intent=["neutral", "shouting"]).to_csv(tmp_path / "bad2.csv", index=False)
    with pytest.raises(ValueError, match="unknown levels \\['shouting'\\]"):
        load_human_baseline(tmp_path / "bad2.csv")
    with pytest.raises(ValueError, match=r"must be \.csv or \.jsonl"):
        load_human_baseline(tmp_path / "h.xlsx")


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((0, 0), ValueError, "n must be >= 1; got 0"),
        ((5, 4), ValueError, r"k must be in \[0, n\] = \[0, 4\]; got 5"),
        ((-1, 4), ValueError, "k must be in"),
        ((1.5, 4), TypeError, "k must be an integer"),
        ((1, 4, 1.5), ValueError, r"alpha must be in \(0, 1\)"),
    ],
)
def test_wilson_bad_input(args, error, message):
    with pytest.raises(error, match=message):
        wilson_ci(*args)


def test_bootstrap_bad_input():
    df = pd.DataFrame({"task_id": [0, 1], "v": [0, 1]})
    with pytest.raises(ValueError, match="B must be an integer >= 1; got 0"):
        cluster_bootstrap_ci(df, "v", B=0)
    with pytest.raises(ValueError, match="no column 'w'"):
        cluster_bootstrap_ci(df, "w")
    with pytest.raises(TypeError, match="df must be a DataFrame"):
        cluster_bootstrap_ci([1, 2], "v")


def _episodes():
    return pd.DataFrame(
        {
            "intent": ["neutral", "neutral", "neutral", "explicit_request", "explicit_request"],
            "pressure": ["none", "none", "high", "none", "none"],
            "violation": [0, 1, 1, 1, 1],
        }
    )


def test_cell_rates_count_each_cell_in_first_seen_order_with_its_wilson_interval():
    rows = cell_rates(_episodes(), alpha=0.1)
    assert [r[:5] for r in rows] == [
        ["neutral", "none", 1, 2, 0.5],
        ["neutral", "high", 1, 1, 1.0],
        ["explicit_request", "none", 2, 2, 1.0],
    ]
    assert all(tuple(r[5:]) == wilson_ci(r[2], r[3], 0.1) for r in rows)


def test_pooled_cell_rates_sum_the_runs_and_keep_the_per_run_range():
    first, second = cell_rates(_episodes()), cell_rates(_episodes().assign(violation=0))
    pooled = pool_cell_rates([first, second])
    assert pooled[("neutral", "none")] == [1, 4, 0.25, *wilson_ci(1, 4), 0.0, 0.5]
    assert pooled[("explicit_request", "none")][:3] == [2, 4, 0.5]
    assert pool_cell_rates([first]) == {(r[0], r[1]): [*r[2:], r[4], r[4]] for r in first}


def test_cell_rates_bad_input():
    with pytest.raises(TypeError, match="episodes must be a DataFrame"):
        cell_rates([1, 2])
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['pressure'\]"):
        cell_rates(_episodes().drop(columns="pressure"))
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        cell_rates(_episodes(), alpha=1.0)
    with pytest.raises(TypeError, match="runs must be a non-empty list"):
        pool_cell_rates([])
    with pytest.raises(TypeError, match="each row of runs must be"):
        pool_cell_rates([["neutral"]])
    with pytest.raises(ValueError, match="n must be an integer >= 1; got 0"):
        pool_cell_rates([[["neutral", "none", 0, 0, 0.0]]])


def test_task_means_and_paired_differences_pair_levels_within_each_task():
    rows = pd.DataFrame(
        {
            "task_id": ["a"] * 4 + ["b"] * 4 + ["c"] * 2,
            "intent": ["neutral", "neutral", "explicit_request", "explicit_request"] * 2
            + ["neutral", "neutral"],
            "pressure": ["none", "high"] * 5,
            "violation": [0, 1, 1, 1, 0, 0, 0, 1, 1, 1],
        }
    )
    assert task_means(rows) == [0.75, 0.25, 1.0]
    # task c has no explicit_request row: it is left out of the paired intent effect
    assert task_paired_differences(rows, "intent", "explicit_request", "neutral") == [0.5, 0.5]
    assert task_paired_differences(rows, "pressure", "high", "none") == [0.5, 0.5, 0.0]
    assert task_means(rows.assign(violation=rows["violation"].astype(bool))) == [0.75, 0.25, 1.0]


def test_task_means_and_paired_differences_name_bad_input():
    rows = pd.DataFrame({"task_id": ["a", "a"], "pressure": ["high", "high"], "violation": [1, 0]})
    with pytest.raises(TypeError, match="episodes must be a DataFrame"):
        task_means([1, 0])
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['completed'\]"):
        task_means(rows, "completed")
    with pytest.raises(TypeError, match="metric column 'pressure' must be numeric"):
        task_means(rows, "pressure")
    with pytest.raises(ValueError, match="factor"):
        task_paired_differences(rows, "family", "website", "merchandise")
    with pytest.raises(ValueError, match="level"):
        task_paired_differences(rows, "pressure", "extreme", "none")
    with pytest.raises(ValueError, match="no task has rows at both 'high' and 'none'"):
        task_paired_differences(rows, "pressure", "high", "none")
