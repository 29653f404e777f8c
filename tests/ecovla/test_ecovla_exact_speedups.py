"""The quick preset's shortcuts (issue 51) compute exactly what the straightforward paths compute:
shared calibration energy, block-sampled layouts, the cached background + pads, lock-step
evaluation that draws only the frames a policy reads, masks built once per pattern object,
the per-layer channel energies in one reduction and the trigger's quantile in plain floats."""

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from icml26.ecovla import (
    DensePolicy,
    EcoVLAPruner,
    FixedPatternPolicy,
    QuantileTrigger,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
    calibration_energy,
    evaluate_lockstep,
    initial_frames,
    load_policy,
    oracle_pruner,
    random_pattern,
    scripted_expert,
    static_wanda_pattern,
)
from icml26.ecovla.env import MIN_SEPARATION
from icml26.ecovla.pruner import _energies, _stacked_energy
from icml26.ecovla.scoring import channel_energy
from icml26.ecovla.standins import POLICIES
from icml26.ecovla.trigger import _linear_quantile


@pytest.fixture(scope="module")
def model():
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)


def test_shared_calibration_energy_gives_the_same_priors_and_patterns(model):
    frames = initial_frames(4, seed=0)
    energy = calibration_energy(model, frames)
    for p, alpha, schedule in ((5.0, 0.7, "eap"), (80.0, 0.0, "eap"), (0.0, 0.0, "oracle")):
        a = EcoVLAPruner(model, 0.4, p, alpha=alpha, schedule=schedule).calibrate(frames)
        b = EcoVLAPruner(model, 0.4, p, alpha=alpha, schedule=schedule).calibrate_energy(*energy)
        assert torch.equal(a.prior_.energy, b.prior_.energy)
        assert a.initial_pattern_ == b.initial_pattern_
    assert model.pattern_from_energy(*energy, 0.4) == static_wanda_pattern(model, frames, 0.4)
    # one energy shared by two pruners: neither changes it (the prior works on a copy)
    before = [e.clone() for e in energy]
    rows = [EcoVLAPruner(model, 0.4, 80.0, warmup=1).calibrate_energy(*energy) for _ in range(2)]
    evaluate_lockstep(rows, [Shift2DPickPlaceEnv(max_steps=8) for _ in rows], [1, 2], 2)
    assert all(torch.equal(x, y) for x, y in zip(before, energy, strict=True))
    with pytest.raises(ValueError, match="mlp"):
        EcoVLAPruner(model, 0.4, 5.0).calibrate_energy(energy[0][:1], energy[1])
    with pytest.raises(ValueError, match="attn"):
        EcoVLAPruner(model, 0.4, 5.0).calibrate_energy(energy[0], energy[1] * float("nan"))


def draw_by_draw(rng, n):
    while True:
        points = rng.uniform(0.12, 0.88, size=(n, 2))
        gaps = np.linalg.norm(points[:, None] - points[None], axis=-1) + np.eye(n)
        if gaps.min() >= MIN_SEPARATION:
            return points


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937])
def test_block_sampled_layout_is_the_draw_by_draw_layout(bit_generator):
    env = Shift2DPickPlaceEnv()
    for seed in range(100):
        a = np.random.Generator(bit_generator(seed))
        b = np.random.Generator(bit_generator(seed))
        assert np.array_equal(env._layout(a, 7), draw_by_draw(b, 7))
        assert a.random() == b.random()  # the generator stands where it would
    assert np.array_equal(
        env._layout(np.random.default_rng(0), 2), draw_by_draw(np.random.default_rng(0), 2)
    )


@pytest.mark.parametrize("split", ["clean", "train", "shift"])
def test_cached_background_and_pads_draw_the_fresh_frame(split):
    for seed in range(4):
        env = Shift2DPickPlaceEnv(split=split, max_steps=40)
        obs, _ = env.reset(seed=seed)
        expert = scripted_expert(env, noise=0.3, seed=seed)
        done, phases = False, set()
        while not done:
            cached = env.render_image()
            env._state["canvas"].clear()  # draw the background and pads anew
            assert np.array_equal(cached, env.render_image())
            assert np.array_equal(obs["image"], cached)
            phases.add(env.shifted)
            obs, _, terminated, truncated, _ = env.step(expert())
            done = terminated or truncated
        assert phases == ({False} if split == "clean" else {False, True})


class Passthrough(gym.Wrapper):
    """A wrapper: lock-step evaluation then steps it the ordinary way (every frame drawn)."""


