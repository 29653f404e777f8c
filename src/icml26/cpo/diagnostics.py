"""Diagnostics of the DPO failure mode: the undesirable set U, assumption (A) and the loss bridge.

DPO's per-pair loss falls below ``log 2`` as soon as ``δ_θ > δ_ref``; when ``δ_ref < 0`` this
happens on the set ``U = {δ_ref < δ_θ < 0}``, where the policy still prefers the rejected
response. Assumption (A) of the DPO ≡ RLHF equivalence is ``δ_{π*} = δ_ref + Δr/β > 0``.
"""

from __future__ import annotations

import torch

from icml26.core import check_in_interval, check_tensor

__all__ = [
    "assumption_violated",
    "frac_in_undesirable",
    "loss_to_delta_lower_bound",
    "policy_preference_accuracy",
    "undesirable_mask",
]


def _as_tensor(owner: str, name: str, value: object) -> torch.Tensor:
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"{owner}: {name} must be a tensor or array of numbers; got {type(value).__name__}."
        ) from None


def _check_ids(
    owner: str, name: str, value: object, size: int, shape: tuple[int | None, ...]
) -> torch.Tensor:
    """``value`` if it is an integer tensor of ``shape`` (None: any length) with ids in
    ``range(size)``."""
    ids = check_tensor(name, value, owner=owner, shape=shape, floating=False)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{owner}: {name} must be an integer tensor; got dtype {ids.dtype}.")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= size):
        raise ValueError(
            f"{owner}: {name} must hold ids in range(0, {size}); "
            f"got {int(ids.min())}..{int(ids.max())}."
        )
    return ids


def _pair(
    owner: str, a_name: str, a: object, b_name: str, b: object
) -> tuple[torch.Tensor, torch.Tensor]:
    a_t, b_t = _as_tensor(owner, a_name, a), _as_tensor(owner, b_name, b)
    if a_t.shape != b_t.shape:
        raise ValueError(
            f"{owner}: {b_name} must have the shape of {a_name} {tuple(a_t.shape)}; "
            f"got {tuple(b_t.shape)}."
        )
    return a_t, b_t


def _weighted_mean(owner: str, flags: torch.Tensor, weights: object | None) -> float:
    if flags.numel() == 0:
        raise ValueError(f"{owner}: delta_pi needs at least one pair; got an empty tensor.")
    if weights is None:
        return float(flags.double().mean())
    w = _as_tensor(owner, "weights", weights)
    if w.shape != flags.shape or bool((w < 0).any()) or float(w.sum()) <= 0:
        raise ValueError(
            f"{owner}: weights must be non-negative, of shape {tuple(flags.shape)} and not all "
            f"zero; got shape {tuple(w.shape)}."
        )
    return float((flags.double() * w).sum() / w.sum())


def undesirable_mask(
    delta_pi: torch.Tensor, delta_ref: torch.Tensor, atol: float = 0.0
) -> torch.Tensor:
    """Pairs in the undesirable set ``U``: ``δ_ref < δ_θ < 0``.

    Parameters
    ----------
    delta_pi
        Policy log-ratios ``δ_θ = ℓ_θ(y_w) - ℓ_θ(y_l)``.
    delta_ref
        Reference log-ratios ``δ_ref`` of the same shape.
    atol
        A pair counts only if ``δ_θ > δ_ref + atol`` (``atol ≥ 0``), so that log-ratios that
        did not move from the reference are not counted on round-off.

    Returns
    -------
    torch.Tensor
        Boolean mask: DPO's loss on the pair is below ``log 2`` yet the policy prefers ``y_l``.

    Raises
    ------
    ValueError
        If the shapes differ.

    Examples
    --------
    >>> undesirable_mask(torch.tensor([-0.5, 0.5, -2.0]), torch.tensor([-1.0, -1.0, -1.0])).tolist()
    [True, False, False]
    """
    owner = "undesirable_mask"
    atol = check_in_interval("atol", atol, low=0.0, owner=owner)
    d, r = _pair(owner, "delta_pi", delta_pi, "delta_ref", delta_ref)
    return (d < 0) & (d > r + atol)


