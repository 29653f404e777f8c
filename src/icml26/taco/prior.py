"""Synthetic MLP-SCM prior for meta-training TACO and POT (spec §2.3, small version §5.2).

TACO (arXiv:2602.05649) trains on TabICL's "mix_scm" prior; offline we use our own small MLP
structural causal model: random causes propagate through a random MLP with noise, F hidden
nodes become features and one the target, which is cut into classes at random quantiles.

Optional mechanisms in the spirit of TabPFN v2's prior (issue 19; all off by default, so the
default prior, and the shipped checkpoints' recipe, draw exactly what they drew before):
``tree_prob`` makes a dataset's layers sums of random decision stumps (piecewise-constant,
GBDT-like) instead of MLP layers, ``heavy_tail_prob`` passes a feature through sinh(s·x)/s,
``missing_prob`` blanks cells completely at random (NaN; the encoder's missing indicator),
``log_rows`` draws the row count T log-uniformly (so that a range up to thousands of rows still
gives many small tables; ``train_taco(rows_per_step=...)`` then shrinks the batch for large T).

Deviations: MLP weights are N(0, σ_w² / fan_in) (the spec's N(0, σ_w²) without the fan-in factor
saturates every activation at widths of 64); no tree-based SCM (XGBoost) component; the causes
are k ~ U{1..4} independent N(0, 1) values per row fanned out to the first layer by a Gaussian
matrix (with width-many independent causes, up to 64, the observed features barely predicted
the target: logistic-regression AUC ~0.66 on the prior's tasks, vs ~0.87 now).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator

__all__ = ["MLPSCMPrior", "PriorBatch"]

_ACTIVATIONS = (
    np.tanh,
    lambda a: np.maximum(a, 0.0),
    np.sin,
    lambda a: a,
    lambda a: 2.0 / (1.0 + np.exp(-a)) - 1.0,
)


@dataclass(frozen=True)
class PriorBatch:
    """B synthetic datasets sharing rows T, features F and the split N.

    Attributes
    ----------
    X
        (B, T, F) float32 features (NaN for missing cells when ``missing_prob`` > 0).
    y
        (B, T) int64 class ids; every class of a dataset appears in its first N rows.
    n_train
        Training rows N (the first N rows of each dataset).
    n_classes
        (B,) int64 number of classes of each dataset.
    """

    X: torch.Tensor
    y: torch.Tensor
    n_train: int
    n_classes: torch.Tensor


def stump_layer(h: np.ndarray, rng: np.random.Generator, n_stumps: int) -> np.ndarray:
    """(T, W) sums of ``n_stumps`` random decision stumps per output node (a tree-like layer).

    Output node k adds, for each stump s, ``a[k, s]`` if ``h[:, parent[k, s]] <= t[k, s]``
    else ``b[k, s]``; the threshold t is a random quantile of the parent column and the leaf
    values a, b are N(0, 1). So each node takes at most 2**n_stumps distinct values.
    """
    T, W = h.shape
    parent = rng.integers(0, W, size=(W, n_stumps))
    quantile = rng.uniform(0.1, 0.9, size=(W, n_stumps))
    leaves = rng.standard_normal((2, W, n_stumps))
    out = np.zeros((T, W))
    for s in range(n_stumps):
        column = h[:, parent[:, s]]  # (T, W): the parent of every output node
        threshold = np.quantile(column, quantile[:, s], axis=0).diagonal()  # (W,)
        out += np.where(column <= threshold, leaves[0, :, s], leaves[1, :, s])
    return out


def check_range(
    name: str, value: tuple[float, float], low: float, high: float, owner: str = "MLPSCMPrior"
) -> tuple:
    """``value`` if it is a (low, high) tuple with ``low <= high`` inside [``low``, ``high``]."""
    if not (isinstance(value, tuple) and len(value) == 2 and value[0] <= value[1]):
        raise ValueError(
            f"{owner}: {name} must be a (low, high) tuple with low <= high; got {value!r}."
        )
    for v in value:
        check_in_interval(name, v, low=low, high=high, owner=owner)
    return value


class MLPSCMPrior:
    """Sampler of classification tables from random MLP structural causal models.

    Parameters
    ----------
    n_features, n_classes, n_rows
        Inclusive integer ranges of F, C and T.
    train_fraction
        Range of N / T.
    categorical_prob
        Probability that a feature is discretised into 2-8 quantile bins.
    n_causes
        Inclusive range of the number k of independent causes z ~ N(0, I_k) per row.
    tree_prob
        Probability that a dataset's layers are sums of 1-3 random decision stumps per node
        (:func:`stump_layer`) instead of MLP layers.
    heavy_tail_prob
        Probability that a feature goes through sinh(s·x)/s with s ~ U(1, 3) (heavy tails).
    missing_prob
        Upper end of a dataset's missing-cell rate r ~ U(0, missing_prob); cells are NaN
        completely at random (``PriorBatch.X`` then holds NaN).
    log_rows
        Draw T log-uniformly from ``n_rows`` (rounded) instead of uniformly.
    binary_prob
        Probability that a dataset is binary; otherwise C is uniform on ``n_classes``. With a
        10-class range most real tables (binary) would otherwise be rare in the prior.

    Examples
    --------
    >>> batch = MLPSCMPrior().sample(4, seed=0)
    >>> batch.X.shape[0], bool(batch.y.max() < 4)
    (4, True)
    """

    def __init__(
        self,
        *,
        n_features: tuple[int, int] = (2, 16),
        n_classes: tuple[int, int] = (2, 4),
        n_rows: tuple[int, int] = (128, 512),
        train_fraction: tuple[float, float] = (0.5, 0.9),
        categorical_prob: float = 0.2,
        n_causes: tuple[int, int] = (1, 4),
        tree_prob: float = 0.0,
        heavy_tail_prob: float = 0.0,
        missing_prob: float = 0.0,
        log_rows: bool = False,
        binary_prob: float = 0.0,
    ) -> None:
        self.n_features = check_range("n_features", n_features, 1, 10_000)
        self.n_classes = check_range("n_classes", n_classes, 2, 1_000)
        self.n_rows = check_range("n_rows", n_rows, 4, 10**8)
        self.train_fraction = check_range("train_fraction", train_fraction, 0.0, 1.0)
        self.n_causes = check_range("n_causes", n_causes, 1, 10_000)
        self.categorical_prob = check_in_interval(
            "categorical_prob", categorical_prob, low=0, high=1, owner="MLPSCMPrior"
        )
        self.tree_prob = check_in_interval(
            "tree_prob", tree_prob, low=0, high=1, owner="MLPSCMPrior"
        )
        self.heavy_tail_prob = check_in_interval(
            "heavy_tail_prob", heavy_tail_prob, low=0, high=1, owner="MLPSCMPrior"
        )
        self.missing_prob = check_in_interval(
            "missing_prob", missing_prob, low=0, high=0.9, owner="MLPSCMPrior"
        )
        if not isinstance(log_rows, bool):
            raise TypeError(f"MLPSCMPrior: log_rows must be a bool; got {log_rows!r}.")
        self.log_rows = log_rows
        self.binary_prob = check_in_interval(
            "binary_prob", binary_prob, low=0, high=1, owner="MLPSCMPrior"
        )

    def draw_rows(self, seed: Seed = None) -> int:
        """One row count T from ``n_rows`` (uniform, or log-uniform with ``log_rows``).

        ``seed`` may be a ``numpy.random.Generator``, which is then advanced (``train_taco``).
        """
        rng = numpy_generator(seed)
        low, high = self.n_rows
        if self.log_rows:
            return int(min(high, max(low, round(np.exp(rng.uniform(np.log(low), np.log(high)))))))
        return int(rng.integers(low, high + 1))

    def _dataset(
        self, rng: np.random.Generator, T: int, F: int, C: int
    ) -> tuple[np.ndarray, np.ndarray]:
        depth = int(rng.integers(2, 5))
        width = max(int(rng.integers(8, 65)), -(-(F + 1) // depth))
        sigma_w = float(np.exp(rng.uniform(np.log(0.5), np.log(2.0))))
        sigma_n = float(np.exp(rng.uniform(np.log(1e-3), np.log(0.3))))
        n_causes = int(rng.integers(self.n_causes[0], self.n_causes[1] + 1))
        # causes z ~ N(0, I_k), k small, fanned out to the first layer's width: with k = width
        # (up to 64 independent causes) F <= 16 observed nodes say almost nothing about the target
        z = rng.standard_normal((T, n_causes))
        h = z @ rng.standard_normal((n_causes, width))
        # extra draws only when an option is on: the default prior's stream stays as it was
        tree = self.tree_prob > 0 and rng.uniform() < self.tree_prob
        nodes = []
        for _ in range(depth):
            if tree:
                h = stump_layer(h, rng, int(rng.integers(1, 4)))
                h = h + sigma_n * rng.standard_normal((T, width))
            else:
                W = rng.standard_normal((width, width)) * sigma_w / np.sqrt(width)
                act = _ACTIVATIONS[int(rng.integers(len(_ACTIVATIONS)))]
                h = act(h @ W + sigma_n * rng.standard_normal((T, width)))
            nodes.append(h)
        nodes = np.concatenate(nodes, axis=1)
        pick = rng.choice(nodes.shape[1], size=F + 1, replace=False)
        X, target = nodes[:, pick[:F]], nodes[:, pick[F]]
        cuts = np.quantile(target, np.sort(rng.uniform(0, 1, C - 1)))
        y = rng.permutation(C)[np.searchsorted(cuts, target)]
        for f in np.flatnonzero(rng.uniform(size=F) < self.categorical_prob):
            bins = np.quantile(X[:, f], np.linspace(0, 1, int(rng.integers(2, 9)) + 1)[1:-1])
            X[:, f] = np.searchsorted(bins, X[:, f])
        if self.heavy_tail_prob > 0:
            for f in np.flatnonzero(rng.uniform(size=F) < self.heavy_tail_prob):
                x = (X[:, f] - X[:, f].mean()) / (X[:, f].std() + 1e-12)
                scale = rng.uniform(1.0, 3.0)
                X[:, f] = np.sinh(scale * x) / scale
        order = rng.permutation(T)
        return X[order], y[order]

    def _blank(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """X with a U(0, missing_prob) share of its cells set to NaN, completely at random."""
        if self.missing_prob == 0:
            return X
        rate = rng.uniform(0, self.missing_prob)
        return np.where(rng.uniform(size=X.shape) < rate, np.nan, X)

    def sample(
        self, batch_size: int, seed: Seed = None, *, n_rows: int | None = None
    ) -> PriorBatch:
        """Draw ``batch_size`` datasets with a shared (T, F, N) and per-dataset C.

        A dataset is redrawn until each of its C classes occurs among its training rows.
        ``n_rows`` fixes T (e.g. drawn before with :meth:`draw_rows`); by default T is drawn here.

        Raises
        ------
        ValueError
            If ``batch_size`` < 1.
        """
        batch_size = check_positive_int("batch_size", batch_size, owner="MLPSCMPrior.sample")
        rng = numpy_generator(seed)
        if n_rows is None:
            T = self.draw_rows(rng)
        else:
            T = check_positive_int("n_rows", n_rows, owner="MLPSCMPrior.sample", minimum=4)
        F = int(rng.integers(self.n_features[0], self.n_features[1] + 1))
        n_train = min(T - 1, max(1, round(rng.uniform(*self.train_fraction) * T)))
        Xs, ys, Cs = [], [], []
        for _ in range(batch_size):
            C = int(rng.integers(self.n_classes[0], self.n_classes[1] + 1))
            if self.binary_prob > 0 and rng.uniform() < self.binary_prob:
                C = 2
            C = min(C, n_train)
            while True:
                X, y = self._dataset(rng, T, F, C)
                if len(np.unique(y[:n_train])) == C and np.all(np.isfinite(X)):
                    break
            Xs.append(self._blank(X, rng))
            ys.append(y)
            Cs.append(C)
        return PriorBatch(
            X=torch.as_tensor(np.stack(Xs), dtype=torch.float32),
            y=torch.as_tensor(np.stack(ys), dtype=torch.int64),
            n_train=n_train,
            n_classes=torch.as_tensor(Cs, dtype=torch.int64),
        )
