"""Core's shared pieces: the warm-up + cosine schedule, seeded init, strict weight loading."""

import itertools
import math

import pytest
import torch
from torch import nn

from icml26.core import (
    StateDictMismatchError,
    check_array,
    check_tensor,
    load_state_dict_strict,
    normal_init_,
    seeded_default_init,
    warmup_cosine_lr,
)


def test_warmup_cosine_closed_form():
    lr = [
        warmup_cosine_lr(t, total_steps=11, peak_lr=2.0, warmup_steps=1, final_lr=0.2)
        for t in range(11)
    ]
    assert lr[0] == 2.0 and lr[-1] == pytest.approx(0.2, abs=1e-15)
    # t = 4 is a third of the decay (u = 3/9): cos(pi/3) = 1/2, so lr = 0.2 + 1.8 * 3/4 = 1.55
    assert lr[4] == pytest.approx(1.55, rel=1e-14)
    assert all(a >= b for a, b in itertools.pairwise(lr[1:]))  # non-increasing after warm-up
    warm = [warmup_cosine_lr(t, total_steps=100, peak_lr=1.0, warmup_steps=4) for t in range(4)]
    assert warm == [0.25, 0.5, 0.75, 1.0]
    assert warmup_cosine_lr(500, total_steps=100, peak_lr=1.0, warmup_steps=4) == 0.0  # clipped
    with pytest.raises(ValueError, match="final_lr must be in"):
        warmup_cosine_lr(0, total_steps=10, peak_lr=1.0, warmup_steps=0, final_lr=2.0)


def test_seeded_init_is_reproducible_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    with seeded_default_init(3):
        a = nn.Linear(4, 4)
    with seeded_default_init(3):
        b = nn.Linear(4, 4)
    with seeded_default_init(4):
        c = nn.Linear(4, 4)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.weight, b.weight) and not torch.equal(a.weight, c.weight)
    net = normal_init_(nn.Sequential(nn.Linear(3, 5), nn.LayerNorm(5)), std=0.1, seed=0)
    gen = torch.Generator().manual_seed(0)
    assert torch.equal(net[0].weight, torch.randn(5, 3, generator=gen) * 0.1)
    assert torch.equal(net[1].weight, torch.ones(5))  # 1-D parameters untouched


def test_strict_loading_names_every_problem():
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    state = dict(model.state_dict())
    state.pop("1.bias")
    state["0.weight"] = torch.zeros(4, 2)
    state["extra.weight"] = torch.zeros(1)
    with pytest.raises(StateDictMismatchError) as err:
        load_state_dict_strict(model, state, owner="Demo.from_pretrained")
    text = str(err.value)
    assert text.startswith("Demo.from_pretrained: checkpoint does not match the model")
    assert "missing keys ['1.bias']" in text and "unexpected keys ['extra.weight']" in text
    assert "0.weight: checkpoint (4, 2) vs model (3, 2)" in text
    twin = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    load_state_dict_strict(twin, model.state_dict())
    assert torch.equal(twin[0].weight, model[0].weight)


def test_array_and_tensor_validators():
    assert check_array("x", [[1, 2], [3, 4]], shape=(None, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match=r"f: x must have shape \(any, 3\); got \(2, 2\)"):
        check_array("x", [[1, 2], [3, 4]], shape=(None, 3), owner="f")
    with pytest.raises(ValueError, match="x must be finite; got 1 NaN/inf entries"):
        check_array("x", [1.0, float("nan")])
    with pytest.raises(TypeError, match="x must be an array of float64; got str"):
        check_array("x", "abc")
    with pytest.raises(ValueError, match="x must be 1-D; got shape"):
        check_array("x", [[1.0]], ndim=1)
    assert check_tensor("t", torch.zeros(3), ndim=1).shape == (3,)
    with pytest.raises(TypeError, match=r"t must be a torch\.Tensor; got list"):
        check_tensor("t", [1.0])
    with pytest.raises(
        TypeError, match=r"t must be a floating-point tensor; got dtype torch\.int64"
    ):
        check_tensor("t", torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="t must be finite"):
        check_tensor("t", torch.tensor([math.inf]), finite=True)


def test_seeded_default_init_works_under_a_meta_device_block():
    with torch.device("meta"), seeded_default_init(1):
        layer = nn.Linear(3, 2)
    assert layer.weight.is_meta
