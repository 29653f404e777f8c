"""Prior v3 (issue 48): a mixture that teaches the backbone to tell signal columns from noise.

TACO (arXiv:2602.05649) meta-trains on TabICL's "mix_scm" prior. Our earlier prior
(:class:`~icml26.taco.MLPSCMPrior`) derived every feature and the target from 1-4 shared causes,
so it never showed the model an irrelevant column, and the backbone could not pick the one
informative column out of ten (docs/taco.md). Prior v3 draws each table from one of three
families:

- **sparse GLM** (:func:`sparse_glm_table`): 1-3 active columns, every other column independent
  noise; latent s·wᵀx_active/‖w‖ plus logistic ("logistic" link) or Gaussian ("threshold" link)
  noise, cut into classes at random quantiles; signal-to-noise s log-uniform;
- **SCM with off-path features**: :class:`~icml26.taco.MLPSCMPrior`'s MLP SCM for the target and
  some features, and the other features from a second, independent SCM (correlated among
  themselves, unrelated to the target);
- **decision stumps**: the latent is a sum of 1-4 random stumps on 1-3 active columns plus noise.

Then, in half the tables, 0-70 % of the columns are replaced by pure noise (never all the
informative ones); cells keep the earlier prior's kinds: categorical (quantile bins), heavy-tailed
(sinh), missing (NaN completely at random). N is log-uniform in ``n_rows``. Every draw comes from
the seed only.

Deviations: binary and up to 4 classes (the shipped models' head); the GLM and stump columns are
independent N(0, 1) before the cell transforms.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.core import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.taco.prior import MLPSCMPrior, PriorBatch, check_range

__all__ = ["FAMILIES", "MixturePrior", "glm_posterior", "sparse_glm_table"]

FAMILIES = ("glm", "scm", "stumps")
LINKS = ("logistic", "threshold")


def _noise_cdf(z: np.ndarray, link: str) -> np.ndarray:
    """CDF of the latent's noise: standard logistic or standard normal."""
    if link == "logistic":
        return 1.0 / (1.0 + np.exp(-z))
    from scipy.special import ndtr

    return ndtr(z)


def _draw_noise(rng: np.random.Generator, size: int, link: str) -> np.ndarray:
    return rng.logistic(size=size) if link == "logistic" else rng.standard_normal(size)


def glm_posterior(signal: np.ndarray, cuts: np.ndarray, link: str) -> np.ndarray:
    """(T, C) Bayes posterior of the ordinal classes 0..C-1 of latent ``signal + noise``.

    Class k holds the latents between ``cuts[k-1]`` and ``cuts[k]`` (``cuts`` sorted, C - 1 of
    them), so P(k | x) = F(cuts[k] - signal) - F(cuts[k-1] - signal) with F the noise CDF.

    Raises
    ------
    TypeError, ValueError
        If ``signal`` is not a finite 1-D array, ``cuts`` not a sorted finite 1-D array or
        ``link`` not one of :data:`LINKS`.

    Examples
    --------
    >>> glm_posterior(np.array([0.0]), np.array([0.0]), "logistic")
    array([[0.5, 0.5]])
    """
    owner = "glm_posterior"
    check_one_of("link", link, LINKS, owner=owner)
    signal = check_array("signal", signal, ndim=1, owner=owner, finite=True)
    cuts = check_array("cuts", cuts, ndim=1, owner=owner, finite=True)
    if cuts.size > 1000 or signal.size > 10**7:
        raise ValueError(f"{owner}: at most 1000 cuts and 1e7 signal values.")
    if np.any(np.diff(cuts) < 0):
        raise ValueError(f"{owner}: cuts must be sorted ascending.")
    edges = np.concatenate([[-np.inf], cuts.astype(float), [np.inf]])
    cdf = _noise_cdf(edges[None, :] - signal.astype(float)[:, None], link)
    return np.diff(cdf, axis=1)


