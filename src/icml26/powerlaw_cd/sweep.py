"""Score causal-discovery methods over a grid of simulated settings and seeds (spec §2.5 grid)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from icml26.core import check_one_of, check_positive_int
from icml26.powerlaw_cd.baselines import pcmci_plus, var_lingam
from icml26.powerlaw_cd.graph import is_dag
from icml26.powerlaw_cd.metrics import f1_tnr
from icml26.powerlaw_cd.pairwise import CDResult, granger_pairwise, placy
from icml26.powerlaw_cd.simulate import simulate_ou

__all__ = ["dataset_seed", "run_benchmark"]

Method = Callable[[np.ndarray], CDResult]
# the methods a name selects, with the paper's settings (p = τ_max = lags = 20)
NAMED: dict[str, Method] = {
    "placy": placy,
    "granger": granger_pairwise,
    "pcmci_plus": pcmci_plus,
    "var_lingam": var_lingam,
}


def dataset_seed(cell: Mapping[str, Any], seed: int) -> np.random.SeedSequence:
    """The seed of the dataset of ``cell`` at ``seed``: the same cell and seed give the same data.

    Example
    -------
    >>> a = dataset_seed({"strength": 0.5}, 3).generate_state(1)
    >>> bool((a == dataset_seed({"strength": 0.5}, 3).generate_state(1)).all())
    True
    """
    key = zlib.crc32(repr(sorted(cell.items())).encode())
    return np.random.SeedSequence([int(seed), key])


def _score(cell: Mapping[str, Any], seed: int, methods: Mapping[str, Method]) -> list[dict]:
    rng = np.random.default_rng(dataset_seed(cell, seed))
    sim = simulate_ou(seed=rng, **cell)
    rows = []
    for name, method in methods.items():
        start = time.perf_counter()
        result = method(sim.X)
        wall = time.perf_counter() - start
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
    progress: Callable[[], object] | None = None,
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
        Processes (joblib); 1 runs in this process.
    progress
        Called with no argument each time one (cell, seed) dataset has been scored, in this
        process (e.g. a progress bar's ``advance``).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, seed, method): the cell's keys, ``seed``, ``method``, ``f1``,
        ``tnr``, ``n_edges``, ``is_dag`` and ``wall_s``.

    Raises
    ------
    ValueError
        If ``methods``, ``grid`` or ``seeds`` is empty, a method name is unknown, or
        ``n_jobs`` < 1.

    Example
    -------
    >>> from icml26.powerlaw_cd import granger_pairwise
    >>> grid = [{"n_vars": 3, "length": 600, "sigma_b": 0.5}]
    >>> df = run_benchmark({"granger": lambda X: granger_pairwise(X, 5)}, grid, [0, 1], n_jobs=1)
    >>> df.shape[0], sorted(df["seed"].unique().tolist())
    (2, [0, 1])
    """
    import pandas as pd

    n_jobs = check_positive_int("n_jobs", n_jobs, owner="run_benchmark")
    for name, value in [("methods", methods), ("grid", grid), ("seeds", seeds)]:
        if len(value) == 0:
            raise ValueError(f"run_benchmark: {name} must not be empty; got {value!r}.")
    if not isinstance(methods, Mapping):
        for name in methods:
            check_one_of("methods", name, NAMED, owner="run_benchmark")
        methods = {name: NAMED[name] for name in methods}
    jobs = [(cell, seed) for cell in grid for seed in seeds]
    if n_jobs == 1:
        scored = (_score(cell, seed, methods) for cell, seed in jobs)
    else:
        from joblib import Parallel, delayed

        # results come back in job order as they finish, so progress is reported as we go
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        scored = parallel(delayed(_score)(c, s, methods) for c, s in jobs)
    rows = []
    for part in scored:
        rows.extend(part)
        if progress is not None:
            progress()
    return pd.DataFrame(rows)
