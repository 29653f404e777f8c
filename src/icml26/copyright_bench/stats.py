"""Statistics of the benchmark (spec §2.6): Wilson and Newcombe intervals, task-clustered
bootstrap, the factor model, and the human comparison.

* Wilson score interval for ``k`` of ``n``: with ``p = k/n`` and ``z = Φ⁻¹(1 - α/2)``,
  ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``.
* Newcombe's hybrid score interval (method 10) for ``p1 - p2`` from the two Wilson intervals
  ``(l1, u1)``, ``(l2, u2)``: ``d - sqrt((p1-l1)² + (u2-p2)²)``, ``d + sqrt((u1-p1)² + (p2-l2)²)``.
* Task-clustered percentile bootstrap: resample task ids with replacement ``B`` times; the
  statistic is the pooled mean of the metric over the resampled tasks' rows.
* Factor model: ``logit P(violation) = b0 + C(intent) + C(pressure) + C(family)`` fitted by
  statsmodels ``Logit`` with cluster-robust (by task) covariance, on episode rows or slot rows.
* Human vs agent: two-proportion z test, or Fisher's exact test when any cell is below 5.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.copyright_bench.tasks import INTENTS, PRESSURES
from icml26.core import check_fields
from icml26.core.validation import (
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "HUMAN_COLUMNS",
    "BootstrapCI",
    "FactorModel",
    "cell_rates",
    "cluster_bootstrap_ci",
    "compare_to_human",
    "fit_factor_model",
    "load_human_baseline",
    "newcombe_diff_ci",
    "pool_cell_rates",
    "task_means",
    "task_paired_differences",
    "true_coefficients",
    "wilson_ci",
]

HUMAN_COLUMNS = (
    "participant_id",
    "task_id",
    "family",
    "intent",
    "pressure",
    "violation",
    "completed",
    "seconds",
)
REFERENCE = {"intent": "neutral", "pressure": "none", "family": "website"}


def _count(name: str, value: Any, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{owner}: {name} must be an integer; got {value!r}.")
    return int(value)


def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(alpha / 2.0))


def wilson_ci(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` at level ``1 - alpha``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``k`` is not in ``[0, n]`` or ``alpha`` not in ``(0, 1)``.

    Examples
    --------
    >>> [round(x, 4) for x in wilson_ci(3, 10)]
    [0.1078, 0.6032]
    """
    k, n = _count("k", k, "wilson_ci"), _count("n", n, "wilson_ci")
    if n < 1:
        raise ValueError(f"wilson_ci: n must be >= 1; got {n}.")
    if not 0 <= k <= n:
        raise ValueError(f"wilson_ci: k must be in [0, n] = [0, {n}]; got {k}.")
    alpha = check_in_interval(
        "alpha", alpha, low=0.0, high=1.0, closed="neither", owner="wilson_ci"
    )
    z = _z(alpha)
    p = k / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else center - half  # exact limits, not round-off near them
    high = 1.0 if k == n else center + half
    return low, high


def cell_rates(episodes: pd.DataFrame, alpha: float = 0.05) -> list[list[Any]]:
    """The violation rate of each factor cell with its Wilson ``1 - alpha`` interval.

    Returns one row ``[intent, pressure, k, n, rate, wilson_low, wilson_high]`` per
    (intent, pressure) cell of ``episodes`` (the rows of
    :func:`~icml26.copyright_bench.runner.evaluate`), in the order the cells first appear.

    Examples
    --------
    >>> from icml26.copyright_bench import GreedyAgent, cell_rates, copyright_task, evaluate
    >>> task = copyright_task(n_per_family=1, grid="neutral")
    >>> row = cell_rates(evaluate(task, GreedyAgent()).episodes)[0]
    >>> row[:5], round(row[5], 3), row[6]
    (['neutral', 'none', 3, 3, 1.0], 0.439, 1.0)
    """
    import pandas as pd

    owner = "cell_rates"
    if not isinstance(episodes, pd.DataFrame):
        raise TypeError(f"{owner}: episodes must be a DataFrame; got {type(episodes).__name__}.")
    missing = [c for c in ("intent", "pressure", "violation") if c not in episodes.columns]
    if missing:
        raise ValueError(f"{owner}: episodes lacks column(s) {missing}.")
    check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)
    rows = []
    for (intent, pressure), g in episodes.groupby(["intent", "pressure"], sort=False):
        k, n = int(g["violation"].sum()), len(g)
        low, high = wilson_ci(k, n, alpha)
        rows.append([intent, pressure, k, n, k / n, low, high])
    return rows


