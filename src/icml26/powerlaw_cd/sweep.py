"""Score causal-discovery methods over a grid of simulated settings and seeds (spec §2.5 grid)."""

from __future__ import annotations

import inspect
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

    Example
    -------
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
        Processes (joblib), at most ``MAX_JOBS = 256``; 1 runs in this process.
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
    TypeError
        If an argument has the wrong kind (a method that is not callable or returns no
        ``CDResult``, a cell that is not a mapping, a seed that is not an int).
    ValueError
        If ``methods``, ``grid`` or ``seeds`` is empty, a method name or cell keyword is unknown,
        a cell's value is refused by :func:`simulate_ou`, a seed is negative, or ``n_jobs`` is
        out of range.

    Example
    -------
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
    if progress is not None and not callable(progress):
        raise TypeError(f"{owner}: progress must be callable or None; got {progress!r}.")
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

        # results come back in job order as they finish, so progress is reported as we go
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        scored = parallel(delayed(_score)(c, s, methods) for c, s in jobs)
    rows = []
    for part in scored:
        rows.extend(part)
        if progress is not None:
            progress()
    return pd.DataFrame(rows)
