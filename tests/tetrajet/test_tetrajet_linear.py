"""Spec §7.7 and §7.10: the quantized linear layer, recipes, conversion, OLMo2 real path."""

import dataclasses
import math

import pytest
import torch
from torch import nn

from icml26.core import torch_threads
from icml26.tetrajet import (
    RECIPES,
    GPTConfig,
    NVFP4Linear,
    QuantSpec,
    TinyGPT,
    TrainConfig,
    get_recipe,
    load_text_data,
    mxfp8_fake_quant,
    nvfp4_fake_quant,
    olmo2_model,
    quantize_model_,
    quantized_layers,
    quantized_linear,
    train_lm,
)
from icml26.tetrajet.formats import _nvfp4_fake_2d


@pytest.fixture(autouse=True)
def _one_thread():
    # Element-wise fake quantization on small tensors: OpenMP sync on the shared 2-core machine
    # costs more than it saves (measured ~10x), so these tests run single-threaded.
    with torch_threads(1):
        yield


def _data(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_all_quantizers_off_equals_nn_linear_exactly():
    ref = nn.Linear(48, 40)
    layer = NVFP4Linear.from_linear(ref, get_recipe("fp32"), seed=0)
    x1 = _data(0, 2, 5, 48).requires_grad_()
    x2 = x1.detach().clone().requires_grad_()
    (ref(x1) ** 2).sum().backward()
    (layer(x2) ** 2).sum().backward()
    assert torch.equal(ref(x1), layer(x2))
    assert torch.equal(x1.grad, x2.grad) and torch.equal(ref.weight.grad, layer.weight.grad)
    assert torch.equal(ref.bias.grad, layer.bias.grad)


@pytest.mark.parametrize("name", list(RECIPES))
def test_forward_equals_quantized_operands_and_3d_shapes(name):
    spec = get_recipe(name)
    x, w = _data(1, 2, 7, 128), _data(2, 256, 128).requires_grad_()
    y = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(0))
    assert y.shape == (2, 7, 256)
    if not spec.enabled:
        return
    flat = x.reshape(-1, 128)
    w_hat = (
        _nvfp4_fake_2d(w.detach())
        if spec.weight_2d
        else nvfp4_fake_quant(w.detach(), outer=spec.outer)
    )
    expected = nvfp4_fake_quant(flat, outer=spec.outer) @ w_hat.T
    torch.testing.assert_close(y.reshape(-1, 256), expected, rtol=0, atol=1e-5)  # fp32 GEMM order
    y.sum().backward()
    assert w.grad.shape == w.shape and torch.isfinite(w.grad).all()


def test_token_padding_does_not_change_outputs():
    spec = get_recipe("tetrajet_v2_base")
    x, w = _data(3, 5, 128), _data(4, 128, 128)
    extra = torch.cat([x, torch.zeros(123, 128)])
    y_small = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(0))
    y_big = quantized_linear(extra, w, spec=spec, generator=torch.Generator().manual_seed(0))
    assert torch.equal(y_small, y_big[:5])


def test_non_multiple_dimensions_are_padded_consistently():
    spec = get_recipe("tetrajet_v2")
    x, w = _data(5, 3, 40), _data(6, 24, 40).requires_grad_()
    y = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(0))
    expected = nvfp4_fake_quant(x) @ nvfp4_fake_quant(w.detach()).T
    torch.testing.assert_close(y, expected, rtol=0, atol=1e-5)  # fp32 GEMM order
    y.sum().backward()
    assert w.grad.shape == (24, 40)


def test_nan_inside_a_layer_propagates_instead_of_raising():
    x = _data(17, 4, 128)
    x[0, 0] = float("nan")
    y = quantized_linear(
        x,
        _data(18, 128, 128),
        spec=get_recipe("tetrajet_v2"),
        generator=torch.Generator().manual_seed(0),
    )
    assert torch.isnan(y).any()  # documented: the loss shows the divergence


def _mean_grad(spec, draws, size=128):
    x, w, dy = _data(7, size, size), _data(8, size, size).requires_grad_(), _data(9, size, size)
    y = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(0))
    grads = [torch.autograd.grad(y, w, dy, retain_graph=True)[0] for _ in range(draws)]
    target = dy.T @ nvfp4_fake_quant(x, outer=spec.outer)
    return torch.stack(grads), target


