"""Training-time shuffle of the positional codes (issue 48 diagnosis): per dataset, reproducible,
the same datasets as without it, and group j really receives code r[code_order[j]]."""

import numpy as np
import pytest
import torch

from icml26.core import TrainingCheckpoint
from icml26.taco import TACOConfig, TACOModel, train_taco
from icml26.taco.prior_v3 import MixturePrior
from icml26.taco.standins import RECIPES, Recipe, train_recipe

ARCH = TACOConfig.small(emsize=16, nhead=2, nlayers=1, max_features=8)  # 4 groups of 2
PRIOR = {"n_rows": (30, 50), "n_features": (2, 8)}


def _spy(model):
    """Record the (X, code_order) of every training forward of ``model``."""
    seen = []
    forward = model.forward

    def recording(X, y_train, **kwargs):
        order = kwargs.get("code_order")
        seen.append((X.clone(), None if order is None else order.clone()))
        return forward(X, y_train, **kwargs)

    model.forward = recording
    return seen


def _train(shuffle, seed=0, steps=3, use_compressor=False, resume=None, progress=None):
    model = TACOModel(ARCH, use_compressor=use_compressor, seed=0)
    seen = _spy(model)
    history = train_taco(
        model, MixturePrior(**PRIOR), steps=steps, batch_size=3, seed=seed,
        shuffle_codes=shuffle, resume=resume, progress=progress,
    )  # fmt: skip
    return model, seen, history


def test_each_dataset_gets_its_own_permutation_reproducibly_on_the_same_data():
    _, fixed, _ = _train(False)
    _, shuffled, _ = _train(True)
    _, again, _ = _train(True)
    _, other_seed, _ = _train(True, seed=1)
    G = ARCH.max_groups
    assert all(order is None for _, order in fixed)  # the default passes no code order
    orders = torch.cat([order for _, order in shuffled])  # (steps · datasets, G)
    assert orders.shape == (9, G)
    assert torch.equal(orders.sort(dim=1).values, torch.arange(G).expand(9, G))
    assert len({tuple(row.tolist()) for row in orders}) > 1  # fresh draws, not one per run
    assert (orders != torch.arange(G)).any(dim=1).sum() >= 7  # most datasets move their codes
    assert all(torch.equal(a[1], b[1]) for a, b in zip(shuffled, again, strict=True))
    assert not all(torch.equal(a[1], b[1]) for a, b in zip(shuffled, other_seed, strict=True))
    # the permutations come from a child stream: the datasets are those of the fixed run
    assert all(
        torch.equal(a[0].nan_to_num(7.5), b[0].nan_to_num(7.5))  # missing cells are NaN
        for a, b in zip(fixed, shuffled, strict=True)
    )


def test_without_the_option_training_is_unchanged():
    plain = TACOModel(ARCH, use_compressor=False, seed=0)
    history = train_taco(plain, MixturePrior(**PRIOR), steps=3, batch_size=3, seed=0)
    default, _, explicit = _train(False)
    assert history == explicit
    assert all(
        torch.equal(a, b) for a, b in zip(plain.parameters(), default.parameters(), strict=True)
    )
    _, _, changed = _train(True)
    assert [h["loss"] for h in changed] != [h["loss"] for h in history]


def _swap_groups(X, groups):
    """X with its feature groups (pairs of columns) reordered: new group j = old groups[j]."""
    return X[..., [2 * j + i for j in groups for i in range(2)]]


