"""The compressed prefill: drive a :class:`~icml26.omnifit.ModelAdapter` layer by layer.

:func:`run_compressed` embeds a batch, asks a compressor (any
:class:`~icml26.omnifit.protocols.AbstractCompressor`) which tokens live before each layer and
runs the layers on those tokens only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icml26.omnifit.protocols import AbstractCompressor, ModelAdapter, check_adapter

if TYPE_CHECKING:
    import torch

__all__ = ["CompressedForward", "check_compressor_fits", "run_compressed"]


@dataclass(frozen=True)
class CompressedForward:
    """Outcome of one compressed prefill.

    Attributes
    ----------
    logits
        The head's output, ``(B, classes)`` or ``(B, vocab)``.
    alive
        Tokens alive in each layer (the length of layer ``l``'s KV cache).
    kept
        Original indices of the tokens alive in each layer, ``(B, n_l)`` each.
    """

    logits: torch.Tensor
    alive: list[int]
    kept: list[torch.Tensor]


def check_compressor_fits(compressor: Any, adapter: ModelAdapter, *, owner: str) -> None:
    """Refuse a compressor that is not an ``AbstractCompressor`` (or ``None``) or whose profile
    was calibrated for a model with another number of layers."""
    if compressor is not None and not isinstance(compressor, AbstractCompressor):
        raise TypeError(
            f"{owner}: compressor must be an AbstractCompressor or None; "
            f"got {type(compressor).__name__}."
        )
    profile = getattr(compressor, "profile", None)
    if profile is not None and profile.n_layers != len(adapter.layers):
        raise ValueError(
            f"{owner}: the compressor's profile has {profile.n_layers} layers but the model has "
            f"{len(adapter.layers)}; calibrate a profile for this model."
        )


def run_compressed(adapter: Any, batch: Any, compressor: Any = None) -> CompressedForward:
    """Prefill ``batch`` through ``adapter``, letting ``compressor`` shrink the tokens per layer.

    Parameters
    ----------
    adapter
        A :class:`~icml26.omnifit.ModelAdapter`.
    batch
        What ``adapter.embed`` accepts.
    compressor
        A compressor (``OmniFitCompressor`` or a baseline, i.e. any
        :class:`~icml26.omnifit.protocols.AbstractCompressor`), or ``None`` for the full forward.

    Returns
    -------
    CompressedForward

    Raises
    ------
    ValueError
        If the compressor's profile has a different number of layers than the model.
    """
    import torch

    check_adapter(adapter, owner="run_compressed")
    check_compressor_fits(compressor, adapter, owner="run_compressed")
    L = len(adapter.layers)
    h, ids, pos = adapter.embed(batch)
    mask = None
    idx = torch.arange(h.shape[1]).expand(h.shape[0], -1)
    if compressor is not None:
        compressor.prepare(h, ids, adapter=adapter, pos_ids=pos)
    alive, kept = [], []
    for layer in range(L):
        if compressor is not None:
            h, pos, mask, idx = compressor.before_layer(layer, h, pos, mask)
        alive.append(int(h.shape[1]))
        kept.append(idx)
        h = adapter.run_layer(layer, h, pos, mask)
    return CompressedForward(adapter.head(h), alive, kept)
