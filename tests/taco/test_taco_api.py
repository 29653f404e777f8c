"""Spec §7 checks 11-12 (prior, scikit-learn protocol), checkpoints, baselines and bad input."""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError

from icml26.core import StateDictMismatchError, warmup_cosine_lr
from icml26.taco import (
    MLPSCMPrior,
    TACOClassifier,
    TACOConfig,
    TACOModel,
    class_allocation,
    load_checkpoint,
    load_official_checkpoint,
    save_checkpoint,
    subsample_context,
    train_taco,
)

X_IRIS, Y_IRIS = load_iris(return_X_y=True)


# 11. prior
def test_prior_shapes_classes_and_reproducibility():
    prior = MLPSCMPrior(n_rows=(40, 80), n_features=(3, 6), n_classes=(2, 4))
    a, b = prior.sample(5, seed=3), prior.sample(5, seed=3)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    B, T, F = a.X.shape
    assert B == 5 and 40 <= T <= 80 and 3 <= F <= 6 and 0 < a.n_train < T
    assert torch.isfinite(a.X).all()
    for d in range(B):
        C = int(a.n_classes[d])
        assert 2 <= C <= 4 and int(a.y[d].max()) < C and int(a.y[d].min()) >= 0
        assert len(torch.unique(a.y[d, : a.n_train])) == C  # every class in the train part
    with pytest.raises(ValueError, match="n_rows must be a"):
        MLPSCMPrior(n_rows=(80, 40))


# 12. scikit-learn protocol
def test_sklearn_protocol_strings_pandas_clone():
    clf = TACOClassifier(row_compression_percentage=10, n_estimators=2, seed=1)
    params = clf.get_params()
    assert params["row_compression_percentage"] == 10 and params["n_estimators"] == 2
    twin = clone(clf).set_params(n_estimators=1)
    assert twin.get_params()["n_estimators"] == 1 and clf.n_estimators == 2
    names = np.array(["setosa", "versicolor", "virginica"])[Y_IRIS]
    df = pd.DataFrame(X_IRIS, columns=["a", "b", "c", "d"])
    clf.fit(df, names)
    proba = clf.predict_proba(df.iloc[:20])
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-5)  # float32 softmax
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert set(clf.predict(df.iloc[:20])) <= set(clf.classes_)
    assert clf.K_total_ == 15 and len(clf.compressed_contexts_) == 2


def test_pot_baseline_and_ensemble_members_agree_in_shape():
    pot = TACOClassifier(use_compressor=False, n_estimators=2).fit(X_IRIS, Y_IRIS)
    assert pot.K_total_ == 150 and pot.predict_proba(X_IRIS[:5]).shape == (5, 3)


def test_nan_and_inf_inputs_are_handled():
    X = X_IRIS.copy()
    X[0, 1], X[5, 2], X[7, 0] = np.nan, np.inf, -np.inf
    proba = TACOClassifier(row_compression_percentage=20).fit(X, Y_IRIS).predict_proba(X[:10])
    assert np.isfinite(proba).all()


def test_bad_input_messages():
    with pytest.raises(NotFittedError):
        TACOClassifier().predict(X_IRIS)
    for p in (0, -3, 100.1):
        with pytest.raises(ValueError, match=r"row_compression_percentage must be in \(0, 100\]"):
            TACOClassifier(row_compression_percentage=p).fit(X_IRIS, Y_IRIS)
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class"):
        TACOClassifier().fit(X_IRIS, np.zeros(150))
    with pytest.raises(
        ValueError, match=r"at most 4 classes; y has 6 classes .*OneVsRestClassifier"
    ):
        TACOClassifier().fit(X_IRIS, np.arange(150) % 6)
    clf = TACOClassifier().fit(X_IRIS, Y_IRIS)
    with pytest.raises(ValueError, match="X has 3 features, but TACOClassifier is expecting 4"):
        clf.predict(X_IRIS[:, :3])
    with pytest.raises(TypeError, match="n_estimators must be an integer"):
        TACOClassifier(n_estimators=1.5).fit(X_IRIS, Y_IRIS)


def test_train_taco_names_a_model_or_prior_of_the_wrong_kind():
    """Fuzz campaign 4: model=inf reached torch's optimiser ('float' object is not iterable)."""
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), seed=0)
    with pytest.raises(TypeError, match="train_taco: model must be a TACOModel; got float"):
        train_taco(float("inf"), MLPSCMPrior(n_rows=(40, 60)), steps=1, batch_size=2)
    with pytest.raises(TypeError, match="train_taco: prior must be a prior"):
        train_taco(model, (), steps=1, batch_size=2)


