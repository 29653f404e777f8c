"""Real-data paths: a CSV + ground-truth loader, the paper's Rivers and AirQuality layouts, the
sardine/anchovy/SST case study shipped with pyEDM, and scoring over consecutive windows.

The paper's datasets are not on PyPI; the loaders read local copies laid out as the reference
code expects (tests use synthetic stand-ins in the same layout).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26.core import check_positive_int, require
from icml26.powerlaw_cd.features import as_series
from icml26.powerlaw_cd.graph import check_adjacency
from icml26.powerlaw_cd.metrics import f1_tnr
from icml26.powerlaw_cd.pairwise import CDResult

__all__ = [
    "RIVERS_COLUMNS",
    "Dataset",
    "load_airquality",
    "load_csv_with_truth",
    "load_rivers",
    "load_sardine_anchovy_sst",
    "windowed_scores",
]

RIVERS_COLUMNS = (
    "dillingen",
    "kempten",
    "lenggries",
    "dillingen_precip",
    "kempten_precip",
    "lenggries_precip",
)
# precipitation_k -> station_k, Kempten -> Dillingen, Lenggries -> Dillingen
RIVERS_EDGES = ((3, 0), (4, 1), (5, 2), (1, 0), (2, 0))
RIVERS_SPLITS = ("train.csv", "validation.csv", "test.csv")


@dataclass(frozen=True)
class Dataset:
    """Multivariate series with a ground-truth graph.

    Attributes
    ----------
    X
        Array (N, T), one row per variable.
    adjacency
        Int array (N, N); adjacency[j, i] = 1 means j → i.
    names
        The N variable names.
    """

    X: np.ndarray
    adjacency: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        owner = "Dataset"
        X = as_series(self.X, owner=owner, min_vars=1)
        adjacency = check_adjacency("adjacency", self.adjacency, owner=owner).astype(int)
        if adjacency.shape != (X.shape[0],) * 2:
            raise ValueError(
                f"{owner}: adjacency must be ({X.shape[0]}, {X.shape[0]}) for {X.shape[0]} "
                f"series; got {adjacency.shape}."
            )
        if isinstance(self.names, str) or not all(isinstance(n, str) for n in self.names):
            raise TypeError(f"{owner}: names must be a tuple of strings; got {self.names!r}.")
        if len(self.names) != X.shape[0]:
            raise ValueError(
                f"{owner}: names must name the {X.shape[0]} series; got {len(self.names)}."
            )
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "adjacency", adjacency)
        object.__setattr__(self, "names", tuple(self.names))


def _path(name: str, value: object, *, owner: str) -> Path:
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{owner}: {name} must be a path (str or PathLike); got {value!r}.")
    return Path(value)


def _numbers(frame, name: str, *, owner: str) -> np.ndarray:  # frame: pandas.DataFrame
    """The frame's values as float64 (N, T): one row per column."""
    try:
        return frame.to_numpy(dtype=np.float64).T
    except (TypeError, ValueError) as err:
        raise ValueError(f"{owner}: {name} must hold numbers only; {err}.") from None


def _read_csv(path: Path):  # -> pandas.DataFrame
    import pandas as pd

    return pd.read_csv(path)


def _truth(truth: Path, names: tuple[str, ...], *, owner: str, name: str) -> np.ndarray:
    """The truth file's (N, N) adjacency; ``name`` is the caller's parameter that led to it."""
    n = len(names)
    if truth.suffix == ".npy":
        try:
            adjacency = np.load(truth, allow_pickle=False)
        except ValueError as err:
            raise ValueError(f"{owner}: {name}: {truth.name} is no numeric array: {err}") from None
        if adjacency.shape != (n, n):
            raise ValueError(
                f"{owner}: {name}: {truth.name} must be ({n}, {n}) for {n} columns; "
                f"got {adjacency.shape}."
            )
        return (check_adjacency(name, adjacency, owner=owner)).astype(int)
    edges = _read_csv(truth)
    if list(edges.columns[:2]) != ["cause", "effect"]:
        raise ValueError(
            f"{owner}: {name}: an edge-list CSV must have columns 'cause,effect'; "
            f"got {list(edges.columns)}."
        )
    index = {name: k for k, name in enumerate(names)}
    adjacency = np.zeros((n, n), dtype=int)
    for cause, effect in zip(edges["cause"], edges["effect"], strict=True):
        try:
            adjacency[index[str(cause)], index[str(effect)]] = 1
        except KeyError as err:
            raise ValueError(
                f"{owner}: {name}: edge {cause} -> {effect} names an unknown column {err}; "
                f"columns are {list(names)}."
            ) from None
    return adjacency


