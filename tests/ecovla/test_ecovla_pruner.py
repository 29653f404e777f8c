"""Spec §7: causality of the EAP loop, its limits (static Wanda, oracle), and I²O semantics."""

import time

import numpy as np
import pytest
import torch

from icml26.ecovla import (
    DensePolicy,
    EcoVLAPruner,
    InterleavedOrchestrator,
    PruningLog,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
    calibration_energy,
    evaluate,
    oracle_pruner,
    static_wanda_pattern,
)


@pytest.fixture(scope="module")
def model():
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, patch=16), seed=0)


@pytest.fixture(scope="module")
def frames():
    """A fixed trajectory of 14 observations across the mid-episode shift."""
    env = Shift2DPickPlaceEnv(split="shift")
    obs, _ = env.reset(seed=4)
    out = [obs]
    rng = np.random.default_rng(0)
    for _ in range(13):
        obs, *_ = env.step(rng.uniform(-1, 1, 3))
        out.append(obs)
    return out


def run(pruner, frames):
    pruner.reset()
    return [np.asarray(pruner.step(obs)) for obs in frames]


def test_pattern_of_step_t_is_first_used_at_t_plus_1_and_trigger_steps_run_dense(model, frames):
    pruner = EcoVLAPruner(model, ratio=0.4, p=80, window=16, warmup=2).calibrate(frames[:2])
    run(pruner, frames)
    records = pruner.records
    assert records[0].dense and not records[0].triggered  # t = 0 dense, no new pattern
    assert records[1].used == pruner.initial_pattern_.key  # P0 until the first trigger
    assert sum(r.triggered for r in records) >= 2
    current = pruner.initial_pattern_.key
    for r in records[1:]:
        if r.triggered:
            assert r.dense and r.used is None and r.made is not None
        else:
            assert not r.dense and r.used == current and r.made is None
        if r.made is not None:
            current = r.made  # ... and it is the pattern of the next sparse step


def test_sparse_steps_never_touch_the_dense_weights(model, frames):
    calls = {"n": 0}
    originals = model._state()["originals"]

    def count(module, args):
        calls["n"] += 1

    handles = [
        o[n].register_forward_pre_hook(count)
        for o in originals
        for n in ("gate_proj", "down_proj", "q_proj", "o_proj")
    ]
    try:
        pruner = EcoVLAPruner(model, ratio=0.4, p=50, warmup=2).calibrate(frames[:2])
        pruner.reset()
        for obs in frames:
            before = calls["n"]
            pruner.step(obs)
            dense = pruner.records[-1].dense
            assert (calls["n"] > before) == dense  # sparse steps run only the sliced copies
    finally:
        for h in handles:
            h.remove()
        model.install(None)


def test_alpha_lambda_one_is_static_wanda_at_every_step(model, frames):
    static = static_wanda_pattern(model, frames[:3], 0.4)
    pruner = EcoVLAPruner(model, ratio=0.4, p=100, alpha=1.0, lam=1.0, warmup=1)
    run(pruner.calibrate(frames[:3]), frames)
    assert pruner.initial_pattern_ == static
    assert sum(r.triggered for r in pruner.records) > 0
    assert all(r.made in (None, static.key) for r in pruner.records)
    assert all(r.used in (None, static.key) for r in pruner.records)


def test_alpha_zero_equals_the_per_step_oracle_at_trigger_steps(model, frames):
    eap = EcoVLAPruner(model, ratio=0.4, p=100, alpha=0.0, warmup=1).calibrate(frames[:2])
    oracle = oracle_pruner(model, 0.4).calibrate(frames[:2])
    run(eap, frames)
    run(oracle, frames)
    triggered = [r for r in eap.records if r.triggered]
    assert triggered
    for r in triggered:
        assert r.made == oracle.records[r.t].made  # same step, same pattern


def test_oracle_scores_dense_and_acts_sparse_at_the_same_step(model, frames):
    oracle = oracle_pruner(model, 0.4).calibrate(frames[:2])
    run(oracle, frames)
    for r in oracle.records[1:]:
        assert r.made is not None and r.used == r.made and not r.dense


def test_calibration_prior_is_the_mean_energy(model, frames):
    mlp, attn = calibration_energy(model, frames[:3])
    singles = [calibration_energy(model, [f]) for f in frames[:3]]
    torch.testing.assert_close(mlp, sum(s[0] for s in singles) / 3)
    torch.testing.assert_close(attn, sum(s[1] for s in singles) / 3)


