"""Score causal-discovery methods over a grid of simulated settings and seeds (spec §2.5 grid),
summarise the scores per cell, pool summaries of several runs, and compare two methods per cell.

The pipeline: :func:`run_benchmark` → one row per (cell, seed, method); :func:`summarize_benchmark`
→ per (cell, method) the mean and standard deviation over seeds of F1 and TNR and the dataset
count; :func:`pool_summaries` → several such summaries (runs with other seeds) as if one sample;
:func:`min_cell_gain` → the worst cell's mean F1 gain of one method over another;
:func:`worst_cell_gains` → that cell's paired per-dataset gains on held-out seeds (for an
interval).
"""

from __future__ import annotations

import inspect
import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from icml26.core import Progress, check_one_of, check_positive_int, progress_reporter
from icml26.powerlaw_cd.baselines import pcmci_plus, var_lingam
from icml26.powerlaw_cd.graph import is_dag
from icml26.powerlaw_cd.metrics import f1_tnr
from icml26.powerlaw_cd.pairwise import CDResult, granger_pairwise, placy
from icml26.powerlaw_cd.simulate import simulate_ou

__all__ = [
    "dataset_seed",
    "min_cell_gain",
    "pool_summaries",
    "run_benchmark",
    "summarize_benchmark",
    "worst_cell_gains",
]

Method = Callable[[np.ndarray], CDResult]
MAX_JOBS = 256  # run_benchmark: worker processes
# the methods a name selects, with the paper's settings (p = τ_max = lags = 20)
NAMED: dict[str, Method] = {
    "placy": placy,
    "granger": granger_pairwise,
    "pcmci_plus": pcmci_plus,
    "var_lingam": var_lingam,
}


def dataset_seed(cell: Mapping[str, Any], seed: int) -> np.random.SeedSequence:
    """The seed of the dataset of ``cell`` at ``seed``: the same cell and seed give the same data.

    Raises
    ------
    TypeError, ValueError
        If ``cell`` is not a mapping with string keys or ``seed`` not an integer >= 0.

    Examples
    --------
    >>> a = dataset_seed({"strength": 0.5}, 3).generate_state(1)
    >>> bool((a == dataset_seed({"strength": 0.5}, 3).generate_state(1)).all())
    True
    """
    _check_cell("cell", cell, owner="dataset_seed")
    seed = check_positive_int("seed", seed, owner="dataset_seed", minimum=0)
    key = zlib.crc32(repr(sorted(cell.items())).encode())
    return np.random.SeedSequence([seed, key])


def _check_cell(name: str, cell: object, *, owner: str) -> None:
    if not isinstance(cell, Mapping) or not all(isinstance(k, str) for k in cell):
        raise TypeError(
            f"{owner}: {name} must be a mapping with string keys (simulate_ou keywords); "
            f"got {cell!r}."
        )


SIM_KEYWORDS = frozenset(inspect.signature(simulate_ou).parameters) - {"seed"}


def _score(cell: Mapping[str, Any], seed: int, methods: Mapping[str, Method]) -> list[dict]:
    rng = np.random.default_rng(dataset_seed(cell, seed))
    try:
        sim = simulate_ou(seed=rng, **cell)
    except (TypeError, ValueError) as err:
        raise type(err)(f"run_benchmark: grid cell {dict(cell)!r} is invalid: {err}") from None
    rows = []
    for name, method in methods.items():
        start = time.perf_counter()
        result = method(sim.X)
        wall = time.perf_counter() - start
        if not isinstance(result, CDResult):
            raise TypeError(
                f"run_benchmark: methods[{name!r}] must return a CDResult; "
                f"got {type(result).__name__}."
            )
        f1, tnr = f1_tnr(sim.adjacency, result.adjacency)
        rows.append({**cell, "seed": int(seed), "method": name, "f1": f1, "tnr": tnr,
                     "n_edges": int(result.adjacency.sum()),
                     "is_dag": is_dag(result.adjacency), "wall_s": wall})  # fmt: skip
    return rows


