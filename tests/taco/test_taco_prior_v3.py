"""Prior v3, the competence panel, the stage A/B recipes and config validation (issues 48, 40)."""

import dataclasses

import numpy as np
import pytest
import torch

from icml26.taco import MixturePrior, competence_panel, glm_posterior, roc_auc, sparse_glm_table
from icml26.taco.standins import RECIPES, STAGE_B_CONFIG, STANDINS, Recipe, train_recipe


def test_mixture_prior_draws_valid_reproducible_tables():
    prior = MixturePrior(n_rows=(64, 300))
    a, b = prior.sample(3, seed=7), prior.sample(3, seed=7)
    assert torch.equal(a.X.nan_to_num(-9), b.X.nan_to_num(-9)) and torch.equal(a.y, b.y)
    assert not torch.equal(prior.sample(3, seed=8).y[:, :10], a.y[:, :10]) or a.X.shape[1] != 64
    for seed in range(6):
        batch = prior.sample(2, seed=seed)
        B, T, F = batch.X.shape
        assert 64 <= T <= 300 and 2 <= F <= 48 and 1 <= batch.n_train < T
        for i in range(B):
            C = int(batch.n_classes[i])
            assert set(batch.y[i, : batch.n_train].tolist()) == set(range(C))
    clean = MixturePrior(n_rows=(64, 128), missing_prob=0.0).sample(2, seed=0)
    assert not clean.X.isnan().any()


def test_glm_posterior_has_the_right_sign_and_is_calibrated():
    # a large positive signal puts the latent above the cut: the upper class
    post = glm_posterior(np.array([8.0, -8.0]), np.array([0.0]), "logistic")
    assert post[0, 1] > 0.99 and post[1, 0] > 0.99
    np.testing.assert_allclose(post.sum(1), 1.0)
    rng = np.random.default_rng(0)
    for link in ("logistic", "threshold"):
        X, y, posterior, active = sparse_glm_table(
            rng, 20_000, 6, 3, n_active=2, snr=2.0, link=link
        )
        assert len(active) == 2
        for c in range(3):  # the posterior matches the frequencies it generates
            assert abs(posterior[:, c].mean() - (y == c).mean()) < 0.02
        # noise columns carry nothing: their correlation with the latent class is ~0
        noise = np.setdiff1d(np.arange(6), active)
        assert np.abs([np.corrcoef(X[:, f], posterior[:, 1])[0, 1] for f in noise]).max() < 0.05


def test_competence_panel_is_fixed_by_its_seed_and_bayes_beats_a_fitted_model():
    from sklearn.linear_model import LogisticRegression

    panel = competence_panel(4, seed=3, n_test=256)
    again = competence_panel(4, seed=3, n_test=256)
    assert [t.name for t in panel] == [t.name for t in again]
    assert all(np.array_equal(t.X_train, u.X_train) for t, u in zip(panel, again, strict=True))
    assert [t.X_train.shape[1] for t in panel] == [4, 10, 20, 30]
    gaps = []
    for table in panel:
        lr = LogisticRegression(max_iter=1000).fit(table.X_train, table.y_train)
        gaps.append(table.bayes_auc - roc_auc(table.y_test, lr.predict_proba(table.X_test)))
    assert np.mean(gaps) > -0.01  # the Bayes posterior is the ceiling (up to test-set noise)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"family_probs": (0.5, 0.5, 0.5)}, ValueError),
        ({"family_probs": (1.0, 0.0)}, ValueError),
        ({"n_rows": (100, 10)}, ValueError),
        ({"snr": (0.0, 1.0)}, ValueError),
        ({"missing_prob": float("nan")}, ValueError),
        ({"noise_table_prob": 2.0}, ValueError),
    ],
)
def test_mixture_prior_refuses_bad_settings(kwargs, error):
    with pytest.raises(error, match="MixturePrior"):
        MixturePrior(**kwargs)


