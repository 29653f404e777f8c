"""Analytic backbone FLOPs (EcoVLA Tables 1-3 "FLOPs (T)") and the cost of a pattern update.

FLOPs count the multiply-adds of the backbone's matrix products as 2 per multiply-accumulate,
the convention of ``torch.utils.flop_counter.FlopCounterMode``: per layer and S tokens,

    q: 2 S d (H_k hd)   k, v: 2 S d (G_k hd) each   scores QKᵀ and AV: 2 · 2 S² H_k hd
    o: 2 S (H_k hd) d   gate, up: 2 S d F_k each    down: 2 S F_k d,

with H_k kept query heads, G_k kept K/V heads, F_k kept MLP channels (the dense sizes when no
pattern is given). Norms, rotary embeddings, softmax and SiLU are not counted (they are not
matrix products). The full S x S score matrix is counted (no causal saving), as the counter does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from icml26.core.validation import check_positive_int
from icml26.ecovla.adapter import BackboneAdapter
from icml26.ecovla.pattern import SparsityPattern

if TYPE_CHECKING:
    from icml26.ecovla.pruner import StepRecord

__all__ = ["backbone_flops", "mean_step_flops", "pattern_update_flops"]

MAX_TOKENS = 1_000_000


def backbone_flops(
    adapter: BackboneAdapter,
    pattern: SparsityPattern | None,
    n_tokens: int | Sequence[int],
) -> float:
    """FLOPs of one backbone pass with ``pattern`` (``None``: dense).

    Parameters
    ----------
    adapter
        The policy whose dense sizes are read.
    pattern
        Kept channels/heads per layer, or ``None``.
    n_tokens
        Sequence length S, one int or one per layer (token pruning).

    Examples
    --------
    >>> from icml26.ecovla import TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, n_heads=2, n_kv_heads=2, d_ff=64))
    >>> backbone_flops(model, None, 10)  # 2·10·32·(32·4 + 3·64) + 4·100·32
    217600.0
    """
    if not isinstance(adapter, BackboneAdapter):
        raise TypeError(
            f"backbone_flops: adapter must be a BackboneAdapter; got {type(adapter).__name__}."
        )
    d = adapter.dims()
    if isinstance(n_tokens, int) and not isinstance(n_tokens, bool):
        tokens = [n_tokens] * d.n_layers
    elif isinstance(n_tokens, Sequence) and not isinstance(n_tokens, str):
        tokens = list(n_tokens)
    else:
        raise TypeError(
            f"backbone_flops: n_tokens must be an int or a sequence of ints; got "
            f"{type(n_tokens).__name__}."
        )
    if len(tokens) != d.n_layers:
        raise ValueError(
            f"backbone_flops: n_tokens must give one length per layer "
            f"({d.n_layers}); got {len(tokens)}."
        )
    tokens = [
        check_positive_int("n_tokens", s, maximum=MAX_TOKENS, owner="backbone_flops")
        for s in tokens
    ]
    if pattern is not None:
        adapter._check_pattern(pattern)
    total = 0.0
    for i, S in enumerate(tokens):
        F = d.d_ff if pattern is None else len(pattern.mlp[i])
        H = d.n_heads if pattern is None else len(pattern.heads[i])
        G = d.n_kv_heads if (pattern is None or d.heads_per_group > 1) else H
        hd, D = d.head_dim, d.d_model
        total += 2 * S * D * (2 * H * hd + 2 * G * hd)  # q, o and k, v
        total += 2 * 2 * S * S * H * hd  # QKᵀ and AV
        total += 2 * S * D * 3 * F  # gate, up, down
    return float(total)


def mean_step_flops(
    adapter: BackboneAdapter,
    pattern: SparsityPattern,
    n_tokens: int | Sequence[int],
    records: Iterable[StepRecord],
) -> float:
    """Mean backbone FLOPs per control step of a pruner: dense steps at the dense cost, the
    others at the cost of ``pattern`` (every pattern of one ratio has the same keep counts).

    Parameters
    ----------
    adapter, pattern, n_tokens
        As for :func:`backbone_flops`.
    records
        The pruner's step records (``EcoVLAPruner.records``, or ``PruningLog.records`` over
        episodes); only ``record.dense`` is read.

    Examples
    --------
    >>> from icml26.ecovla import StepRecord, TinyVLA, TinyVLAConfig, random_pattern
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, n_heads=2, n_kv_heads=2, d_ff=64))
    >>> pattern = random_pattern(model, 0.5)
    >>> steps = [StepRecord(t, t == 0, False, 1.0, None, None) for t in range(4)]
    >>> dense, sparse = backbone_flops(model, None, 10), backbone_flops(model, pattern, 10)
    >>> mean_step_flops(model, pattern, 10, steps) == (dense + 3 * sparse) / 4
    True
    """
    dense = backbone_flops(adapter, None, n_tokens)
    sparse = backbone_flops(adapter, pattern, n_tokens)
    flags = [bool(r.dense) for r in records]
    n_dense, n_steps = sum(flags), len(flags)
    return (n_dense * dense + (n_steps - n_dense) * sparse) / max(n_steps, 1)


def pattern_update_flops(adapter: BackboneAdapter, n_tokens: int) -> float:
    """FLOPs of one pattern update (Eqs. 8-12), the work I²O moves off the acting path.

    Per layer and scored module with C_in input channels (W_down: d_ff, W_O: H · hd): the
    activations' sum of squares 2 · S · C_in, and the fusion, score and top-k 4 · C_in; the
    weight norms ||W_final|| are computed once and not counted.

    Examples
    --------
    >>> from icml26.ecovla import TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, n_heads=2, n_kv_heads=2, d_ff=64))
    >>> pattern_update_flops(model, 10)  # (2·10 + 4)·64 + (2·10 + 4)·32
    2304.0
    """
    if not isinstance(adapter, BackboneAdapter):
        raise TypeError(
            "pattern_update_flops: adapter must be a BackboneAdapter; got "
            f"{type(adapter).__name__}."
        )
    S = check_positive_int("n_tokens", n_tokens, maximum=MAX_TOKENS, owner="pattern_update_flops")
    d = adapter.dims()
    per_layer = sum(2 * S * c + 4 * c for c in (d.d_ff, d.n_heads * d.head_dim))
    return float(d.n_layers * per_layer)