def run_benchmark(
    methods: Mapping[str, Method] | Sequence[str],
    grid: Sequence[Mapping[str, Any]],
    seeds: Sequence[int],
    n_jobs: int = 2,
    progress: Progress = None,
):  # -> pandas.DataFrame
    """Run every method on the simulated dataset of every (grid cell, seed) and score it.

    Parameters
    ----------
    methods
        Name → ``method(X) -> CDResult`` (e.g. ``lambda X: placy(X, max_lags=10)``), or names
        among ``"placy"``, ``"granger"``, ``"pcmci_plus"``, ``"var_lingam"`` (default settings).
    grid
        Keyword arguments of :func:`simulate_ou` for each cell (``n_vars`` included).
    seeds
        Seeds; the data of (cell, seed) depend on nothing else (see :func:`dataset_seed`).
    n_jobs
        Processes (joblib), at most ``MAX_JOBS = 256``; 1 runs in this process.
    progress
        ``None``/``False`` (silent), ``True`` (a rich bar) or ``progress(done, total, metrics)``
        called in this process each time one more (cell, seed) dataset has been scored (e.g.
        a task's ``ctx.progress`` bar).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, seed, method): the cell's keys, ``seed``, ``method``, ``f1``,
        ``tnr``, ``n_edges``, ``is_dag`` and ``wall_s``.

    Raises
    ------
    TypeError
        If an argument has the wrong kind (a method that is not callable or returns no
        ``CDResult``, a cell that is not a mapping, a seed that is not an int).
    ValueError
        If ``methods``, ``grid`` or ``seeds`` is empty, a method name or cell keyword is unknown,
        a cell's value is refused by :func:`simulate_ou`, a seed is negative, or ``n_jobs`` is
        out of range.

    Examples
    --------
    >>> from icml26.powerlaw_cd import granger_pairwise
    >>> grid = [{"n_vars": 3, "length": 600, "sigma_b": 0.5}]
    >>> df = run_benchmark({"granger": lambda X: granger_pairwise(X, 5)}, grid, [0, 1], n_jobs=1)
    >>> df.shape[0], sorted(df["seed"].unique().tolist())
    (2, [0, 1])
    """
    import pandas as pd

    owner = "run_benchmark"
    n_jobs = check_positive_int("n_jobs", n_jobs, owner=owner, maximum=MAX_JOBS)
    for name, value in [("methods", methods), ("grid", grid), ("seeds", seeds)]:
        if isinstance(value, str | bytes) or not isinstance(value, Mapping | Sequence):
            raise TypeError(f"{owner}: {name} must be a sequence; got {type(value).__name__}.")
        if len(value) == 0:
            raise ValueError(f"{owner}: {name} must not be empty; got {value!r}.")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(
            f"{owner}: progress must be True, False, None or a callable progress(done, total, "
            f"metrics); got {progress!r}."
        )
    if isinstance(methods, Mapping):
        for name, method in methods.items():
            if not callable(method):
                raise TypeError(f"{owner}: methods[{name!r}] must be callable; got {method!r}.")
    else:
        for name in methods:
            check_one_of("methods", name, NAMED, owner=owner)
        methods = {name: NAMED[name] for name in methods}
    for cell in grid:
        _check_cell("grid", cell, owner=owner)
        unknown = sorted(set(cell) - SIM_KEYWORDS)
        if unknown:
            raise ValueError(
                f"{owner}: grid cells take simulate_ou keywords only; got {unknown} "
                f"(valid: {sorted(SIM_KEYWORDS)})."
            )
    for seed in seeds:
        check_positive_int("seeds", seed, owner=owner, minimum=0)
    jobs = [(cell, seed) for cell in grid for seed in seeds]
    if n_jobs == 1:
        scored = (_score(cell, seed, methods) for cell, seed in jobs)
    else:
        from joblib import Parallel, delayed

        # Results come back in job order as they finish, so progress is reported as we go. The
        # workers end 1 s after the last job (loky's default, 300 s, kept them alive past the
        # call, and a process exiting waits for its children).
        parallel = Parallel(
            n_jobs=n_jobs, backend="loky", return_as="generator", idle_worker_timeout=1
        )
        scored = parallel(delayed(_score)(c, s, methods) for c, s in jobs)
    rows = []
    with progress_reporter(progress, len(jobs), "datasets scored") as report:
        for done, part in enumerate(scored, start=1):
            rows.extend(part)
            report(done)
    return pd.DataFrame(rows)


