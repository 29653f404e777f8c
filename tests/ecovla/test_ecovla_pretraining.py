"""Issue 42's task token and multi-task pre-training stage (TinyVLAConfig.n_tasks, train_bc's
``pretrain``, PolicyRecipe's pre-training fields)."""

from dataclasses import asdict

import numpy as np
import pytest
import torch

from icml26.core import TrainingCheckpoint, save_checkpoint
from icml26.ecovla import (
    TASKS,
    Demonstrations,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
    collect_demos,
    train_bc,
)
from icml26.ecovla.standins import PolicyRecipe, train_policy_recipe

SIZES = dict(d_model=32, n_layers=1, d_ff=64, patch=16)


@pytest.fixture(scope="module")
def multitask():
    parts = [collect_demos(1, seed=0, task=task) for task in TASKS]
    return parts[0], Demonstrations.concatenate(parts)


def test_the_task_token_is_off_by_default_and_draws_nothing_else():
    plain = TinyVLA(TinyVLAConfig(**SIZES), seed=3)
    tasked = TinyVLA(TinyVLAConfig(**SIZES, n_tasks=3), seed=3)
    assert TinyVLAConfig().n_tasks == 0 and plain.task_emb is None
    extra = set(tasked.state_dict()) - set(plain.state_dict())
    assert extra == {"task_emb.weight"} and tasked.task_emb.weight.shape == (3, 32)
    # drawn last: every other parameter is what a model without the token draws
    for name, value in plain.state_dict().items():
        torch.testing.assert_close(tasked.state_dict()[name], value, rtol=0, atol=0)


def test_the_task_token_changes_the_action_and_defaults_to_pick_place():
    model = TinyVLA(TinyVLAConfig(**SIZES, n_tasks=3), seed=0).eval()
    obs = [Shift2DPickPlaceEnv().reset(seed=s)[0] for s in range(2)]
    from icml26.ecovla.model import _stack

    images, instruction, proprio = _stack(obs, model.config, "cpu")
    with torch.no_grad():
        default = model(images, instruction, proprio)
        pick = model(images, instruction, proprio, task=torch.zeros(2, dtype=torch.long))
        push = model(images, instruction, proprio, task=torch.full((2,), 2))
    torch.testing.assert_close(default, pick, rtol=0, atol=0)
    assert (default - push).abs().max() > 1e-4  # the token reaches the action
    # act() and the lock-step path are pick-place (the evaluated task)
    np.testing.assert_allclose(model.act(obs[0]), default[0].numpy(), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match=r"indices in 0\.\.2"):
        model(images, instruction, proprio, task=torch.full((2,), 3))
    with pytest.raises(ValueError, match="shape"):
        model(images, instruction, proprio, task=torch.zeros(3, dtype=torch.long))
    with pytest.raises(TypeError, match="integer tensor"):
        model(images, instruction, proprio, task=torch.zeros(2))
    plain = TinyVLA(TinyVLAConfig(**SIZES), seed=0).eval()
    with pytest.raises(ValueError, match="no task token"):
        plain(images, instruction, proprio, task=torch.ones(2, dtype=torch.long))
    with pytest.raises(ValueError, match="n_tasks"):
        TinyVLAConfig(n_tasks=-1)


def test_pretraining_is_a_counted_stage_on_the_multitask_frames(multitask):
    pick, mixed = multitask
    seen = []
    model = TinyVLA(TinyVLAConfig(**SIZES, n_tasks=3), seed=0)
    before = model.task_emb.weight.detach().clone()
    losses = train_bc(
        model,
        pick,
        steps=2,
        encoder_steps=1,
        pretrain=mixed,
        pretrain_steps=3,
        batch_size=16,
        weight_decay=0.0,
        progress=lambda done, total, m: seen.append((done, total)),
    )
    assert len(losses) == 6 and seen == [(i, 6) for i in range(1, 7)]
    # the touch and push embeddings learn only from touch and push frames: pre-training moved
    # them; behaviour cloning on pick-place alone (no weight decay) leaves them where they were
    assert (model.task_emb.weight[1:] - before[1:]).abs().max() > 0
    alone = TinyVLA(TinyVLAConfig(**SIZES, n_tasks=3), seed=0)
    train_bc(alone, pick, steps=5, encoder_steps=1, batch_size=16, weight_decay=0.0)
    torch.testing.assert_close(alone.task_emb.weight[1:], before[1:], rtol=0, atol=0)
    assert (alone.task_emb.weight[0] - before[0]).abs().max() > 0


