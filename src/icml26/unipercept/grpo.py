"""GRPO over categorical next-token policies (spec §2.5, UniPercept's Task-Aligned RL stage).

Cao et al., UniPercept (arXiv:2512.21675), Eq. 3. For each query q draw a group of n responses
o_1..o_n from pi_old (the current policy, no gradient), reward them and build group-normalised
advantages A_i = (r_i - mean_j r_j) / (std_j r_j + 1e-6). With rho_i = pi_theta(o_i|q) /
pi_old(o_i|q) and token-level averaging over all sampled tokens,

    J = mean_i [ min(rho_i A_i, clip(rho_i, 1 - eps, 1 + eps) A_i) ] - beta * KL(pi_theta || pi_ref)

where KL is DeepSeekMath's per-token estimator exp(l_ref - l) - (l_ref - l) - 1 (>= 0, exactly
0 when the two policies agree) against the frozen DAPT model pi_ref. A policy is anything with
``sample(batch, n) -> (actions, logp)`` and ``logprob(batch, actions) -> logp`` (the
:class:`Policy` protocol), so the same step drives TinyPercept's heads or a wrapped HF model.

Deviations: the paper's Eq. 3 prints r_i in front of the min; as the spec says, that is notation
and the advantage is built from r_i. Each response is one token (a score token or an option
letter), so 1 / sum_i |o_i| is 1 / n per query. A rating response s_i is rewarded with p_i = s_i
(*inferred*); evaluation uses the Token-As-Score expectation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import torch

from icml26.core.training import optimizer_step
from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    torch_generator,
)
from icml26.unipercept.model import PerceptBatch, TinyPercept
from icml26.unipercept.vlm import PerceptVLM

__all__ = [
    "GRPOStats",
    "PerceptPolicy",
    "Policy",
    "group_advantages",
    "grpo_loss",
    "grpo_step",
    "percept_reward_fn",
]

MAX_GROUP = 1024  # largest group size n one step draws
LOG_RATIO_CLAMP = 20.0  # exp(20) ~ 5e8: far outside any trust region, still finite


@runtime_checkable
class Policy(Protocol):
    """What GRPO needs from a policy over responses to a batch of queries."""

    def sample(self, batch: Any, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw ``n`` responses per query: actions (B, n) and their log-probabilities (B, n)."""
        ...

    def logprob(self, batch: Any, actions: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, n) of ``actions`` under the policy (differentiable)."""
        ...


class PerceptPolicy:
    """TinyPercept's heads or PerceptVLM's ``lm_head`` as a :class:`Policy` (one token per
    response).

    Parameters
    ----------
    model
        The model; its (B, 101) masked logits define the categorical policy of each row.
    seed
        Seed of the sampling generator.

    Examples
    --------
    >>> import numpy as np
    >>> from icml26.unipercept.items import VRItem
    >>> from icml26.unipercept.model import encode_items
    >>> model = TinyPercept(option_vocab=("Yes", "No"), channels=(4, 4, 4, 4), d_model=8).eval()
    >>> batch = encode_items([VRItem(np.zeros((8, 8, 3), np.float32), "IQA", 50.0)], model)
    >>> actions, logp = PerceptPolicy(model, seed=0).sample(batch, 8)
    >>> actions.shape, bool((logp <= 0).all())
    (torch.Size([1, 8]), True)
    """

    def __init__(self, model: TinyPercept | PerceptVLM, seed: Seed = 0) -> None:
        if not isinstance(model, TinyPercept | PerceptVLM):
            raise TypeError(
                "PerceptPolicy: model must be a TinyPercept or PerceptVLM; "
                f"got {type(model).__name__}."
            )
        self.model = model
        self.generator = torch_generator(seed)

    def log_probs(self, batch: PerceptBatch) -> torch.Tensor:
        """(B, 101) log pi(a | q); invalid actions get -inf."""
        if not isinstance(batch, PerceptBatch):
            raise TypeError(
                f"PerceptPolicy: batch must be a PerceptBatch; got {type(batch).__name__}."
            )
        return torch.log_softmax(self.model(batch), dim=-1)

    def sample(self, batch: PerceptBatch, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw ``n`` one-token responses per row from pi_old = the current policy (no grad)."""
        n = check_positive_int("n", n, owner="PerceptPolicy.sample", maximum=MAX_GROUP)
        with torch.no_grad():
            logp_all = self.log_probs(batch)  # (B, 101)
            actions = torch.multinomial(
                logp_all.exp(), n, replacement=True, generator=self.generator
            )
            return actions, logp_all.gather(1, actions)

    def logprob(self, batch: PerceptBatch, actions: torch.Tensor) -> torch.Tensor:
        """log pi_theta(actions | q), (B, n), with gradient."""
        logp_all = self.log_probs(batch)
        if (
            not isinstance(actions, torch.Tensor)
            or actions.ndim != 2
            or actions.is_floating_point()
        ):
            raise TypeError("PerceptPolicy.logprob: actions must be a (B, n) integer tensor.")
        if actions.shape[0] != len(batch) or (
            actions.numel() and (int(actions.min()) < 0 or int(actions.max()) > 100)
        ):
            raise ValueError(
                "PerceptPolicy.logprob: actions must be (B, n) token indices in [0, 100]."
            )
        return logp_all.gather(1, actions.long())