def test_backward_is_unbiased_for_tetrajet_and_biased_for_naive():
    grads, target = _mean_grad(get_recipe("tetrajet_v2_base"), 200)
    err = (grads.mean(0) - target).norm() / target.norm()
    single = (grads[0] - target).norm() / target.norm()
    # unbiased: the mean's error is the single-draw error / sqrt(200), with 50 % slack for noise
    assert err < 1.5 * single / math.sqrt(200)
    naive, target_naive = _mean_grad(get_recipe("naive_nvfp4"), 2)
    assert torch.equal(naive[0], naive[1])  # RTN: deterministic
    assert (naive[0] - target_naive).norm() / target_naive.norm() > 5 * err


def test_sr_draws_depend_on_the_generator_only():
    spec = get_recipe("tetrajet_v2_base")
    x, w, dy = _data(10, 128, 128), _data(11, 128, 128).requires_grad_(), _data(12, 128, 128)

    def grad(generator):
        y = quantized_linear(x, w, spec=spec, generator=generator)
        return torch.autograd.grad(y, w, dy)[0]

    def seeded(seed):
        return torch.Generator().manual_seed(seed)

    assert torch.equal(grad(seeded(3)), grad(seeded(3)))
    assert not torch.equal(grad(seeded(3)), grad(seeded(4)))


def test_successive_calls_with_one_generator_draw_fresh_rounding():
    # issue 17: an int generator re-seeded every call, so a training loop repeated its SR draws
    spec = get_recipe("tetrajet_v2_base")
    x, w, dy = _data(10, 128, 128), _data(11, 128, 128).requires_grad_(), _data(12, 128, 128)
    g = torch.Generator().manual_seed(5)
    first = torch.autograd.grad(quantized_linear(x, w, spec=spec, generator=g), w, dy)[0]
    second = torch.autograd.grad(quantized_linear(x, w, spec=spec, generator=g), w, dy)[0]
    assert not torch.equal(first, second)
    with pytest.raises(TypeError, match=r"generator must be a torch\.Generator or None"):
        quantized_linear(x, w, spec=spec, generator=3)
    layer = NVFP4Linear(128, 128, spec=spec, seed=0)  # one generator per layer, also advanced
    grads = []
    for _ in range(2):
        layer(x).backward(dy)
        grads.append(layer.weight.grad.clone())
        layer.weight.grad = None
    assert not torch.equal(grads[0], grads[1])


def test_an_empty_batch_works_like_nn_linear():
    layer = NVFP4Linear(256, 32, spec=get_recipe("tetrajet_v2"), seed=0)
    x = torch.empty(0, 256, requires_grad=True)
    y = layer(x)
    assert y.shape == (0, 32)
    y.sum().backward()
    assert x.grad.shape == (0, 256) and torch.equal(layer.weight.grad, torch.zeros(32, 256))
    assert layer(torch.empty(2, 0, 256)).shape == (2, 0, 32)


def test_outlier_channels_use_mxfp8_and_reduce_error_with_planted_outliers():
    g = torch.Generator().manual_seed(13)
    x = torch.randn(256, 128, generator=g)
    planted = torch.tensor([3, 40, 77, 100])
    x[:, planted] *= 200
    w = torch.randn(64, 128, generator=g)
    exact = x @ w.T
    spec = get_recipe("tetrajet_v2_mix_fp8")
    pure = quantized_linear(x, w, spec=spec, generator=torch.Generator().manual_seed(0))
    mixed = quantized_linear(
        x, w, spec=spec, generator=torch.Generator().manual_seed(0), outlier_channels=planted
    )
    assert (mixed - exact).norm() < 0.5 * (pure - exact).norm()


@pytest.mark.parametrize("name", ["tetrajet_v2_mix_fp8", "naive_nvfp4"])
def test_outlier_forward_equals_fp4_and_mxfp8_channel_groups(name):
    # Y = Q1(X_R) Q2(W_R)^T + Q8(X_C) Q8(W_C)^T from the public quantizers; C has gaps and ends
    spec = get_recipe(name)
    x, w = _data(3, 40, 96), _data(4, 24, 96)
    outliers = torch.tensor([0, 5, 6, 50, 95])
    regular = torch.tensor([c for c in range(96) if c not in set(outliers.tolist())])
    y = quantized_linear(
        x, w, spec=spec, generator=torch.Generator().manual_seed(0), outlier_channels=outliers
    )
    fp4 = (
        nvfp4_fake_quant(x[:, regular], outer=spec.outer)
        @ nvfp4_fake_quant(w[:, regular], outer=spec.outer).T
    )
    fp8 = mxfp8_fake_quant(x[:, outliers]) @ mxfp8_fake_quant(w[:, outliers]).T
    torch.testing.assert_close(y, fp4 + fp8, rtol=0, atol=1e-4)


