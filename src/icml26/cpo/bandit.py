"""Tabular "bandit" preference problems on which DPO converges pathologically (spec §5.1).

Each prompt has ``K`` single-token responses with a true reward ``r[x, y]``. On a random fraction
of "violated" prompts the reference policy is anti-aligned with the reward, so the RLHF optimum
``δ_ref + Δr/β`` can be negative and DPO can lower its loss while the policy keeps preferring the
dispreferred response. The policy is a free logit table ``θ[x, y]`` initialised at the reference,
so ``δ_θ = θ_w - θ_l`` (the log-normaliser cancels) and every objective here is convex in ``θ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch

from icml26.core import (
    Progress,
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    optimizer_step,
    progress_reporter,
)
from icml26.cpo.diagnostics import _check_ids, frac_in_undesirable, policy_preference_accuracy
from icml26.cpo.losses import (
    PrefLossOutput,
    constrained_po_loss,
    dpo_loss,
    ipo_loss,
    simpo_loss,
)

__all__ = [
    "TABULAR_METHODS",
    "BanditProblem",
    "make_bandit_problem",
    "policy_metrics",
    "train_tabular",
    "true_pairs",
]

TABULAR_METHODS = ("dpo", "smooth", "clip", "easy", "ipo", "simpo")
U_ATOL = 1e-4
MAX_PROMPTS = 10**6  # make_bandit_problem: prompts of a table
MAX_RESPONSES = 1024  # make_bandit_problem: responses per prompt
MAX_ROWS = (
    10**7
)  # make_bandit_problem: preference rows, n_prompts · n_responses · (n_responses - 1)
MAX_STEPS = 10**6  # train_tabular: Adam steps


@dataclass(frozen=True)
class BanditProblem:
    """A tabular preference problem (float64 tensors).

    Attributes
    ----------
    reward
        ``(prompts, responses)`` true rewards.
    ref_logits
        ``(prompts, responses)`` reference logits; ``π_ref = softmax(ref_logits)``.
    violated
        ``(prompts,)`` whether the reference was made anti-aligned with the reward.
    prompt, chosen, rejected
        ``(rows,)`` preference rows: prompt index and the chosen / rejected response.
    weight
        ``(rows,)`` row weights (annotation counts, or Bradley–Terry probabilities).
    """

    reward: torch.Tensor
    ref_logits: torch.Tensor
    violated: torch.Tensor
    prompt: torch.Tensor
    chosen: torch.Tensor
    rejected: torch.Tensor
    weight: torch.Tensor

    def __post_init__(self) -> None:
        owner = "BanditProblem"
        check_tensor("reward", self.reward, owner=owner, ndim=2, finite=True)
        n_prompts, n_responses = self.reward.shape
        if n_prompts < 1 or n_responses < 2:
            raise ValueError(
                f"{owner}: reward must have at least 1 prompt and 2 responses; "
                f"got shape {tuple(self.reward.shape)}."
            )
        check_tensor("ref_logits", self.ref_logits, owner=owner, shape=self.reward.shape)
        check_tensor("violated", self.violated, owner=owner, shape=(n_prompts,), floating=False)
        if self.violated.dtype != torch.bool:
            raise TypeError(f"{owner}: violated must be a bool tensor; got {self.violated.dtype}.")
        rows = _check_ids(owner, "prompt", self.prompt, n_prompts, (None,)).numel()
        _check_ids(owner, "chosen", self.chosen, n_responses, (rows,))
        _check_ids(owner, "rejected", self.rejected, n_responses, (rows,))
        check_tensor("weight", self.weight, owner=owner, shape=(rows,), finite=True)
        if rows == 0 or bool((self.weight < 0).any()) or float(self.weight.sum()) <= 0:
            raise ValueError(
                f"{owner}: weight must be non-negative and not all zero over at least one row."
            )


def _check_problem(owner: str, problem: object) -> BanditProblem:
    if not isinstance(problem, BanditProblem):
        raise TypeError(f"{owner}: problem must be a BanditProblem; got {type(problem).__name__}.")
    return problem


def make_bandit_problem(
    n_prompts: int = 300,
    n_responses: int = 6,
    violated_frac: float = 0.4,
    ref_strength: float = 3.0,
    n_annotations: int = 5,
    labels: Literal["sampled", "expected"] = "sampled",
    seed: Seed = 0,
) -> BanditProblem:
    """Draw a bandit preference problem.

    ``r ~ N(0, 1)``; reference logits ``0.5 N(0, 1)``, minus ``ref_strength · r`` on a random
    ``violated_frac`` of the prompts. Every unordered response pair gets ``n_annotations``
    Bradley–Terry votes (``a`` wins w.p. ``σ(r_a - r_b)``); each orientation with a positive count
    becomes a row weighted by its count. ``labels="expected"`` instead emits both orientations
    weighted by their probabilities ``σ(±Δr)`` (the population objective).

    Parameters
    ----------
    n_prompts, n_responses
        Table size (``n_responses >= 2``); at most ``MAX_PROMPTS = 10**6`` prompts,
        ``MAX_RESPONSES = 1024`` responses and ``MAX_ROWS = 10**7`` preference rows
        ``n_prompts · n_responses · (n_responses - 1)``.
    violated_frac
        Fraction in ``[0, 1]`` of prompts whose reference is anti-aligned.
    ref_strength
        Strength ``≥ 0`` of the anti-alignment.
    n_annotations
        Votes per pair (``labels="sampled"`` only).
    labels
        ``"sampled"`` or ``"expected"``.
    seed
        Randomness (int, generator or None).

    Returns
    -------
    BanditProblem

    Raises
    ------
    ValueError
        On out-of-range sizes or fractions or an unknown ``labels``.

    Examples
    --------
    >>> p = make_bandit_problem(n_prompts=10, n_responses=3, seed=0)
    >>> tuple(p.reward.shape), int(p.violated.sum())
    ((10, 3), 4)
    """
    owner = "make_bandit_problem"
    n_prompts = check_positive_int("n_prompts", n_prompts, owner=owner, maximum=MAX_PROMPTS)
    n_responses = check_positive_int(
        "n_responses", n_responses, owner=owner, minimum=2, maximum=MAX_RESPONSES
    )
    if n_prompts * n_responses * (n_responses - 1) > MAX_ROWS:
        raise ValueError(
            f"{owner}: n_prompts * n_responses * (n_responses - 1) must be <= {MAX_ROWS} "
            f"preference rows; got {n_prompts} * {n_responses} * {n_responses - 1}."
        )
    violated_frac = check_in_interval(
        "violated_frac", violated_frac, low=0.0, high=1.0, owner=owner
    )
    ref_strength = check_in_interval("ref_strength", ref_strength, low=0.0, owner=owner)
    n_annotations = check_positive_int("n_annotations", n_annotations, owner=owner)
    check_one_of("labels", labels, ("sampled", "expected"), owner=owner)
    rng = numpy_generator(seed)
    reward = torch.from_numpy(rng.standard_normal((n_prompts, n_responses)))
    ref_logits = torch.from_numpy(0.5 * rng.standard_normal((n_prompts, n_responses)))
    violated = torch.zeros(n_prompts, dtype=torch.bool)
    n_violated = round(violated_frac * n_prompts)
    violated[torch.from_numpy(rng.permutation(n_prompts)[:n_violated])] = True
    ref_logits = ref_logits - ref_strength * reward * violated[:, None]

    x, a, b = _all_pairs(n_prompts, n_responses)
    p_a = torch.sigmoid(reward[x, a] - reward[x, b])  # P(a ≻ b) under Bradley–Terry
    if labels == "expected":
        w_a, w_b = p_a, 1.0 - p_a
    else:
        w_a = torch.from_numpy(rng.binomial(n_annotations, p_a.numpy())).double()
        w_b = n_annotations - w_a
    prompt, chosen, rejected = torch.cat([x, x]), torch.cat([a, b]), torch.cat([b, a])
    weight = torch.cat([w_a, w_b])
    keep = weight > 0
    return BanditProblem(
        reward=reward,
        ref_logits=ref_logits,
        violated=violated,
        prompt=prompt[keep],
        chosen=chosen[keep],
        rejected=rejected[keep],
        weight=weight[keep],
    )


def true_pairs(problem: BanditProblem) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every unordered response pair with the truly better response first.

    Returns
    -------
    tuple of torch.Tensor
        ``(prompt, winner, loser)`` indices; ties in reward keep the lower index first.

    Examples
    --------
    >>> p = make_bandit_problem(n_prompts=2, n_responses=3, seed=0)
    >>> x, win, lose = true_pairs(p)
    >>> bool((p.reward[x, win] >= p.reward[x, lose]).all())
    True
    """
    problem = _check_problem("true_pairs", problem)
    x, a, b = _all_pairs(*problem.reward.shape)
    swap = problem.reward[x, b] > problem.reward[x, a]
    return x, torch.where(swap, b, a), torch.where(swap, a, b)


