"""FastV-style visual-token pruning, the token-level method EcoVLA composes with (spec §4).

After layer K, visual tokens are ranked by the attention the last token paid them in layer K-1
and only the top ``keep_ratio`` fraction continues; all non-visual tokens are kept, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.core.validation import check_in_interval, check_positive_int, check_tensor

if TYPE_CHECKING:
    import torch

__all__ = ["fastv_token_prune"]


def fastv_token_prune(
    hidden: torch.Tensor,
    attn_last_row: torch.Tensor,
    keep_ratio: float,
    visual_start: int,
    n_visual: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Drop the least-attended visual tokens.

    Parameters
    ----------
    hidden
        Hidden states ``(B, S, D)``.
    attn_last_row
        Attention of the last token to every position, ``(B, S)`` (mean over heads); the batch
        shares one selection, ranked by the batch mean.
    keep_ratio
        Fraction of visual tokens kept, in (0, 1]; at least one is kept.
    visual_start, n_visual
        The visual tokens are positions ``visual_start .. visual_start + n_visual - 1``.

    Returns
    -------
    (torch.Tensor, torch.LongTensor)
        The kept hidden states ``(B, S', D)`` and the kept positions ``(S',)`` (increasing).

    Example
    -------
    >>> import torch
    >>> h = torch.arange(6.0).view(1, 6, 1)
    >>> attn = torch.tensor([[0.1, 0.5, 0.0, 0.3, 0.05, 0.05]])
    >>> _, kept = fastv_token_prune(h, attn, 0.5, visual_start=1, n_visual=4)
    >>> kept.tolist()
    [0, 1, 3, 5]
    """
    import math

    import torch

    owner = "fastv_token_prune"
    hidden = check_tensor("hidden", hidden, ndim=3, owner=owner)
    attn_last_row = check_tensor("attn_last_row", attn_last_row, ndim=2, finite=True, owner=owner)
    keep_ratio = check_in_interval(
        "keep_ratio", keep_ratio, low=0.0, high=1.0, closed="right", owner=owner
    )
    n = hidden.shape[1]
    visual_start = check_positive_int(
        "visual_start", visual_start, minimum=0, maximum=n, owner=owner
    )
    n_visual = check_positive_int("n_visual", n_visual, maximum=n - visual_start, owner=owner)
    if attn_last_row.shape != hidden.shape[:2]:
        raise ValueError(
            f"{owner}: attn_last_row must have shape {tuple(hidden.shape[:2])} "
            f"(batch, tokens); got {tuple(attn_last_row.shape)}."
        )
    k = max(1, math.floor(keep_ratio * n_visual + 0.5))
    scores = attn_last_row[:, visual_start : visual_start + n_visual].double().mean(dim=0)
    order = torch.sort(scores, descending=True, stable=True).indices[:k]
    kept_visual = torch.sort(order).values + visual_start
    kept_visual = kept_visual.cpu()
    kept = torch.cat(
        [torch.arange(visual_start), kept_visual, torch.arange(visual_start + n_visual, n)]
    )
    return hidden[:, kept.to(hidden.device)], kept