def group_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """A_i = (r_i - mean_j r_j) / (std_j r_j + eps) within each group (row) of ``rewards``.

    ``std`` is the unbiased sample standard deviation (as in TRL); a group whose rewards are all
    equal gets all-zero advantages (hence ``eps > 0``).

    Examples
    --------
    >>> group_advantages(torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5]]))[1].tolist()
    [0.0, 0.0, 0.0, 0.0]
    """
    if not isinstance(rewards, torch.Tensor) or rewards.ndim != 2 or rewards.shape[1] < 2:
        raise ValueError("group_advantages: rewards must be a (B, n) tensor with n >= 2.")
    if not rewards.is_floating_point():
        rewards = rewards.double()
    if not torch.isfinite(rewards).all():
        raise ValueError("group_advantages: rewards must be finite.")
    eps = check_in_interval("eps", eps, low=0.0, closed="neither", owner="group_advantages")
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    return centred / (rewards.std(dim=1, keepdim=True) + eps)


def grpo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    logp_ref: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    beta: float = 1e-3,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The negated GRPO objective (to minimise) and diagnostics, all tensors (B, n).

    loss = -mean[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] + beta * mean[KL_k3],
    rho = exp(logp - logp_old), KL_k3 = exp(logp_ref - logp) - (logp_ref - logp) - 1.
    """
    tensors = {"logp": logp, "logp_old": logp_old, "logp_ref": logp_ref, "advantages": advantages}
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise TypeError(f"grpo_loss: {name} must be a floating-point torch.Tensor.")
        if value.shape != logp.shape:
            raise ValueError(f"grpo_loss: {name} must have the shape of logp {tuple(logp.shape)}.")
    if logp.numel() == 0:
        raise ValueError("grpo_loss: logp must hold at least one response.")
    clip_eps = check_in_interval(
        "clip_eps", clip_eps, low=0.0, high=1.0, closed="right", owner="grpo_loss"
    )
    beta = check_in_interval("beta", beta, low=0.0, high=1e3, owner="grpo_loss")
    # rho_{i,t}; log-ratios clamped to +-20 only so that absurd inputs stay finite (no NaN)
    ratio = torch.exp(torch.clamp(logp - logp_old, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP))
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages
    surrogate = torch.minimum(unclipped, clipped)
    log_ratio_ref = torch.clamp(logp_ref - logp, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    kl = torch.exp(log_ratio_ref) - log_ratio_ref - 1.0  # k3 estimator of KL(pi_theta || pi_ref)
    loss = -(surrogate.mean() - beta * kl.mean())  # token-level mean: one token per response
    stats = {
        "kl": float(kl.mean().detach()),
        "clip_fraction": float(((ratio - 1.0).abs() > clip_eps).float().mean()),
        "ratio_mean": float(ratio.mean().detach()),
    }
    return loss, stats


@dataclass(frozen=True)
class GRPOStats:
    """Diagnostics of one GRPO step."""

    loss: float
    reward_mean: float
    reward_std: float
    kl: float
    clip_fraction: float
    zero_advantage_groups: float  # fraction of groups whose rewards were all equal


RewardFn = Callable[[Any, torch.Tensor], torch.Tensor]


def grpo_step(
    policy: Policy,
    ref_policy: Policy,
    batch: Any,
    reward_fn: RewardFn,
    n: int = 8,
    clip_eps: float = 0.2,
    beta: float = 1e-3,
    optimizer: torch.optim.Optimizer | None = None,
    inner_steps: int = 1,
) -> GRPOStats:
    """One GRPO update (spec §2.7 steps 5–8) on a batch of queries.

    Parameters
    ----------
    policy, ref_policy
        The trained policy (pi_theta, also pi_old at sampling time) and the frozen reference.
    batch
        The queries, in the form both policies and ``reward_fn`` read.
    reward_fn
        ``reward_fn(batch, actions) -> rewards`` of shape (B, n).
    n
        Group size (>= 2).
    clip_eps, beta
        PPO clip range and KL weight.
    optimizer
        Stepped ``inner_steps`` times on the loss; ``None`` leaves the gradients of one
        backward pass in the parameters (for inspection) and steps nothing.
    inner_steps
        Optimisation passes over one sampled group (1: rho = 1, clipping inactive).

    Returns
    -------
    GRPOStats
        Loss, reward mean/std, KL estimate, clip fraction and the share of zero-advantage groups.

    Raises
    ------
    icml26.core.NonFiniteLossError
        When the loss is NaN or infinite (before the update).
    """
    for name, value in (("policy", policy), ("ref_policy", ref_policy)):
        if not isinstance(value, Policy):
            raise TypeError(
                f"grpo_step: {name} must implement sample(batch, n) and logprob(batch, actions)."
            )
    if not callable(reward_fn):
        raise TypeError("grpo_step: reward_fn must be callable as reward_fn(batch, actions).")
    n = check_positive_int("n", n, owner="grpo_step", minimum=2, maximum=MAX_GROUP)
    inner_steps = check_positive_int("inner_steps", inner_steps, owner="grpo_step", maximum=100)
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"grpo_step: optimizer must be a torch Optimizer; got {type(optimizer).__name__}."
        )
    actions, logp_old = policy.sample(batch, n)  # step 5: n responses per query from pi_old
    rewards = reward_fn(batch, actions)  # step 6
    if not isinstance(rewards, torch.Tensor) or rewards.shape != logp_old.shape:
        raise ValueError(
            f"grpo_step: reward_fn must return a tensor of shape {tuple(logp_old.shape)}."
        )
    rewards = rewards.to(logp_old.dtype)
    advantages = group_advantages(rewards)  # step 7
    with torch.no_grad():
        logp_ref = ref_policy.logprob(batch, actions)
    loss_value, stats = math.nan, {"kl": math.nan, "clip_fraction": math.nan}
    for inner in range(inner_steps if optimizer is not None else 1):
        logp = policy.logprob(batch, actions)
        loss, stats = grpo_loss(logp, logp_old, logp_ref, advantages, clip_eps, beta)
        if optimizer is None:
            loss.backward()
            loss_value = float(loss.detach())
        else:  # step 8 (a NaN/inf loss stops before the update)
            loss_value = optimizer_step(loss, optimizer, step=inner, owner="grpo_step")
    equal = (rewards.max(dim=1).values == rewards.min(dim=1).values).float().mean()
    return GRPOStats(
        loss=loss_value,
        reward_mean=float(rewards.mean()),
        reward_std=float(rewards.std(dim=1).mean()),
        kl=stats["kl"],
        clip_fraction=stats["clip_fraction"],
        zero_advantage_groups=float(equal),
    )


def percept_reward_fn(
    reward: Literal["agsr", "threshold"] = "agsr",
    sigma0: float = 8.0,
    alpha: float = 0.25,
    eps: float = 10.0,
) -> RewardFn:
    """The reward of spec §2.7 step 6 for a :class:`PerceptBatch`: VR rows AGSR (or threshold)
    of the sampled score token against the MOS, VQA rows 1[chosen option = answer].

    Examples
    --------
    >>> fn = percept_reward_fn("threshold")
    >>> callable(fn)
    True
    """
    from icml26.unipercept.rewards import agsr_reward, threshold_reward

    check_one_of("reward", reward, ("agsr", "threshold"), owner="percept_reward_fn")
    agsr_reward(50.0, 50.0, sigma0, alpha)  # validates sigma0 and alpha once
    threshold_reward(50.0, 50.0, eps)

    def reward_fn(batch: PerceptBatch, actions: torch.Tensor) -> torch.Tensor:
        pred = actions.double()
        mos = batch.mos.double()[:, None].expand_as(pred)
        e = (pred - torch.nan_to_num(mos)).abs()
        if reward == "agsr":
            sigma_dyn = sigma0 * (1.0 + alpha * e / 100.0)  # same formula as agsr_reward
            r_vr = torch.exp(-(e**2) / (2.0 * sigma_dyn**2))
        else:
            r_vr = (e < eps).double()
        r_vqa = (actions == batch.target[:, None]).double()
        return torch.where(batch.is_rating[:, None], r_vr, r_vqa).float()

    return reward_fn