# the columns run_benchmark adds to a cell's keywords; everything else in its frame is a cell key
RESULT_COLUMNS = ("seed", "method", "f1", "tnr", "n_edges", "is_dag", "wall_s")
SUMMARY_COLUMNS = ("f1", "f1_std", "tnr", "tnr_std", "n")


def _check_frame(name: str, frame: Any, needed: Sequence[str], *, owner: str) -> None:
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{owner}: {name} must be a pandas DataFrame; got {type(frame).__name__}.")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{owner}: {name} lacks the columns {missing} (has {list(frame.columns)})."
        )


def _cell_keys(frame: Any, by: Sequence[str] | None, *, owner: str) -> list[str]:
    """``by`` checked, or every column of ``frame`` that run_benchmark did not add."""
    if by is None:
        return [c for c in frame.columns if c not in RESULT_COLUMNS]
    if isinstance(by, str) or not isinstance(by, Sequence):
        raise TypeError(f"{owner}: by must be a sequence of column names; got {by!r}.")
    if not all(isinstance(k, str) for k in by) or {"seed", "method"} & set(by):
        raise ValueError(
            f"{owner}: by must name cell columns (not seed or method); got {list(by)!r}."
        )
    return list(by)


def summarize_benchmark(frame: Any, by: Sequence[str] | None = None):  # -> pandas.DataFrame
    """Per (cell, method): mean and standard deviation over seeds of F1 and TNR, and the count.

    Parameters
    ----------
    frame
        A :func:`run_benchmark` frame (columns ``method``, ``f1``, ``tnr`` and the cell keys).
    by
        The columns that name a cell; default every column :func:`run_benchmark` did not add
        (the grid's ``simulate_ou`` keywords).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, method): the ``by`` columns, ``method``, ``f1``, ``f1_std``, ``tnr``,
        ``tnr_std`` (sample standard deviations, NaN for one dataset) and ``n`` (datasets).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame or ``by`` not a sequence of names.
    ValueError
        If a needed column is missing or ``by`` names ``seed`` or ``method``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sigma_b": [0.5, 0.5], "seed": [0, 1], "method": ["g", "g"],
    ...                       "f1": [0.5, 1.0], "tnr": [1.0, 1.0]})
    >>> row = summarize_benchmark(frame).iloc[0]
    >>> float(row["sigma_b"]), float(row["f1"]), int(row["n"])
    (0.5, 0.75, 2)
    """
    owner = "summarize_benchmark"
    _check_frame("frame", frame, ("method", "f1", "tnr"), owner=owner)
    keys = [*_cell_keys(frame, by, owner=owner), "method"]
    _check_frame("frame", frame, keys, owner=owner)
    return (
        frame.groupby(keys)
        .agg(
            f1=("f1", "mean"),
            f1_std=("f1", "std"),
            tnr=("tnr", "mean"),
            tnr_std=("tnr", "std"),
            n=("f1", "size"),
        )
        .reset_index()
    )