def pool_cell_rates(
    runs: Sequence[Sequence[Sequence[Any]]], alpha: float = 0.05
) -> dict[tuple, list]:
    """Cell rates of several runs (e.g. seeds) pooled: episodes summed, one Wilson interval.

    ``runs`` holds one :func:`cell_rates` result per run. Returns, per ``(intent, pressure)``,
    ``[k, n, rate, wilson_low, wilson_high, lowest_run_rate, highest_run_rate]``: violations and
    episodes summed over the runs, the pooled rate and its Wilson ``1 - alpha`` interval, and the
    range of the per-run rates.

    Examples
    --------
    >>> seed_0, seed_1 = [["neutral", "none", 1, 4, 0.25]], [["neutral", "none", 3, 4, 0.75]]
    >>> pooled = pool_cell_rates([seed_0, seed_1])
    >>> k, n, rate, low, high, lowest, highest = pooled[("neutral", "none")]
    >>> k, n, rate, lowest, highest
    (4, 8, 0.5, 0.25, 0.75)
    """
    owner = "pool_cell_rates"
    if isinstance(runs, str) or not isinstance(runs, Sequence) or not runs:
        raise TypeError(
            f"{owner}: runs must be a non-empty list of cell_rates results; got {runs!r}."
        )
    check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)
    cells: dict[tuple, list] = {}
    for run in runs:
        if isinstance(run, str) or not isinstance(run, Sequence):
            raise TypeError(f"{owner}: each of runs must be a list of rows; got {run!r}.")
        for row in run:
            if isinstance(row, str) or not isinstance(row, Sequence) or len(row) < 5:
                raise TypeError(
                    f"{owner}: each row of runs must be [intent, pressure, k, n, rate, ...]; "
                    f"got {row!r}."
                )
            intent, pressure, k, n, rate = row[:5]
            cell = cells.setdefault((intent, pressure), [0, 0, []])
            cell[0] += _count("k", k, owner)
            cell[1] += check_positive_int("n", n, owner=owner)
            if isinstance(rate, bool) or not isinstance(rate, int | float | np.number):
                raise TypeError(f"{owner}: rate must be a number; got {rate!r}.")
            if not math.isfinite(rate):
                raise ValueError(f"{owner}: rate must be finite; got {rate!r}.")
            cell[2].append(float(rate))
    return {
        key: [k, n, k / n, *wilson_ci(k, n, alpha), min(rates), max(rates)]
        for key, (k, n, rates) in cells.items()
    }


def _episode_frame(episodes: Any, columns: Sequence[str], metric: str, owner: str) -> Any:
    """``episodes`` checked: a DataFrame with ``columns`` and a numeric ``metric`` column."""
    import pandas as pd

    if not isinstance(episodes, pd.DataFrame):
        raise TypeError(f"{owner}: episodes must be a DataFrame; got {type(episodes).__name__}.")
    if not isinstance(metric, str):
        raise TypeError(f"{owner}: metric must be a column name (str); got {metric!r}.")
    missing = [c for c in (*columns, metric) if c not in episodes.columns]
    if missing:
        raise ValueError(f"{owner}: episodes lacks column(s) {missing}.")
    if episodes.empty:
        raise ValueError(f"{owner}: episodes has no rows.")
    values = episodes[metric]
    if values.dtype == bool:
        values = values.astype(int)
    if not pd.api.types.is_numeric_dtype(values):
        raise TypeError(f"{owner}: metric column {metric!r} must be numeric; got {values.dtype}.")
    return episodes.assign(**{metric: values.astype(float)})


def task_means(episodes: pd.DataFrame, metric: str = "violation") -> list[float]:
    """The mean of ``metric`` per task (over its factor cells and samples), in task order.

    The task is the unit a paired or clustered comparison resamples: its cells share one
    candidate pool. Tasks appear in the order of their first row.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"task_id": ["a", "a", "b", "b"], "violation": [1, 0, 0, 0]})
    >>> task_means(rows)
    [0.5, 0.0]
    """
    frame = _episode_frame(episodes, ("task_id",), metric, "task_means")
    return [float(x) for x in frame.groupby("task_id", sort=False)[metric].mean()]


