"""Issue 19's prior mechanisms: decision-stump layers, heavy tails, missing cells."""

import numpy as np
import pytest
import torch

from icml26.taco import MLPSCMPrior, TACOConfig, TACOModel, train_taco
from icml26.taco.prior import stump_layer


def test_default_prior_draws_what_it_drew_before_the_options():
    # Regression guard: sums of the seed-0 / seed-123 draws computed with the code before the
    # options were added (2026-12-02); the options draw extra numbers only when switched on.
    a = MLPSCMPrior().sample(4, seed=0)
    b = MLPSCMPrior(n_rows=(64, 256), n_features=(2, 12)).sample(8, seed=123)
    assert a.X.shape == (4, 455, 11) and b.X.shape == (8, 66, 9)
    assert float(a.X.double().sum()) == pytest.approx(6498.852931846093, rel=1e-12)
    assert float(b.X.double().sum()) == pytest.approx(2285.0093304519687, rel=1e-12)
    assert int(a.y.sum()) == 1094 and int(b.y.sum()) == 757


@pytest.mark.parametrize("n_stumps", [1, 2, 3])
def test_stump_layer_equals_brute_force_stumps(n_stumps):
    # Brute force: replay the layer's draws and evaluate every stump of every node by hand.
    h = np.random.default_rng(0).standard_normal((50, 6))
    out = stump_layer(h, np.random.default_rng(7), n_stumps)
    rng = np.random.default_rng(7)
    parent = rng.integers(0, 6, size=(6, n_stumps))
    quantile = rng.uniform(0.1, 0.9, size=(6, n_stumps))
    leaves = rng.standard_normal((2, 6, n_stumps))
    for k in range(6):
        expected = np.zeros(50)
        for s in range(n_stumps):
            x = h[:, parent[k, s]]
            t = np.quantile(x, quantile[k, s])
            expected += np.where(x <= t, leaves[0, k, s], leaves[1, k, s])
        np.testing.assert_allclose(out[:, k], expected, rtol=0, atol=1e-12)
        assert len(np.unique(out[:, k])) <= 2**n_stumps  # piecewise constant


def test_missing_cells_heavy_tails_and_tree_layers():
    prior = MLPSCMPrior(n_rows=(200, 300), tree_prob=1.0, heavy_tail_prob=1.0, missing_prob=0.5)
    batch = prior.sample(6, seed=1)
    X, y = batch.X.numpy(), batch.y.numpy()
    missing = np.isnan(X).mean(axis=(1, 2))  # per dataset: r ~ U(0, 0.5)
    assert missing.max() > 0.05 and missing.max() < 0.6 and not np.isinf(X).any()
    assert (y >= 0).all()  # labels are never blanked
    for d in range(6):  # every class still occurs in the training rows
        assert len(np.unique(y[d, : batch.n_train])) == int(batch.n_classes[d])

    # sinh(s x)/s of standardised columns: heavier tails (mean kurtosis over all columns of 8
    # datasets) than the same prior without it
    def mean_kurtosis(heavy: float) -> float:
        X = MLPSCMPrior(n_rows=(300, 300), heavy_tail_prob=heavy).sample(8, seed=2).X.numpy()
        z = (X - X.mean(1, keepdims=True)) / (X.std(1, keepdims=True) + 1e-9)
        return float((z**4).mean())

    assert mean_kurtosis(1.0) > mean_kurtosis(0.0)
    with pytest.raises(ValueError, match="missing_prob must be in"):
        MLPSCMPrior(missing_prob=0.95)
    with pytest.raises(ValueError, match="tree_prob must be in"):
        MLPSCMPrior(tree_prob=1.5)


def test_training_runs_on_the_extended_prior():
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), seed=0)
    prior = MLPSCMPrior(n_rows=(30, 40), tree_prob=0.5, heavy_tail_prob=0.3, missing_prob=0.3)
    log = train_taco(model, prior, steps=3, batch_size=2, seed=0)
    assert all(np.isfinite(h["loss"]) for h in log)
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_log_rows_and_a_fixed_row_count():
    prior = MLPSCMPrior(n_rows=(64, 2048), log_rows=True)
    rng = np.random.default_rng(0)
    draws = np.array([prior.draw_rows(rng) for _ in range(4000)])
    assert draws.min() >= 64 and draws.max() <= 2048
    # log-uniform on [64, 2048]: median sqrt(64 · 2048) = 362, P(T <= 256) = log(4)/log(32) = 0.4
    assert abs(np.median(draws) / 362.0 - 1) < 0.1
    assert abs((draws <= 256).mean() - 0.4) < 0.03
    uniform = np.array([MLPSCMPrior(n_rows=(64, 2048)).draw_rows(rng) for _ in range(4000)])
    assert abs(np.median(uniform) / 1056.0 - 1) < 0.1  # uniform: median (64 + 2048) / 2
    batch = prior.sample(3, seed=1, n_rows=77)
    assert batch.X.shape[:2] == (3, 77)
    with pytest.raises(TypeError, match="log_rows must be a bool"):
        MLPSCMPrior(log_rows=1)


def test_binary_prob_makes_binary_datasets():
    assert MLPSCMPrior(n_classes=(3, 10), binary_prob=1.0).sample(5, seed=0).n_classes.eq(2).all()
    share = MLPSCMPrior(n_rows=(40, 60), n_classes=(3, 4), binary_prob=0.5).sample(200, seed=0)
    assert 0.4 < float(share.n_classes.eq(2).double().mean()) < 0.6  # binomial(200, 0.5)


def test_rows_per_step_shrinks_the_batch_for_large_tables():
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), use_compressor=False)
    prior = MLPSCMPrior(n_rows=(20, 400), log_rows=True, n_features=(2, 3))
    log = train_taco(model, prior, steps=6, batch_size=8, rows_per_step=200, seed=0)
    for h in log:
        assert h["datasets"] == min(8, max(1, 200 // h["rows"]))
    assert len({h["rows"] for h in log}) > 1
    with pytest.raises(ValueError, match="rows_per_step must be"):
        train_taco(model, prior, steps=1, rows_per_step=0)


def test_held_out_prior_loss_equals_a_direct_computation():
    from icml26.taco.training import held_out_prior_loss

    torch.manual_seed(0)
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), use_compressor=False)
    prior = MLPSCMPrior(n_rows=(30, 40), n_classes=(2, 3))
    out = held_out_prior_loss(model, prior, n_datasets=3, seed=5)
    rng = np.random.default_rng(5)
    ours, floor = [], []
    for _ in range(3):
        b = prior.sample(1, seed=rng)
        n, C = b.n_train, int(b.n_classes[0])
        with torch.no_grad():
            p = model.predictor(b.X, b.y[:, :n])[0, :, :C].double().softmax(-1).numpy()
        y_te, y_tr = b.y[0, n:].numpy(), b.y[0, :n].numpy()
        ours.append(-np.log(p[np.arange(len(y_te)), y_te]).mean())
        freq = (np.bincount(y_tr, minlength=C) + 1.0) / (n + C)
        floor.append(-np.log(freq[y_te]).mean())
    assert out["n_datasets"] == 3
    assert out["model"] == pytest.approx(np.mean(ours), rel=1e-9)
    assert out["label_frequency"] == pytest.approx(np.mean(floor), rel=1e-12)
