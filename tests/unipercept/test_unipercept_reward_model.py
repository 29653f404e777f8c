"""PerceptualReward (weighted mean / 100, monotone in the weights), the knob generator, and
TinyPercept's persistence and input checks."""

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.unipercept import (
    OPTION_VOCAB,
    GaussianKnobPolicy,
    PerceptualReward,
    TinyPercept,
    quality_from_severity,
    render_iqa_knobs,
    render_ista_knobs,
    train_knob_policy,
)

SCORES = {"IAA": 20.0, "IQA": 60.0, "ISTA": 35.0}
IMAGES = np.zeros((3, 8, 8, 3), np.float32)


class FixedRater:
    def rate(self, images, domain):
        return np.full(len(images), SCORES[domain]) + np.arange(len(images))


@pytest.mark.parametrize("weights", [{"iaa": 1, "iqa": 1, "ista": 1}, {"iqa": 2.5, "ista": 0.5}])
def test_reward_is_the_weighted_mean_over_100(weights):
    got = PerceptualReward(FixedRater(), weights)(IMAGES)
    rated = {k: SCORES[k.upper()] + np.arange(3) for k in weights}
    expected = sum(weights[k] * rated[k] for k in weights) / (100 * sum(weights.values()))
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_reward_is_monotone_in_each_weight():
    # dR/dw_k = (s_k - 100 R) / (100 sum w): raising the weight of the best-rated domain (IQA)
    # raises R, raising the worst-rated (IAA) lowers it, at every weight
    base = {"iaa": 1.0, "iqa": 1.0, "ista": 1.0}
    for k, sign in (("iqa", 1), ("iaa", -1)):
        rewards = [PerceptualReward(FixedRater(), {**base, k: w})(IMAGES) for w in (0, 1, 3, 10)]
        assert np.all(sign * np.diff(np.stack(rewards), axis=0) > 0)


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [({"iqa": -1.0}, ValueError, "weights"), ({"iqa": 0, "ista": 0}, ValueError, "all zero"),
     ({"sharpness": 1.0}, ValueError, "weights keys"), ({"iqa": "1"}, TypeError, "weights")],
)  # fmt: skip
def test_bad_weights(weights, error, match):
    with pytest.raises(error, match=match):
        PerceptualReward(FixedRater(), weights)


def test_bad_model_and_images():
    with pytest.raises(TypeError, match="model"):
        PerceptualReward(object())
    with pytest.raises(ValueError, match="images"):
        PerceptualReward(FixedRater())(np.zeros((8, 8, 3), np.float32))
    with pytest.raises(TypeError, match="images"):
        PerceptualReward(FixedRater())(np.zeros((1, 8, 8, 3), np.uint8))


def test_gaussian_policy_logprob_matches_scipy():
    policy = GaussianKnobPolicy(3, init_mean=(0.5, -1.0, 2.0), init_std=0.7, seed=0)
    actions, logp = policy.sample(2, 5)
    expected = stats.norm(loc=[0.5, -1.0, 2.0], scale=0.7).logpdf(actions.numpy()).sum(-1)
    np.testing.assert_allclose(logp.numpy(), expected, rtol=1e-12)
    again, _ = GaussianKnobPolicy(3, init_mean=(0.5, -1.0, 2.0), init_std=0.7, seed=0).sample(2, 5)
    assert torch.equal(actions, again)  # seeded


def test_rendered_truth_is_the_closed_form():
    crop = np.random.default_rng(0).uniform(0.2, 0.8, (16, 16, 3)).astype(np.float32)
    knobs = np.array([[0.0, 0.0, 0.0], [-50.0, -50.0, -50.0], [2.0, -1.0, 0.5]])
    images, truth = render_iqa_knobs(knobs, [crop], seed=0)
    s = 1 / (1 + np.exp(-knobs))
    expected = [quality_from_severity(dict(zip(("blur", "noise", "jpeg"), row, strict=True)))
                for row in s]  # fmt: skip
    np.testing.assert_allclose(truth, expected, rtol=1e-12)
    assert images.shape == (3, 16, 16, 3)
    _, ista = render_ista_knobs(np.array([[-9.0, -9.0], [9.0, 9.0]]), 32, seed=0)
    # one weak-texture object: 1 + (1 + |arr| + 3 + |vol|) in [6, 8]; four strong ones: >= 4 + 4*6
    assert 6 <= ista[0] <= 8 and ista[1] >= 28


