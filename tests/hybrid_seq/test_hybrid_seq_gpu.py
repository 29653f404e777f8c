"""GPU path (marked ``gpu``: the one kind of test allowed to skip, on machines without CUDA)."""

import importlib.util

import pytest
import torch

from icml26.hybrid_seq import MQAR, HybridLM


@pytest.mark.gpu
def test_cuda_model_matches_cpu_and_the_mamba_ssm_kernel_matches_torch():
    task = MQAR(L=64, n_kv=8, n_keys=16, n_values=16, n_fillers=8)
    inputs = task.sample(4, generator=0).inputs
    cpu = HybridLM(task.vocab_size, 32, pattern="SA", n_heads=2, ssm_backend="torch", seed=0)
    gpu = HybridLM(task.vocab_size, 32, pattern="SA", n_heads=2, ssm_backend="torch", seed=0)
    gpu = gpu.cuda()
    with torch.no_grad():
        reference = cpu(inputs)
        # float32 on another device: different kernels, round-off far below 1e-4
        torch.testing.assert_close(gpu(inputs.cuda()).cpu(), reference, rtol=0, atol=1e-4)
        if importlib.util.find_spec("mamba_ssm") is not None:
            kernel = HybridLM(
                task.vocab_size, 32, pattern="SA", n_heads=2, ssm_backend="mamba_ssm", seed=0
            ).cuda()
            torch.testing.assert_close(kernel(inputs.cuda()).cpu(), reference, rtol=0, atol=1e-4)
