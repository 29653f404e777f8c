"""The two prior FP4 recipes of issue 47: NVIDIA's as published (R2+) and FP4-all-the-way.

Each test would catch a wrong switch: R2+ keeps its last block in full precision for all steps and
every layer from the final 10 % on (R2 does neither); FP4-all-the-way rounds the forward to
nearest (as R1) and every backward operand stochastically, without Hadamard (unbiased for the
raw X, W; a Hadamard or an RTN operand would change the draws or the mean).
"""

import torch

from icml26.core.threads import torch_threads
from icml26.tetrajet import (
    GPTConfig,
    QuantSpec,
    TinyGPT,
    TrainConfig,
    fp4_all_the_way,
    load_text_data,
    naive_nvfp4,
    nvidia_nvfp4_published,
    quantized_layers,
    quantized_linear,
    train_lm,
)


def _precision_trace(recipe, steps=10):
    """Per step: (block 0 quantized?, block 1 quantized?) while a two-block GPT trains."""
    data = load_text_data("char")
    gpt = GPTConfig(vocab_size=data.vocab_size, context=16, d_model=32, n_layers=2, n_heads=2,
                    d_mlp=64)  # fmt: skip
    model = TinyGPT(gpt, seed=0)
    trace = []

    def progress(done, total, metrics):
        trace.append(tuple(
            all(layer.spec.enabled for layer in quantized_layers(block))
            for block in model.blocks
        ))  # fmt: skip

    cfg = TrainConfig(steps=steps, batch_size=2, warmup=1, eval_every=steps, eval_batches=1)
    with torch_threads(1):
        result = train_lm(model, data, recipe, cfg, context=16, seed=0, progress=progress)
    return trace, result


def test_nvidia_published_keeps_the_last_block_and_the_final_tenth_in_full_precision():
    trace, result = _precision_trace("nvidia_nvfp4_published")
    assert result.switch_step == 9  # round(0.9 * 10)
    assert trace[:9] == [(True, False)] * 9  # last block full precision from the start
    assert trace[9:] == [(False, False)]  # everything full precision for the final 10 %
    spec = nvidia_nvfp4_published()
    assert spec.weight_2d and spec.rht_wgrad and not spec.rht_dgrad  # otherwise R2
    assert spec.operand_rounding == "rtn" and spec.backward_rounding == "sr"


def test_nvidia_r2_stays_in_nvfp4_throughout():
    trace, result = _precision_trace("nvidia_nvfp4")
    assert result.switch_step is None
    assert trace == [(True, True)] * 10


def test_fp4_all_the_way_switches():
    spec = fp4_all_the_way()
    assert spec.quantize == (True,) * 6 and spec.outer is None
    assert (spec.backward_rounding, spec.operand_rounding) == ("sr", "sr")
    assert not (spec.rht_dgrad or spec.rht_wgrad)


def _grads(spec, seed, x, w, dy):
    x, w = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(seed))
    y.backward(dy)
    return y.detach(), x.grad, w.grad


def test_fp4_all_the_way_rounds_forward_to_nearest_and_backward_stochastically_unbiased():
    g = torch.Generator().manual_seed(0)
    x, w, dy = (torch.randn(*s, generator=g) for s in ((128, 32), (32, 32), (128, 32)))
    spec = fp4_all_the_way()
    with torch_threads(1):
        y_a, dx_a, dw_a = _grads(spec, 1, x, w, dy)
        y_b, dx_b, dw_b = _grads(spec, 2, x, w, dy)
        y_r1, _, _ = _grads(naive_nvfp4(), 1, x, w, dy)
    assert torch.equal(y_a, y_b) and torch.equal(y_a, y_r1)  # RTN forward, as R1
    assert not torch.equal(dw_a, dw_b) and not torch.equal(dx_a, dx_b)  # SR backward
    # Unbiased for the raw operands (no aligned re-quantization): E[dW] = dYᵀX.
    n = 100
    rtn = QuantSpec(**{**spec.__dict__, "name": "rtn_operands", "operand_rounding": "rtn"})
    with torch_threads(1):
        mean = sum(_grads(spec, s, x, w, dy)[2] for s in range(n)) / n
        # An RTN operand (R2's choice for Q6) keeps a bias that does not average out.
        biased = sum(_grads(rtn, s, x, w, dy)[2] for s in range(n)) / n
    exact = dy.T @ x
    assert (mean - exact).norm() / exact.norm() < 0.05
    assert (biased - exact).norm() > (mean - exact).norm()