def test_thread_mode_equals_serial_mode(model, frames):
    serial = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    expected = run(serial, frames)
    threaded = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    with InterleavedOrchestrator(threaded, mode="thread", max_wait_s=60.0) as orch:
        orch.reset()
        got = [np.asarray(orch.step(obs)) for obs in frames]
        orch.drain()
    np.testing.assert_array_equal(np.stack(got), np.stack(expected))
    assert [r.used for r in threaded.records] == [r.used for r in serial.records]
    assert [r.made for r in threaded.records] == [r.made for r in serial.records]


def test_a_late_pattern_keeps_the_old_one_without_blocking(model, frames, monkeypatch):
    pruner = EcoVLAPruner(model, ratio=0.4, p=100, warmup=1).calibrate(frames[:2])
    slow_make = pruner.make_pattern

    def slow(captured):
        time.sleep(0.5)
        return slow_make(captured)

    monkeypatch.setattr(pruner, "make_pattern", slow)
    with InterleavedOrchestrator(pruner, mode="thread") as orch:
        orch.reset()
        for obs in frames[:4]:
            orch.step(obs)
        assert orch.late_steps >= 1
        sparse = [r for r in pruner.records if not r.dense]
        assert all(r.used == pruner.initial_pattern_.key for r in sparse)  # old pattern kept
        orch.reset()


def test_without_pattern_work_the_schedule_stays_and_the_pattern_never_changes(model, frames):
    eap = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    run(eap, frames)
    idle = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2, update_pattern=False)
    idle.calibrate(frames[:2])
    prior = idle.prior_.energy.clone()
    with InterleavedOrchestrator(idle, mode="serial") as orch:
        orch.reset()
        for obs in frames:
            orch.step(obs)
    assert [(r.dense, r.triggered) for r in idle.records] == [
        (r.dense, r.triggered) for r in eap.records
    ]  # the trigger reads the vision encoder only: same dense steps
    assert any(r.triggered for r in idle.records)
    p0 = idle.initial_pattern_.key
    assert all(r.made in (None, p0) and r.used in (None, p0) for r in idle.records)
    torch.testing.assert_close(idle.prior_.energy, prior)  # no E update either
    with pytest.raises(TypeError, match="update_pattern must be a bool"):
        EcoVLAPruner(model, ratio=0.4, p=5, update_pattern=1)


def test_pruning_log_counts_triggers_and_dense_steps_over_episodes(model, frames):
    env = Shift2DPickPlaceEnv(split="shift", max_steps=10)
    pruner = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    log, seen = PruningLog(), []
    result = evaluate(
        pruner, env, episodes=3, on_episode=log, progress=lambda d, t, m: seen.append((d, t))
    )
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert len(log.episodes) == 3 and log.steps == int(result.queries.sum())
    assert log.decisions == log.steps - 3
    assert log.triggers == sum(r.triggered for r in log.records)
    assert log.trigger_rate == log.triggers / log.decisions
    assert log.dense_fraction == log.dense_steps / log.steps
    assert log.dense_steps == log.triggers + 3  # t = 0 of each episode, then the triggers
    assert PruningLog().trigger_rate == 0.0 and PruningLog().dense_fraction == 0.0
    with pytest.raises(TypeError, match="policy must be an EcoVLAPruner"):
        log(DensePolicy(model))


def test_dense_policy_and_errors(model, frames):
    assert DensePolicy(model).step(frames[0]).shape == (4, 3)
    with pytest.raises(ValueError, match=r"calibrate\(frames\) must be called"):
        EcoVLAPruner(model, ratio=0.4, p=5).step(frames[0])
    with pytest.raises(ValueError, match=r"ratio must be in \[0, 1\)"):
        EcoVLAPruner(model, ratio=1.0, p=5)
    with pytest.raises(ValueError, match=r"p must be in \[0, 100\]"):
        EcoVLAPruner(model, ratio=0.4, p=-1)
    with pytest.raises(ValueError, match="window must be >= warmup"):
        EcoVLAPruner(model, ratio=0.4, p=5, window=2, warmup=4)
    with pytest.raises(TypeError, match="adapter must be a BackboneAdapter"):
        EcoVLAPruner(torch.nn.Linear(2, 2), ratio=0.4, p=5)
    with pytest.raises(ValueError, match="schedule must be one of"):
        EcoVLAPruner(model, ratio=0.4, p=5, schedule="sometimes")
    pruner = EcoVLAPruner(model, ratio=0.4, p=5).calibrate(frames[:1])
    with pytest.raises(ValueError, match="mode must be one of 'serial', 'thread', 'cuda_stream'"):
        InterleavedOrchestrator(pruner, mode="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="mode 'cuda_stream' needs CUDA"):
            InterleavedOrchestrator(pruner, mode="cuda_stream")