@pytest.mark.parametrize("use_compressor", [False, True])
def test_group_j_receives_code_r_of_code_order_j(use_compressor):
    """Feature attention is permutation-equivariant, so only the codes tell the groups apart:
    moving the groups by sigma and giving group j code r[sigma(j)] reproduces the unshuffled
    logits exactly. The inverse permutation (the wrong direction) does not."""
    model = TACOModel(ARCH, use_compressor=use_compressor, seed=3)
    with torch.no_grad():  # leave the zero-init so that the codes matter
        for p in model.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    gen = torch.Generator().manual_seed(0)
    X, y = torch.randn(2, 60, 6, generator=gen), torch.randint(0, 3, (2, 40), generator=gen)
    sigma = [1, 2, 0, 3]  # a 3-cycle on the 3 used groups: not its own inverse
    inverse = [int(i) for i in np.argsort(sigma)]
    moved = _swap_groups(X, sigma[:3])
    reference = model(X, y, percentage=10.0)
    right = model(moved, y, percentage=10.0, code_order=torch.tensor([sigma, sigma]))
    wrong = model(moved, y, percentage=10.0, code_order=torch.tensor([inverse, inverse]))
    torch.testing.assert_close(right, reference, atol=1e-5, rtol=1e-5)
    assert (wrong - reference).abs().max() > 1e-3
    identity = model(X, y, percentage=10.0, code_order=torch.arange(4).expand(2, 4))
    torch.testing.assert_close(identity, reference, atol=1e-5, rtol=1e-5)


def test_shuffled_training_resumes_to_the_same_weights(tmp_path):
    straight, _, log = _train(True, steps=4)
    resume = TrainingCheckpoint(tmp_path / "r.pt", every=2)

    class StopError(Exception):
        pass

    def stop(done, total, metrics):
        if done == 3:
            raise StopError

    with pytest.raises(StopError):
        _train(True, steps=4, resume=resume, progress=stop)
    resumed, _, again = _train(True, steps=4, resume=resume)
    assert again == log
    assert all(
        torch.equal(a, b) for a, b in zip(straight.parameters(), resumed.parameters(), strict=True)
    )


def test_recipes_record_the_shuffle_and_the_control_differs_only_there():
    shuffled, fixed = RECIPES["pot_v3s"], RECIPES["pot_v3f"]
    assert shuffled.shuffle_codes and not fixed.shuffle_codes
    assert shuffled.init_from is None and shuffled.steps >= 2000  # from scratch
    assert {**vars(shuffled), "shuffle_codes": False} == vars(fixed)
    tiny = Recipe(use_compressor=False, steps=2, batch_size=2, prior=PRIOR, architecture=ARCH,
                  prior_class="mixture", shuffle_codes=True)  # fmt: skip
    assert train_recipe(tiny).recipe["shuffle_codes"] is True
    plain = train_recipe(
        Recipe(use_compressor=False, steps=2, batch_size=2, prior=PRIOR, architecture=ARCH)
    )
    assert "shuffle_codes" not in plain.recipe


@pytest.mark.parametrize(
    ("order", "error", "match"),
    [
        (torch.arange(4).expand(1, 4), ValueError, r"\(B, max_groups\) = \(2, 4\)"),
        (torch.tensor([[0, 0, 1, 2], [0, 1, 2, 3]]), ValueError, "permutation of range"),
        (torch.arange(4.0).expand(2, 4), TypeError, "code_order"),
        ([[0, 1, 2, 3]] * 2, TypeError, "code_order must be a torch.Tensor"),
    ],
)
def test_bad_code_orders_are_refused_by_name(order, error, match):
    X, y = torch.randn(2, 20, 6), torch.randint(0, 2, (2, 10))
    for model in (TACOModel(ARCH, seed=0), TACOModel(ARCH, use_compressor=False, seed=0)):
        with pytest.raises(error, match=match):
            model(X, y, percentage=10.0, code_order=order)
    with pytest.raises(error, match=match):
        model.predictor(X, y, code_order=order)


def test_shuffle_codes_must_be_a_bool():
    with pytest.raises(TypeError, match="shuffle_codes must be a bool"):
        train_taco(TACOModel(ARCH, seed=0), MixturePrior(**PRIOR), steps=1, shuffle_codes=1)
    with pytest.raises(TypeError, match="shuffle_codes"):
        Recipe(use_compressor=False, steps=1, shuffle_codes="yes")