def sparse_glm_table(
    rng: np.random.Generator, T: int, F: int, C: int, *, n_active: int, snr: float, link: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One sparse-GLM table: X (T, F), y (T,), the Bayes posterior (T, C), the active columns.

    ``n_active`` random columns carry the signal s·wᵀx/‖w‖ (w ~ N(0, I)); the others are
    independent N(0, 1) noise. The class is the ordinal bin of ``signal + noise`` (``link``:
    logistic or Gaussian noise) between C - 1 cut points at random quantiles of the latent;
    class ids are permuted. The posterior columns follow the permuted ids.

    Raises
    ------
    TypeError, ValueError
        On a ``rng`` that is not a numpy Generator, T < 4 or above 10**7, F or C out of range,
        ``n_active`` not in [1, F], a non-finite or non-positive ``snr`` or an unknown ``link``.
    """
    owner = "sparse_glm_table"
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{owner}: rng must be a numpy Generator; got {type(rng).__name__}.")
    T = check_positive_int("T", T, owner=owner, minimum=4, maximum=10**7)
    F = check_positive_int("F", F, owner=owner, maximum=10_000)
    C = check_positive_int("C", C, owner=owner, minimum=2, maximum=min(100, T))
    if T * F > 10**8:
        raise ValueError(f"{owner}: T * F must be at most 1e8 cells; got {T} * {F}.")
    n_active = check_positive_int("n_active", n_active, owner=owner, maximum=F)
    snr = check_in_interval("snr", snr, low=0, high=1e6, closed="right", owner=owner)
    check_one_of("link", link, LINKS, owner=owner)
    X = rng.standard_normal((T, F))
    active = np.sort(rng.choice(F, size=n_active, replace=False))
    w = rng.standard_normal(n_active)
    signal = snr * (X[:, active] @ w) / np.linalg.norm(w)
    latent = signal + _draw_noise(rng, T, link)
    cuts = np.quantile(latent, np.sort(rng.uniform(0.15, 0.85, C - 1)))
    perm = rng.permutation(C)
    y = perm[np.searchsorted(cuts, latent)]
    posterior = np.empty((T, C))
    posterior[:, perm] = glm_posterior(signal, cuts, link)
    return X, y, posterior, active


def _stump_table(
    rng: np.random.Generator, T: int, F: int, C: int, n_active: int, snr: float
) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((T, F))
    active = rng.choice(F, size=n_active, replace=False)
    latent = np.zeros(T)
    for _ in range(int(rng.integers(1, 5))):
        column = X[:, rng.choice(active)]
        threshold = np.quantile(column, rng.uniform(0.1, 0.9))
        latent += rng.standard_normal() * np.where(column <= threshold, -1.0, 1.0)
    latent = snr * latent / (latent.std() + 1e-12) + rng.standard_normal(T)
    cuts = np.quantile(latent, np.sort(rng.uniform(0.15, 0.85, C - 1)))
    return X, rng.permutation(C)[np.searchsorted(cuts, latent)]


def _scm_table(rng: np.random.Generator, T: int, F: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    """MLP-SCM target with some features from an independent SCM (off the target's path)."""
    scm = MLPSCMPrior(categorical_prob=0.0)
    n_off = int(rng.integers(0, F)) if F > 1 else 0  # at least one on-path feature
    X_on, y = scm._dataset(rng, T, F - n_off, C)
    if n_off == 0:
        return X_on, y
    X_off, _ = scm._dataset(rng, T, n_off, 2)
    X = np.concatenate([X_on, X_off], axis=1)
    return X[:, rng.permutation(F)], y


class MixturePrior:
    """Prior v3: sparse GLMs, SCMs with off-path features and stumps, with noise columns.

    Parameters
    ----------
    n_features, n_classes, n_rows
        Inclusive integer ranges of F, C and T; T is drawn log-uniformly.
    train_fraction
        Range of N / T.
    family_probs
        Probabilities of the families :data:`FAMILIES` (glm, scm, stumps); they must sum to 1.
    snr
        Range of the log-uniform signal-to-noise s of the GLM and stump families.
    noise_table_prob, noise_fraction
        A table gets pure-noise columns with probability ``noise_table_prob``; then a share
        U(``noise_fraction``) of its columns is replaced by independent noise (at least one
        informative column is kept).
    categorical_prob, heavy_tail_prob
        Per-column probabilities of quantile binning into 2-8 levels and of sinh(s·x)/s tails.
    missing_prob
        Upper end of a table's missing-cell rate r ~ U(0, missing_prob).
    binary_prob
        Probability that a table is binary (otherwise C is uniform on ``n_classes``).

    Examples
    --------
    >>> batch = MixturePrior().sample(4, seed=0)
    >>> batch.X.shape[0], bool(batch.y.max() < 4), 64 <= batch.X.shape[1] <= 2048
    (4, True, True)
    """

    def __init__(
        self,
        *,
        n_features: tuple[int, int] = (2, 48),
        n_classes: tuple[int, int] = (2, 4),
        n_rows: tuple[int, int] = (64, 2048),
        train_fraction: tuple[float, float] = (0.5, 0.9),
        family_probs: tuple[float, float, float] = (0.4, 0.4, 0.2),
        snr: tuple[float, float] = (0.5, 8.0),
        noise_table_prob: float = 0.5,
        noise_fraction: tuple[float, float] = (0.0, 0.7),
        categorical_prob: float = 0.15,
        heavy_tail_prob: float = 0.15,
        missing_prob: float = 0.1,
        binary_prob: float = 0.5,
    ) -> None:
        owner = "MixturePrior"
        self.n_features = check_range("n_features", n_features, 1, 10_000, owner)
        self.n_classes = check_range("n_classes", n_classes, 2, 100, owner)
        self.n_rows = check_range("n_rows", n_rows, 8, 10**7, owner)
        self.train_fraction = check_range("train_fraction", train_fraction, 0.0, 1.0, owner)
        self.snr = check_range("snr", snr, 1e-3, 1e3, owner)
        self.noise_fraction = check_range("noise_fraction", noise_fraction, 0.0, 0.99, owner)
        if not (isinstance(family_probs, tuple) and len(family_probs) == len(FAMILIES)):
            raise ValueError(f"{owner}: family_probs must be a tuple of 3; got {family_probs!r}.")
        for p in family_probs:
            check_in_interval("family_probs", p, low=0, high=1, owner=owner)
        if abs(sum(family_probs) - 1.0) > 1e-9:
            raise ValueError(f"{owner}: family_probs must sum to 1; got {family_probs!r}.")
        self.family_probs = family_probs
        for name, value in (
            ("noise_table_prob", noise_table_prob),
            ("categorical_prob", categorical_prob),
            ("heavy_tail_prob", heavy_tail_prob),
            ("binary_prob", binary_prob),
        ):
            setattr(self, name, check_in_interval(name, value, low=0, high=1, owner=owner))
        self.missing_prob = check_in_interval(
            "missing_prob", missing_prob, low=0, high=0.9, owner=owner
        )

    def draw_rows(self, seed: Seed = None) -> int:
        """One row count T, log-uniform on ``n_rows`` (``seed`` may be a Generator)."""
        rng = numpy_generator(seed)
        low, high = self.n_rows
        return int(min(high, max(low, round(np.exp(rng.uniform(np.log(low), np.log(high)))))))

    def _log_uniform(self, rng: np.random.Generator, bounds: tuple[float, float]) -> float:
        return float(np.exp(rng.uniform(np.log(bounds[0]), np.log(bounds[1]))))

    def _informative(
        self, rng: np.random.Generator, T: int, F: int, C: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """X, y and the mask of columns that may carry signal, from one family."""
        family = FAMILIES[int(rng.choice(len(FAMILIES), p=self.family_probs))]
        n_active = int(rng.integers(1, min(3, F) + 1))
        if family == "scm":
            X, y = _scm_table(rng, T, F, C)
            return X, y, np.ones(F, dtype=bool)
        snr = self._log_uniform(rng, self.snr)
        if family == "glm":
            link = LINKS[int(rng.integers(len(LINKS)))]
            X, y, _, active = sparse_glm_table(rng, T, F, C, n_active=n_active, snr=snr, link=link)
        else:
            X, y = _stump_table(rng, T, F, C, n_active, snr)
            active = np.arange(F)  # the stumps' columns are not recorded: keep them all
        mask = np.zeros(F, dtype=bool)
        mask[active] = True
        return X, y, mask

    def _cells(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Categorical bins, heavy tails and missing cells."""
        F = X.shape[1]
        for f in np.flatnonzero(rng.uniform(size=F) < self.categorical_prob):
            bins = np.quantile(X[:, f], np.linspace(0, 1, int(rng.integers(2, 9)) + 1)[1:-1])
            X[:, f] = np.searchsorted(bins, X[:, f])
        for f in np.flatnonzero(rng.uniform(size=F) < self.heavy_tail_prob):
            x = (X[:, f] - X[:, f].mean()) / (X[:, f].std() + 1e-12)
            scale = rng.uniform(1.0, 3.0)
            X[:, f] = np.sinh(scale * x) / scale
        if self.missing_prob > 0:
            rate = rng.uniform(0, self.missing_prob)
            X = np.where(rng.uniform(size=X.shape) < rate, np.nan, X)
        return X

    def _dataset(
        self, rng: np.random.Generator, T: int, F: int, C: int
    ) -> tuple[np.ndarray, np.ndarray]:
        X, y, informative = self._informative(rng, T, F, C)
        if F > 1 and rng.uniform() < self.noise_table_prob:
            share = rng.uniform(*self.noise_fraction)
            n_noise = min(round(share * F), F - 1)
            keep = rng.choice(np.flatnonzero(informative))  # one informative column survives
            candidates = np.setdiff1d(np.arange(F), [keep])
            for f in rng.choice(candidates, size=n_noise, replace=False):
                X[:, f] = rng.standard_normal(T)
        order = rng.permutation(T)
        return X[order], y[order]

    def sample(
        self, batch_size: int, seed: Seed = None, *, n_rows: int | None = None
    ) -> PriorBatch:
        """Draw ``batch_size`` tables sharing (T, F, N); C per table (as ``MLPSCMPrior``).

        A table is redrawn until each of its C classes occurs among its training rows.

        Raises
        ------
        ValueError, TypeError
            If ``batch_size`` < 1 or ``n_rows`` < 8.
        """
        owner = "MixturePrior.sample"
        batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=100_000)
        rng = numpy_generator(seed)
        if n_rows is None:
            T = self.draw_rows(rng)
        else:
            T = check_positive_int("n_rows", n_rows, owner=owner, minimum=8, maximum=10**7)
        F = int(rng.integers(self.n_features[0], self.n_features[1] + 1))
        n_train = min(T - 1, max(1, round(rng.uniform(*self.train_fraction) * T)))
        Xs, ys, Cs = [], [], []
        for _ in range(batch_size):
            C = int(rng.integers(self.n_classes[0], self.n_classes[1] + 1))
            if rng.uniform() < self.binary_prob:
                C = 2
            C = min(C, n_train)
            while True:
                X, y = self._dataset(rng, T, F, C)
                if len(np.unique(y[:n_train])) == C and np.all(np.isfinite(X)):
                    break
            Xs.append(self._cells(X, rng))
            ys.append(y)
            Cs.append(C)
        return PriorBatch(
            X=torch.as_tensor(np.stack(Xs), dtype=torch.float32),
            y=torch.as_tensor(np.stack(ys), dtype=torch.int64),
            n_train=n_train,
            n_classes=torch.as_tensor(Cs, dtype=torch.int64),
        )