def pool_summaries(summaries: Sequence[Any]):  # -> pandas.DataFrame
    """Pool :func:`summarize_benchmark` summaries of several runs as if they were one sample.

    Per (cell, method) key (every column but the statistics): the mean weighted by the dataset
    counts, the standard deviation of all pooled datasets,
    sqrt((Σ (n_i − 1) s_i² + n_i (m_i − m)²) / (N − 1)), and the counts summed. A summary row of
    one dataset (no standard deviation) adds no spread of its own. One summary comes back as it
    went in.

    Parameters
    ----------
    summaries
        DataFrames, or lists of their records (as stored in a result's metrics), with the same
        key columns and ``f1``, ``f1_std``, ``tnr``, ``tnr_std``, ``n``.

    Returns
    -------
    pandas.DataFrame
        One row per key: the keys, ``n``, ``f1``, ``f1_std``, ``tnr``, ``tnr_std``.

    Raises
    ------
    TypeError
        If ``summaries`` is not a sequence of DataFrames or record lists.
    ValueError
        If it is empty, a statistic column is missing, or a count is < 1.

    Examples
    --------
    >>> one = [{"cell": "a", "method": "g", "f1": 0.5, "f1_std": 0.0, "tnr": 1.0,
    ...         "tnr_std": 0.0, "n": 2}]
    >>> two = [{**one[0], "f1": 1.0, "n": 2}]
    >>> row = pool_summaries([one, two]).iloc[0]
    >>> float(row["f1"]), int(row["n"]), round(float(row["f1_std"]), 4)
    (0.75, 4, 0.2887)
    """
    import pandas as pd

    owner = "pool_summaries"
    if isinstance(summaries, str | bytes | pd.DataFrame) or not isinstance(summaries, Sequence):
        raise TypeError(
            f"{owner}: summaries must be a sequence of summaries; got {type(summaries).__name__}."
        )
    if len(summaries) == 0:
        raise ValueError(f"{owner}: summaries must not be empty.")
    frames = []
    for i, summary in enumerate(summaries):
        if isinstance(summary, pd.DataFrame):
            frames.append(summary)
        elif isinstance(summary, Sequence) and all(isinstance(r, Mapping) for r in summary):
            frames.append(pd.DataFrame(list(summary)))
        else:
            raise TypeError(
                f"{owner}: summaries[{i}] must be a DataFrame or a list of records; got "
                f"{type(summary).__name__}."
            )
        _check_frame(f"summaries[{i}]", frames[-1], SUMMARY_COLUMNS, owner=owner)
    frame = pd.concat(frames, ignore_index=True)
    keys = [c for c in frame.columns if c not in SUMMARY_COLUMNS]
    counts = pd.to_numeric(frame["n"], errors="coerce").to_numpy(dtype=float)
    if not keys or not np.all(counts >= 1):
        raise ValueError(
            f"{owner}: summaries need key columns and counts n >= 1; got keys {keys} and "
            f"n = {frame['n'].tolist()}."
        )
    pooled = []
    for key, group in frame.groupby(keys):
        key = key if isinstance(key, tuple) else (key,)
        n = group["n"].to_numpy(dtype=float)
        row = dict(zip(keys, key, strict=True), n=int(n.sum()))
        for value in ("f1", "tnr"):
            means = group[value].to_numpy(dtype=float)
            stds = np.nan_to_num(group[f"{value}_std"].to_numpy(dtype=float))  # n = 1: no spread
            mean = float((n * means).sum() / n.sum())
            # Σ (n_i - 1) s_i² + n_i (m_i - m)² over all datasets, divided by N - 1
            ss = ((n - 1) * stds**2 + n * (means - mean) ** 2).sum()
            row[value] = mean
            row[f"{value}_std"] = float(np.sqrt(ss / (n.sum() - 1))) if n.sum() > 1 else np.nan
        pooled.append(row)
    return pd.DataFrame(pooled)


def min_cell_gain(
    frame: Any, ours: str, other: str, by: Sequence[str] | None = None, score: str = "f1"
) -> float:
    """The smallest, over cells, of mean ``score(ours) − score(other)`` over seeds.

    Each cell's mean is taken over the seeds on which ``other`` ran (a costly baseline may run
    on fewer seeds than ``ours``). Select the cells a claim is about before calling, e.g.
    ``min_cell_gain(frame[frame["sigma_b"] >= 0.5], "placy", "granger")``.

    Parameters
    ----------
    frame
        A :func:`run_benchmark` frame.
    ours, other
        Method names in ``frame["method"]``.
    by
        The columns that name a cell; default as in :func:`summarize_benchmark`.
    score
        ``"f1"`` or ``"tnr"``.

    Returns
    -------
    float
        NaN when ``other`` has no score in ``frame`` (it did not run, or no cell is selected).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame or a name is not a string.
    ValueError
        If a needed column is missing, ``score`` is unknown, or ``ours`` has no row although
        ``other`` has.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"cell": [1, 1, 2, 2], "seed": [0, 0, 0, 0],
    ...                       "method": ["a", "b", "a", "b"], "f1": [0.9, 0.5, 0.6, 0.5]})
    >>> round(min_cell_gain(frame, "a", "b"), 6)
    0.1
    """
    owner = "min_cell_gain"
    table = _paired_table(frame, ours, other, by, score, owner=owner)
    if table is None:
        return float("nan")
    levels = list(range(table.index.nlevels - 1))
    gains = (table[ours] - table[other]).groupby(level=levels).mean()
    return float(gains.min()) if len(gains) else float("nan")


