"""Cost accounting: analytic FLOPs per layer, of a prefill and of token selection, KV-cache
bytes, and a prefill timer.

``flops_per_layer(n, d, d_ff, heads)`` counts the multiply-adds (x2) of one pre-norm decoder layer
on ``n`` tokens: q/o projections ``2 * 2 n d^2``, k/v projections ``2 * 2 n d d_kv``, attention
scores and weighted sum ``2 * 2 n^2 d`` (full, not halved for causality, as SDPA computes it),
SwiGLU MLP ``3 * 2 n d d_ff``. With ``kv_heads = heads`` this is ``C(n) = c1 n + c2 n^2`` with
the default coefficients of :func:`cost_coefficients`. :func:`prefill_flops` sums it over the
layers of a (compressed) prefill; :func:`arts_selection_flops` counts ARTS's own work (pairwise
distances for DPC-KNN and the projections onto the other modality's anchors) and
:func:`attention_map_flops` one eager attention map (what attention-based selection pays).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from icml26.core.timing import interleaved_median_seconds
from icml26.core.validation import check_array, check_positive_int
from icml26.omnifit.tokens import AUDIO_NAME, VIDEO_NAME, modality_counts

if TYPE_CHECKING:
    import torch

__all__ = [
    "arts_selection_flops",
    "attention_map_flops",
    "cost_coefficients",
    "flops_per_layer",
    "kv_bytes",
    "prefill_flops",
    "time_prefill",
]

MAX_SIZE = 10**9


def cost_coefficients(d: int, d_ff: int) -> tuple[float, float]:
    """Default cost-model coefficients ``c1 = 8 d^2 + 6 d d_ff`` and ``c2 = 4 d``.

    Examples
    --------
    >>> cost_coefficients(96, 256)
    (221184.0, 384.0)
    """
    d = check_positive_int("d", d, maximum=MAX_SIZE, owner="cost_coefficients")
    d_ff = check_positive_int("d_ff", d_ff, maximum=MAX_SIZE, owner="cost_coefficients")
    return float(8 * d * d + 6 * d * d_ff), float(4 * d)


def flops_per_layer(n: int, d: int, d_ff: int, heads: int, kv_heads: int | None = None) -> int:
    """FLOPs of one decoder layer on ``n`` tokens (see the module docstring).

    Parameters
    ----------
    n
        Tokens in the layer (``>= 0``).
    d, d_ff
        Hidden and SwiGLU sizes.
    heads, kv_heads
        Query heads and key/value heads (``None``: as many as query heads, i.e. MHA).

    Examples
    --------
    >>> flops_per_layer(10, 8, 16, 2) == 10 * (8 * 8 * 8 + 6 * 8 * 16) + 4 * 8 * 10**2
    True
    """
    owner = "flops_per_layer"
    n = check_positive_int("n", n, minimum=0, maximum=MAX_SIZE, owner=owner)
    d = check_positive_int("d", d, maximum=MAX_SIZE, owner=owner)
    d_ff = check_positive_int("d_ff", d_ff, maximum=MAX_SIZE, owner=owner)
    heads = check_positive_int("heads", heads, maximum=d, owner=owner)
    kv = (
        heads
        if kv_heads is None
        else check_positive_int("kv_heads", kv_heads, maximum=heads, owner=owner)
    )
    if d % heads or heads % kv:
        raise ValueError(
            f"{owner}: heads must divide d and kv_heads must divide heads; "
            f"got d={d}, heads={heads}, kv_heads={kv}."
        )
    d_kv = d // heads * kv
    projections = 2 * n * d * d * 2 + 2 * n * d * d_kv * 2  # q, o and k, v
    attention = 2 * n * n * d * 2  # scores Q K^T and the weighted sum A V
    mlp = 3 * 2 * n * d * d_ff
    return projections + attention + mlp


def _check_alive(alive: Sequence[int], owner: str) -> list[int]:
    """``alive`` as a list of non-negative integer token counts."""
    if isinstance(alive, str | bytes):
        raise TypeError(f"{owner}: alive must be a sequence of token counts; got a string.")
    counts = check_array("alive", alive, ndim=1, owner=owner)
    if counts.size and (
        counts.min() < 0 or (counts != counts.round()).any() or counts.max() > MAX_SIZE
    ):
        raise ValueError(f"{owner}: alive must hold non-negative integer token counts.")
    return [int(n) for n in counts]


def prefill_flops(alive: Sequence[int], d: int, d_ff: int, heads: int, *, batch: int = 1) -> float:
    """Analytic FLOPs of a prefill whose layer ``l`` runs on ``alive[l]`` tokens, per batch.

    ``batch * sum_l flops_per_layer(alive[l], d, d_ff, heads)``; ``alive`` is what
    :func:`~icml26.omnifit.run_compressed` reports.

    Examples
    --------
    >>> prefill_flops([10, 5], d=8, d_ff=16, heads=2, batch=2) == 2 * (
    ...     flops_per_layer(10, 8, 16, 2) + flops_per_layer(5, 8, 16, 2))
    True
    """
    owner = "prefill_flops"
    counts = _check_alive(alive, owner)
    batch = check_positive_int("batch", batch, maximum=MAX_SIZE, owner=owner)
    return float(batch * sum(flops_per_layer(n, d, d_ff, heads) for n in counts))


def arts_selection_flops(modality_ids: torch.Tensor, d: int, M: int) -> float:
    """Analytic FLOPs of ARTS's scoring of one sample (no attention maps).

    Per modality with ``n`` tokens: the pairwise squared distances of DPC-KNN, ``3 n^2 d``, and
    the projections onto the other modality's ``min(M, n_other)`` anchors, ``2 n min(M,
    n_other) d``.

    Examples
    --------
    >>> import torch
    >>> arts_selection_flops(torch.tensor([0, 1, 1, 2]), d=4, M=8)
    92.0
    """
    owner = "arts_selection_flops"
    counts = modality_counts(modality_ids)
    d = check_positive_int("d", d, maximum=MAX_SIZE, owner=owner)
    M = check_positive_int("M", M, maximum=MAX_SIZE, owner=owner)
    n = [counts[VIDEO_NAME], counts[AUDIO_NAME]]
    return float(
        sum(3 * a * a * d + 2 * a * min(M, b) * d for a, b in zip(n, n[::-1], strict=True))
    )


def attention_map_flops(n: int, d: int) -> float:
    """Analytic FLOPs of one eager attention map on ``n`` tokens: ``4 n d^2 + 2 n^2 d``.

    The query/key projections and the scores ``Q K^T``: what an attention-based selector (FastV)
    computes to rank the tokens.

    Examples
    --------
    >>> attention_map_flops(10, 8)
    4160.0
    """
    owner = "attention_map_flops"
    n = check_positive_int("n", n, minimum=0, maximum=MAX_SIZE, owner=owner)
    d = check_positive_int("d", d, maximum=MAX_SIZE, owner=owner)
    return float(4 * n * d**2 + 2 * n * n * d)


def kv_bytes(
    alive: Sequence[int],
    d: int,
    *,
    batch: int = 1,
    bytes_per_value: int = 4,
    kv_dim: int | None = None,
) -> int:
    """Bytes of a KV cache whose layer ``l`` holds ``alive[l]`` tokens: ``sum_l n_l 2 d_kv b``.

    Examples
    --------
    >>> kv_bytes([10, 5], d=8, bytes_per_value=2)
    480
    """
    owner = "kv_bytes"
    counts = _check_alive(alive, owner)
    d = check_positive_int("d", d, maximum=MAX_SIZE, owner=owner)
    batch = check_positive_int("batch", batch, maximum=MAX_SIZE, owner=owner)
    b = check_positive_int("bytes_per_value", bytes_per_value, maximum=64, owner=owner)
    width = (
        d if kv_dim is None else check_positive_int("kv_dim", kv_dim, maximum=MAX_SIZE, owner=owner)
    )
    return sum(counts) * 2 * width * b * batch


def time_prefill(fn: Callable[[], Any], repeats: int = 20, warmup: int = 3) -> float:
    """Median wall time (seconds) of ``fn()`` over ``repeats`` runs after ``warmup`` runs.

    Examples
    --------
    >>> time_prefill(lambda: sum(range(10)), repeats=3, warmup=1) >= 0
    True
    """
    if not callable(fn):
        raise TypeError(f"time_prefill: fn must be callable; got {type(fn).__name__}.")
    repeats = check_positive_int("repeats", repeats, maximum=10**4, owner="time_prefill")
    warmup = check_positive_int("warmup", warmup, minimum=0, maximum=10**4, owner="time_prefill")
    return interleaved_median_seconds({"fn": fn}, repeats, warmup)["fn"]