# checkpoints and training
def test_train_save_load_roundtrip(tmp_path):
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), seed=0)
    log = train_taco(
        model, MLPSCMPrior(n_rows=(30, 40)), steps=3, batch_size=2, checkpoint=tmp_path / "m"
    )
    assert [h["step"] for h in log] == [0, 1, 2] and all(np.isfinite(h["loss"]) for h in log)
    loaded = load_checkpoint(tmp_path / "m")
    X, y = torch.randn(1, 25, 4), torch.randint(0, 2, (1, 20))
    torch.testing.assert_close(loaded(X, y, percentage=10.0), model(X, y, percentage=10.0))
    clf = TACOClassifier(checkpoint=tmp_path / "m").fit(X_IRIS, Y_IRIS)
    assert clf.model_.config.emsize == 16
    with pytest.raises(ValueError, match="has use_compressor=True"):
        TACOClassifier(checkpoint=tmp_path / "m", use_compressor=False).fit(X_IRIS, Y_IRIS)
    with pytest.raises(FileNotFoundError, match="no checkpoint file"):
        load_checkpoint(tmp_path / "missing")


def test_official_layout_loader_on_local_stand_in(tmp_path):
    config = TACOConfig.small(nlayers=1, emsize=16, nhead=2)
    model = TACOModel(config)
    rename = {"compressor.": "compressor.", "predictor.": "predictor.", "projection.": "z_to_pred."}
    state = {}
    for key, value in model.state_dict().items():
        prefix = next(p for p in rename if key.startswith(p))
        state[rename[prefix] + key[len(prefix) :]] = value
    torch.save({"state_dict": state}, tmp_path / "official.ckpt")
    loaded = load_official_checkpoint(tmp_path / "official.ckpt", config)
    X, y = torch.randn(1, 25, 4), torch.randint(0, 2, (1, 20))
    torch.testing.assert_close(loaded(X, y, percentage=10.0), model(X, y, percentage=10.0))
    state["predictor.decoder.2.weight"] = torch.zeros(3, 3)
    del state["z_to_pred.up.bias"]
    torch.save(state, tmp_path / "bad.ckpt")
    # every mismatch is named at once: the misshapen tensor (both shapes) and the missing one
    with pytest.raises(
        StateDictMismatchError,
        match=r"missing keys \['projection\.up\.bias'\].*"
        r"predictor\.decoder\.2\.weight: checkpoint \(3, 3\) vs model \(4, 64\)",
    ):
        load_official_checkpoint(tmp_path / "bad.ckpt", config)
    state["encoder.cell.weight"] = torch.zeros(1)
    torch.save(state, tmp_path / "foreign.ckpt")
    with pytest.raises(KeyError, match=r"unexpected key 'encoder\.cell\.weight'"):
        load_official_checkpoint(tmp_path / "foreign.ckpt", config)


def test_load_checkpoint_names_a_mismatch_with_its_json(tmp_path):
    save_checkpoint(TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2)), tmp_path / "m")
    # the JSON now describes a deeper model than the weights hold
    meta = tmp_path / "m.json"
    meta.write_text(meta.read_text().replace('"nlayers": 1', '"nlayers": 2'))
    with pytest.raises(StateDictMismatchError, match=r"missing keys \['compressor\.layers\.1"):
        load_checkpoint(tmp_path / "m")


def test_training_follows_core_warmup_cosine_schedule():
    # 50 steps, warm-up 10 %: 5 linear warm-up steps to the peak, cosine to 0 at the last step
    model = TACOModel(TACOConfig.small(nlayers=1, emsize=16, nhead=2), seed=0)
    log = train_taco(
        model, MLPSCMPrior(n_rows=(20, 24)), steps=50, batch_size=1, lr=0.5, warmup=0.1, seed=0
    )
    lrs = [h["lr"] for h in log]
    expected = [warmup_cosine_lr(s, total_steps=50, peak_lr=0.5, warmup_steps=5) for s in range(50)]
    assert lrs == expected
    assert lrs[0] == 0.1 and lrs[4] == lrs[5] == 0.5 and lrs[-1] == 0.0


# baselines
def test_subsampling_baselines():
    X = np.random.default_rng(0).normal(size=(100, 3))
    y = np.array([0] * 90 + [1] * 10)
    assert class_allocation(np.array([90, 10]), 10).tolist() == [9, 1]
    assert class_allocation(np.array([99, 1]), 5).tolist() == [4, 1]
    Xk, yk = subsample_context(X, y, 10, strategy="kmeans", seed=0)
    assert Xk.shape == (10, 3) and (yk == 1).sum() == 1
    np.testing.assert_allclose(Xk[yk == 1][0], X[90:].mean(0), rtol=1e-6)  # 1 centroid = mean
    Xr, _ = subsample_context(X, y, 10, seed=0)
    assert len({tuple(r) for r in Xr}) == 10
    with pytest.raises(ValueError, match="strategy must be one of"):
        subsample_context(X, y, 3, strategy="grid")