def task_paired_differences(
    episodes: pd.DataFrame,
    factor: str,
    level: str,
    reference: str,
    metric: str = "violation",
) -> list[float]:
    """Per task, the mean of ``metric`` at ``factor == level`` minus its mean at ``reference``.

    The paired effect of one factor level within each task (same candidate pools, the other
    factors averaged), one value per task that has rows at both levels, in task order.

    Raises
    ------
    ValueError
        If ``factor`` is not ``"intent"`` or ``"pressure"``, a level is unknown, or no task has
        rows at both levels.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"task_id": ["a", "a", "b", "b"], "violation": [1, 0, 1, 1],
    ...                      "pressure": ["high", "none", "high", "none"]})
    >>> task_paired_differences(rows, "pressure", "high", "none")
    [1.0, 0.0]
    """
    owner = "task_paired_differences"
    check_one_of("factor", factor, ("intent", "pressure"), owner=owner)
    levels = INTENTS if factor == "intent" else PRESSURES
    check_one_of("level", level, levels, owner=owner)
    check_one_of("reference", reference, levels, owner=owner)
    frame = _episode_frame(episodes, ("task_id", factor), metric, owner)
    means = frame.groupby(["task_id", factor], sort=False)[metric].mean()
    out = []
    for task in dict.fromkeys(frame["task_id"]):
        if (task, level) in means.index and (task, reference) in means.index:
            out.append(float(means[(task, level)] - means[(task, reference)]))
    if not out:
        raise ValueError(f"{owner}: no task has rows at both {level!r} and {reference!r}.")
    return out


def newcombe_diff_ci(
    k1: int, n1: int, k2: int, n2: int, alpha: float = 0.05
) -> tuple[float, float, float]:
    """Newcombe hybrid-score interval of ``p1 - p2`` (returns ``(diff, low, high)``).

    Examples
    --------
    >>> [round(x, 4) for x in newcombe_diff_ci(56, 70, 48, 80)]
    [0.2, 0.0524, 0.3339]
    """
    owner = "newcombe_diff_ci"
    for k_name, k, n_name, n in (("k1", k1, "n1", n1), ("k2", k2, "n2", n2)):
        k, n = _count(k_name, k, owner), _count(n_name, n, owner)
        if n < 1:
            raise ValueError(f"{owner}: {n_name} must be >= 1; got {n}.")
        if not 0 <= k <= n:
            raise ValueError(f"{owner}: {k_name} must be in [0, {n_name}] = [0, {n}]; got {k}.")
    check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)
    l1, u1 = wilson_ci(k1, n1, alpha)
    l2, u2 = wilson_ci(k2, n2, alpha)
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    return d, d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


@dataclass(frozen=True)
class BootstrapCI:
    """A bootstrap percentile interval of a mean."""

    estimate: float
    low: float
    high: float
    B: int
    n_clusters: int