def test_tinypercept_round_trips_through_safetensors(tmp_path):
    model = TinyPercept(option_vocab=OPTION_VOCAB, channels=(4, 4, 8, 8), d_model=16, seed=3).eval()
    images = np.random.default_rng(0).uniform(0, 1, (4, 16, 16, 3)).astype(np.float32)
    model.save_pretrained(tmp_path)
    loaded = TinyPercept.from_pretrained(tmp_path).eval()
    np.testing.assert_array_equal(model.rate(images, "IQA"), loaded.rate(images, "IQA"))
    with pytest.raises(FileNotFoundError):
        TinyPercept.from_pretrained(tmp_path / "nowhere")


def test_tinypercept_bad_input():
    model = TinyPercept(option_vocab=("a", "b"), channels=(4, 4, 4, 4), d_model=8)
    with pytest.raises(ValueError, match="images"):
        model.rate(np.zeros((16, 16, 3), np.float32), "IQA")
    with pytest.raises(TypeError, match="images"):
        model.rate(np.zeros((1, 16, 16, 3), np.uint8), "IQA")
    with pytest.raises(ValueError, match="domain"):
        model.rate(np.zeros((1, 16, 16, 3), np.float32), "AES")
    with pytest.raises(TypeError, match="option_vocab"):
        TinyPercept(option_vocab="abc")
    with pytest.raises(ValueError, match="channels"):
        TinyPercept(option_vocab=("a",), channels=(4, 4))


def _closeness_to(crop):
    """An oracle IQA reward: 1 - mean |image - clean crop| (higher for milder degradations)."""

    def reward(images):
        return 1.0 - np.abs(images - crop[None]).mean(axis=(1, 2, 3))

    return reward


def test_knob_generator_learns_to_raise_an_oracle_reward_and_the_truth():
    crop = np.random.default_rng(0).uniform(0.2, 0.8, (16, 16, 3)).astype(np.float32)
    policy = GaussianKnobPolicy(3, init_mean=(0.0, 0.0, 0.0), seed=0)
    seen = []
    history = train_knob_policy(
        policy, _closeness_to(crop), "iqa", steps=40, queries=2, n=8, lr=0.1, crops=[crop],
        seed=0, progress=lambda done, total, metrics: seen.append(done),
    )  # fmt: skip
    assert history.reward.shape == history.truth.shape == (40, 16)
    assert seen == list(range(1, 41))
    # the truth g = 100 prod_k (1 - c_k s_k) of the images it rendered, step by step
    start, end = history.truth[:5].mean(), history.truth[-5:].mean()
    assert end > start + 5  # 40 Adam steps of lr 0.1 move every severity logit down by ~2-4
    assert float(policy.mean.detach().max()) < 0.0


def test_knob_generator_is_reproducible_under_a_seed():
    def run():
        policy = GaussianKnobPolicy(2, init_mean=(-1.5, -1.5), seed=3)
        return train_knob_policy(
            policy, lambda images: images.std(axis=(1, 2, 3)), "ista", steps=2, queries=2, n=4,
            size=16, seed=1,
        )  # fmt: skip

    a, b = run(), run()
    np.testing.assert_array_equal(a.reward, b.reward)
    np.testing.assert_array_equal(a.truth, b.truth)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"domain": "iqa"}, ValueError, "needs the clean crops"),
        ({"domain": "ista", "n_knobs": 3}, ValueError, "needs 2 knobs"),
        ({"domain": "ista", "reward": "high"}, TypeError, "reward must be callable"),
        ({"domain": "aes"}, ValueError, "domain must be one of"),
        ({"domain": "ista", "steps": 0}, ValueError, "steps must be an integer"),
        ({"domain": "ista", "bad_reward": True}, ValueError, "reward must return 8 scores"),
    ],
)
def test_knob_generator_bad_input(kwargs, error, match):
    n_knobs = kwargs.pop("n_knobs", 3 if kwargs["domain"] == "iqa" else 2)
    policy = GaussianKnobPolicy(n_knobs, seed=0)
    if kwargs.pop("bad_reward", False):
        kwargs["reward"] = lambda images: np.zeros(3)
    reward = kwargs.pop("reward", lambda images: images.mean(axis=(1, 2, 3)))
    kwargs.setdefault("steps", 1)
    with pytest.raises(error, match=match):
        train_knob_policy(policy, reward, queries=2, n=4, size=16, **kwargs)