def plain_and_wrapped(make_rows, seeds, split, max_steps, execute, trace):
    runs = []
    for wrap in (False, True):
        rows = make_rows()
        envs = [Shift2DPickPlaceEnv(split=split, max_steps=max_steps) for _ in rows]
        envs = [Passthrough(e) for e in envs] if wrap else envs
        result = evaluate_lockstep(rows, envs, seeds, execute=execute, trace=trace)
        runs.append((result, [getattr(r, "records", None) for r in rows]))
    (plain, plain_records), (wrapped, wrapped_records) = runs
    for field in ("success", "length", "queries"):
        assert np.array_equal(getattr(plain, field), getattr(wrapped, field))
    assert plain.failure == wrapped.failure and plain.drift == wrapped.drift
    assert plain_records == wrapped_records
    return plain


def test_lockstep_that_draws_only_read_frames_plays_the_same_episodes(model):
    calib = initial_frames(4, seed=0)

    def rows():
        eap = EcoVLAPruner(model, 0.4, 80.0, warmup=1).calibrate(calib)
        return [
            DensePolicy(model),
            FixedPatternPolicy(model, random_pattern(model, 0.4, seed=1)),
            eap.clone(),
            eap.clone(),
            oracle_pruner(model, 0.4).calibrate(calib),
        ]

    # 31 steps, 3 per chunk: every episode ends on the first action of a chunk
    result = plain_and_wrapped(rows, [3, 4, 3, 5, 6], "shift", 31, 3, [False, True] * 2 + [True])
    assert result.length.tolist() == [31] * 5
    # a shipped policy: episodes that succeed at various steps, in and out of the shift
    shipped = load_policy(POLICIES[0])
    result = plain_and_wrapped(
        lambda: [DensePolicy(shipped)] * 6, list(range(6)), "shift", 80, 2, None
    )
    assert result.success.any()


def test_masks_built_once_per_pattern_object_equal_row_by_row_masks(model):
    p, q = random_pattern(model, 0.4, seed=1), random_pattern(model, 0.25, seed=2)
    patterns = [p, None, p, copy.deepcopy(p), "skip", q, p, None]
    mlp, heads = model.masks_of(patterns)
    rows = [model.masks_of([pattern]) for pattern in patterns]
    assert torch.equal(mlp, torch.cat([m for m, _ in rows]))
    assert torch.equal(heads, torch.cat([h for _, h in rows]))


@pytest.mark.parametrize("keep", [1.0, 0.5])
def test_energies_in_one_reduction_equal_per_layer_channel_energy(model, keep):
    env = Shift2DPickPlaceEnv(split="shift")
    obs = [env.reset(seed=s)[0] for s in range(3)]
    model.set_token_pruning(keep, 1)  # FastV: later layers see fewer tokens
    try:
        _, captured = model.act_rows(
            obs, model.encode_observations(obs), model.masks_of([None] * 3), capture=True
        )
    finally:
        model.set_token_pruning(1.0, 1)
    mlp, attn = _energies(model, captured)
    for stacked, layers in ((mlp, captured.mlp), (attn, captured.attn)):
        expected = torch.stack([channel_energy(layers[i]).double() for i in range(2)])
        assert torch.equal(stacked, expected)
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        tensors = [torch.randn(1, 37, 23, generator=gen, dtype=dtype) * 7 for _ in range(4)]
        expected = torch.stack([channel_energy(t).double() for t in tensors])
        assert torch.equal(_stacked_energy(tensors), expected)


def test_trigger_quantile_is_numpys_linear_quantile():
    rng = np.random.default_rng(0)
    for trial in range(3000):
        n = int(rng.integers(1, 17))
        values = [
            rng.uniform(-1, 1, n),  # any similarity
            1 - rng.exponential(1e-3, n),  # near 1, as in a steady scene
            rng.choice([0.5, 0.9, 1.0, 0.0], n),  # ties
        ][trial % 3].tolist()
        q = [0.0, 0.05, 0.5, 0.8, 1.0, float(rng.uniform())][trial % 6]
        assert _linear_quantile(values, q) == float(np.quantile(np.asarray(values), q))
    # the trigger decides as with numpy's quantile, step by step
    trigger = QuantileTrigger(p=5, window=16, warmup=4)
    history = []
    for s_t in (1 - rng.exponential(1e-2, 300)).clip(-1, 1):
        expected = len(history) >= 4 and s_t < np.quantile(history[-16:], 0.05)
        assert trigger.update(float(s_t)) == expected
        history.append(float(s_t))
