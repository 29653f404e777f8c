"""A synthetic competence panel with known Bayes ROC-AUC (issue 48).

TACO (arXiv:2602.05649) compresses the context of a tabular in-context learner; whether the
compression keeps accuracy can only be read off a backbone that is competent in the first place.
This panel asks the one thing our earlier backbone could not do: find 1-3 informative columns
among up to 30 noise columns. Each table is a binary sparse GLM
(:func:`~icml26.taco.prior_v3.sparse_glm_table`) whose Bayes posterior is known, so every model's
ROC-AUC can be read against the best possible one on the same test rows. The panel is for model
selection and gates only; the real-table panels are never used to choose a model.

Noise columns may be heavy-tailed (sinh) or categorical (quantile bins); the informative columns
may be heavy-tailed (a monotone map: the Bayes posterior, a function of the raw values, is
unchanged) but never binned or blanked, so the Bayes AUC stays exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.core import Seed, check_positive_int, numpy_generator
from icml26.taco.metrics import roc_auc
from icml26.taco.prior_v3 import LINKS, sparse_glm_table

__all__ = ["CompetenceTable", "competence_panel"]

WIDTHS = (4, 10, 20, 30)
ACTIVE = (1, 2, 3)
SNRS = (1.0, 2.0, 4.0)
TRAIN_ROWS = (128, 256, 512, 1024)


@dataclass(frozen=True)
class CompetenceTable:
    """One panel table: train/test split, the Bayes posterior and how it was drawn.

    Attributes
    ----------
    name
        ``"glm-F{F}-a{active}-snr{s}-{link}-n{N}"``.
    X_train, y_train, X_test, y_test
        The split (float32 features, int64 labels 0/1).
    posterior_test
        (n_test, 2) Bayes posterior of the test rows.
    active
        Indices of the informative columns.
    snr, link
        Signal-to-noise and link of the GLM.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    posterior_test: np.ndarray
    active: tuple[int, ...]
    snr: float
    link: str

    @property
    def bayes_auc(self) -> float:
        """ROC-AUC of the Bayes posterior on the test rows (the best any model can do)."""
        return roc_auc(self.y_test, self.posterior_test)


def _noise_cells(X: np.ndarray, active: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One noise column heavy-tailed, one binned; an informative column heavy-tailed at random."""
    noise = np.setdiff1d(np.arange(X.shape[1]), active)
    if len(noise) >= 2:
        tail, binned = rng.choice(noise, size=2, replace=False)
        X[:, tail] = np.sinh(2.0 * X[:, tail]) / 2.0
        cuts = np.quantile(X[:, binned], np.linspace(0, 1, int(rng.integers(2, 9)) + 1)[1:-1])
        X[:, binned] = np.searchsorted(cuts, X[:, binned])
    if rng.uniform() < 0.5:
        f = rng.choice(active)
        X[:, f] = np.sinh(2.0 * X[:, f]) / 2.0
    return X


def competence_panel(n_tables: int = 12, *, seed: Seed = 0, n_test: int = 512) -> list:
    """``n_tables`` binary sparse-GLM tables with known Bayes AUC, drawn from ``seed``.

    Table i has F = ``WIDTHS[i % 4]`` columns, ``ACTIVE[i % 3]`` of them informative,
    signal-to-noise ``SNRS[(i // 4) % 3]``, link ``LINKS[i % 2]`` and ``TRAIN_ROWS[(i // 3) % 4]``
    training rows, so 12 tables cover every width, sparsity, SNR, link and size.

    Returns
    -------
    list of CompetenceTable

    Raises
    ------
    TypeError, ValueError
        If ``n_tables`` is not in 1..1000 or ``n_test`` not in 16..100 000.

    Examples
    --------
    >>> panel = competence_panel(2, seed=0, n_test=64)
    >>> [t.X_train.shape for t in panel], 0.5 < panel[0].bayes_auc <= 1.0
    ([(128, 4), (128, 10)], True)
    """
    owner = "competence_panel"
    n_tables = check_positive_int("n_tables", n_tables, owner=owner, maximum=1000)
    n_test = check_positive_int("n_test", n_test, owner=owner, minimum=16, maximum=100_000)
    rng = numpy_generator(seed)
    panel = []
    for i in range(n_tables):
        F, a = WIDTHS[i % len(WIDTHS)], ACTIVE[i % len(ACTIVE)]
        snr, link = SNRS[(i // 4) % len(SNRS)], LINKS[i % len(LINKS)]
        n_train = TRAIN_ROWS[(i // 3) % len(TRAIN_ROWS)]
        while True:
            X, y, posterior, active = sparse_glm_table(
                rng, n_train + n_test, F, 2, n_active=a, snr=snr, link=link
            )
            if len(np.unique(y[:n_train])) == 2 and len(np.unique(y[n_train:])) == 2:
                break
        X = _noise_cells(X, active, rng).astype(np.float32)
        panel.append(
            CompetenceTable(
                name=f"glm-F{F}-a{a}-snr{snr:g}-{link}-n{n_train}",
                X_train=X[:n_train],
                y_train=y[:n_train].astype(np.int64),
                X_test=X[n_train:],
                y_test=y[n_train:].astype(np.int64),
                posterior_test=posterior[n_train:],
                active=tuple(int(f) for f in active),
                snr=snr,
                link=link,
            )
        )
    return panel