def cluster_bootstrap_ci(
    df: pd.DataFrame,
    metric: str,
    cluster: str = "task_id",
    B: int = 2000,
    seed: int | np.random.Generator | None = 0,
    alpha: float = 0.05,
) -> BootstrapCI:
    """Percentile interval of ``mean(df[metric])`` resampling whole clusters (tasks).

    Parameters
    ----------
    df
        Rows (episodes or slots).
    metric
        Numeric column (NaN rows are left out).
    cluster
        Column whose values are resampled with replacement.
    B
        Bootstrap replicates (``>= 1``).
    seed
        Seed or generator of the resampling.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task_id": [0, 0, 1, 1], "v": [1, 1, 0, 0]})
    >>> cluster_bootstrap_ci(df, "v", B=200, seed=0).estimate
    0.5
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"cluster_bootstrap_ci: df must be a DataFrame; got {type(df).__name__}.")
    for col in (metric, cluster):
        if col not in df.columns:
            raise ValueError(
                f"cluster_bootstrap_ci: no column {col!r}; columns: {list(df.columns)}"
            )
    B = check_positive_int("B", B, owner="cluster_bootstrap_ci")
    alpha = check_in_interval(
        "alpha", alpha, low=0.0, high=1.0, closed="neither", owner="cluster_bootstrap_ci"
    )
    values = pd.to_numeric(df[metric], errors="coerce")
    keep = values.notna()
    if not keep.any():
        raise ValueError(f"cluster_bootstrap_ci: column {metric!r} has no numeric values.")
    grouped = values[keep].groupby(df.loc[keep, cluster], sort=True)
    sums = grouped.sum().to_numpy(dtype=float)
    counts = grouped.count().to_numpy(dtype=float)
    rng = numpy_generator(seed)
    idx = rng.integers(0, len(sums), size=(B, len(sums)))  # (B, clusters) resampled task ids
    stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(sums.sum() / counts.sum()), float(low), float(high), B, len(sums))


@dataclass(frozen=True)
class FactorModel:
    """A fitted factor model: coefficients, cluster-robust SEs and 95% intervals by name.

    Coefficient names are ``"intercept"`` and ``"<factor>[<level>]"`` (treatment coding against
    neutral / none / website).
    """

    params: dict[str, float]
    bse: dict[str, float]
    conf_int: dict[str, tuple[float, float]]
    level: str
    nobs: int
    n_clusters: int
    converged: bool

    def __post_init__(self) -> None:
        check_fields(self, skip=("params", "bse", "conf_int"))
        for name in ("params", "bse"):
            value = getattr(self, name)
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, float | int) for k, v in value.items()
            ):
                raise TypeError(f"FactorModel: {name} must map coefficient names to floats.")
        if not isinstance(self.conf_int, dict) or not all(
            isinstance(v, tuple) and len(v) == 2 for v in self.conf_int.values()
        ):
            raise TypeError("FactorModel: conf_int must map coefficient names to (low, high).")

    def covers(self, truth: dict[str, float]) -> dict[str, bool]:
        """Whether each true coefficient lies in its interval (names of ``truth`` present)."""
        if not isinstance(truth, Mapping) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in truth.values()
        ):
            raise TypeError(f"FactorModel.covers: truth must map names to numbers; got {truth!r}.")
        return {
            k: self.conf_int[k][0] <= v <= self.conf_int[k][1]
            for k, v in truth.items()
            if k in self.conf_int
        }


def true_coefficients(
    coefs: dict[str, float], factors: Sequence[str] = ("intent", "pressure", "family")
) -> dict[str, float]:
    """A HeuristicAgent's coefficients under the factor model's names (missing levels are 0)."""
    owner = "true_coefficients"
    if not isinstance(coefs, Mapping) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in coefs.values()
    ):
        raise TypeError(f"{owner}: coefs must map levels to finite numbers; got {coefs!r}.")
    if isinstance(factors, str) or not isinstance(factors, Sequence):
        raise TypeError(f"{owner}: factors must be a list of factor names; got {factors!r}.")
    for factor in factors:
        check_one_of("factors", factor, ("intent", "pressure", "family"), owner=owner)
    levels = {
        "intent": INTENTS[1:],
        "pressure": PRESSURES[1:],
        "family": ("merchandise", "pitch_deck"),
    }
    out = {"intercept": float(coefs.get("intercept", 0.0))}
    for factor in factors:
        for level in levels[factor]:
            out[f"{factor}[{level}]"] = float(coefs.get(level, 0.0))
    return out


def fit_factor_model(
    df: pd.DataFrame,
    level: str = "episode",
    outcome: str = "violation",
    factors: Sequence[str] = ("intent", "pressure", "family"),
    cluster: str = "task_id",
) -> FactorModel:
    """Fit ``logit P(outcome) ~ C(intent) + C(pressure) + C(family)`` with SEs clustered by task.

    Parameters
    ----------
    df
        Episode rows (``level="episode"``) or slot rows (``level="slot"``) of a run.
    level
        Which rows ``df`` holds; recorded on the result.
    outcome
        0/1 column.
    factors
        Categorical columns, each treatment-coded against its reference level.
    cluster
        Column of the clusters of the robust covariance.

    Raises
    ------
    ValueError
        For a constant outcome or (quasi-)separated data, where the Logit has no finite fit.
    """
    import pandas as pd
    import statsmodels.api as sm

    if level not in ("episode", "slot"):
        raise ValueError(f"fit_factor_model: level must be 'episode' or 'slot'; got {level!r}.")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"fit_factor_model: df must be a DataFrame; got {type(df).__name__}.")
    missing = [c for c in (outcome, cluster, *factors) if c not in df.columns]
    if missing:
        raise ValueError(f"fit_factor_model: missing column(s) {missing}; have {list(df.columns)}")
    y = df[outcome].astype(float).to_numpy()
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(f"fit_factor_model: {outcome!r} must be 0/1.")
    if y.min() == y.max():
        raise ValueError(f"fit_factor_model: {outcome!r} is constant ({y[0]:g}); nothing to fit.")
    columns = {"intercept": np.ones(len(df))}
    for factor in factors:
        values = df[factor].astype(str).to_numpy()
        ref = REFERENCE.get(factor, sorted(set(values))[0])
        for lvl in sorted(set(values) - {ref}):
            columns[f"{factor}[{lvl}]"] = (values == lvl).astype(float)
    X = pd.DataFrame(columns)
    groups = pd.factorize(df[cluster])[0]
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # separation / non-convergence must not pass silently
            fit = sm.Logit(y, X).fit(
                disp=0, cov_type="cluster", cov_kwds={"groups": groups}, maxiter=100
            )
    except Exception as err:  # statsmodels raises several types for separation
        raise ValueError(f"fit_factor_model: the Logit has no finite fit ({err}).") from None
    ci = fit.conf_int(0.05)
    names = list(X.columns)
    return FactorModel(
        params={n: float(fit.params[n]) for n in names},
        bse={n: float(fit.bse[n]) for n in names},
        conf_int={n: (float(ci.loc[n, 0]), float(ci.loc[n, 1])) for n in names},
        level=level,
        nobs=int(fit.nobs),
        n_clusters=int(groups.max() + 1),
        converged=bool(fit.mle_retvals.get("converged", True)),
    )


def load_human_baseline(path: str | Path) -> pd.DataFrame:
    """Read human-baseline records (CSV or JSONL) with the columns of :data:`HUMAN_COLUMNS`."""
    import pandas as pd

    if not isinstance(path, str | Path):
        raise TypeError(f"load_human_baseline: path must be a str or Path; got {path!r}.")
    path = Path(path)
    if path.suffix == ".csv":
        df = pd.read_csv(path)
    elif path.suffix in (".jsonl", ".json"):
        df = pd.read_json(path, lines=path.suffix == ".jsonl")
    else:
        raise ValueError(f"load_human_baseline: path {path.name!r} must be .csv or .jsonl.")
    missing = [c for c in HUMAN_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"load_human_baseline: path {path.name} has missing column(s) {missing}.")
    for col in ("violation", "completed"):
        if not df[col].isin([0, 1, True, False]).all():
            raise ValueError(f"load_human_baseline: column {col!r} must be 0/1.")
        df[col] = df[col].astype(int)
    for col, allowed in (("intent", INTENTS), ("pressure", PRESSURES)):
        bad = sorted(set(df[col].astype(str)) - set(allowed))
        if bad:
            raise ValueError(
                f"load_human_baseline: column {col!r} has unknown levels {bad}; "
                f"allowed: {list(allowed)}"
            )
    return df


def compare_to_human(
    agent_df: pd.DataFrame,
    human_df: pd.DataFrame,
    metric: str = "violation",
    by: Sequence[str] = (),
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Agent vs human rate of ``metric`` per agent (and per ``by`` group).

    Returns one row per (agent, group): both rates and counts, the Newcombe interval of
    ``agent - human``, the test used (``"fisher"`` when any cell of the 2×2 table is below 5, else
    ``"z"``) and its two-sided p-value.
    """
    import pandas as pd
    from scipy.stats import fisher_exact
    from statsmodels.stats.proportion import proportions_ztest

    owner = "compare_to_human"
    for name, frame in (("agent_df", agent_df), ("human_df", human_df)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{owner}: {name} must be a DataFrame; got {type(frame).__name__}.")
    if not isinstance(metric, str):
        raise TypeError(f"{owner}: metric must be a column name; got {metric!r}.")
    if (
        isinstance(by, str)
        or not isinstance(by, Sequence)
        or not all(isinstance(c, str) for c in by)
    ):
        raise TypeError(f"{owner}: by must be a list of column names; got {by!r}.")
    check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)
    by = list(by)
    for name, frame in (("agent_df", agent_df), ("human_df", human_df)):
        missing = [c for c in (metric, *by) if c not in frame.columns]
        if missing:
            raise ValueError(f"compare_to_human: {name} lacks column(s) {missing}.")
    if "agent" not in agent_df.columns:
        raise ValueError("compare_to_human: agent_df needs an 'agent' column.")
    rows = []
    human_groups = dict(list(human_df.groupby(by))) if by else {(): human_df}
    for key, group in agent_df.groupby(["agent", *by]):
        key = key if isinstance(key, tuple) else (key,)
        human = human_groups.get(tuple(key[1:]))
        if human is None or human.empty:
            continue
        k1, n1 = int(group[metric].sum()), len(group)
        k2, n2 = int(human[metric].sum()), len(human)
        d, low, high = newcombe_diff_ci(k1, n1, k2, n2, alpha)
        table = [[k1, n1 - k1], [k2, n2 - k2]]
        if min(min(r) for r in table) < 5:
            test, p = "fisher", float(fisher_exact(table)[1])
        elif k1 + k2 in (0, n1 + n2):
            test, p = "z", 1.0
        else:
            test, p = "z", float(proportions_ztest([k1, k2], [n1, n2])[1])
        rows.append(
            {
                "agent": key[0],
                **dict(zip(by, key[1:], strict=True)),
                "agent_rate": k1 / n1,
                "agent_n": n1,
                "human_rate": k2 / n2,
                "human_n": n2,
                "diff": d,
                "diff_low": low,
                "diff_high": high,
                "test": test,
                "p_value": p,
            }
        )
    return pd.DataFrame(rows)