def train_tabular(
    problem: BanditProblem,
    method: str,
    steps: int = 300,
    lr: float = 0.05,
    beta: float = 1.0,
    progress: Progress = None,
    **loss_kwargs: Any,
) -> dict[str, Any]:
    """Train the free-logit policy on ``problem`` with full-batch Adam and report the metrics.

    Scores are full log-probabilities ``log softmax(θ)[x, y]`` (single-token responses); the
    loss is the weight-averaged per-row loss.

    Parameters
    ----------
    problem
        From :func:`make_bandit_problem`.
    method
        ``"dpo"``, CPO's ``"smooth"``, ``"clip"`` or ``"easy"``, ``"ipo"`` or ``"simpo"``.
    steps
        Adam steps, at most ``MAX_STEPS = 10**6``.
    lr
        Adam learning rate.
    beta
        ``β`` of the loss.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after every step with the loss
        (:mod:`icml26.core.progress`).
    **loss_kwargs
        Further keywords of the loss (e.g. ``gamma``, ``tau``, ``alpha`` for CPO).

    Returns
    -------
    dict
        ``"metrics"``: final ``loss``, policy preference accuracy on the true pairs of violated
        (``acc_viol``) and other prompts (``acc_nonviol``; NaN where a group is empty), ``acc``,
        ``frac_in_U``, ``expected_reward`` ``E_π[r]``, ``kl`` ``KL(π‖π_ref)`` (both averaged over
        prompts); ``"history"``: the loss at every step; ``"logits"``: the trained ``θ``.

    Raises
    ------
    ValueError
        On an unknown method or out-of-range settings.
    NonFiniteLossError
        If the loss becomes NaN or infinite (the step is named).

    Examples
    --------
    >>> p = make_bandit_problem(n_prompts=20, seed=0)
    >>> out = train_tabular(p, "smooth", steps=20)
    >>> sorted(out["metrics"])[:3]
    ['acc', 'acc_nonviol', 'acc_viol']
    """
    owner = "train_tabular"
    problem = _check_problem(owner, problem)
    check_one_of("method", method, TABULAR_METHODS, owner=owner)
    steps = check_positive_int("steps", steps, owner=owner, maximum=MAX_STEPS)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    theta = problem.ref_logits.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([theta], lr=lr)
    history = []
    with progress_reporter(progress, steps, f"train_tabular ({method})") as report:
        for step in range(steps):
            loss = _objective(problem, theta, method, beta, loss_kwargs)
            history.append(optimizer_step(loss, optimizer, step=step, owner=owner))
            report(step + 1, loss=history[-1])
    with torch.no_grad():
        final = float(_objective(problem, theta, method, beta, loss_kwargs))
    return {
        "metrics": {"loss": final, **policy_metrics(problem, theta.detach())},
        "history": history,
        "logits": theta.detach(),
    }


