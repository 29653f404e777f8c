"""A small "generator" trained with GRPO on a perceptual reward (spec §5 E5, stand-in for §2.6).

UniPercept (arXiv:2512.21675) §5 fine-tunes FLUX.1-dev with Flow-GRPO using UniPercept's ratings
as the reward. The stand-in generator is a diagonal Gaussian policy over a few rendering knobs
a in R^k; a rendered image has a ground truth known by construction, so one can check that
raising the reward raises the truth (no reward hacking):

The policy is trained by GRPO (no KL term) on the reward of the images its knobs render
(:func:`train_knob_policy`).

* IQA: s_k = sigmoid(a_k) are the severities of blur, noise and JPEG applied to a clean crop;
  truth = g = 100 prod_k (1 - c_k s_k).
* ISTA: n = 1 + floor(4 sigmoid(a_1)) components (at most 4) whose textures come from the weak,
  medium or strong tier floor(3 sigmoid(a_2)); truth = ista_score of the scene's annotation.

Deviations: the spec suggests restoration knobs (TV-denoise weight, unsharp amount) on degraded
crops; their true quality has no closed form, so the knobs here set the degradations directly.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import torch
from torch import nn

from icml26.core.progress import Progress, progress_reporter
from icml26.core.validation import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
    torch_generator,
)
from icml26.unipercept.degradations import degrade_many, quality_from_severity
from icml26.unipercept.grpo import grpo_step
from icml26.unipercept.ista import TEXTURE_WEIGHTS, ista_score
from icml26.unipercept.items import check_image, check_sequence
from icml26.unipercept.scenes import PROCEDURAL_MORPHOLOGIES, render_scene, sample_scene

__all__ = [
    "IQA_KNOBS",
    "GaussianKnobPolicy",
    "KnobHistory",
    "iqa_support_share",
    "render_iqa_knobs",
    "render_ista_knobs",
    "train_knob_policy",
]

IQA_KNOBS: Final = ("blur", "noise", "jpeg")
MAX_DRAWS: Final = 1_000_000  # largest batch * n one sample() call draws
_TIERS: Final = tuple(
    tuple(m for m in PROCEDURAL_MORPHOLOGIES if TEXTURE_WEIGHTS.get(m) == w) for w in (1, 2, 3)
)


class GaussianKnobPolicy(nn.Module):
    """pi(a) = N(mean, diag(exp(log_std))^2) over ``n_knobs`` knobs, the same for every query.

    Implements the :class:`~icml26.unipercept.grpo.Policy` protocol: ``batch`` is the number of
    queries (groups); actions are (B, n, k), log-probabilities (B, n).

    Examples
    --------
    >>> policy = GaussianKnobPolicy(2, init_mean=(0.0, 1.0), seed=0)
    >>> actions, logp = policy.sample(3, 4)
    >>> tuple(actions.shape), tuple(logp.shape)
    ((3, 4, 2), (3, 4))
    """

    def __init__(
        self, n_knobs: int, init_mean: Sequence[float] | float = 0.0, init_std: float = 0.5,
        seed: Seed = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        n_knobs = check_positive_int("n_knobs", n_knobs, owner="GaussianKnobPolicy", maximum=64)
        try:
            mean = np.broadcast_to(np.asarray(init_mean, dtype=float), (n_knobs,))
        except (TypeError, ValueError):
            raise ValueError(
                "GaussianKnobPolicy: init_mean must be a float or n_knobs floats."
            ) from None
        if not np.all(np.isfinite(mean)):
            raise ValueError("GaussianKnobPolicy: init_mean must be finite.")
        if not (isinstance(init_std, int | float) and 0 < init_std < 1e3):
            raise ValueError(
                f"GaussianKnobPolicy: init_std must be in (0, 1000); got {init_std!r}."
            )
        self.mean = nn.Parameter(torch.tensor(mean, dtype=torch.float64))
        self.log_std = nn.Parameter(torch.full((n_knobs,), math.log(init_std), dtype=torch.float64))
        try:
            self.generator = torch_generator(seed)
        except TypeError:
            raise TypeError(
                "GaussianKnobPolicy: seed must be an int, a Generator or None."
            ) from None

    def _queries(self, batch: Any) -> int:
        if isinstance(batch, bool) or not isinstance(batch, int):
            raise TypeError("GaussianKnobPolicy: batch must be the number of queries (int).")
        return check_positive_int("batch", batch, owner="GaussianKnobPolicy", maximum=65_536)

    def sample(self, batch: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, n, k) knob draws and their log-probabilities (B, n), no gradient."""
        b = self._queries(batch)
        n = check_positive_int("n", n, owner="GaussianKnobPolicy", maximum=4096)
        if b * n > MAX_DRAWS:
            raise ValueError(
                f"GaussianKnobPolicy: batch * n must be at most {MAX_DRAWS}; got {b * n}."
            )
        with torch.no_grad():
            noise = torch.randn(
                b, n, self.mean.numel(), generator=self.generator, dtype=torch.float64
            )
            actions = self.mean + self.log_std.exp() * noise
            return actions, self.logprob(batch, actions)

    def logprob(self, batch: int, actions: torch.Tensor) -> torch.Tensor:
        """log N(actions; mean, std^2) summed over knobs, (B, n)."""
        b = self._queries(batch)
        k = self.mean.numel()
        if not isinstance(actions, torch.Tensor) or not actions.is_floating_point():
            raise TypeError("GaussianKnobPolicy.logprob: actions must be a float tensor.")
        if actions.ndim != 3 or actions.shape[0] != b or actions.shape[2] != k:
            raise ValueError(f"GaussianKnobPolicy.logprob: actions must have shape ({b}, n, {k}).")
        if not bool(torch.isfinite(actions).all()):
            raise ValueError("GaussianKnobPolicy.logprob: actions must be finite.")
        actions = actions.to(self.mean.dtype)
        dist = torch.distributions.Normal(self.mean, self.log_std.exp(), validate_args=False)
        return dist.log_prob(actions).sum(dim=-1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def iqa_support_share(
    policy: GaussianKnobPolicy, *, visible: float = 0.05, max_kinds: int = 2
) -> float:
    """Probability that an IQA render of ``policy`` shows at most ``max_kinds`` degradations.

    A degradation counts as shown when its severity ``sigmoid(a_k)`` exceeds ``visible`` (below
    0.05 it is invisible at 32 px, the bound of PerceptToy's "Slight" level). PerceptToy's
    IQA-VR images carry 0–2 degradations, so renders with more lie outside the rater's training
    support. Exact for the diagonal Gaussian: the knobs are independent, and the count of shown
    degradations is Poisson-binomial.

    Examples
    --------
    >>> round(iqa_support_share(GaussianKnobPolicy(3, init_mean=0.0)), 6)  # all three shown
    0.0
    >>> round(iqa_support_share(GaussianKnobPolicy(3, init_mean=(0.0, 0.0, -9.0))), 3)
    1.0
    """
    from scipy.stats import norm

    owner = "iqa_support_share"
    if not isinstance(policy, GaussianKnobPolicy):
        raise TypeError(f"{owner}: policy must be a GaussianKnobPolicy; got {type(policy)}.")
    visible = check_in_interval(
        "visible", visible, low=0.0, high=1.0, closed="neither", owner=owner
    )
    max_kinds = check_positive_int("max_kinds", max_kinds, owner=owner, minimum=0, maximum=64)
    with torch.no_grad():
        mean = policy.mean.detach().cpu().numpy()
        std = policy.log_std.exp().detach().cpu().numpy()
    shown = norm.sf((math.log(visible / (1.0 - visible)) - mean) / std)  # P(sigmoid(a_k) > v)
    count = np.zeros(len(shown) + 1)  # Poisson-binomial distribution of the shown count
    count[0] = 1.0
    for p in shown:
        count[1:] = count[1:] * (1 - p) + count[:-1] * p
        count[0] *= 1 - p
    return float(np.clip(count[: max_kinds + 1].sum(), 0.0, 1.0))


def render_iqa_knobs(
    knobs: np.ndarray, crops: Sequence[np.ndarray], seed: Seed = None
) -> tuple[np.ndarray, np.ndarray]:
    """Images and true quality for (m, 3) knobs: crop i % len(crops) degraded by sigmoid(knobs)."""
    k = check_array("knobs", knobs, owner="render_iqa_knobs", ndim=2)
    if k.shape[1] != len(IQA_KNOBS):
        raise ValueError(f"render_iqa_knobs: knobs must be an (m, 3) array; got {k.shape}.")
    crops = check_sequence("crops", crops, "render_iqa_knobs", np.ndarray)
    crops = [check_image("crops", c, "render_iqa_knobs") for c in crops]
    rng = numpy_generator(seed)
    severities = _sigmoid(k)
    images, truth = [], []
    for i, s in enumerate(severities):
        sev = {kind: float(v) for kind, v in zip(IQA_KNOBS, s, strict=True)}
        images.append(degrade_many(crops[i % len(crops)], sev, rng))
        truth.append(quality_from_severity(sev))
    if not images:
        return np.zeros((0, *crops[0].shape), np.float32), np.zeros(0)
    return np.stack(images), np.asarray(truth)


def render_ista_knobs(
    knobs: np.ndarray, size: int, seed: Seed = None, split: str = "train"
) -> tuple[np.ndarray, np.ndarray]:
    """Images and true ISTA score for (m, 2) knobs (number of components, texture tier)."""
    k = check_array("knobs", knobs, owner="render_ista_knobs", ndim=2)
    if k.shape[1] != 2:
        raise ValueError(f"render_ista_knobs: knobs must be an (m, 2) array; got {k.shape}.")
    check_one_of("split", split, ("train", "val", "test"), owner="render_ista_knobs")
    size = check_positive_int("size", size, owner="render_ista_knobs", minimum=16, maximum=128)
    rng = numpy_generator(seed)
    images, truth = [], []
    for a1, a2 in k:
        n = min(4, 1 + int(4 * _sigmoid(a1)))
        tier = _TIERS[min(2, int(3 * _sigmoid(a2)))]
        scene = sample_scene(rng, n, tier)
        images.append(render_scene(scene, size, rng, split))
        truth.append(float(ista_score(scene.annotation())))
    if not images:
        return np.zeros((0, size, size, 3), np.float32), np.zeros(0)
    return np.stack(images), np.asarray(truth)


@dataclass(frozen=True)
class KnobHistory:
    """What a :func:`train_knob_policy` run rendered: per step, every image's reward and truth."""

    reward: np.ndarray  # (steps, queries * n) reward of each rendered image
    truth: np.ndarray  # (steps, queries * n) its ground truth (quality g or ISTA score)


def train_knob_policy(
    policy: GaussianKnobPolicy,
    reward: Callable[[np.ndarray], np.ndarray],
    domain: Literal["iqa", "ista"],
    *,
    steps: int,
    queries: int = 4,
    n: int = 8,
    lr: float = 0.05,
    crops: Sequence[np.ndarray] | None = None,
    size: int = 48,
    split: Literal["train", "val", "test"] = "train",
    seed: Seed = None,
    progress: Progress = None,
) -> KnobHistory:
    """Train the generator ``policy`` with GRPO on ``reward(images)`` (spec §5 E5, beta = 0).

    Each step draws ``queries`` groups of ``n`` knob vectors, renders them
    (:func:`render_iqa_knobs` on ``crops`` or :func:`render_ista_knobs` at ``size``), rewards the
    images and takes one :func:`~icml26.unipercept.grpo_step` with Adam. The reference policy
    is a frozen copy of the initial one; with beta = 0 it does not enter the loss.

    Parameters
    ----------
    policy
        The generator, trained in place (3 knobs for ``"iqa"``, 2 for ``"ista"``).
    reward
        ``reward(images) -> (m,)`` scores of (m, H, W, 3) images, e.g. a
        :class:`~icml26.unipercept.PerceptualReward`.
    domain
        ``"iqa"`` (degradation knobs on clean crops) or ``"ista"`` (scene knobs).
    steps, queries, n, lr
        GRPO updates, groups per update, group size, Adam learning rate.
    crops
        The clean crops the IQA knobs degrade (required for ``"iqa"``).
    size, split
        Side and texture split of the ISTA scenes.
    seed
        Seed or generator of the rendering noise.
    progress
        ``None``/``False``, ``True`` or ``progress(done, total, metrics)`` after every update.

    Returns
    -------
    KnobHistory
        Rewards and ground truths of every rendered image, (steps, queries * n) each.

    Examples
    --------
    >>> policy = GaussianKnobPolicy(2, init_mean=(-1.5, -1.5), seed=0)
    >>> def more_texture(images):
    ...     return images.std(axis=(1, 2, 3))
    >>> history = train_knob_policy(policy, more_texture, "ista", steps=2, queries=2, n=4,
    ...                             size=16, seed=0)
    >>> history.reward.shape, history.truth.shape
    ((2, 8), (2, 8))
    """
    owner = "train_knob_policy"
    if not isinstance(policy, GaussianKnobPolicy):
        raise TypeError(f"{owner}: policy must be a GaussianKnobPolicy; got {type(policy)}.")
    if not callable(reward):
        raise TypeError(f"{owner}: reward must be callable as reward(images) -> (m,) scores.")
    check_one_of("domain", domain, ("iqa", "ista"), owner=owner)
    knobs_needed = len(IQA_KNOBS) if domain == "iqa" else 2
    if policy.mean.numel() != knobs_needed:
        raise ValueError(
            f"{owner}: a {domain!r} policy needs {knobs_needed} knobs; got {policy.mean.numel()}."
        )
    steps = check_positive_int("steps", steps, owner=owner, maximum=1_000_000)
    queries = check_positive_int("queries", queries, owner=owner, maximum=65_536)
    n = check_positive_int("n", n, owner=owner, minimum=2, maximum=4096)
    lr = check_in_interval("lr", lr, low=0.0, high=10.0, closed="right", owner=owner)
    if domain == "iqa":
        if crops is None:
            raise ValueError(f"{owner}: domain 'iqa' needs the clean crops to degrade.")
        crops = check_sequence("crops", crops, owner, np.ndarray)
    else:
        size = check_positive_int("size", size, owner=owner, minimum=16, maximum=128)
        check_one_of("split", split, ("train", "val", "test"), owner=owner)
    rng = numpy_generator(seed)
    frozen = copy.deepcopy(policy)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    rewards: list[np.ndarray] = []
    truths: list[np.ndarray] = []

    def reward_fn(batch: int, actions: torch.Tensor) -> torch.Tensor:
        knobs = actions.reshape(-1, actions.shape[-1]).numpy()  # (queries * n, k)
        if domain == "iqa":
            images, truth = render_iqa_knobs(knobs, crops, rng)
        else:
            images, truth = render_ista_knobs(knobs, size, rng, split=split)
        scores = np.asarray(reward(images), dtype=np.float64)
        if scores.shape != (len(images),):
            raise ValueError(
                f"{owner}: reward must return {len(images)} scores; got shape {scores.shape}."
            )
        rewards.append(scores)
        truths.append(np.asarray(truth, dtype=np.float64))
        return torch.as_tensor(scores, dtype=torch.float64).reshape(actions.shape[:2])

    with progress_reporter(progress, steps, "generator GRPO") as report:
        for step in range(steps):
            stats = grpo_step(
                policy, frozen, queries, reward_fn, n=n, beta=0.0, optimizer=optimizer
            )
            report(step + 1, reward=stats.reward_mean)
    return KnobHistory(reward=np.stack(rewards), truth=np.stack(truths))
