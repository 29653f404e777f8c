"""I²O on a second CUDA stream (the only test allowed to skip: on machines without CUDA)."""

import numpy as np
import pytest
import torch

from icml26.ecovla import (
    EcoVLAPruner,
    InterleavedOrchestrator,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
)


@pytest.mark.gpu
def test_cuda_stream_mode_equals_serial_mode_on_the_gpu():
    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0).cuda()
    env = Shift2DPickPlaceEnv(split="shift")
    frames = [env.reset(seed=4)[0]]
    rng = np.random.default_rng(0)
    for _ in range(11):
        frames.append(env.step(rng.uniform(-1, 1, 3))[0])
    serial = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    serial.reset()
    expected = np.stack([serial.step(obs) for obs in frames])
    streamed = EcoVLAPruner(model, ratio=0.4, p=80, warmup=2).calibrate(frames[:2])
    with InterleavedOrchestrator(streamed, mode="cuda_stream", max_wait_s=60.0) as orch:
        orch.reset()
        got = np.stack([orch.step(obs) for obs in frames])
        orch.drain()
    # same kernels on the same device; the pattern work only moved to another stream
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert [r.made for r in streamed.records] == [r.made for r in serial.records]
    assert next(model.parameters()).device.type == "cuda"
    assert torch.cuda.is_available()