def load_csv_with_truth(csv: str | Path, truth: str | Path) -> Dataset:
    """Series from a CSV (one column per variable, header row) and a ground-truth graph.

    Parameters
    ----------
    csv
        Path of the CSV; every column is a variable.
    truth
        A ``.npy`` (N, N) matrix with truth[j, i] != 0 meaning j → i, or a CSV edge list with
        columns ``cause,effect`` holding column names.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If the data are not finite or the truth does not match the columns.

    Example
    -------
    >>> import numpy as np, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "x.csv").write_text("a,b\\n1,2\\n3,4\\n5,7\\n")
    >>> _ = (d / "g.csv").write_text("cause,effect\\na,b\\n")
    >>> load_csv_with_truth(d / "x.csv", d / "g.csv").adjacency.tolist()
    [[0, 1], [0, 0]]
    """
    owner = "load_csv_with_truth"
    csv_path, truth_path = _path("csv", csv, owner=owner), _path("truth", truth, owner=owner)
    frame = _read_csv(csv_path)
    names = tuple(str(c) for c in frame.columns)
    X = as_series(_numbers(frame, "csv", owner=owner), owner=owner)
    return Dataset(X, _truth(truth_path, names, owner=owner, name="truth"), names)


def load_rivers(directory: str | Path) -> Dataset:
    """The Rivers data: train/validation/test CSVs concatenated, six columns, a fixed 5-edge truth.

    Parameters
    ----------
    directory
        Folder with ``train.csv``, ``validation.csv`` and ``test.csv``, each with (at least) the
        columns of :data:`RIVERS_COLUMNS`.

    Returns
    -------
    Dataset
        Truth: precipitation_k → station_k, kempten → dillingen, lenggries → dillingen.

    Raises
    ------
    FileNotFoundError
        If a split is missing.
    ValueError
        If a column is missing or a value is not finite.

    Example
    -------
    >>> load_rivers("path/to/rivers").X.shape  # doctest: +SKIP
    (6, 12000)
    """
    import pandas as pd

    owner = "load_rivers"
    folder = _path("directory", directory, owner=owner)
    frames = []
    for split in RIVERS_SPLITS:
        frame = _read_csv(folder / split)
        missing = [c for c in RIVERS_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{owner}: directory's {split} lacks columns {missing}.")
        frames.append(frame[list(RIVERS_COLUMNS)])
    X = as_series(_numbers(pd.concat(frames), "directory", owner=owner), owner=owner)
    adjacency = np.zeros((6, 6), dtype=int)
    for cause, effect in RIVERS_EDGES:
        adjacency[cause, effect] = 1
    return Dataset(X, adjacency, RIVERS_COLUMNS)


def load_airquality(directory: str | Path) -> Dataset:
    """The AirQuality data: every ``*.csv`` (sorted by name) concatenated, first column dropped,
    truth from ``gc_real.npy`` with its diagonal zeroed.

    Parameters
    ----------
    directory
        Folder with the CSV splits and ``gc_real.npy`` (gc[j, i] != 0 meaning j → i).

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        If there is no CSV or no ``gc_real.npy``.
    ValueError
        If the truth does not match the columns or a value is not finite.

    Example
    -------
    >>> load_airquality("path/to/airquality").X.shape[0]  # doctest: +SKIP
    36
    """
    import pandas as pd

    owner = "load_airquality"
    folder = _path("directory", directory, owner=owner)
    paths = sorted(folder.glob("*.csv"))
    if not paths:
        raise FileNotFoundError(f"{owner}: no CSV file in directory {str(folder)!r}.")
    frame = pd.concat([_read_csv(p).iloc[:, 1:] for p in paths])
    names = tuple(str(c) for c in frame.columns)
    X = as_series(_numbers(frame, "directory", owner=owner), owner=owner)
    adjacency = _truth(folder / "gc_real.npy", names, owner=owner, name="directory")
    np.fill_diagonal(adjacency, 0)
    return Dataset(X, adjacency, names)


def load_sardine_anchovy_sst() -> Dataset:
    """Sugihara et al.'s 78 yearly values of anchovy, sardine and two SST series (from pyEDM).

    The consensus graph has both temperature series driving both fish series and no fish–fish
    link; it is a case study, not a benchmark with a certified truth.

    Returns
    -------
    Dataset
        Names ``(anchovy, sardine, sio_sst, np_sst)``.

    Raises
    ------
    MissingExtraError
        If pyEDM is not installed (an ``ImportError``; the fix:
        ``pip install 'icml26[test-refs]'``).

    Example
    -------
    >>> load_sardine_anchovy_sst().X.shape  # doctest: +SKIP
    (4, 78)
    """
    from importlib import resources

    owner = "load_sardine_anchovy_sst"
    require("pyEDM", "test-refs", owner=owner)  # the data ship with pyEDM
    csv = resources.files("pyEDM") / "data" / "sardine_anchovy_sst.csv"
    frame = _read_csv(Path(str(csv)))
    names = ("anchovy", "sardine", "sio_sst", "np_sst")
    X = as_series(frame[list(names)].to_numpy(dtype=np.float64).T, owner=owner)
    adjacency = np.zeros((4, 4), dtype=int)
    adjacency[2:, :2] = 1
    return Dataset(X, adjacency, names)


def windowed_scores(
    dataset: Dataset, method: Callable[[np.ndarray], CDResult], window: int = 500
) -> np.ndarray:
    """F1 and TNR of ``method`` on each consecutive non-overlapping window of ``dataset``.

    Parameters
    ----------
    dataset
        The series and their truth.
    method
        ``method(X_window) -> CDResult``, e.g. ``lambda X: placy(X, max_lags=5)``.
    window
        Samples per window (the paper: 500); a shorter tail is dropped.

    Returns
    -------
    numpy.ndarray
        Array (n_windows, 2) of (F1, TNR).

    Raises
    ------
    TypeError
        If ``dataset`` is not a Dataset or ``method`` is not callable or returns no CDResult.
    ValueError
        If ``window`` exceeds the series length.

    Example
    -------
    >>> from icml26.powerlaw_cd import granger_pairwise, simulate_ou
    >>> sim = simulate_ou(3, 1100, seed=0)
    >>> data = Dataset(sim.X, sim.adjacency, ("a", "b", "c"))
    >>> windowed_scores(data, lambda X: granger_pairwise(X, max_lags=5)).shape
    (2, 2)
    """
    owner = "windowed_scores"
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{owner}: dataset must be a Dataset; got {type(dataset).__name__}.")
    if not callable(method):
        raise TypeError(f"{owner}: method must be callable; got {method!r}.")
    window = check_positive_int("window", window, owner=owner)
    n_win = dataset.X.shape[1] // window
    if n_win == 0:
        raise ValueError(
            f"windowed_scores: window must be <= T = {dataset.X.shape[1]}; got {window}."
        )
    scores = []
    for k in range(n_win):
        result = method(dataset.X[:, k * window : (k + 1) * window])
        if not isinstance(result, CDResult):
            raise TypeError(f"{owner}: method must return a CDResult; got {type(result).__name__}.")
        scores.append(f1_tnr(dataset.adjacency, result.adjacency))
    return np.array(scores)
