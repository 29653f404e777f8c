"""Preference losses: DPO and Constrained Preference Optimization (CPO) as soft-margin ranking.

Every pairwise loss here is ``L(δ_θ; t) = softplus(-β (δ_θ - t))`` with the policy log-ratio
``δ_θ = ℓ_θ(y_w|x) - ℓ_θ(y_l|x)`` and a ranking *target* ``t`` built from the frozen reference
alone. DPO uses ``t = δ_ref`` (possibly negative); CPO raises the target to at least ``γ``
(Yang et al., *Conditional Equivalence of DPO and RLHF*, ICML 2026, arXiv:2605.20834; the three
variants follow the official loss code). Reference scores are always detached.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import torch
from torch.nn.functional import softplus

from icml26.core import check_in_interval, check_one_of, check_tensor

__all__ = [
    "VARIANTS",
    "PrefLossOutput",
    "constrained_po_loss",
    "constrained_po_target",
    "dpo_loss",
    "ipo_loss",
    "sequence_logps",
    "simpo_loss",
    "soft_margin_ranking_loss",
]

VARIANTS = ("smooth", "clip", "easy")
MIN_BETA, MAX_BETA = 1e-6, 1e6  # every loss's beta: products with float32 scores stay finite
Variant = Literal["smooth", "clip", "easy"]


@dataclass(frozen=True)
class PrefLossOutput:
    """Per-example outputs of a pairwise preference loss (all tensors of the batch shape).

    Attributes
    ----------
    losses
        Per-example loss ``softplus(-β (δ_θ - target))``; the batch loss is ``losses.mean()``.
    chosen_rewards, rejected_rewards
        Implicit rewards ``β (ℓ_θ - ℓ_ref)`` of the chosen and rejected responses (detached).
    target
        The ranking target ``t`` on the policy log-ratio (detached).
    margin
        ``target - δ_ref``: how far above the reference log-ratio the loss puts the target
        (0 for DPO, ``m / α`` for smooth CPO).
    """

    losses: torch.Tensor
    chosen_rewards: torch.Tensor
    rejected_rewards: torch.Tensor
    target: torch.Tensor
    margin: torch.Tensor


def sequence_logps(
    logits: torch.Tensor,
    labels: torch.Tensor,
    ignore_index: int = -100,
    average: bool = True,
) -> torch.Tensor:
    """Log-probability of each sequence's response tokens under a causal LM.

    ``ℓ(y|x) = Σ_t log p(labels[t] | tokens < t)`` over the positions whose label is not
    ``ignore_index`` (prompt and padding), divided by their number when ``average`` (the official
    CPO code's length-normalised score; ``average=False`` is the classic DPO sum). The logits at
    position ``t`` predict token ``t + 1``, so labels are shifted left by one.

    Parameters
    ----------
    logits
        ``(batch, seq, vocab)`` next-token logits.
    labels
        ``(batch, seq)`` token ids, ``ignore_index`` on tokens that are not scored.
    ignore_index
        Label value of unscored tokens.
    average
        Divide the sum by the number of scored tokens.

    Returns
    -------
    torch.Tensor
        ``(batch,)`` sequence scores.

    Raises
    ------
    TypeError
        If ``logits`` is not a floating-point tensor or ``labels`` not a tensor.
    ValueError
        If the shapes do not match or a row has no scored token after the shift.

    Examples
    --------
    >>> logits = torch.zeros(1, 3, 4)  # uniform next-token distribution
    >>> labels = torch.tensor([[-100, 2, 3]])
    >>> round(float(sequence_logps(logits, labels)), 4) == round(-math.log(4), 4)
    True
    """
    owner = "sequence_logps"
    check_tensor("logits", logits, owner=owner, ndim=3)  # (batch, seq, vocab)
    check_tensor("labels", labels, owner=owner, shape=logits.shape[:2], floating=False)
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
        raise TypeError(
            f"{owner}: ignore_index must be an int (the label of unscored tokens, e.g. -100); "
            f"got {ignore_index!r}."
        )
    if not isinstance(average, bool):
        raise TypeError(f"{owner}: average must be a bool; got {average!r}.")
    shifted_labels = labels[:, 1:]  # (batch, seq - 1): the token each position predicts
    mask = shifted_labels != ignore_index
    scored = shifted_labels[mask]
    if scored.numel() and (int(scored.min()) < 0 or int(scored.max()) >= logits.shape[-1]):
        raise ValueError(
            f"{owner}: scored labels must be token ids in [0, {logits.shape[-1]}) (the vocabulary "
            f"of logits) or ignore_index={ignore_index}; got values in [{int(scored.min())}, "
            f"{int(scored.max())}]."
        )
    counts = mask.sum(dim=1)
    if bool((counts == 0).any()):
        rows = torch.nonzero(counts == 0).flatten().tolist()
        raise ValueError(
            f"{owner}: labels must mark at least one response token per row (after the causal "
            f"shift); got none in rows {rows}."
        )
    # half-precision logits are scored in float32; float64 stays float64
    dtype = torch.promote_types(logits.dtype, torch.float32)
    log_probs = torch.log_softmax(logits[:, :-1].to(dtype), dim=-1)  # (batch, seq - 1, vocab)
    safe = shifted_labels.masked_fill(~mask, 0).long()
    token_logps = log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1) * mask
    total = token_logps.sum(dim=1)
    return total / counts if average else total


def soft_margin_ranking_loss(
    delta: torch.Tensor, target: torch.Tensor, beta: float = 0.1
) -> torch.Tensor:
    """Per-pair soft-margin ranking loss ``softplus(-β (δ - t)) = -log σ(β (δ - t))``.

    A loss ``≤ ε`` certifies ``δ ≥ t - log(e^ε - 1) / β``; below ``log 2`` it certifies only
    ``δ > t``, which is why a negative target lets the loss fall while ``δ`` stays negative.

    Parameters
    ----------
    delta
        Policy log-ratios ``δ_θ``.
    target
        Ranking targets ``t`` (broadcast against ``delta``).
    beta
        Inverse temperature ``β`` in ``[MIN_BETA, MAX_BETA]`` = ``[1e-6, 1e6]``.

    Returns
    -------
    torch.Tensor
        Per-pair losses.

    Raises
    ------
    TypeError
        If ``delta`` or ``target`` is not a floating-point tensor.
    ValueError
        If ``beta <= 0`` or ``target`` does not broadcast against ``delta``.

    Examples
    --------
    >>> round(float(soft_margin_ranking_loss(torch.tensor(0.0), torch.tensor(0.0), 1.0)), 6)
    0.693147
    """
    owner = "soft_margin_ranking_loss"
    beta = _check_beta(owner, beta)
    check_tensor("delta", delta, owner=owner)
    check_tensor("target", target, owner=owner)
    try:
        torch.broadcast_shapes(delta.shape, target.shape)
    except RuntimeError:
        raise ValueError(
            f"{owner}: target must broadcast against delta {tuple(delta.shape)}; "
            f"got {tuple(target.shape)}."
        ) from None
    return softplus(-beta * (delta - target))


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float = 0.1,
) -> PrefLossOutput:
    """DPO loss ``-log σ(β (δ_θ - δ_ref))``: ranking with the reference log-ratio as target.

    Parameters
    ----------
    policy_chosen, policy_rejected
        Policy scores ``ℓ_θ(y_w|x)``, ``ℓ_θ(y_l|x)``, one per example (any common shape).
    ref_chosen, ref_rejected
        Reference scores ``ℓ_ref(y_w|x)``, ``ℓ_ref(y_l|x)``; detached here.
    beta
        KL-regularisation strength ``β`` in ``[1e-6, 1e6]``.

    Returns
    -------
    PrefLossOutput
        Per-example losses, implicit rewards, target ``δ_ref`` and margin 0.

    Raises
    ------
    ValueError
        If the four tensors differ in shape or ``beta <= 0``.

    Examples
    --------
    >>> z = torch.zeros(2)
    >>> out = dpo_loss(z, z, z, z, beta=0.1)
    >>> round(float(out.losses.mean()), 6)  # log 2 at initialisation
    0.693147
    """
    owner = "dpo_loss"
    _check_scores(owner, policy_chosen, policy_rejected, ref_chosen, ref_rejected)
    beta = _check_beta(owner, beta)
    ref_logratio = (ref_chosen - ref_rejected).detach()
    return _ranking_output(
        policy_chosen, policy_rejected, ref_chosen, ref_rejected, ref_logratio, beta
    )


def constrained_po_target(
    ref_logratio: torch.Tensor,
    gamma: float = 0.5,
    tau: float = 2.0,
    alpha: float = 1.0,
    variant: Variant = "smooth",
    *,
    beta: float = 0.1,
    ref_chosen: torch.Tensor | None = None,
    ref_rejected: torch.Tensor | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """The CPO ranking target ``t`` on the policy log-ratio (detached).

    - ``smooth``: ``m = softplus(τ (γ - δ_ref)) / τ`` and ``t = δ_ref + m / α``; ``α → ∞`` gives
      DPO's ``δ_ref`` and ``α = 1, τ → ∞`` gives ``max(δ_ref, γ)``.
    - ``clip``: ``t = max(δ_ref, 0)``.
    - ``easy``: ``m_e = γ (1/ℓ_ref(y_w) + 1/ℓ_ref(y_l))`` and ``t = δ_ref + m_e / β``. With
      length-normalised (negative) reference scores ``m_e < 0``, so this *lowers* the target, as
      the released demo does. Reference scores ``≥ -eps`` are clamped to ``-eps`` with a warning.

    Parameters
    ----------
    ref_logratio
        ``δ_ref = ℓ_ref(y_w|x) - ℓ_ref(y_l|x)``.
    gamma
        Margin ``γ ≥ 0``.
    tau
        Smoothness ``τ > 0`` of the soft maximum (``smooth`` only).
    alpha
        Constraint weight ``α ∈ (0, ∞]`` (``smooth`` only).
    variant
        ``"smooth"``, ``"clip"`` or ``"easy"``.
    beta
        ``β`` in ``[1e-6, 1e6]``, used by ``easy`` to put ``m_e`` on the log-ratio scale.
    ref_chosen, ref_rejected
        Reference scores ``ℓ_ref(y_w|x)``, ``ℓ_ref(y_l|x)``; required by ``easy``.
    eps
        Clamp level of the ``easy`` reference scores.

    Returns
    -------
    torch.Tensor
        Targets of the shape of ``ref_logratio``.

    Raises
    ------
    TypeError
        If ``ref_logratio`` (or an ``easy`` reference score) is not a floating-point tensor.
    ValueError
        On an unknown variant, out-of-range hyper-parameters, or ``easy`` without reference scores
        of the shape of ``ref_logratio``.

    Examples
    --------
    >>> t = constrained_po_target(torch.tensor([-1.0]), gamma=0.5, tau=2.0, alpha=1.0)
    >>> round(float(t), 6)
    0.524294
    """
    owner = "constrained_po_target"
    check_one_of("variant", variant, VARIANTS, owner=owner)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=math.inf, closed="left", owner=owner)
    tau = check_in_interval("tau", tau, low=0.0, closed="neither", owner=owner)
    alpha = check_in_interval("alpha", alpha, low=0.0, high=math.inf, closed="right", owner=owner)
    beta = _check_beta(owner, beta)
    eps = check_in_interval("eps", eps, low=0.0, closed="neither", owner=owner)
    ref_logratio = check_tensor("ref_logratio", ref_logratio, owner=owner).detach()
    if variant == "smooth":
        # m ≥ max(γ - δ_ref, 0): a smooth hinge that binds where the reference is below γ
        m = softplus(tau * (gamma - ref_logratio)) / tau
        return ref_logratio + m / alpha
    if variant == "clip":
        return ref_logratio.clamp(min=0.0)
    if ref_chosen is None or ref_rejected is None:
        raise ValueError(f"{owner}: variant 'easy' needs ref_chosen and ref_rejected; got None.")
    for name, score in (("ref_chosen", ref_chosen), ("ref_rejected", ref_rejected)):
        check_tensor(name, score, owner=owner, shape=ref_logratio.shape)
    m_e = gamma * (
        1.0 / _clamp_negative(ref_chosen, eps) + 1.0 / _clamp_negative(ref_rejected, eps)
    )
    return ref_logratio + m_e / beta


def constrained_po_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    *,
    beta: float = 0.1,
    gamma: float = 0.5,
    tau: float = 2.0,
    alpha: float = 1.0,
    variant: Variant = "smooth",
    eps: float = 1e-6,
) -> PrefLossOutput:
    """Constrained Preference Optimization loss ``-log σ(β (δ_θ - t))``, ``t`` from
    :func:`constrained_po_target`.

    For ``smooth`` this is the official ``-log σ(β δ_θ - β δ_ref - (β/α) m)``; defaults are the
    official config's (``β = 0.1, γ = 0.5, τ = 2, α = 1``).

    Parameters
    ----------
    policy_chosen, policy_rejected
        Policy scores ``ℓ_θ(y_w|x)``, ``ℓ_θ(y_l|x)``, one per example (any common shape).
    ref_chosen, ref_rejected
        Reference scores; detached here (no gradient reaches them).
    beta, gamma, tau, alpha, variant, eps
        See :func:`constrained_po_target`.

    Returns
    -------
    PrefLossOutput
        Per-example losses, implicit rewards, targets and margins ``target - δ_ref``.

    Raises
    ------
    ValueError
        If the four tensors differ in shape, a hyper-parameter is out of range or the variant is
        unknown.

    Examples
    --------
    >>> pc, pr = torch.tensor([-1.0]), torch.tensor([-1.0])
    >>> rc, rr = torch.tensor([-2.0]), torch.tensor([-1.0])
    >>> out = constrained_po_loss(pc, pr, rc, rr, beta=1.0)
    >>> round(float(out.losses), 6)
    0.989268
    """
    owner = "constrained_po_loss"
    _check_scores(owner, policy_chosen, policy_rejected, ref_chosen, ref_rejected)
    ref_logratio = (ref_chosen - ref_rejected).detach()
    target = constrained_po_target(
        ref_logratio,
        gamma,
        tau,
        alpha,
        variant,
        beta=beta,
        ref_chosen=ref_chosen.detach(),
        ref_rejected=ref_rejected.detach(),
        eps=eps,
    )
    return _ranking_output(policy_chosen, policy_rejected, ref_chosen, ref_rejected, target, beta)


def _ranking_output(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    target: torch.Tensor,
    beta: float,
) -> PrefLossOutput:
    delta = policy_chosen - policy_rejected
    ref_logratio = (ref_chosen - ref_rejected).detach()
    return PrefLossOutput(
        losses=softplus(-beta * (delta - target)),
        chosen_rewards=beta * (policy_chosen - ref_chosen).detach(),
        rejected_rewards=beta * (policy_rejected - ref_rejected).detach(),
        target=target,
        margin=target - ref_logratio,
    )


def _clamp_negative(scores: torch.Tensor, eps: float) -> torch.Tensor:
    if bool((scores >= -eps).any()):
        warnings.warn(
            "constrained_po_loss: variant 'easy' divides by reference scores, which must be "
            f"negative (length-normalised log-probs); clamping values >= {-eps:g} to {-eps:g}.",
            RuntimeWarning,
            stacklevel=4,
        )
    return scores.clamp(max=-eps)


def _check_beta(owner: str, beta: float) -> float:
    # beta multiplies float32 scores: past ~1e38 it becomes inf (inf * 0 = NaN at a zero score
    # difference), below ~1e-45 it becomes 0 (0 * an infinite SimPO target gamma / beta = NaN)
    return check_in_interval("beta", beta, low=MIN_BETA, high=MAX_BETA, owner=owner)


def _check_scores(owner: str, *scores: object) -> None:
    names = ("policy_chosen", "policy_rejected", "ref_chosen", "ref_rejected")
    for name, score in zip(names, scores, strict=True):
        check_tensor(name, score, owner=owner)
    shape = scores[0].shape  # type: ignore[union-attr]
    for name, score in zip(names[1:], scores[1:], strict=True):
        if score.shape != shape:  # type: ignore[union-attr]
            raise ValueError(
                f"{owner}: {name} must have the shape of {names[0]} {tuple(shape)}; "
                f"got {tuple(score.shape)}."  # type: ignore[union-attr]
            )


def ipo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float = 0.1,
) -> PrefLossOutput:
    """IPO baseline (Azar et al. 2024): squared loss ``(δ_θ - δ_ref - 1/(2β))²``.

    Parameters
    ----------
    policy_chosen, policy_rejected, ref_chosen, ref_rejected
        Scores as in :func:`dpo_loss`.
    beta
        Regularisation ``β`` in ``[1e-6, 1e6]``; the regression target is ``δ_ref + 1/(2β)``.

    Returns
    -------
    PrefLossOutput
        Per-example losses, implicit rewards, target and margin ``1/(2β)``.

    Raises
    ------
    ValueError
        If the shapes differ or ``beta <= 0``.

    Examples
    --------
    >>> z = torch.zeros(1)
    >>> float(ipo_loss(z, z, z, z, beta=0.5).losses)
    1.0
    """
    owner = "ipo_loss"
    _check_scores(owner, policy_chosen, policy_rejected, ref_chosen, ref_rejected)
    beta = _check_beta(owner, beta)
    ref_logratio = (ref_chosen - ref_rejected).detach()
    out = _ranking_output(
        policy_chosen, policy_rejected, ref_chosen, ref_rejected, ref_logratio + 0.5 / beta, beta
    )
    delta = policy_chosen - policy_rejected
    return PrefLossOutput(
        (delta - out.target) ** 2, out.chosen_rewards, out.rejected_rewards, out.target, out.margin
    )


def simpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    beta: float = 2.0,
    gamma: float = 0.5,
) -> PrefLossOutput:
    """SimPO baseline (Meng et al. 2024), reference-free: ``-log σ(β δ_θ - γ)``.

    Scores are meant to be length-normalised (``sequence_logps(..., average=True)``).

    Parameters
    ----------
    policy_chosen, policy_rejected
        Policy scores of the chosen and rejected responses.
    beta
        Reward scale ``β`` in ``[1e-6, 1e6]``.
    gamma
        Target reward margin ``γ ≥ 0``; the target on ``δ_θ`` is ``γ/β``.

    Returns
    -------
    PrefLossOutput
        Per-example losses, rewards ``β ℓ_θ``, target ``γ/β`` and margin ``γ/β``.

    Raises
    ------
    ValueError
        If the shapes differ or a hyper-parameter is out of range.

    Examples
    --------
    >>> z = torch.zeros(1)
    >>> round(float(simpo_loss(z, z, beta=2.0, gamma=0.0).losses), 6)
    0.693147
    """
    owner = "simpo_loss"
    zeros = torch.zeros_like(policy_chosen) if isinstance(policy_chosen, torch.Tensor) else None
    _check_scores(owner, policy_chosen, policy_rejected, zeros, zeros)
    beta = _check_beta(owner, beta)
    gamma = check_in_interval("gamma", gamma, low=0.0, high=math.inf, closed="left", owner=owner)
    target = torch.full_like(policy_chosen, gamma / beta)
    return _ranking_output(policy_chosen, policy_rejected, zeros, zeros, target, beta)
