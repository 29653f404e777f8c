"""GRPO identities (spec §7): advantages, the REINFORCE limit, clipping, KL, reproducibility."""

import copy

import numpy as np
import pytest
import torch

from icml26.core import NonFiniteLossError
from icml26.unipercept import (
    OPTION_VOCAB,
    PerceptPolicy,
    TinyPercept,
    VRItem,
    encode_items,
    group_advantages,
    grpo_loss,
    grpo_step,
    make_iqa_vqa,
    make_iqa_vr,
    percept_reward_fn,
    train_dapt,
    train_grpo,
)


def tiny_model(seed=0):
    return TinyPercept(option_vocab=OPTION_VOCAB, channels=(4, 4, 8, 8), d_model=16, seed=seed)


@pytest.fixture(scope="module")
def items():
    return make_iqa_vr(12, seed=0, size=16) + make_iqa_vqa(12, seed=1, size=16)


def test_group_advantages_have_zero_mean_and_unit_std():
    rewards = torch.rand(6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    a = group_advantages(rewards)
    torch.testing.assert_close(
        a.mean(dim=1), torch.zeros(6, dtype=torch.float64), atol=1e-12, rtol=0
    )
    # std(a) = std / (std + 1e-6): 1 up to the 1e-6 stabiliser relative to std ~ 0.3
    torch.testing.assert_close(a.std(dim=1), torch.ones(6, dtype=torch.float64), atol=1e-5, rtol=0)


def test_equal_rewards_give_zero_advantages_and_zero_gradient(items):
    model = tiny_model()
    policy, ref = PerceptPolicy(model, seed=0), PerceptPolicy(copy.deepcopy(model), seed=0)
    batch = encode_items(items, model)
    model.eval()
    grpo_step(policy, ref, batch, lambda b, a: torch.ones(a.shape), n=4, beta=0.0)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.count_nonzero(g) == 0 for g in grads)


def test_ratio_one_and_beta_zero_is_reinforce_with_group_baseline():
    logits = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    actions = torch.tensor([[0, 1, 2, 3], [4, 4, 0, 1], [2, 2, 2, 3]])
    rewards = torch.tensor(
        [[1.0, 0, 0, 1], [0.5, 0.2, 0.1, 0.9], [0, 0, 1, 1]], dtype=torch.float64
    )
    logp = torch.log_softmax(logits, -1).gather(1, actions)
    adv = group_advantages(rewards)
    loss, _ = grpo_loss(logp, logp.detach(), logp.detach(), adv, clip_eps=0.2, beta=0.0)
    (grad,) = torch.autograd.grad(loss, logits)
    reinforce = -(adv * torch.log_softmax(logits, -1).gather(1, actions)).mean()
    (expected,) = torch.autograd.grad(reinforce, logits)
    torch.testing.assert_close(grad, expected, atol=1e-14, rtol=0)


def test_clipping_is_inactive_inside_the_trust_region():
    adv = torch.tensor([[1.0, -1.0, 0.5, -0.5]], dtype=torch.float64)
    old = torch.zeros(1, 4, dtype=torch.float64)
    inside = torch.log(torch.tensor([[1.1, 0.85, 1.19, 0.81]], dtype=torch.float64))
    loss, stats = grpo_loss(inside, old, inside, adv, clip_eps=0.2, beta=0.0)
    assert loss.item() == pytest.approx(-(inside.exp() * adv).mean().item(), abs=1e-15)
    assert stats["clip_fraction"] == 0.0
    outside = torch.log(torch.tensor([[1.5, 0.5, 1.5, 0.5]], dtype=torch.float64))
    loss_out, stats_out = grpo_loss(outside, old, outside, adv, clip_eps=0.2, beta=0.0)
    # min(rho A, clip(rho) A) = [min(1.5, 1.2), min(-0.5, -0.8), min(0.75, 0.6), min(-0.25, -0.4)]
    assert loss_out.item() == pytest.approx(-np.mean([1.2, -0.8, 0.6, -0.4]), abs=1e-12)
    assert stats_out["clip_fraction"] == 1.0