def policy_metrics(problem: BanditProblem, logits: torch.Tensor) -> dict[str, float]:
    """Alignment metrics of a logit table on the true pairs of ``problem``.

    Parameters
    ----------
    problem
        The bandit problem.
    logits
        ``(prompts, responses)`` policy logits.

    Returns
    -------
    dict
        ``acc``, ``acc_viol``, ``acc_nonviol``, ``frac_in_U``, ``expected_reward``, ``kl``.

    Raises
    ------
    TypeError
        If ``problem`` is not a BanditProblem or ``logits`` not a floating-point tensor.
    ValueError
        If ``logits`` does not have the shape of ``problem.reward``.

    Examples
    --------
    >>> p = make_bandit_problem(n_prompts=20, seed=0)
    >>> policy_metrics(p, p.ref_logits)["kl"]
    0.0
    """
    problem = _check_problem("policy_metrics", problem)
    check_tensor("logits", logits, owner="policy_metrics", shape=tuple(problem.reward.shape))
    x, win, lose = true_pairs(problem)
    logp = torch.log_softmax(logits, dim=-1)
    ref_logp = torch.log_softmax(problem.ref_logits, dim=-1)
    delta, delta_ref = logp[x, win] - logp[x, lose], ref_logp[x, win] - ref_logp[x, lose]
    viol = problem.violated[x]
    pi = logp.exp()
    return {
        "acc": policy_preference_accuracy(delta),
        "acc_viol": policy_preference_accuracy(delta[viol]) if bool(viol.any()) else math.nan,
        "acc_nonviol": policy_preference_accuracy(delta[~viol])
        if bool((~viol).any())
        else math.nan,
        # Adam often moves both logits of a pair by identical steps, leaving δ_θ = δ_ref up to
        # rounding: such unmoved pairs sit on U's boundary and must not flip in or out on noise.
        "frac_in_U": frac_in_undesirable(delta, delta_ref, atol=U_ATOL),
        "expected_reward": float((pi * problem.reward).sum(-1).mean()),
        "kl": float((pi * (logp - ref_logp)).sum(-1).mean()),
    }


def _objective(
    problem: BanditProblem, theta: torch.Tensor, method: str, beta: float, kwargs: dict[str, Any]
) -> torch.Tensor:
    logp = torch.log_softmax(theta, dim=-1)  # (prompts, responses)
    ref_logp = torch.log_softmax(problem.ref_logits, dim=-1)
    x, c, r = problem.prompt, problem.chosen, problem.rejected
    pc, pr, rc, rr = logp[x, c], logp[x, r], ref_logp[x, c], ref_logp[x, r]
    out: PrefLossOutput
    if method == "dpo":
        out = dpo_loss(pc, pr, rc, rr, beta=beta, **kwargs)
    elif method == "ipo":
        out = ipo_loss(pc, pr, rc, rr, beta=beta, **kwargs)
    elif method == "simpo":
        out = simpo_loss(pc, pr, beta=beta, **kwargs)
    else:
        out = constrained_po_loss(pc, pr, rc, rr, beta=beta, variant=method, **kwargs)
    return (out.losses * problem.weight).sum() / problem.weight.sum()


def _all_pairs(n_prompts: int, n_responses: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a, b = torch.triu_indices(n_responses, n_responses, offset=1)
    x = torch.arange(n_prompts).repeat_interleave(a.numel())
    return x, a.repeat(n_prompts), b.repeat(n_prompts)