def frac_in_undesirable(
    delta_pi: torch.Tensor,
    delta_ref: torch.Tensor,
    weights: torch.Tensor | None = None,
    atol: float = 0.0,
) -> float:
    """Fraction (optionally weighted) of pairs in ``U`` (the official trainer's ``frac_in_U``).

    Parameters
    ----------
    delta_pi, delta_ref
        Policy and reference log-ratios of the same shape.
    weights
        Optional non-negative pair weights (e.g. annotation counts).
    atol
        See :func:`undesirable_mask`.

    Returns
    -------
    float
        ``mean[(δ_θ < 0) & (δ_θ > δ_ref + atol)]``.

    Raises
    ------
    ValueError
        If the shapes differ, the input is empty or the weights are invalid.

    Examples
    --------
    >>> frac_in_undesirable(torch.tensor([-0.5, 0.5]), torch.tensor([-1.0, -1.0]))
    0.5
    """
    owner = "frac_in_undesirable"
    return _weighted_mean(owner, undesirable_mask(delta_pi, delta_ref, atol), weights)


def policy_preference_accuracy(
    delta_pi: torch.Tensor, weights: torch.Tensor | None = None
) -> float:
    """Fraction of pairs the *policy itself* ranks correctly, ``mean[δ_θ > 0]``.

    DPO's logged "reward accuracy" is ``mean[δ_θ > δ_ref]`` and stays blind to ``U``; this is
    the quantity the paper's alignment guarantee is about.

    Parameters
    ----------
    delta_pi
        Policy log-ratios (chosen minus rejected).
    weights
        Optional non-negative pair weights.

    Returns
    -------
    float
        The (weighted) fraction with ``δ_θ > 0``.

    Raises
    ------
    ValueError
        If the input is empty or the weights are invalid.

    Examples
    --------
    >>> policy_preference_accuracy(torch.tensor([0.3, -0.1, 2.0, -4.0]))
    0.5
    """
    owner = "policy_preference_accuracy"
    return _weighted_mean(owner, _as_tensor(owner, "delta_pi", delta_pi) > 0, weights)


def assumption_violated(
    delta_ref: torch.Tensor, reward_gap: torch.Tensor, beta: float
) -> torch.Tensor:
    """Pairs where assumption (A) fails: the RLHF optimum prefers ``y_l``, ``δ_ref + Δr/β ≤ 0``.

    Parameters
    ----------
    delta_ref
        Reference log-ratios (summed log-prob scale).
    reward_gap
        ``Δr = r(x, y_w) - r(x, y_l)`` (with Bradley–Terry labels, ``logit p(y_w ≻ y_l)``).
    beta
        KL strength ``β > 0``.

    Returns
    -------
    torch.Tensor
        Boolean mask of violated pairs.

    Raises
    ------
    ValueError
        If the shapes differ or ``beta <= 0``.

    Examples
    --------
    >>> assumption_violated(torch.tensor([-3.0, -1.0]), torch.tensor([2.0, 2.0]), beta=1.0).tolist()
    [True, False]
    """
    owner = "assumption_violated"
    beta = check_in_interval("beta", beta, low=0.0, closed="neither", owner=owner)
    r, g = _pair(owner, "delta_ref", delta_ref, "reward_gap", reward_gap)
    return r + g / beta <= 0


def loss_to_delta_lower_bound(
    loss: torch.Tensor, target: torch.Tensor, beta: float
) -> torch.Tensor:
    """The log-ratio a per-pair loss certifies: ``-log σ(β (δ - t)) ≤ ε ⇔ δ ≥ t - log(e^ε - 1)/β``.

    Parameters
    ----------
    loss
        Per-pair losses ``ε > 0``.
    target
        Ranking targets ``t`` of the same shape.
    beta
        ``β > 0``.

    Returns
    -------
    torch.Tensor
        The lower bound on ``δ``; it exceeds ``t`` exactly when ``ε < log 2``.

    Raises
    ------
    ValueError
        If a loss is not positive, the shapes differ, or ``beta <= 0``.

    Examples
    --------
    >>> log2 = torch.tensor(2.0, dtype=torch.float64).log()
    >>> float(loss_to_delta_lower_bound(log2, torch.tensor(0.0), 1.0))
    0.0
    """
    owner = "loss_to_delta_lower_bound"
    beta = check_in_interval("beta", beta, low=0.0, closed="neither", owner=owner)
    eps, t = _pair(owner, "loss", loss, "target", target)
    if bool((eps <= 0).any()):
        raise ValueError(f"{owner}: loss must be > 0 everywhere; got min {float(eps.min())!r}.")
    return t - torch.log(torch.expm1(eps)) / beta
