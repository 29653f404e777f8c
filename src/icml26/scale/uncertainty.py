"""Self-uncertainty of action-token logits and the temperatures it drives (spec §2.1–§2.3).

SCALE (arXiv:2602.04208, Eqs. 2–9; official code ``modeling_prismatic.py``). For one action token
the logits are restricted to the action vocabulary, turned into probabilities, cut to the top-K
and renormalised (p_1 >= ... >= p_K). Two reference distributions on those K tokens: ``q_low``,
the one-hot on the top-1 token smoothed by eps, and ``q_high``, the uniform 1/K. Then

    u = KL(p || q_low) - KL(p || q_high) = E_p[log q_high - log q_low]              (Eqs. 2–3)
    tau = T0 * sigmoid(u)                                                           (Eq. 4)
    gamma = kappa ** tanh(s * (u_{t-1} - EMA_{t-2}))                               (Eqs. 6–9)

With top-K renormalisation u is *exactly* affine in the top-1 probability,
u = -log K - p_1 log(1 - (K-1) eps) - (1 - p_1) log eps, so any measure that is a function of
p_max alone carries the same information (the p_max ablation tests only the mapping to tau).

Deviations: ``attention_temperature`` uses the official code's ``s = attn_sensitivity = 0.3``
inside the tanh (the paper prints ``kappa ** tanh(delta)``); the greedy fallback of
:func:`sample_with_temperature` (tau < 1e-3) is unreachable at T0 = 1 with K = 256 (tau_min =
T0 / (1 + K(1 - (K-1) eps)) ~ 0.0039 T0) and reachable for K >= 1000 or T0 < 0.26 (docs/scale.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from icml26.core.validation import check_in_interval, check_positive_int, check_tensor

__all__ = [
    "UncertaintyState",
    "action_logits",
    "adaptive_temperature",
    "attention_temperature",
    "sample_with_temperature",
    "self_uncertainty",
]

# The largest action vocabulary accepted (OpenVLA: 256 bins; FAST tokenizers: 2048).
MAX_ACTION_VOCAB = 1 << 17


def _action_bounds(
    action_slice: slice | Sequence[int] | None, vocab: int, owner: str
) -> tuple[int, int]:
    """(start, stop) of the action vocabulary inside the last dim of size ``vocab``."""
    if action_slice is None:
        return 0, vocab
    if isinstance(action_slice, slice):
        if action_slice.step not in (None, 1):
            raise ValueError(f"{owner}: action_slice must have step 1; got {action_slice!r}.")
        start, stop, _ = action_slice.indices(vocab)
    elif (
        isinstance(action_slice, Sequence)
        and not isinstance(action_slice, str)
        and len(action_slice) == 2
    ):
        start, stop = (
            check_positive_int("action_slice", v, owner=owner, minimum=-(2**62))
            for v in action_slice
        )
    else:
        raise TypeError(
            f"{owner}: action_slice must be None, a slice or a (start, stop) pair; "
            f"got {type(action_slice).__name__}."
        )
    if not 0 <= start < stop <= vocab:
        raise ValueError(
            f"{owner}: action_slice must select a non-empty range inside [0, {vocab}); "
            f"got ({start}, {stop})."
        )
    return start, stop


def action_logits(
    logits: torch.Tensor, action_slice: slice | Sequence[int] | None = None
) -> torch.Tensor:
    """The action-vocabulary part of ``logits`` (others have no effect on anything downstream).

    Parameters
    ----------
    logits
        ``(..., vocab)`` logits of the next token.
    action_slice
        ``None`` (the whole last dimension is the action vocabulary), a ``slice`` or a
        ``(start, stop)`` pair of token ids.

    Returns
    -------
    torch.Tensor
        ``(..., stop - start)``.

    Raises
    ------
    ValueError
        If the slice is empty, out of range or has NaN/inf action logits.

    Examples
    --------
    >>> action_logits(torch.arange(6.0), (4, 6)).tolist()
    [4.0, 5.0]
    """
    owner = "action_logits"
    check_tensor("logits", logits, owner=owner)
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(
            f"{owner}: logits must have a non-empty last dim; got {tuple(logits.shape)}."
        )
    start, stop = _action_bounds(action_slice, logits.shape[-1], owner)
    part = logits[..., start:stop]
    check_tensor("logits", part, owner=owner, finite=True)
    return part


def self_uncertainty(
    logits: torch.Tensor,
    num_logits: int | None = None,
    eps: float = 1e-12,
    action_slice: slice | Sequence[int] | None = None,
) -> torch.Tensor:
    """Per-token self-uncertainty u = KL(p || q_low) - KL(p || q_high) (spec §2.1, Eqs. 2–3).

    Parameters
    ----------
    logits
        ``(..., vocab)`` next-token logits, one row per action token.
    num_logits
        K, the number of top action tokens kept and renormalised (``None``: the whole action
        vocabulary, the paper's 256).
    eps
        Smoothing of the one-hot reference, in ``(0, 1/(K-1))`` so that q_low stays a distribution.
    action_slice
        Where the action vocabulary lies in the last dim (``None``: all of it; OpenVLA: the last
        256 ids).

    Returns
    -------
    torch.Tensor
        ``(...)`` the uncertainty of each row, in the dtype of ``logits`` (computed in float64).
        For K = 256 it runs from -5.545 (one-hot) to 21.98 (uniform).

    Raises
    ------
    ValueError
        NaN/inf action logits, ``num_logits`` outside [1, action vocab], ``eps`` out of range or
        a bad ``action_slice``.

    Examples
    --------
    >>> round(float(self_uncertainty(torch.zeros(256))), 3)  # uniform
    21.978
    """
    owner = "self_uncertainty"
    part = action_logits(logits, action_slice)
    n_action = part.shape[-1]
    K = n_action if num_logits is None else num_logits
    K = check_positive_int("num_logits", K, owner=owner, maximum=n_action)
    eps_high = 1.0 / (K - 1) if K > 1 else 1.0
    eps = check_in_interval("eps", eps, low=0.0, high=eps_high, closed="neither", owner=owner)
    logp = torch.log_softmax(part.double(), dim=-1)
    top = logp.topk(K, dim=-1).values  # (..., K), sorted descending
    logp_top = top - torch.logsumexp(top, dim=-1, keepdim=True)  # renormalised on the top-K
    p = logp_top.exp()
    # log q_low: the top-1 token keeps 1 - (K-1) eps, every other one eps.
    log_q_low = torch.full((K,), math.log(eps), dtype=torch.float64)
    log_q_low[0] = math.log1p(-(K - 1) * eps)
    # u = E_p[log q_high - log q_low] with log q_high = -log K
    u = (p * (-math.log(K) - log_q_low)).sum(dim=-1)
    return u.to(logits.dtype)


def adaptive_temperature(u: torch.Tensor, T0: float = 1.0) -> torch.Tensor:
    """Per-token sampling temperature tau = T0 * sigmoid(u) (spec §2.2, Eq. 4).

    Parameters
    ----------
    u
        Self-uncertainty of each token (any shape).
    T0
        The largest temperature, reached as u -> +inf; must be in (0, inf).

    Returns
    -------
    torch.Tensor
        tau, same shape as ``u``, in (0, T0).

    Raises
    ------
    ValueError
        ``T0 <= 0`` or NaN/inf in ``u``.

    Examples
    --------
    >>> adaptive_temperature(torch.tensor([0.0]), T0=2.0).tolist()
    [1.0]
    """
    owner = "adaptive_temperature"
    check_tensor("u", u, owner=owner, finite=True)
    T0 = check_in_interval("T0", T0, low=0.0, closed="neither", owner=owner)
    if not math.isfinite(T0):
        raise ValueError(f"{owner}: T0 must be finite; got {T0!r}.")
    return T0 * torch.sigmoid(u)


def sample_with_temperature(
    logits_topk: torch.Tensor,
    tau: torch.Tensor | float,
    generator: torch.Generator | None,
    greedy_below: float = 1e-3,
) -> torch.Tensor:
    """Draw one index per row from softmax(logits_topk / tau); argmax where tau < greedy_below.

    Parameters
    ----------
    logits_topk
        ``(..., K)`` logits of the candidate tokens.
    tau
        Temperature per row (a float or a tensor broadcastable to ``logits_topk.shape[:-1]``);
        every entry must be in (0, inf).
    generator
        The ``torch.Generator`` the draws come from (``None``: torch's default generator).
    greedy_below
        Rows with ``tau < greedy_below`` take the top-1 index exactly (0 turns this off).

    Returns
    -------
    torch.Tensor
        ``(...)`` int64 indices into the last dim of ``logits_topk``.

    Raises
    ------
    ValueError
        NaN/inf logits, an empty last dim, or a tau that is not positive and finite.

    Examples
    --------
    >>> sample_with_temperature(torch.tensor([[0.0, 3.0, 1.0]]), 1e-4, None).tolist()
    [1]
    """
    owner = "sample_with_temperature"
    check_tensor("logits_topk", logits_topk, owner=owner, finite=True)
    if logits_topk.ndim == 0 or logits_topk.shape[-1] == 0:
        raise ValueError(
            f"{owner}: logits_topk must have a non-empty last dim; got {tuple(logits_topk.shape)}."
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"{owner}: generator must be a torch.Generator or None; got {type(generator).__name__}."
        )
    greedy_below = check_in_interval("greedy_below", greedy_below, low=0.0, owner=owner)
    if isinstance(tau, torch.Tensor):
        tau_t = tau.to(torch.float64)
    elif isinstance(tau, (int, float)) and not isinstance(tau, bool):
        tau_t = torch.tensor(float(tau), dtype=torch.float64)
    else:
        raise TypeError(f"{owner}: tau must be a float or a tensor; got {type(tau).__name__}.")
    if not bool(torch.all(torch.isfinite(tau_t) & (tau_t > 0))):
        raise ValueError(f"{owner}: tau must be in (0, inf) everywhere; got {tau!r}.")
    batch_shape = logits_topk.shape[:-1]
    try:
        tau_t = torch.broadcast_to(tau_t, batch_shape)
    except RuntimeError:
        raise ValueError(
            f"{owner}: tau of shape {tuple(tau_t.shape)} does not broadcast to the rows "
            f"{tuple(batch_shape)} of logits_topk."
        ) from None
    flat = logits_topk.reshape(-1, logits_topk.shape[-1]).double()  # (rows, K)
    tau_flat = tau_t.reshape(-1, 1)
    probs = torch.softmax(flat / tau_flat, dim=-1)
    drawn = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    greedy = flat.argmax(dim=-1)
    index = torch.where(tau_flat.squeeze(-1) < greedy_below, greedy, drawn)
    return index.reshape(batch_shape)


def attention_temperature(
    delta_u: float | torch.Tensor, kappa: float = 2.0, sensitivity: float = 0.3
) -> float | torch.Tensor:
    """Vision attention temperature gamma = kappa ** tanh(sensitivity * delta_u) (spec §2.3).

    Parameters
    ----------
    delta_u
        Change of the step-level uncertainty, u_{t-1} - EMA_{t-2} (a float, or a tensor of one
        value per episode).
    kappa
        Base, >= 1; gamma lies in (1/kappa, kappa).
    sensitivity
        s >= 0 inside the tanh (official code: ``attn_sensitivity = 0.3``; the paper prints 1).

    Returns
    -------
    float or torch.Tensor
        gamma (> 1 flattens the vision attention, < 1 sharpens it); a float for a float input.

    Raises
    ------
    ValueError
        ``kappa < 1``, a negative or infinite ``sensitivity``, or a non-finite ``delta_u``.

    Examples
    --------
    >>> round(attention_temperature(1.0), 4), round(attention_temperature(-1.0), 4)
    (1.2238, 0.8172)
    """
    owner = "attention_temperature"
    kappa = check_in_interval("kappa", kappa, low=1.0, owner=owner)
    sensitivity = check_in_interval("sensitivity", sensitivity, low=0.0, owner=owner)
    if not (math.isfinite(kappa) and math.isfinite(sensitivity)):
        raise ValueError(
            f"{owner}: kappa and sensitivity must be finite; got {kappa}, {sensitivity}."
        )
    if isinstance(delta_u, torch.Tensor):
        check_tensor("delta_u", delta_u, owner=owner, finite=True)
        return kappa ** torch.tanh(sensitivity * delta_u)
    delta_u = check_in_interval("delta_u", delta_u, owner=owner)
    if not math.isfinite(delta_u):
        raise ValueError(f"{owner}: delta_u must be finite; got {delta_u!r}.")
    return kappa ** math.tanh(sensitivity * delta_u)


class UncertaintyState:
    """Per-episode memory of the per-dimension uncertainties: ``ema_u``, ``last_u``, ``first``.

    ``update(u_t, alpha)`` after decoding step t: on the first step ``ema_u <- u_t``,
    ``last_u <- u_t``; afterwards ``ema_u <- alpha ema_u + (1 - alpha) last_u`` then
    ``last_u <- u_t``, so ``delta() = mean(last_u - ema_u) = u_{t-1} - EMA_{t-2}`` uses the
    one-step-stale EMA exactly as the official code does (spec §2.3).

    Parameters
    ----------
    n_dims
        K_a, the number of action tokens per step (OpenVLA: 7).
    batch_size
        ``None`` for one episode (``(n_dims,)`` vectors) or B episodes run in lock-step
        (``(B, n_dims)``), at most 2**20.

    Examples
    --------
    >>> s = UncertaintyState(2)
    >>> s.update(torch.tensor([1.0, 3.0]), alpha=0.8)
    >>> s.update(torch.tensor([4.0, 4.0]), alpha=0.8)
    >>> round(s.delta(), 6)  # mean(last - ema) = mean([3, 1])
    2.0
    """

    def __init__(self, n_dims: int = 7, batch_size: int | None = None) -> None:
        owner = "UncertaintyState"
        self.n_dims = check_positive_int("n_dims", n_dims, owner=owner, maximum=4096)
        if batch_size is not None:
            batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=1 << 20)
        self.batch_size = batch_size
        self.reset()

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of ``ema_u`` and ``last_u``."""
        if self.batch_size is None:
            return (self.n_dims,)
        return (self.batch_size, self.n_dims)

    def reset(self) -> None:
        """Forget the episode: zeros and ``first = True`` (called at every episode start)."""
        self.ema_u = torch.zeros(self.shape, dtype=torch.float64)
        self.last_u = torch.zeros(self.shape, dtype=torch.float64)
        self.first = True

    def delta_batch(self) -> torch.Tensor:
        """Mean over dimensions of ``last_u - ema_u``: shape ``()`` or ``(B,)``."""
        return (self.last_u - self.ema_u).mean(dim=-1)

    def delta(self, episode: int | None = None) -> float:
        """Δu = mean_k(last_u[k] - ema_u[k]) of one episode (0 before any update).

        Parameters
        ----------
        episode
            The row of a batched state (required when ``batch_size > 1``); ``None`` or 0 for a
            single episode.
        """
        owner = "UncertaintyState.delta"
        n = 1 if self.batch_size is None else self.batch_size
        if episode is None:
            if n != 1:
                raise ValueError(
                    f"{owner}: episode must be given for a batched state (batch_size={n}); "
                    "or use delta_batch() for every episode."
                )
            episode = 0
        episode = check_positive_int("episode", episode, owner=owner, minimum=0, maximum=n - 1)
        return float(self.delta_batch().reshape(-1)[episode])

    def instantaneous_batch(self) -> torch.Tensor:
        """Mean over dimensions of ``last_u`` (the ablation that drives gamma by u_{t-1})."""
        return self.last_u.mean(dim=-1)

    def _check_index(self, index: torch.Tensor, owner: str) -> torch.Tensor:
        """``index``: a non-empty 1-D integer tensor of rows of this batched state."""
        if self.batch_size is None:
            raise ValueError(f"{owner}: index needs a batched state (batch_size set).")
        check_tensor("index", index, owner=owner, ndim=1, floating=False)
        if index.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
            raise TypeError(f"{owner}: index must hold integer rows; got dtype {index.dtype}.")
        if index.numel() == 0 or bool(((index < 0) | (index >= self.batch_size)).any()):
            raise ValueError(f"{owner}: index must hold rows in [0, {self.batch_size}).")
        return index.long()

    def select(self, index: torch.Tensor) -> UncertaintyState:
        """A batched state holding the rows ``index`` (int64, 1-D) of this batched state."""
        index = self._check_index(index, "UncertaintyState.select")
        out = UncertaintyState(self.n_dims, batch_size=int(index.numel()))
        out.ema_u, out.last_u, out.first = (
            self.ema_u[index].clone(),
            self.last_u[index].clone(),
            self.first,
        )
        return out

    def assign(self, index: torch.Tensor, other: UncertaintyState) -> None:
        """Write the rows of ``other`` back into rows ``index`` (the inverse of :meth:`select`)."""
        index = self._check_index(index, "UncertaintyState.assign")
        if not isinstance(other, UncertaintyState) or other.shape != (
            int(index.numel()),
            self.n_dims,
        ):
            raise TypeError(
                "UncertaintyState.assign: other must be the state select(index) returned."
            )
        self.ema_u[index] = other.ema_u
        self.last_u[index] = other.last_u
        self.first = other.first

    def update(self, u_vec: torch.Tensor, alpha: float = 0.8) -> None:
        """Fold in the step's per-dimension uncertainties ``u_vec`` (shape ``self.shape``).

        Raises
        ------
        ValueError
            ``u_vec`` of the wrong shape or not finite, ``alpha`` outside [0, 1).
        """
        owner = "UncertaintyState.update"
        check_tensor("u_vec", u_vec, owner=owner, shape=self.shape, finite=True)
        alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="left", owner=owner)
        u = u_vec.detach().to(torch.float64)
        if self.first:
            self.ema_u = u.clone()
            self.last_u = u.clone()
            self.first = False
            return
        self.ema_u = alpha * self.ema_u + (1.0 - alpha) * self.last_u
        self.last_u = u.clone()
