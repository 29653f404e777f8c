"""EAP step 2: temporal-consistency channel scoring (EcoVLA, arXiv:2602.00780, §3.3, Eqs. 8-11).

A dense step's intermediate activations X^{int} (the input of W_down, or of W_O) give the
instantaneous channel energy eps_k = Σ_s X_{s,k}^2 (Eq. 8). It is fused with a history prior E
initialised from calibration data, Ê = α E + (1 - α) eps (Eq. 9), and the prior follows the scene,
E ← λ E + (1 - λ) eps (Eq. 10). A channel's importance is the Wanda-style structured score
S_k = ||W_final[:, k]||_2 · sqrt(Ê_k) (Eq. 11); a head scores the sum over its head_dim channels.
The top (1 - ratio) fraction of channels (heads) is kept.

Deviations: the exact algebraic forms of Eqs. 9-11 are not verbatim in the sources read (spec
§2.3): the convex fusion, the exponential history update with λ = 0.9 and the product of the
column norm with the root energy are inferred; so is the head score (sum of channel scores).
Ties in the top-k go to the lower index.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, final

from icml26.core.validation import check_in_interval, check_one_of, check_tensor

if TYPE_CHECKING:
    import torch

__all__ = ["TemporalPrior", "channel_energy", "select_keep", "structured_scores"]

GROUPS = ("channel", "head")


def channel_energy(x_int: torch.Tensor) -> torch.Tensor:
    """Instantaneous channel feature eps_k = Σ_{b,s} X^{int}_{b,s,k}^2 (Eq. 8).

    Parameters
    ----------
    x_int
        Intermediate activations of one module, shape ``(S, C)`` or ``(B, S, C)``.

    Returns
    -------
    torch.Tensor
        Shape ``(C,)``, float64 when the input is float64, else float32.

    Examples
    --------
    >>> import torch
    >>> channel_energy(torch.tensor([[1.0, 2.0], [3.0, 0.0]])).tolist()
    [10.0, 4.0]
    """
    import torch

    x_int = check_tensor("x_int", x_int, finite=True, owner="channel_energy")
    if x_int.ndim not in (2, 3) or x_int.shape[-1] == 0:
        raise ValueError(
            "channel_energy: x_int must have shape (S, C) or (B, S, C) with C >= 1; "
            f"got {tuple(x_int.shape)}."
        )
    dtype = torch.float64 if x_int.dtype == torch.float64 else torch.float32
    x = x_int.detach().double().reshape(-1, x_int.shape[-1])  # (B*S, C), float64 sums
    return x.square().sum(dim=0).to(dtype)


@final
class TemporalPrior:
    """History prior E of channel energies with fusion (Eq. 9) and update (Eq. 10).

    Parameters
    ----------
    calib_energy
        E at episode start: the mean eps over calibration frames, shape ``(..., C)`` (any
        stacking, e.g. ``(layers, C)``); entries must be finite and >= 0.
    alpha
        Temporal inertia α in [0, 1] of the fused decision feature (paper default 0.7).
    lam
        History decay λ in [0, 1] (default 0.9, inferred).

    Examples
    --------
    >>> import torch
    >>> prior = TemporalPrior(torch.tensor([4.0, 0.0]), alpha=0.5, lam=0.5)
    >>> prior.fuse(torch.tensor([0.0, 2.0])).tolist()
    [2.0, 1.0]
    >>> prior.update(torch.tensor([0.0, 2.0])).tolist()
    [2.0, 1.0]
    """

    def __init__(self, calib_energy: torch.Tensor, alpha: float = 0.7, lam: float = 0.9) -> None:
        owner = "TemporalPrior"
        calib_energy = _check_energy("calib_energy", calib_energy, owner)
        self.alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, owner=owner)
        self.lam = check_in_interval("lam", lam, low=0.0, high=1.0, owner=owner)
        self.calib_energy = calib_energy.detach().clone()
        self.energy = self.calib_energy.clone()

    def _check_eps(self, eps: torch.Tensor, where: str) -> torch.Tensor:
        eps = _check_energy("eps", eps, f"TemporalPrior.{where}")
        if eps.shape != self.energy.shape:
            raise ValueError(
                f"TemporalPrior.{where}: eps must have the prior's shape "
                f"{tuple(self.energy.shape)} (one entry per channel); got {tuple(eps.shape)}."
            )
        return eps.to(self.energy.dtype)

    def fuse(self, eps: torch.Tensor) -> torch.Tensor:
        """Ê = α E + (1 - α) eps, the decision feature (Eq. 9); E is left unchanged."""
        eps = self._check_eps(eps, "fuse")
        return self.alpha * self.energy + (1.0 - self.alpha) * eps

    def update(self, eps: torch.Tensor) -> torch.Tensor:
        """E ← λ E + (1 - λ) eps over the full channel set (Eq. 10); returns the new E."""
        eps = self._check_eps(eps, "update")
        self.energy = self.lam * self.energy + (1.0 - self.lam) * eps
        return self.energy

    def reset(self) -> None:
        """E ← the calibration prior (episode start)."""
        self.energy = self.calib_energy.clone()


def _check_energy(name: str, energy: torch.Tensor, owner: str) -> torch.Tensor:
    energy = check_tensor(name, energy, finite=True, owner=owner)
    if energy.ndim == 0 or energy.shape[-1] == 0:
        raise ValueError(
            f"{owner}: {name} must have a channel axis of length >= 1; got shape "
            f"{tuple(energy.shape)}."
        )
    if bool((energy < 0).any()):
        raise ValueError(f"{owner}: {name} must be >= 0 (a sum of squares); got a negative entry.")
    return energy


def structured_scores(
    w_final: torch.Tensor,
    energy: torch.Tensor,
    group: Literal["channel", "head"] = "channel",
    head_dim: int | None = None,
) -> torch.Tensor:
    """Wanda-style structured importance S_k = ||W_final[:, k]||_2 · sqrt(energy_k) (Eq. 11).

    Parameters
    ----------
    w_final
        The final projection of the module (``W_down`` or ``W_O``), shape ``(C_out, C_in)`` as
        stored by ``nn.Linear``; channel k is column k.
    energy
        Fused activation energy Ê, shape ``(C_in,)``, entries >= 0.
    group
        ``"channel"``: one score per input channel; ``"head"``: one per head, the sum of its
        ``head_dim`` consecutive channel scores.
    head_dim
        Channels per head; required for ``group="head"`` and must divide C_in.

    Returns
    -------
    torch.Tensor
        Shape ``(C_in,)`` or ``(C_in // head_dim,)``, in the dtype of ``energy`` (float64 in,
        float64 out).

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([[3.0, 0.0, 1.0, 1.0], [4.0, 1.0, 0.0, 1.0]])
    >>> structured_scores(w, torch.tensor([1.0, 4.0, 9.0, 0.0])).tolist()
    [5.0, 2.0, 3.0, 0.0]
    >>> structured_scores(w, torch.tensor([1.0, 4.0, 9.0, 0.0]), "head", head_dim=2).tolist()
    [7.0, 3.0]
    """
    import torch

    owner = "structured_scores"
    group = check_one_of("group", group, GROUPS, owner=owner)
    w_final = check_tensor("w_final", w_final, ndim=2, finite=True, owner=owner)
    energy = _check_energy("energy", energy, owner)
    c_in = w_final.shape[1]
    if energy.ndim != 1 or energy.shape[0] != c_in:
        raise ValueError(
            f"{owner}: energy must have shape ({c_in},), one entry per column of w_final; "
            f"got {tuple(energy.shape)}."
        )
    dtype = energy.dtype if energy.dtype == torch.float64 else torch.float32
    w = w_final.detach().double()
    scale = w.abs().amax().clamp_min(torch.finfo(torch.float64).tiny)  # overflow-safe norm
    norms = (w / scale).norm(dim=0) * scale  # (C_in,)
    scores = (norms * energy.detach().double().sqrt()).to(dtype)  # (C_in,)
    if group == "channel":
        if head_dim is not None:
            raise ValueError(f"{owner}: head_dim is only for group='head'; got {head_dim!r}.")
        return scores
    if isinstance(head_dim, bool) or not isinstance(head_dim, int):
        raise TypeError(f"{owner}: head_dim must be an int for group='head'; got {head_dim!r}.")
    if head_dim < 1 or c_in % head_dim:
        raise ValueError(
            f"{owner}: head_dim must be a positive divisor of the {c_in} channels; got {head_dim}."
        )
    return scores.reshape(c_in // head_dim, head_dim).sum(dim=1)


def n_keep(n: int, ratio: float) -> int:
    """round((1 - ratio) n) (half up), at least 1: how many of n groups a ratio keeps."""
    return max(1, math.floor((1.0 - ratio) * n + 0.5))


def select_keep(scores: torch.Tensor, ratio: float) -> torch.Tensor:
    """Indices of the round((1 - ratio) C) highest scores (at least one), sorted ascending.

    Parameters
    ----------
    scores
        One importance per group, shape ``(C,)``, finite.
    ratio
        Pruning ratio in [0, 1); 0 keeps everything.

    Returns
    -------
    torch.LongTensor
        Kept indices in increasing order; equal scores go to the lower index.

    Examples
    --------
    >>> import torch
    >>> select_keep(torch.tensor([0.1, 3.0, 2.0, 2.0]), 0.5).tolist()
    [1, 2]
    """
    scores = check_tensor("scores", scores, ndim=1, finite=True, owner="select_keep")
    ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, closed="left", owner="select_keep")
    if scores.shape[0] == 0:
        raise ValueError("select_keep: scores must hold at least one score; got shape (0,).")
    return top_k(scores, n_keep(scores.shape[0], ratio))


def top_k(scores: torch.Tensor, k: int) -> torch.Tensor:
    """Sorted indices of the k highest scores, equal scores going to the lower index."""
    import torch

    order = torch.sort(scores.detach().double(), descending=True, stable=True).indices
    return torch.sort(order[:k]).values.to(torch.long)
