"""Regression tests for the "no in-context learning" defect (docs/taco.md, Deviations/known issues).

Two defects kept the meta-trained models at the class marginal: (1) the prior drew as many
independent causes as the first MLP layer is wide (up to 64), so the <= 16 observed nodes
barely predicted the target; (2) the post-norm + zero-init tiny backbone stays on the
chance-loss plateau for thousands of CPU steps. These tests would have caught both.
"""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from icml26.core import StateDictMismatchError, torch_threads
from icml26.taco import MLPSCMPrior, TACOClassifier, TACOConfig, TACOModel, init_from_pot


def _ovr_auc(y: np.ndarray, proba: np.ndarray) -> float:
    if proba.shape[1] == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr"))


def test_prior_tasks_are_learnable():
    # A plain logistic regression must find signal, else there is nothing to learn in context.
    # The fixed prior gives ~0.87 mean AUC on such tasks; the defective one gave ~0.66.
    prior = MLPSCMPrior(n_rows=(128, 256), n_features=(2, 12))
    rng = np.random.default_rng(1)
    aucs = []
    while len(aucs) < 20:
        b = prior.sample(1, seed=rng)
        n, X, y = b.n_train, b.X[0].numpy(), b.y[0].numpy()
        if len(np.unique(y[n:])) < len(np.unique(y[:n])):
            continue
        scaler = StandardScaler().fit(X[:n])
        lr = LogisticRegression(max_iter=300).fit(scaler.transform(X[:n]), y[:n])
        aucs.append(_ovr_auc(y[n:], lr.predict_proba(scaler.transform(X[n:]))))
    assert np.mean(aucs) > 0.75


def _linear_tasks(g: torch.Generator, B: int = 16, T: int = 64, n: int = 48):
    X = torch.randn(B, T, 3, generator=g)
    w = torch.randn(B, 3, generator=g)  # a fresh separating direction per task: needs ICL
    return X, ((X * w[:, None]).sum(-1) > 0).long(), n


def test_tiny_pre_norm_model_learns_in_context():
    # Fresh random linear tasks every step: a fixed feature -> class map is worthless (loss
    # stays at ln 2 = 0.693); only reading the context labels lowers the loss. Post-norm stayed
    # at 0.693 for 1200 steps. When pre-norm leaves the plateau depends on the init: with the
    # seeded init, seeds 0-3 average 0.55-0.58 over steps 550-600 and 0.40 / 0.28 / 0.21 / 0.18
    # over steps 950-1000 (the old global-RNG init gave 0.19 at 600 steps for seed 0, 0.55 for 1).
    cfg = TACOConfig(emsize=32, nlayers=2, nhead=4, max_classes=2, max_features=4, pre_norm=True)
    model = TACOModel(cfg, use_compressor=False, seed=0)
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    with torch_threads(1):  # tiny tensors: one thread is several times faster
        for _ in range(STEPS):
            X, y, n = _linear_tasks(g)
            logits = model(X, y[:, :n])
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y[:, n:].flatten())
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
    assert np.mean(losses[-50:]) < 0.45


STEPS = 1000


def _easy_task(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X[:150], y[:150], X[150:], y[150:]


def test_shipped_pot_reads_the_context_labels():
    # In-context learning means the prediction follows the context labels: on a separable task
    # the AUC is high and, with the context labels swapped, it inverts. The shipped POT gives
    # 0.88 / 0.13 with the default 4-member ensemble (bar 0.8: a tiny 2 000-step model); the
    # defective checkpoint gave near-constant probabilities (std ~0.002) whose ranking ignored
    # the labels.
    X_tr, y_tr, X_te, y_te = _easy_task(0)
    clf = TACOClassifier(use_compressor=False)
    auc = roc_auc_score(y_te, clf.fit(X_tr, y_tr).predict_proba(X_te)[:, 1])
    swapped = roc_auc_score(y_te, clf.fit(X_tr, 1 - y_tr).predict_proba(X_te)[:, 1])
    assert auc > 0.8
    assert swapped < 0.2


def test_shipped_taco_reads_the_context_labels():
    # Same check through the K-row bottleneck (p = 10 %: K = 15 of 150 rows). The TACO trained
    # from scratch gave near-constant probabilities whose ranking ignored the labels (0.495 prior
    # AUC); started from the POT backbone (init_from) it gives 0.99 / 0.01 with the default
    # 4-member ensemble. A single member depends on where the informative feature sits (0.97
    # with it first, 0.43-0.71 elsewhere; docs/taco.md), so the test uses the ensemble.
    X_tr, y_tr, X_te, y_te = _easy_task(0)
    clf = TACOClassifier(row_compression_percentage=10, seed=0)
    auc = roc_auc_score(y_te, clf.fit(X_tr, y_tr).predict_proba(X_te)[:, 1])
    swapped = roc_auc_score(y_te, clf.fit(X_tr, 1 - y_tr).predict_proba(X_te)[:, 1])
    assert auc > 0.8
    assert swapped < 0.2


def test_init_from_pot_copies_the_backbone_and_names_mismatches():
    cfg = TACOConfig(emsize=16, nlayers=1, nhead=2, max_classes=2, max_features=4)
    pot = TACOModel(cfg, use_compressor=False)
    torch.nn.init.normal_(pot.predictor.decoder[-1].weight)
    taco = TACOModel(cfg)
    copied = init_from_pot(taco, pot)
    assert len(copied) == 2 * len(pot.predictor.state_dict())
    for name, value in pot.predictor.state_dict().items():
        assert torch.equal(taco.predictor.state_dict()[name], value)
        assert torch.equal(taco.compressor.state_dict()[name], value)
    wider = TACOModel(TACOConfig(emsize=16, nlayers=1, nhead=2, max_classes=3, max_features=4))
    with pytest.raises(
        StateDictMismatchError,
        match=r"init_from_pot \(predictor\.\*\).*decoder\.2\.weight: checkpoint \(2, 64\) "
        r"vs model \(3, 64\)",
    ):
        init_from_pot(wider, pot)
    deeper = TACOModel(TACOConfig(emsize=16, nlayers=2, nhead=2, max_classes=2, max_features=4))
    with pytest.raises(StateDictMismatchError, match=r"missing keys \['layers\.1"):
        init_from_pot(deeper, pot)