def test_pretraining_inputs_are_checked(multitask):
    pick, mixed = multitask
    model = TinyVLA(TinyVLAConfig(**SIZES), seed=0)
    with pytest.raises(ValueError, match="task embeddings"):  # touch/push frames, no token
        train_bc(model, pick, steps=1, encoder_steps=0, pretrain=mixed, pretrain_steps=1)
    with pytest.raises(ValueError, match="go together"):
        train_bc(model, pick, steps=1, encoder_steps=0, pretrain=pick)
    with pytest.raises(ValueError, match="go together"):
        train_bc(model, pick, steps=1, encoder_steps=0, pretrain_steps=2)
    with pytest.raises(TypeError, match="pretrain must be"):
        train_bc(model, pick, steps=1, encoder_steps=0, pretrain="frames", pretrain_steps=1)


def test_training_resumes_across_the_pretraining_stage(multitask, tmp_path):
    pick, mixed = multitask
    options = dict(steps=2, encoder_steps=1, pretrain=mixed, pretrain_steps=3, batch_size=8, seed=5)

    def fresh(seed=0):
        return TinyVLA(TinyVLAConfig(**SIZES, n_tasks=3), seed=seed)

    whole = fresh()
    expected = train_bc(whole, pick, **options)

    def stop(done, total, metrics):
        if done == 3:  # inside the pre-training stage, after the save at step 2
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_bc(
            fresh(), pick, **options, resume=TrainingCheckpoint(tmp_path / "r.pt", 2), progress=stop
        )
    resumed = fresh(seed=1)
    losses = train_bc(resumed, pick, **options, resume=TrainingCheckpoint(tmp_path / "r.pt", 2))
    assert losses == pytest.approx(expected, rel=0, abs=0)
    for p, q in zip(whole.parameters(), resumed.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def test_a_recipe_with_pretraining_has_a_task_token_and_records_the_stage():
    plain = PolicyRecipe(
        d_model=32,
        n_layers=1,
        n_heads=2,
        d_ff=64,
        demo_episodes=1,
        encoder_steps=1,
        steps=1,
        batch_size=4,
    )
    assert plain.model_config().n_tasks == 0 and not plain.pretrains
    recipe = PolicyRecipe(**{**asdict(plain), "pretrain_episodes": 1, "pretrain_steps": 2})
    assert recipe.model_config().n_tasks == len(TASKS)
    trained = train_policy_recipe(recipe)
    assert trained.config["n_tasks"] == 3 and trained.recipe["pretrain_steps"] == 2
    assert trained.metrics["pretrain_frames"] > trained.metrics["demo_frames"]
    assert "touch" in trained.data and "push" in trained.data
    # the pick-place demonstrations are drawn before anything of the pre-training stage
    assert trained.metrics["demo_frames"] == train_policy_recipe(plain).metrics["demo_frames"]
    with pytest.raises(ValueError, match="both 0"):
        PolicyRecipe(pretrain_episodes=10)
    with pytest.raises(ValueError, match="pretrain_steps"):
        PolicyRecipe(pretrain_episodes=10, pretrain_steps=-1)


def test_records_written_before_the_task_token_still_load(tmp_path, monkeypatch):
    # a record without n_tasks / the pre-training fields names the code before: no token, no stage
    import icml26.ecovla.standins as standins

    old = {"d_model": 96, "n_layers": 4, "n_heads": 6, "d_ff": 384, "patch": 16, "seed": 1}
    old.update(demo_episodes=500, encoder_steps=600, steps=1200, batch_size=64, lr=2e-3)
    recipe = PolicyRecipe.from_record({**old, "weight_decay": 0.01})
    assert not recipe.pretrains and recipe == PolicyRecipe(seed=1)
    with pytest.raises(ValueError, match="not a PolicyRecipe record"):
        PolicyRecipe.from_record({**old, "task_token": True})
    config = {k: v for k, v in asdict(TinyVLAConfig(**SIZES)).items() if k != "n_tasks"}
    save_checkpoint(tmp_path / "tinyvla_s1", TinyVLA(TinyVLAConfig(**SIZES)), {"config": config})
    monkeypatch.setattr(standins, "checkpoint_dir", lambda slug: tmp_path)
    standins._load.cache_clear()
    try:
        assert standins.load_policy("tinyvla_s1").config.n_tasks == 0
    finally:
        standins._load.cache_clear()