def test_stage_recipes_and_their_validation(tmp_path):
    assert RECIPES["pot_v3"].init_full and RECIPES["pot_v3"].prior_class == "mixture"
    assert RECIPES["taco_b"].architecture == STAGE_B_CONFIG == RECIPES["pot_b"].architecture
    b = STAGE_B_CONFIG
    assert (b.emsize, b.nlayers, b.max_features) == (64, 4, 64)
    assert {"pot_v3", "taco_v3", "pot_b", "taco_b"} <= set(STANDINS)
    with pytest.raises(ValueError, match="init_full needs init_from"):
        Recipe(use_compressor=True, steps=1, init_full=True)
    with pytest.raises(ValueError, match="prior_class"):
        Recipe(use_compressor=True, steps=1, prior_class="tabicl")
    with pytest.raises(TypeError, match="init_full"):
        Recipe(use_compressor=True, steps=1, init_from="x", init_full="yes")


def test_init_full_continues_every_weight_of_a_taco_checkpoint(tmp_path):
    from icml26.core import save_checkpoint
    from icml26.taco import TACOConfig, TACOModel
    from icml26.taco.training import checkpoint_config

    arch = TACOConfig.small(emsize=16, nhead=2, nlayers=1)
    source = TACOModel(arch, seed=123)
    with torch.no_grad():
        source.projection.down.weight.fill_(0.5)  # not the identity init: must be copied
    save_checkpoint(tmp_path / "src", source, {"config": checkpoint_config(source)})
    recipe = Recipe(use_compressor=True, steps=1, batch_size=1, lr=1e-12,
                    prior={"n_rows": (40, 60), "n_features": (2, 6)}, prior_class="mixture",
                    architecture=arch, init_from=str(tmp_path / "src"), init_full=True)  # fmt: skip
    trained = train_recipe(recipe)
    assert trained.recipe["prior_class"] == "mixture" and "MixturePrior" in trained.data
    for (name, a), b in zip(trained.model.state_dict().items(), source.state_dict().values(),
                            strict=True):  # fmt: skip
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0, msg=name)


@pytest.mark.parametrize(
    ("module", "config", "field", "value"),
    [
        ("speed_memory", "SPEED", "n_train", (0,)),
        ("speed_memory", "SPEED", "percentages", (0.0,)),
        ("speed_memory", "SPEED", "measure_rss", "yes"),
        ("accuracy", "ACC", "train_steps", -5),
        ("accuracy", "ACC", "lr", float("nan")),
        ("accuracy", "ACC", "pretrained", 1),
        ("real_tables", "CONFIG", "tables", ("no/such",)),
        ("real_tables", "CONFIG", "splits", 0),
        ("competence", "CONFIG", "n_tables", 10**6),
        ("competence", "CONFIG", "pot_checkpoint", None),
    ],
)
def test_experiment_configs_refuse_bad_fields_when_built(module, config, field, value):
    import importlib

    mod = importlib.import_module(f"icml26.taco.experiments.{module}")
    with pytest.raises((TypeError, ValueError), match=field):
        dataclasses.replace(getattr(mod, config), **{field: value})


def test_full_accuracy_preset_trains_taco_from_pot_as_the_shipped_models_were(
    tmp_path, monkeypatch
):
    from icml26.core import RunContext
    from icml26.taco.experiments import accuracy

    monkeypatch.setattr(accuracy, "_train", lambda model, *args: [{"loss": 1.0}])  # no steps
    config = dataclasses.replace(accuracy.PRESETS["full"], emsize=16, nlayers=1)
    taco, pot, _ = accuracy._models(config, RunContext(seed=0, artifact_dir=tmp_path))
    for backbone in (taco.compressor, taco.predictor):
        for (name, a), b in zip(backbone.state_dict().items(), pot.predictor.state_dict().values(),
                                strict=True):  # fmt: skip
            torch.testing.assert_close(a, b, msg=name)
