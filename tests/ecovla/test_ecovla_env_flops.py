"""Spec §7: the environment (Gymnasium contract, seeding, expert) and analytic FLOPs."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from torch.utils.flop_counter import FlopCounterMode

from icml26.ecovla import (
    Shift2DPickPlaceEnv,
    StepRecord,
    TinyVLA,
    TinyVLAConfig,
    backbone_flops,
    fastv_sequence_lengths,
    fastv_token_prune,
    mean_step_flops,
    pattern_update_flops,
    random_pattern,
    scripted_expert,
)


@pytest.mark.parametrize("split", ["clean", "train", "shift"])
def test_gymnasium_check_env_passes(split):
    check_env(Shift2DPickPlaceEnv(split=split), skip_render_check=True)


def test_registered_id_makes_the_env():
    env = gym.make("Shift2DPickPlace-v0", split="shift")
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def rollout(env, seed):
    obs, _ = env.reset(seed=seed)
    expert = scripted_expert(env, noise=0.15, seed=seed)
    frames, done = [obs["image"]], False
    while not done:
        obs, _, terminated, truncated, info = env.step(expert(obs))
        frames.append(obs["image"])
        done = terminated or truncated
    return np.stack(frames), info


def test_env_is_deterministic_under_a_seed():
    a, _ = rollout(Shift2DPickPlaceEnv(split="shift"), 11)
    b, _ = rollout(Shift2DPickPlaceEnv(split="shift"), 11)
    c, _ = rollout(Shift2DPickPlaceEnv(split="shift"), 12)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


@pytest.mark.parametrize("split", ["clean", "train", "shift"])
def test_scripted_expert_succeeds_on_every_split(split):
    env = Shift2DPickPlaceEnv(split=split)
    results = [rollout(env, s)[1] for s in range(60)]
    assert np.mean([r["success"] for r in results]) >= 0.95
    if split != "clean":  # the scene really shifts inside most episodes
        assert np.mean([r["shifted"] for r in results]) >= 0.5


def test_shift_changes_background_and_lighting():
    env = Shift2DPickPlaceEnv(split="shift")
    obs, _ = env.reset(seed=0)
    before = obs["image"].astype(float)
    while not env.shifted:
        obs, *_ = env.step(np.zeros(3))
    assert np.abs(obs["image"].astype(float) - before).mean() > 20  # grey-levels out of 255


def test_env_bad_input():
    with pytest.raises(ValueError, match="split must be one of 'clean', 'train', 'shift'"):
        Shift2DPickPlaceEnv(split="test")
    with pytest.raises(ValueError, match="image_size must be a multiple of 8"):
        Shift2DPickPlaceEnv(image_size=60)
    env = Shift2DPickPlaceEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be 3 finite numbers"):
        env.step([0.0, np.nan, 0.0])
    with pytest.raises(TypeError, match="env must be a Shift2DPickPlaceEnv"):
        scripted_expert(gym.make("CartPole-v1"))


def counted_flops(layer, h, model):
    positions = torch.arange(h.shape[1])[None]
    mask = torch.full((h.shape[1],) * 2, torch.finfo(h.dtype).min).triu(1)[None, None]
    pe = model.backbone.rotary_emb(h, position_ids=positions)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        layer(h, attention_mask=mask, position_ids=positions, position_embeddings=pe)
    return counter.get_total_flops()


@pytest.mark.parametrize("n_kv_heads", [4, 2])
def test_analytic_flops_match_flop_counter_dense_and_sliced(n_kv_heads):
    config = TinyVLAConfig(
        d_model=32, n_layers=1, n_heads=4, n_kv_heads=n_kv_heads, d_ff=64, patch=16
    )
    model = TinyVLA(config, seed=0)
    h = torch.randn(1, 11, 32, generator=torch.Generator().manual_seed(0))
    assert backbone_flops(model, None, 11) == counted_flops(model.layers[0], h, model)
    pattern = random_pattern(model, 0.5, seed=0)
    model.install(pattern)
    try:
        assert backbone_flops(model, pattern, 11) == counted_flops(model.layers[0], h, model)
    finally:
        model.install(None)


def test_flops_scale_with_kept_fraction_and_tokens():
    model = TinyVLA(TinyVLAConfig(d_model=64, n_layers=2, n_heads=4, d_ff=256, patch=16))
    dense = backbone_flops(model, None, 22)
    sparse = backbone_flops(model, random_pattern(model, 0.4, seed=0), 22)
    assert 0.55 < sparse / dense < 0.65  # projections scale with 0.6; attention scores less
    assert backbone_flops(model, None, [22, 11]) < dense
    with pytest.raises(ValueError, match=r"n_tokens must give one length per layer \(2\)"):
        backbone_flops(model, None, [22])
    with pytest.raises(ValueError, match="n_tokens must be an integer"):
        backbone_flops(model, None, 0)


def test_fastv_keeps_the_most_attended_visual_tokens_in_order():
    h = torch.arange(10.0).view(1, 10, 1)
    attn = torch.tensor([[9.0, 0.1, 0.7, 0.2, 0.9, 0.3, 0.0, 0.5, 9.0, 9.0]])
    kept_h, kept = fastv_token_prune(h, attn, 0.5, visual_start=1, n_visual=6)
    assert kept.tolist() == [0, 2, 4, 5, 7, 8, 9]  # visual 1..6 ranked: 4, 2, 5 kept
    torch.testing.assert_close(kept_h[0, :, 0], kept.float())
    with pytest.raises(ValueError, match="attn_last_row must have shape"):
        fastv_token_prune(h, attn[:, :5], 0.5, 1, 6)
    with pytest.raises(ValueError, match=r"keep_ratio must be in \(0, 1\]"):
        fastv_token_prune(h, attn, 0.0, 1, 6)


def test_tinyvla_token_pruning_runs_fewer_tokens_and_changes_little_at_keep_one():
    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=3, d_ff=64, patch=8), seed=0)
    obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    dense = model.act(obs)
    model.set_token_pruning(1.0, 1)
    np.testing.assert_array_equal(model.act(obs), dense)
    seen = []
    handle = model.layers[2].register_forward_pre_hook(
        lambda m, a, kw: (
            seen.append(a[0].shape[1]) if a else seen.append(kw["hidden_states"].shape[1])
        ),
        with_kwargs=True,
    )
    model.set_token_pruning(0.5, 1)
    model.act(obs)
    handle.remove()
    model.set_token_pruning(1.0, 2)
    assert seen == [3 + 32 + 4]  # 64 patch tokens halved


def test_fastv_sequence_lengths_are_the_lengths_the_model_runs():
    config = TinyVLAConfig(d_model=32, n_layers=3, d_ff=64, patch=8)
    lengths = fastv_sequence_lengths(config.n_tokens, config.n_visual, 0.5, 1, config.n_layers)
    assert lengths == [config.n_tokens, 3 + 32 + 4, 3 + 32 + 4]  # as the forward hook saw
    assert fastv_sequence_lengths(10, 4, 1.0, 0, 2) == [10, 10]
    assert fastv_sequence_lengths(10, 4, 0.01, 0, 1) == [7]  # at least one visual token kept
    with pytest.raises(ValueError, match="n_visual must be an integer"):
        fastv_sequence_lengths(10, 11, 0.5, 1, 2)
    with pytest.raises(ValueError, match="start_layer must be an integer"):
        fastv_sequence_lengths(10, 4, 0.5, 3, 2)


def test_mean_step_flops_weights_dense_and_sliced_steps():
    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, patch=16))
    pattern = random_pattern(model, 0.4, seed=0)
    dense, sparse = backbone_flops(model, None, 22), backbone_flops(model, pattern, 22)
    flags = [True, False, False, True, False]
    records = [StepRecord(t, d, d, 1.0, None, None) for t, d in enumerate(flags)]
    assert mean_step_flops(model, pattern, 22, records) == pytest.approx(
        (2 * dense + 3 * sparse) / 5
    )
    assert mean_step_flops(model, pattern, 22, records[:1]) == dense
    assert mean_step_flops(model, pattern, 22, []) == 0.0


def test_pattern_update_flops_is_linear_in_tokens_and_layers():
    one = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, n_heads=4, d_ff=64, patch=16))
    two = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, patch=16))
    # per layer: (2 S + 4) (d_ff + H hd) = (2 S + 4) 96
    assert pattern_update_flops(one, 10) == 24 * 96
    assert pattern_update_flops(two, 10) == 2 * pattern_update_flops(one, 10)
    assert pattern_update_flops(one, 20) - pattern_update_flops(one, 10) == 2 * 10 * 96
    assert pattern_update_flops(one, 70) < backbone_flops(one, None, 70) / 50  # cheap vs a step
    with pytest.raises(TypeError, match="adapter must be a BackboneAdapter"):
        pattern_update_flops(torch.nn.Linear(2, 2), 10)
    with pytest.raises(ValueError, match="n_tokens must be an integer"):
        pattern_update_flops(one, 0)
