"""Randomness is an argument (models, layers); the training loop's schedule and progress."""

import pytest
import torch

import icml26.tetrajet.training as training
from icml26.core import torch_threads, warmup_cosine_lr
from icml26.tetrajet import (
    GPTConfig,
    NVFP4Linear,
    TinyGPT,
    TrainConfig,
    get_recipe,
    load_text_data,
    train_lm,
)

GPT = GPTConfig(vocab_size=20, context=16, d_model=32, n_layers=1, n_heads=2, d_mlp=64)


@pytest.fixture(autouse=True)
def _one_thread():
    # Element-wise fake quantization on small tensors: OpenMP sync on the shared 2-core machine
    # costs more than it saves (measured ~10x), so these tests run single-threaded.
    with torch_threads(1):
        yield


def test_tiny_gpt_init_is_the_seeded_normal_draw_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    net = TinyGPT(GPT, seed=5)
    assert torch.equal(torch.random.get_rng_state(), state)
    # the draw the model made before core.normal_init_: N(0, 0.02²) in parameter order
    g = torch.Generator().manual_seed(5)
    for name, p in net.named_parameters():
        if p.dim() == 2:
            assert torch.equal(p, torch.randn(p.shape, generator=g) * 0.02), name
        else:  # LayerNorm
            expected = 1.0 if name.endswith("weight") else 0.0
            assert bool((p == expected).all()), name
    other = TinyGPT(GPT, seed=6)
    assert not torch.equal(net.lm_head.weight, other.lm_head.weight)


def test_nvfp4_linear_initial_weight_comes_from_its_seed():
    state = torch.random.get_rng_state()
    spec = get_recipe("tetrajet_v2")
    a = NVFP4Linear(32, 16, True, spec=spec, seed=3)
    b = NVFP4Linear(32, 16, True, spec=spec, seed=3)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert not torch.equal(a.weight, NVFP4Linear(32, 16, spec=spec, seed=4).weight)
    bound = 32**-0.5  # nn.Linear's default: U(-1/sqrt(K), 1/sqrt(K))
    assert float(a.weight.detach().abs().max()) <= bound
    assert a.generator.initial_seed() == 3  # the SR stream is still the seed itself


def test_train_lm_uses_core_schedule_to_a_floor_and_reports_every_step(monkeypatch):
    calls = []

    def spy(step, **kwargs):
        calls.append((step, kwargs))
        return warmup_cosine_lr(step, **kwargs)

    monkeypatch.setattr(training, "warmup_cosine_lr", spy)
    data = load_text_data("char")
    gpt = GPTConfig(vocab_size=data.vocab_size, context=16, d_model=32, n_layers=1, n_heads=2,
                    d_mlp=64)  # fmt: skip
    cfg = TrainConfig(steps=5, batch_size=2, lr=2e-3, warmup=2, final_lr_fraction=0.25,
                      eval_every=5, eval_batches=1)  # fmt: skip
    seen = []
    result = train_lm(
        TinyGPT(gpt, seed=0), data, "fp32", cfg, context=16, seed=0,
        progress=lambda done, total, metrics: seen.append((done, total, metrics["loss"])),
    )  # fmt: skip
    assert seen == [(t + 1, 5, loss) for t, loss in enumerate(result.train_loss)]
    assert [step for step, _ in calls] == list(range(5))
    expected = {"total_steps": 5, "peak_lr": 2e-3, "warmup_steps": 2, "final_lr": 0.25 * 2e-3}
    assert all(kwargs == expected for _, kwargs in calls)
