"""Real-data paths: a CSV + ground-truth loader, the paper's Rivers and AirQuality layouts, the
sardine/anchovy/SST case study shipped with pyEDM, and scoring over consecutive windows.

The paper's datasets are not on PyPI; the loaders read local copies laid out as the reference
code expects (tests use synthetic stand-ins in the same layout).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from icml26.core import check_positive_int, require
from icml26.powerlaw_cd.features import as_series, read_series
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
        Array (N, T), one row per variable. A pandas DataFrame (T rows × N named columns) is
        accepted and stored as its (N, T) array; its column names become ``names``.
    adjacency
        Int array (N, N); adjacency[j, i] = 1 means j → i. A DataFrame labelled by the names
        (rows = causes, columns = effects, any order) is accepted and aligned to ``names``.
    names
        The N variable names; None takes a DataFrame's columns (as strings), or x0..x{N-1}.

    Raises
    ------
    TypeError
        If X or adjacency is not numeric or a name is not a string.
    ValueError
        If the shapes disagree, names repeat, or a labelled adjacency names other variables.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rain": [0.0, 1, 0, 2], "river": [1.0, 1, 2, 2]})
    >>> truth = pd.DataFrame([[0, 0], [1, 0]], index=["river", "rain"], columns=["river", "rain"])
    >>> d = Dataset(df, truth)
    >>> d.names, d.adjacency.tolist(), d.to_frame().shape
    (('rain', 'river'), [[0, 1], [0, 0]], (4, 2))
    """

    X: np.ndarray
    adjacency: np.ndarray
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        owner = "Dataset"
        series = read_series(self.X, owner=owner, min_vars=1)
        X = series.X
        n = X.shape[0]
        names = self.names
        if names is None:
            labels = series.names if series.names is not None else [f"x{k}" for k in range(n)]
            names = tuple(str(name) for name in labels)
        if (
            not isinstance(names, Sequence)
            or isinstance(names, str)
            or not all(isinstance(name, str) for name in names)
        ):
            raise TypeError(f"{owner}: names must be a tuple of strings; got {names!r}.")
        names = tuple(names)
        if len(names) != n or len(set(names)) != n:
            raise ValueError(
                f"{owner}: names must be {n} distinct names, one per series; got {names!r}."
            )
        adjacency = self.adjacency
        if isinstance(adjacency, pd.DataFrame):
            adjacency = _aligned(adjacency, names, owner=owner)
        adjacency = check_adjacency("adjacency", adjacency, owner=owner).astype(int)
        if adjacency.shape != (n, n):
            raise ValueError(
                f"{owner}: adjacency must be ({n}, {n}) for {n} series; got {adjacency.shape}."
            )
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "adjacency", adjacency)
        object.__setattr__(self, "names", names)

    def to_frame(self) -> pd.DataFrame:
        """The series as a DataFrame: T rows × N columns named by :attr:`names`.

        Examples
        --------
        >>> Dataset(np.zeros((2, 5)), np.zeros((2, 2))).to_frame().columns.tolist()
        ['x0', 'x1']
        """
        return pd.DataFrame(self.X.T, columns=pd.Index(self.names))

    def adjacency_frame(self) -> pd.DataFrame:
        """The true graph as an N × N DataFrame: row = cause, column = effect, by name.

        Examples
        --------
        >>> Dataset(np.zeros((2, 5)), [[0, 1], [0, 0]]).adjacency_frame().loc["x0", "x1"].item()
        1
        """
        return pd.DataFrame(
            self.adjacency,
            index=pd.Index(self.names, name="cause"),
            columns=pd.Index(self.names, name="effect"),
        )


def _aligned(frame: pd.DataFrame, names: tuple[str, ...], *, owner: str) -> object:
    """A labelled (cause × effect) adjacency reordered to ``names``."""
    rows = [str(label) for label in frame.index]
    columns = [str(label) for label in frame.columns]
    if sorted(rows) != sorted(names) or sorted(columns) != sorted(names):
        raise ValueError(
            f"{owner}: a labelled adjacency must have the names {list(names)} as its index "
            f"and columns; got {rows} and {columns}."
        )
    relabelled = frame.set_axis(rows, axis=0).set_axis(columns, axis=1)
    return relabelled.loc[list(names), list(names)].to_numpy()


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


def _read_csv(path: Path) -> pd.DataFrame:
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

    Examples
    --------
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

    Examples
    --------
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

    Examples
    --------
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

    Examples
    --------
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

    Examples
    --------
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