def test_outlier_weight_gradient_quantizes_both_channel_groups_along_tokens():
    # RTN everywhere, raw operands: dW_R = Q4(dY)^T Q4(X_R), dW_C = Q8(dY)^T Q8(X_C), over N
    spec = dataclasses.replace(get_recipe("naive_nvfp4"), operand_rounding="rtn")
    x, dy = _data(7, 64, 48), _data(8, 64, 32)
    w = _data(9, 32, 48).requires_grad_()
    outliers = torch.tensor([1, 17, 47])
    regular = torch.tensor([c for c in range(48) if c not in set(outliers.tolist())])
    quantized_linear(
        x, w, spec=spec, generator=torch.Generator(), outlier_channels=outliers
    ).backward(dy)
    q4 = nvfp4_fake_quant(dy, axis=0, outer=None).T @ nvfp4_fake_quant(
        x[:, regular], axis=0, outer=None
    )
    q8 = mxfp8_fake_quant(dy, axis=0).T @ mxfp8_fake_quant(x[:, outliers], axis=0)
    torch.testing.assert_close(w.grad[:, regular], q4, rtol=0, atol=1e-4)
    torch.testing.assert_close(w.grad[:, outliers], q8, rtol=0, atol=1e-4)


def test_outlier_channels_with_2d_weight_blocks_are_refused_by_name():
    spec = get_recipe("nvidia_nvfp4")
    x, w = torch.randn(16, 64), torch.randn(32, 64)
    with pytest.raises(ValueError, match="outlier_channels need 1x16 weight blocks"):
        quantized_linear(x, w, spec=spec, outlier_channels=torch.tensor([3, 40]))
    with pytest.raises(ValueError, match="outlier_ratio > 0 needs 1x16 weight blocks"):
        QuantSpec(weight_2d=True, outlier_ratio=0.01)


def test_quantize_model_replaces_block_linears_but_not_head_and_is_seeded():
    net = TinyGPT(GPTConfig(vocab_size=20, context=16, d_model=32, n_layers=2, n_heads=2,
                            d_mlp=64), seed=0)  # fmt: skip
    quantize_model_(net, "tetrajet_v2", seed=0)
    assert len(quantized_layers(net)) == 8 and type(net.lm_head) is nn.Linear
    gens = [layer.generator.initial_seed() for layer in quantized_layers(net)]
    assert len(set(gens)) == 8


def test_recipes_train_without_nan_and_deterministically():
    data = load_text_data("char")
    cfg = TrainConfig(steps=6, batch_size=2, warmup=2, eval_every=3, eval_batches=1,
                      record_start_fraction=0.2, osc_start_fraction=0.5, osc_period=4,
                      osc_track_steps=1, osc_sample=64)  # fmt: skip
    gpt = GPTConfig(vocab_size=data.vocab_size, context=32, d_model=32, n_layers=1, n_heads=2,
                    d_mlp=64)  # fmt: skip
    for name in RECIPES:
        runs = [train_lm(TinyGPT(gpt, seed=1), data, name, cfg, context=32, seed=1)
                for _ in range(2)]  # fmt: skip
        assert all(math.isfinite(v) for v in runs[0].val_loss), name
        assert runs[0].val_loss == runs[1].val_loss, name


