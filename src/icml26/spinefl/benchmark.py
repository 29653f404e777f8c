"""The comparison harness of spec §5: tasks, methods, one run per (task, alpha, seed, method).

Tasks: ``"synthetic"`` (``make_classification``, 32 features), ``"digits"`` (sklearn 8x8) and
``"fashion_mnist"`` (the Debian package's IDX files, or the shipped 12 000 / 2 000 subset
where they are absent, with a warning), each with an MLP ``d -> 256 -> 256 -> 10``
and C clients split by a Dirichlet(alpha) partition; widths r = 1 for the first quarter of the
clients, 1/2 for the second, 1/4 for the rest (levels {1, 1/2, 1/4}, proportions 1:1:2, §5.1).

Methods (§2.10): SpineFL, HeteroFL, FedRolex, FedDropout, FjORD-lite, FIARSE-lite, the FedAvg
bounds and SpineFL's ablations. Every method of one (task, alpha, seed) sees the same partition,
the same initial weights and the same participants (paired comparison).

Deviations: FedAvg-small is scored by its deployed r_min-width model (its full-width model has
untrained units); every other method by its full-width global model.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from icml26.core import (
    Progress,
    check_in_interval,
    check_one_of,
    check_positive_int,
    progress_reporter,
)
from icml26.spinefl.data import (
    _fashion_mnist_missing,
    dirichlet_partition,
    load_digits_split,
    load_fashion_mnist,
    load_fashion_mnist_subset,
    load_synthetic,
)
from icml26.spinefl.models import SliceableMLP
from icml26.spinefl.names import BASELINES, METHODS, TASKS
from icml26.spinefl.selection import (
    AbstractSelector,
    MagnitudeSelector,
    OrderedDropoutSelector,
    RandomSelector,
    RollingSelector,
    SpineSelector,
    StaticSelector,
)
from icml26.spinefl.simulation import HeteroSimulation, History

__all__ = [
    "BASELINES",
    "METHODS",
    "FederatedTask",
    "compare_methods",
    "default_ratios",
    "make_selector",
    "make_task",
    "results_frame",
    "run_method",
]

MAX_CLIENTS = 10**6  # most clients of a simulated federation


def default_ratios(n_clients: int) -> tuple[float, ...]:
    """r = 1 for clients [0, C/4), 1/2 for [C/4, C/2), 1/4 for the rest (§5.1 for C = 20).

    ``n_clients`` is at most ``MAX_CLIENTS`` = 10**6.

    Examples
    --------
    >>> default_ratios(8)
    (1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25)
    """
    n_clients = check_positive_int(
        "n_clients", n_clients, owner="default_ratios", maximum=MAX_CLIENTS
    )
    q = n_clients // 4
    return tuple(1.0 if c < q else 0.5 if c < 2 * q else 0.25 for c in range(n_clients))


@dataclass(frozen=True)
class FederatedTask:
    """A partitioned classification task.

    Attributes
    ----------
    name
        ``"synthetic"``, ``"digits"`` or ``"fashion_mnist"``.
    clients
        ``[(X_c, y_c), ...]``.
    test
        ``(X_test, y_test)``.
    ratios
        Width ratio of every client.
    dims
        MLP sizes ``[d, 256, 256, 10]``.
    """

    name: str
    clients: list[tuple[np.ndarray, np.ndarray]]
    test: tuple[np.ndarray, np.ndarray]
    ratios: tuple[float, ...]
    dims: tuple[int, ...]


def make_task(
    name: str,
    alpha: float,
    seed: int,
    *,
    n_clients: int = 20,
    min_size: int = 10,
    hidden: Sequence[int] = (256, 256),
    n_samples: int = 12_000,
    n_train: int | None = None,
) -> FederatedTask:
    """Load task ``name``, split its training set over clients by Dirichlet(alpha) (§5.1).

    ``n_samples`` (generated samples, train + 2 000 test) only applies to the synthetic task;
    ``n_train`` keeps a random subset of that many training samples (a cheaper preset).

    Examples
    --------
    >>> task = make_task("digits", alpha=0.5, seed=0, n_clients=4)
    >>> len(task.clients), task.dims, task.ratios
    (4, (64, 256, 256, 10), (1.0, 0.5, 0.25, 0.25))
    """
    name = check_one_of("name", name, TASKS, owner="make_task")
    seed = check_positive_int("seed", seed, owner="make_task", minimum=0)
    if name == "synthetic":
        X, y, X_test, y_test = load_synthetic(seed, n_samples=n_samples)
    elif name == "digits":
        X, y, X_test, y_test = load_digits_split(seed)
    elif _fashion_mnist_missing() is None:
        X, y, X_test, y_test = load_fashion_mnist()
    else:
        warnings.warn(
            "make_task: the Debian Fashion-MNIST files are absent; using the shipped balanced "
            "subset (12 000 train / 2 000 test images) instead of 60 000 / 10 000.",
            stacklevel=2,
        )
        X, y, _, _, X_test, y_test = load_fashion_mnist_subset()
        X, X_test = X.reshape(len(X), -1), X_test.reshape(len(X_test), -1)
    if n_train is not None and n_train < len(y):
        n_train = check_positive_int("n_train", n_train, owner="make_task")
        keep = np.sort(np.random.default_rng([seed, 7]).choice(len(y), n_train, replace=False))
        X, y = X[keep], y[keep]
    parts = dirichlet_partition(y, n_clients, alpha, min_size=min_size, seed=seed)
    return FederatedTask(
        name=name,
        clients=[(X[p], y[p]) for p in parts],
        test=(X_test, y_test),
        ratios=default_ratios(n_clients),
        dims=(X.shape[1], *hidden, int(y.max()) + 1),
    )


def make_selector(
    method: str,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    gamma: float = 0.5,
    score_source: str = "history",
    rank_normalise: bool = False,
    backbone_rule: str = "r_min",
) -> AbstractSelector:
    """A fresh selector for ``method`` (one of :data:`METHODS`); SpineFL's knobs apply to it.

    SpineFL's ablations are named by what they remove and keep every other knob:
    ``SpineFL-no-backbone`` (beta = 0: every unit drawn by guided sampling),
    ``SpineFL-no-sampling`` (T = 1e-6: deterministic top-k by score, no diversity),
    ``SpineFL-no-guidance`` (T = 1e6: backbone + uniform sampling of the rest) and
    ``SpineFL-no-client-history`` (every client samples by the global history G).

    Examples
    --------
    >>> type(make_selector("FedRolex")).__name__
    'RollingSelector'
    >>> make_selector("SpineFL-no-backbone", temperature=0.5).beta
    0.0
    """
    method = check_one_of("method", method, METHODS, owner="make_selector")
    knobs = {
        "beta": beta,
        "temperature": temperature,
        "gamma": gamma,
        "score_source": score_source,
        "rank_normalise": rank_normalise,
        "backbone_rule": backbone_rule,
    }
    match method:
        case "SpineFL":
            return SpineSelector(**knobs)
        case "HeteroFL" | "FedAvg-small" | "FedAvg-full":
            return StaticSelector()
        case "FedRolex":
            return RollingSelector()
        case "FedDropout":
            return RandomSelector()
        case "FjORD-lite":
            return OrderedDropoutSelector()
        case "FIARSE-lite":
            return MagnitudeSelector()
        case "SpineFL-no-backbone":
            return SpineSelector(**{**knobs, "beta": 0.0})
        case "SpineFL-no-sampling":
            return SpineSelector(**{**knobs, "temperature": 1e-6})
        case "SpineFL-no-guidance":
            return SpineSelector(**{**knobs, "temperature": 1e6})
        case _:
            return SpineSelector(**knobs, scope="global")


def run_method(
    task: FederatedTask,
    method: str,
    *,
    rounds: int,
    seed: int,
    participation: float = 0.5,
    local_epochs: int = 1,
    lr: float = 0.05,
    batch_size: int = 32,
    momentum: float = 0.9,
    eval_every: int = 1,
    spine_kwargs: dict[str, Any] | None = None,
    progress: Progress = None,
) -> tuple[float, History]:
    """One federated run of ``method`` on ``task``; returns (its score, the history).

    The score is the mean of the last 5 evaluations of the full-width global model
    (FedAvg-small: of its r_min-width model).
    """
    method = check_one_of("method", method, METHODS, owner="run_method")
    check_in_interval("participation", participation, low=0.0, high=1.0, closed="right")
    ratios = task.ratios
    if method == "FedAvg-small":
        ratios = (min(ratios),) * len(ratios)
    elif method == "FedAvg-full":
        ratios = (1.0,) * len(ratios)
    sim = HeteroSimulation(
        partial(SliceableMLP, list(task.dims), seed=seed),
        make_selector(method, **(spine_kwargs or {})),
        task.clients,
        ratios,
        rounds,
        participation=participation,
        local_epochs=local_epochs,
        lr=lr,
        seed=seed,
        test=task.test,
        batch_size=batch_size,
        momentum=momentum,
        eval_every=eval_every,
        progress=progress,
    )
    history = sim.run()
    if method == "FedAvg-small":
        return history.final_level_accuracy(min(ratios)), history
    return history.final_accuracy(), history


def compare_methods(
    task: FederatedTask,
    methods: Sequence[str],
    seed: int,
    *,
    alpha: float = float("nan"),
    rounds: int,
    progress: Progress = None,
    **run_kwargs: Any,
) -> list[dict[str, Any]]:
    """Run every method of ``methods`` on ``task`` with one seed (a paired comparison).

    Returns one row per method: ``task``, ``alpha``, ``seed``, ``method``, ``score`` (see
    :func:`run_method`), ``curve`` (global accuracy per evaluation), ``levels`` (final
    accuracy of every width level's deployed sub-model) and ``wall_s``. ``progress`` follows the
    core progress convention, one step per method; the other keywords go to :func:`run_method`.

    Examples
    --------
    >>> task = make_task("digits", alpha=0.5, seed=0, n_clients=4, hidden=(16, 16))
    >>> rows = compare_methods(task, ["SpineFL", "HeteroFL"], seed=0, rounds=2)
    >>> [r["method"] for r in rows], len(rows[0]["curve"])
    (['SpineFL', 'HeteroFL'], 2)
    """
    owner = "compare_methods"
    if not isinstance(task, FederatedTask):
        raise TypeError(f"{owner}: task must be a FederatedTask; got {type(task).__name__}.")
    if isinstance(methods, str) or not isinstance(methods, Sequence):
        raise TypeError(f"{owner}: methods must be a list of method names; got {methods!r}.")
    for i, method in enumerate(methods):
        check_one_of(f"methods[{i}]", method, METHODS, owner=owner)
    seed = check_positive_int("seed", seed, owner=owner, minimum=0)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float):
        raise TypeError(f"{owner}: alpha must be a float (a label); got {type(alpha).__name__}.")
    rows = []
    with progress_reporter(progress, len(methods), "methods") as report:
        for done, method in enumerate(methods, 1):
            rows.append(_compare_one(task, method, seed, alpha, rounds, run_kwargs))
            report(done)
    return rows


def _compare_one(
    task: FederatedTask,
    method: str,
    seed: int,
    alpha: float,
    rounds: int,
    run_kwargs: dict[str, Any],
) -> dict[str, Any]:
    score, history = run_method(task, method, rounds=rounds, seed=seed, **run_kwargs)
    return {
        "task": task.name,
        "alpha": float(alpha),
        "seed": int(seed),
        "method": method,
        "score": score,
        "curve": [float(a) for a in history.global_acc],
        "levels": {str(r): history.final_level_accuracy(r) for r in sorted(history.level_acc)},
        "wall_s": history.wall_s,
    }


def results_frame(rows: Sequence[dict[str, Any]]) -> Any:
    """The rows of :func:`compare_methods` as a ``pandas.DataFrame`` (one column per level).

    Examples
    --------
    >>> df = results_frame([{"task": "t", "alpha": 0.1, "seed": 0, "method": "SpineFL",
    ...                      "score": 0.5, "curve": [0.5], "levels": {"1.0": 0.5}, "wall_s": 1.0}])
    >>> float(df.loc[0, "level_1.0"])
    0.5
    """
    import pandas as pd

    owner = "results_frame"
    if isinstance(rows, str) or not isinstance(rows, Sequence):
        raise TypeError(f"{owner}: rows must be a list of compare_methods rows; got {rows!r}.")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("levels"), dict):
            raise TypeError(
                f"{owner}: rows[{i}] must be a compare_methods row (a dict with 'levels')."
            )
    flat = []
    for row in rows:
        entry = {k: v for k, v in row.items() if k not in ("curve", "levels")}
        entry.update({f"level_{r}": acc for r, acc in row["levels"].items()})
        flat.append(entry)
    return pd.DataFrame(flat)