def _paired_table(
    frame: Any, ours: str, other: str, by: Sequence[str] | None, score: str, *, owner: str
) -> Any:
    """``score`` per (cell..., seed) row and method, on the datasets ``other`` ran on; None when
    ``other`` has no score."""
    score = check_one_of("score", score, ("f1", "tnr"), owner=owner)
    for name, value in (("ours", ours), ("other", other)):
        if not isinstance(value, str):
            raise TypeError(f"{owner}: {name} must be a method name (str); got {value!r}.")
    _check_frame("frame", frame, ("seed", "method", score), owner=owner)
    index = [*_cell_keys(frame, by, owner=owner), "seed"]
    _check_frame("frame", frame, index, owner=owner)
    table = frame.pivot_table(index=index, columns="method", values=score)
    if other not in table or table[other].isna().all():
        return None
    if ours not in table:
        raise ValueError(f"{owner}: ours={ours!r} has no {score} in frame; other={other!r} has.")
    table = table.dropna(subset=[other])
    return table if len(table) else None


def worst_cell_gains(
    frame: Any, ours: str, other: str, by: Sequence[str] | None = None, score: str = "f1"
) -> list[float]:
    """Paired per-dataset gains ``score(ours) − score(other)`` in the worst cell, held out.

    For "in every cell, ours beats other" judged with an interval: the cells are ranked by their
    mean gain on half the seeds (the 1st, 3rd, ... of each cell's seeds on which ``other`` ran),
    and the gains of the worst of them on the *other* half are returned, one per dataset. Picking
    the worst cell on the seeds it is then judged on would bias the gain downwards (the minimum
    of noisy means); held-out seeds make the returned values an unbiased sample of that cell.
    A cell with a single seed is judged on it (nothing is held out).

    Parameters
    ----------
    frame
        A :func:`run_benchmark` frame.
    ours, other
        Method names in ``frame["method"]``.
    by
        The columns that name a cell; default as in :func:`summarize_benchmark`.
    score
        ``"f1"`` or ``"tnr"``.

    Returns
    -------
    list of float
        Empty when ``other`` has no score in ``frame`` (it did not run, or no cell is selected).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame or a name is not a string.
    ValueError
        If a needed column is missing, ``score`` is unknown, or ``ours`` has no row although
        ``other`` has.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"cell": [1] * 4 + [2] * 4, "seed": [0, 0, 1, 1] * 2,
    ...                       "method": ["a", "b"] * 4,
    ...                       "f1": [0.9, 0.5, 0.8, 0.5, 0.6, 0.5, 0.7, 0.5]})
    >>> [round(g, 6) for g in worst_cell_gains(frame, "a", "b")]  # cell 2, ranked on seed 0
    [0.2]
    """
    owner = "worst_cell_gains"
    table = _paired_table(frame, ours, other, by, score, owner=owner)
    if table is None:
        return []
    gains = table[ours] - table[other]
    worst, worst_gain, held_out = None, math.inf, []
    for _, cell in gains.groupby(level=list(range(gains.index.nlevels - 1))):
        cell = cell.sort_index(level=-1)
        pick, judge = (cell.iloc[::2], cell.iloc[1::2]) if len(cell) > 1 else (cell, cell)
        if float(pick.mean()) < worst_gain:
            worst, worst_gain, held_out = cell, float(pick.mean()), judge
    return [float(g) for g in held_out] if worst is not None else []