def test_olmo2_real_path_converts_trains_and_round_trips(tmp_path):
    tiny = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 64, "num_key_value_heads": 2}  # fmt: skip
    model = olmo2_model("70M", vocab_size=64, context=32, **tiny)
    assert model.config.tie_word_embeddings is False
    model.save_pretrained(tmp_path)
    quantize_model_(model, "tetrajet_v2_base", seed=0)
    assert len(quantized_layers(model)) == 7 and type(model.lm_head) is nn.Linear
    ids = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    from transformers import Olmo2ForCausalLM

    reloaded = Olmo2ForCausalLM.from_pretrained(tmp_path)
    fresh = olmo2_model("70M", vocab_size=64, context=32, **tiny)
    fresh.load_state_dict(reloaded.state_dict())
    with torch.no_grad():
        assert torch.equal(fresh(input_ids=ids).logits, reloaded(input_ids=ids).logits)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: get_recipe("fp16"), ValueError, "recipe must be one of"),
        (lambda: quantize_model_(nn.Linear(4, 4), "mxfp4"), ValueError, "spec must be one of"),
        (lambda: quantize_model_("net", "fp32"), TypeError, "nn.Module"),
        (lambda: QuantSpec(quantize=(True,) * 5), ValueError, "six booleans"),
        (lambda: QuantSpec(inner=8), ValueError, "multiple of 16"),
        (lambda: QuantSpec(backward_rounding="up"), ValueError, "backward_rounding"),
        (lambda: QuantSpec(scale_round="down"), ValueError, "scale_round"),
        (
            lambda: quantized_linear(
                torch.ones(2, 4, dtype=torch.long), torch.ones(3, 4), spec=QuantSpec()
            ),
            TypeError,
            "floating",
        ),
        (
            lambda: quantized_linear(torch.ones(2, 4), torch.ones(3, 5), spec=QuantSpec()),
            ValueError,
            "must equal",
        ),
        (lambda: NVFP4Linear(4, 4, spec="fp32"), TypeError, "QuantSpec"),
        (lambda: TrainConfig(steps=0), ValueError, "steps must be an integer >= 1"),
    ],
)
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_nvidia_recipe_rounds_only_gradients_stochastically():
    # issue 17: R2 used SR for Q6 (the activation re-quantized for dW); NVIDIA's recipe rounds
    # only gradients stochastically
    spec = get_recipe("nvidia_nvfp4")
    assert (spec.backward_rounding, spec.operand_rounding) == ("sr", "rtn")
    assert get_recipe("tetrajet_v2").operand_rounding == "sr"  # TetraJet-v2: Q3-Q6 all SR
    x, w, dy = _data(20, 256, 128), _data(21, 64, 128).requires_grad_(), _data(22, 256, 64)
    only_q6 = QuantSpec(quantize=(False,) * 5 + (True,), rht_wgrad=False, operand_rounding="rtn")
    grads = [
        torch.autograd.grad(
            quantized_linear(x, w, spec=only_q6, generator=torch.Generator().manual_seed(s)), w, dy
        )[0]
        for s in (1, 2)
    ]
    # Q6 = RTN of X along the token axis, whatever the generator: dW = dYᵀ Q6(X)
    expected = dy.T @ nvfp4_fake_quant(x, axis=0)
    assert torch.equal(grads[0], grads[1]) and torch.allclose(grads[0], expected, atol=1e-4)


def _tiny_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=1, n_head=2)
    torch.manual_seed(0)
    return GPT2LMHeadModel(config).eval()


def test_gpt2_conv1d_layers_are_quantized_exactly_and_round_trip_through_hf(tmp_path):
    # Before: GPT-2's Conv1D layers were skipped silently, 0 layers quantized (issue 49, item 2).
    model = _tiny_gpt2()
    ids = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        dense = model(input_ids=ids).logits
    quantize_model_(model, "fp32", seed=0)  # the transposed weight must compute the same thing
    assert len(quantized_layers(model)) == 4  # c_attn, attn.c_proj, c_fc, mlp.c_proj
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, dense, rtol=0, atol=1e-5)

    model = quantize_model_(_tiny_gpt2(), "tetrajet_v2", seed=3)
    with torch.no_grad():
        quantized = model(input_ids=ids).logits
    assert not torch.allclose(quantized, dense, atol=1e-4)  # the FP4 recipe does act
    model.save_pretrained(tmp_path)
    from transformers import GPT2LMHeadModel

    reloaded = GPT2LMHeadModel.from_pretrained(tmp_path).eval()  # an ordinary GPT-2 checkpoint
    with torch.no_grad():
        torch.testing.assert_close(reloaded(input_ids=ids).logits, dense, rtol=0, atol=1e-5)
    quantize_model_(reloaded, "tetrajet_v2", seed=3)
    with torch.no_grad():
        assert torch.equal(reloaded(input_ids=ids).logits, quantized)


def test_calibrated_outlier_channels_reload_with_their_own_length():
    layer = NVFP4Linear(32, 16, spec=QuantSpec(), seed=0)
    layer.outlier_channels = torch.tensor([3, 7])
    fresh = NVFP4Linear(32, 16, spec=QuantSpec(), seed=1)
    fresh.load_state_dict(layer.state_dict())
    assert fresh.outlier_channels.tolist() == [3, 7]
    assert torch.equal(fresh.weight, layer.weight)


@pytest.mark.parametrize(
    "model",
    [nn.Sequential(nn.ReLU()), nn.Linear(8, 8), nn.Sequential(nn.Linear(4, 4))],
    ids=["no-linear", "bare-linear", "all-excluded"],
)
def test_a_model_with_nothing_to_quantize_is_refused(model):
    exclude = (
        ("0",)
        if isinstance(model, nn.Sequential) and len(model) and type(model[0]) is nn.Linear
        else ()
    )
    with pytest.raises(ValueError, match="nothing would be quantized"):
        quantize_model_(model, "tetrajet_v2", exclude=exclude, seed=0)
