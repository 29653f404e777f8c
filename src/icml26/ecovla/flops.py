"""Analytic backbone FLOPs (EcoVLA Tables 1-3 "FLOPs (T)") and a latency probe.

FLOPs count the multiply-adds of the backbone's matrix products as 2 per multiply-accumulate,
the convention of ``torch.utils.flop_counter.FlopCounterMode``: per layer and S tokens,

    q: 2 S d (H_k hd)   k, v: 2 S d (G_k hd) each   scores QKᵀ and AV: 2 · 2 S² H_k hd
    o: 2 S (H_k hd) d   gate, up: 2 S d F_k each    down: 2 S F_k d,

with H_k kept query heads, G_k kept K/V heads, F_k kept MLP channels (the dense sizes when no
pattern is given). Norms, rotary embeddings, softmax and SiLU are not counted (they are not
matrix products). The full S x S score matrix is counted (no causal saving), as the counter does.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from icml26.core.validation import check_positive_int
from icml26.ecovla.adapter import BackboneAdapter
from icml26.ecovla.pattern import SparsityPattern

__all__ = ["LatencyStats", "backbone_flops", "measure_latency"]

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

    Example
    -------
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


@dataclass(frozen=True)
class LatencyStats:
    """Wall-clock seconds of repeated calls: median, mean, min, and every sample."""

    median: float
    mean: float
    minimum: float
    samples: tuple[float, ...]


def measure_latency(fn: Callable[[], Any], repeats: int = 20, warmup: int = 3) -> LatencyStats:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls (``time.perf_counter``).

    Parameters
    ----------
    fn
        A callable without arguments.
    repeats
        Timed calls (1 to 100000).
    warmup
        Untimed calls first (0 to 100000).
    """
    if not callable(fn):
        raise TypeError(f"measure_latency: fn must be callable; got {type(fn).__name__}.")
    repeats = check_positive_int("repeats", repeats, maximum=100_000, owner="measure_latency")
    warmup = check_positive_int(
        "warmup", warmup, minimum=0, maximum=100_000, owner="measure_latency"
    )
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return LatencyStats(
        statistics.median(samples), statistics.fmean(samples), min(samples), tuple(samples)
    )