def test_kl_is_zero_at_equal_parameters_and_positive_otherwise(items):
    model = tiny_model()
    batch = encode_items(items, model)
    model.eval()
    policy, ref = PerceptPolicy(model, seed=1), PerceptPolicy(copy.deepcopy(model), seed=1)
    stats = grpo_step(policy, ref, batch, percept_reward_fn(), n=8)
    assert stats.kl == 0.0
    other = PerceptPolicy(tiny_model(seed=5), seed=1)
    assert grpo_step(policy, other, batch, percept_reward_fn(), n=8).kl > 0.0


def test_seeded_training_is_reproducible(items):
    def run():
        model = tiny_model(seed=3)
        train_dapt(model, items, epochs=1, batch_size=8, seed=0)
        history = train_grpo(model, None, items, steps=3, batch_size=8, seed=0)
        return [s.reward_mean for s in history], [p.detach().clone() for p in model.parameters()]

    (r1, p1), (r2, p2) = run(), run()
    assert r1 == r2
    assert all(torch.equal(a, b) for a, b in zip(p1, p2, strict=True))


def test_training_reports_progress_once_per_update(items):
    dapt_seen, grpo_seen = [], []
    model = tiny_model(seed=3)
    history = train_dapt(
        model, items, epochs=2, batch_size=10, seed=0,
        progress=lambda done, total, metrics: dapt_seen.append((done, total, set(metrics))),
    )  # fmt: skip
    # 24 items in batches of 10: 3 updates per epoch
    assert [d for d, _, _ in dapt_seen] == list(range(1, 7))
    assert {t for _, t, _ in dapt_seen} == {6} and dapt_seen[0][2] == {"loss"}
    assert len(history.epoch_loss) == 2
    train_grpo(
        model, None, items, steps=3, batch_size=8, seed=0,
        progress=lambda done, total, metrics: grpo_seen.append((done, total)),
    )  # fmt: skip
    assert grpo_seen == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(TypeError, match="progress must be"):
        train_dapt(model, items, epochs=1, progress="yes")


class NaNPolicy:
    """A one-parameter policy whose log-probabilities are NaN: the GRPO loss is NaN."""

    def __init__(self):
        self.w = torch.nn.Parameter(torch.tensor(1.0))

    def sample(self, batch, n):
        return torch.zeros(batch, n, dtype=torch.long), torch.zeros(batch, n)

    def logprob(self, batch, actions):
        return self.w * torch.full(actions.shape, float("nan"))


def test_a_nan_loss_stops_grpo_before_the_update():
    policy = NaNPolicy()
    optimizer = torch.optim.SGD([policy.w], lr=0.1)

    def reward_fn(batch, actions):
        return torch.arange(actions.numel(), dtype=torch.float32).reshape(actions.shape)

    with pytest.raises(NonFiniteLossError, match="grpo_step"):
        grpo_step(policy, NaNPolicy(), 2, reward_fn, n=4, optimizer=optimizer)
    assert float(policy.w) == 1.0 and policy.w.grad is None


def test_percept_reward_fn_matches_the_public_rewards():
    from icml26.unipercept import agsr_reward, threshold_reward

    model = tiny_model()
    vr = [VRItem(np.zeros((8, 8, 3), np.float32), "IQA", m) for m in (10.0, 55.5)]
    batch = encode_items(vr, model)
    actions = torch.tensor([[10, 20, 0], [55, 70, 100]])
    got = percept_reward_fn("agsr")(batch, actions).double().numpy()
    mos = np.array([[10.0] * 3, [55.5] * 3])
    np.testing.assert_allclose(got, agsr_reward(actions.numpy().astype(float), mos), rtol=1e-6)
    got_thr = percept_reward_fn("threshold")(batch, actions).numpy()
    np.testing.assert_array_equal(got_thr, threshold_reward(actions.numpy().astype(float), mos))


def test_bad_input(items):
    model = tiny_model()
    batch = encode_items(items, model)
    policy = PerceptPolicy(model)
    with pytest.raises(ValueError, match="n must be an integer in"):
        grpo_step(policy, policy, batch, percept_reward_fn(), n=1)
    with pytest.raises(TypeError, match="ref_policy"):
        grpo_step(policy, object(), batch, percept_reward_fn())
    with pytest.raises(ValueError, match="rewards must be a"):
        group_advantages(torch.zeros(3, 1))
    with pytest.raises(ValueError, match="reward must be one of"):
        percept_reward_fn("binary")
    with pytest.raises(TypeError, match="model must be a TinyPercept"):
        PerceptPolicy("not a model")
