"""Correction hooks, bias-only training, algorithm A (spec §7 items 5-7)."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from icml26.core import seeded_default_init
from icml26.debias import (
    add_correction_vectors,
    bias_parameters,
    debias_finetune,
    mean_shift_debias,
    module_bias,
)


def _mlp(seed=0, d_in=4, hidden=16, d_out=3, bias=True):
    with seeded_default_init(seed):
        return nn.Sequential(nn.Linear(d_in, hidden, bias=bias), nn.ReLU(),
                             nn.Linear(hidden, d_out, bias=bias))  # fmt: skip


def test_zero_hooks_are_a_bitwise_noop_and_remove_restores():
    net = _mlp(bias=False)
    x = torch.randn(20, 4, generator=torch.Generator().manual_seed(0))
    before, keys = net(x), set(net.state_dict())
    handle = add_correction_vectors(net, ["0", "1", "2"], dims={"1": 16})
    assert torch.equal(net(x), before)
    assert {"0.debias_correction", "1.debias_correction", "2.debias_correction"} <= set(
        net.state_dict()
    )
    with torch.no_grad():
        handle.vectors["2"].fill_(1.0)
    assert torch.equal(net(x), before + 1.0)
    handle.remove()
    assert torch.equal(net(x), before) and set(net.state_dict()) == keys
    handle.remove()  # idempotent


def test_deep_copy_uses_its_own_vectors():
    net = _mlp()
    handle = add_correction_vectors(net, ["2"])
    twin = copy.deepcopy(net)
    with torch.no_grad():
        handle.vectors["2"].fill_(5.0)
    x = torch.zeros(2, 4)
    assert torch.allclose(net(x) - twin(x), torch.full((2, 3), 5.0))


def _shift(batch, rng):
    return batch + torch.as_tensor(rng.normal(1.0, 0.3, size=batch.shape), dtype=batch.dtype)


def test_bias_only_training_changes_only_bias_and_correction_tensors():
    net = _mlp()
    add_correction_vectors(net, ["1"], dims={"1": 16})
    before = {k: v.clone() for k, v in net.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    batches = [torch.randn(32, 4, generator=g) for _ in range(3)]
    log = debias_finetune(net, batches, _shift, lr=1e-2, steps=20, params="bias", seed=0)
    after = net.state_dict()
    for key in before:
        trainable = key.endswith(("bias", "debias_correction"))
        assert torch.equal(before[key], after[key]) != trainable, key
    assert log.n_trainable == 16 + 3 + 16 and set(log.param_names) == {
        "0.bias", "1.debias_correction", "2.bias"}  # fmt: skip
    assert all(p.requires_grad for p in net.parameters())  # flags restored


def test_output_bias_and_all():
    net = _mlp()
    batches = [torch.randn(16, 4, generator=torch.Generator().manual_seed(2))]
    log = debias_finetune(net, batches, _shift, steps=3, params="output_bias")
    assert log.param_names == ("2.bias",)
    log = debias_finetune(net, batches, _shift, steps=3, params="all")
    assert log.n_trainable == log.n_total == sum(p.numel() for p in net.parameters())


def test_bias_only_reduces_the_distillation_loss_and_p_clean_one_is_a_fixed_point():
    net = _mlp()
    batches = [torch.randn(64, 4, generator=torch.Generator().manual_seed(3))]
    log = debias_finetune(net, batches, _shift, lr=1e-2, steps=200, seed=0)
    assert log.losses[-1] < 0.5 * log.losses[0]
    fixed = _mlp()
    w = {k: v.clone() for k, v in fixed.state_dict().items()}
    log = debias_finetune(fixed, batches, _shift, p_clean=1.0, steps=5)
    # all rows clean: the student equals its teacher, loss 0, gradients 0, nothing moves
    assert log.losses == [0.0] * 5
    assert all(torch.equal(w[k], v) for k, v in fixed.state_dict().items())


def test_kl_loss_and_labels():
    net = _mlp()
    g = torch.Generator().manual_seed(4)
    batches = [torch.randn(32, 4, generator=g)]
    labels = [torch.randint(0, 3, (32,), generator=g)]
    log = debias_finetune(net, batches, _shift, loss="kl", labels=labels, lam=0.5, steps=10)
    assert len(log.losses) == 10 and np.all(np.isfinite(log.losses))


def test_algorithm_a_removes_95_percent_of_the_output_bias():
    torch.manual_seed(0)  # test-local; the library never touches the global RNG
    g = torch.Generator().manual_seed(5)
    with seeded_default_init(0):
        net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
    original = copy.deepcopy(net)

    def draw(n=2000, k=32):
        x = torch.randn(n, 8, generator=g)
        return x, x[:, None] + torch.randn(n, k, 8, generator=g)

    x_cal, xp_cal = draw()
    x_ev, xp_ev = draw()
    before = module_bias(net, "2", x_ev, xp_ev).bias_norm
    handle = mean_shift_debias(net, x_cal, xp_cal, ["0", "1", "2"])
    after = module_bias(net, "2", x_ev, xp_ev, reference=original).bias_norm
    assert before > 0.05 and after <= 0.05 * before
    # on the calibration set itself the mean shift is gone to round-off
    cal = module_bias(net, "2", x_cal, xp_cal, reference=original).bias_norm
    assert cal < 1e-5
    handle.remove()
    assert torch.equal(net(x_ev), original(x_ev))


def test_bias_parameters_lists_biases_and_corrections():
    net = _mlp(bias=False)
    assert bias_parameters(net) == []
    handle = add_correction_vectors(net, ["2"])
    assert bias_parameters(net) == handle.parameters()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"loss": "huber"}, "loss must be one of"),
        ({"params": "weights"}, "params must be one of"),
        ({"p_clean": 1.5}, r"p_clean must be in \[0, 1\]"),
        ({"p_clean": -0.1}, r"p_clean must be in \[0, 1\]"),
        ({"lam": 0.5}, "lam=0.5 > 0 needs labels"),
        ({"steps": 0}, "steps must be"),
        ({"lr": 0.0}, "lr must be in"),
    ],
)
def test_debias_finetune_bad_input(kwargs, match):
    batches = [torch.zeros(4, 4)]
    with pytest.raises(ValueError, match=match):
        debias_finetune(_mlp(), batches, _shift, **kwargs)


def test_debias_finetune_bad_batches():
    with pytest.raises(ValueError, match="clean_batches is empty"):
        debias_finetune(_mlp(), [], _shift)
    with pytest.raises(ValueError, match="clean batch's shape"):
        debias_finetune(_mlp(), [torch.zeros(4, 4)], lambda b, r: b[:2], steps=1)
    with pytest.raises(ValueError, match="selects no parameter"):
        debias_finetune(_mlp(bias=False), [torch.zeros(4, 4)], _shift)


def test_unknown_module_lists_close_matches():
    net = nn.Sequential()
    net.add_module("encoder_fc", nn.Linear(2, 2))
    with pytest.raises(ValueError, match="Close matches: encoder_fc"):
        add_correction_vectors(net, ["encoder_fx"])
    with pytest.raises(ValueError, match="module_name 'nope' is not a submodule"):
        module_bias(net, "nope", torch.zeros(2, 2), torch.zeros(2, 1, 2))
    with pytest.raises(ValueError, match="cannot read the output width"):
        add_correction_vectors(nn.Sequential(nn.ReLU()), ["0"])
    with pytest.raises(ValueError, match="different lengths"):
        module_bias(net, "encoder_fc", torch.zeros(3, 2), torch.zeros(4, 2))


def test_training_restores_each_submodules_own_mode():
    # a wrapper in train mode around an eval-mode submodule with dropout: the submodule must
    # come back in eval mode (a root-level model.train(True) would switch its dropout on)
    with seeded_default_init(0):
        inner = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3)).eval()
    wrapper = nn.Sequential(inner)
    assert wrapper.training and not inner.training
    debias_finetune(wrapper, [torch.randn(8, 4)], _shift, steps=2)
    assert wrapper.training and not inner.training and not inner[1].training


def test_debias_finetune_reports_progress_and_stops_before_a_non_finite_update():
    from icml26.core import NonFiniteLossError

    net = _mlp()
    x = [torch.randn(16, 4, generator=torch.Generator().manual_seed(0))]
    seen = []
    log = debias_finetune(net, x, lambda b, rng: b + 1.0, steps=3,
                          progress=lambda *args: seen.append(args))  # fmt: skip
    assert seen == [(i + 1, 3, {"loss": loss}) for i, loss in enumerate(log.losses)]
    before = copy.deepcopy(net.state_dict())
    flags = {n: p.requires_grad for n, p in net.named_parameters()}
    with pytest.raises(NonFiniteLossError, match="debias_finetune: the loss is nan at step 0"):
        debias_finetune(net, x, lambda b, rng: b * float("nan"), p_clean=0.0, steps=3)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())  # no update
    assert {n: p.requires_grad for n, p in net.named_parameters()} == flags  # flags restored
