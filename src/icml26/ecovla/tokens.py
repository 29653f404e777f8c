"""FastV-style visual-token pruning, the token-level method EcoVLA composes with (spec §4).

After layer K, visual tokens are ranked by the attention the last token paid them in layer K-1
and only the top ``keep_ratio`` fraction continues; all non-visual tokens are kept, in order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from icml26.core.validation import check_in_interval, check_positive_int, check_tensor

if TYPE_CHECKING:
    import torch

__all__ = ["fastv_sequence_lengths", "fastv_token_prune"]


def _n_kept(keep_ratio: float, n_visual: int) -> int:
    """Visual tokens FastV keeps: round(keep_ratio · n_visual), at least one."""
    return max(1, math.floor(keep_ratio * n_visual + 0.5))


def fastv_token_prune(
    hidden: torch.Tensor,
    attn_last_row: torch.Tensor,
    keep_ratio: float,
    visual_start: int,
    n_visual: int,
    per_row: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Drop the least-attended visual tokens.

    Parameters
    ----------
    hidden
        Hidden states ``(B, S, D)``.
    attn_last_row
        Attention of the last token to every position, ``(B, S)`` (mean over heads); the batch
        shares one selection, ranked by the batch mean, unless ``per_row``.
    keep_ratio
        Fraction of visual tokens kept, in (0, 1]; at least one is kept.
    visual_start, n_visual
        The visual tokens are positions ``visual_start .. visual_start + n_visual - 1``.

    per_row
        Rank each row by its own attention (rows of a batch are independent episodes); the
        kept positions are then ``(B, S')``.

    Returns
    -------
    (torch.Tensor, torch.LongTensor)
        The kept hidden states ``(B, S', D)`` and the kept positions ``(S',)`` (increasing),
        ``(B, S')`` with ``per_row``.

    Examples
    --------
    >>> import torch
    >>> h = torch.arange(6.0).view(1, 6, 1)
    >>> attn = torch.tensor([[0.1, 0.5, 0.0, 0.3, 0.05, 0.05]])
    >>> _, kept = fastv_token_prune(h, attn, 0.5, visual_start=1, n_visual=4)
    >>> kept.tolist()
    [0, 1, 3, 5]
    """
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
    if not isinstance(per_row, bool):
        raise TypeError(f"{owner}: per_row must be a bool; got {type(per_row).__name__}.")
    k = _n_kept(keep_ratio, n_visual)
    if per_row:
        visual = attn_last_row[:, visual_start : visual_start + n_visual].double()
        order = torch.sort(visual, dim=1, descending=True, stable=True).indices[:, :k]
        kept_visual = torch.sort(order, dim=1).values.cpu() + visual_start
        rows = hidden.shape[0]
        kept = torch.cat(
            [
                torch.arange(visual_start).expand(rows, -1),
                kept_visual,
                torch.arange(visual_start + n_visual, n).expand(rows, -1),
            ],
            dim=1,
        )
        index = kept.to(hidden.device)[..., None].expand(-1, -1, hidden.shape[-1])
        return torch.gather(hidden, 1, index), kept
    scores = attn_last_row[:, visual_start : visual_start + n_visual].double().mean(dim=0)
    order = torch.sort(scores, descending=True, stable=True).indices[:k]
    kept_visual = torch.sort(order).values + visual_start
    kept_visual = kept_visual.cpu()
    kept = torch.cat(
        [torch.arange(visual_start), kept_visual, torch.arange(visual_start + n_visual, n)]
    )
    return hidden[:, kept.to(hidden.device)], kept


def fastv_sequence_lengths(
    n_tokens: int, n_visual: int, keep_ratio: float, start_layer: int, n_layers: int
) -> list[int]:
    """Sequence length of every layer when FastV keeps ``keep_ratio`` of the visual tokens from
    layer ``start_layer`` on (the ``n_tokens`` argument of :func:`backbone_flops`).

    Examples
    --------
    >>> fastv_sequence_lengths(70, 64, 0.5, start_layer=2, n_layers=4)
    [70, 70, 38, 38]
    """
    owner = "fastv_sequence_lengths"
    n_tokens = check_positive_int("n_tokens", n_tokens, maximum=1_000_000, owner=owner)
    n_visual = check_positive_int("n_visual", n_visual, maximum=n_tokens, owner=owner)
    keep_ratio = check_in_interval(
        "keep_ratio", keep_ratio, low=0.0, high=1.0, closed="right", owner=owner
    )
    n_layers = check_positive_int("n_layers", n_layers, maximum=10_000, owner=owner)
    start_layer = check_positive_int(
        "start_layer", start_layer, minimum=0, maximum=n_layers, owner=owner
    )
    pruned = n_tokens - n_visual + _n_kept(keep_ratio, n_visual)
    return [n_tokens if i < start_layer else pruned for i in range(n_layers)]
