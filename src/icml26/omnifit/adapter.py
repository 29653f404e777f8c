"""The model side of OmniFit: a layer-loop protocol and the compressed prefill driver.

Any decoder (the TinyOmni stand-in, the Qwen2.5-Omni thinker) is driven through a
:class:`ModelAdapter`: ``embed`` gives ``H^(0)``, the modality codes and the position ids;
``run_layer`` runs decoder layer ``l`` on the tokens alive there (their original position ids are
gathered, never recomputed, and ``mask`` is ``None`` for plain causal attention or a boolean
``(B, n, n)`` "may attend" mask combined with causality); ``head`` reads the last position.
:func:`run_compressed` asks a compressor which tokens live before each layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

__all__ = ["CompressedForward", "ModelAdapter", "check_adapter", "run_compressed"]


@runtime_checkable
class ModelAdapter(Protocol):
    """What OmniFit needs from a decoder-only model.

    Attributes
    ----------
    layers
        The decoder layers (only ``len(layers)`` is used by OmniFit).
    hidden_size, ffn_size, n_heads
        Model sizes for the cost model and the accounting.
    """

    layers: Sequence[Any]
    hidden_size: int
    ffn_size: int
    n_heads: int

    def embed(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(H0 (B, n, d), modality_ids (n,), pos_ids (B, n) or (3, B, n))``."""
        ...

    def run_layer(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Decoder layer ``l`` on ``h`` (``(B, n_l, d)``)."""
        ...

    def attention_map(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Eager attention probabilities of layer ``l``, ``(B, heads, n_l, n_l)`` (calibration)."""
        ...

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Logits read from the last position of the final hidden states."""
        ...


def check_adapter(adapter: Any, *, owner: str, need_attention: bool = False) -> Any:
    """Raise a ``TypeError`` naming ``adapter`` unless it has the protocol's members."""
    members = ["embed", "run_layer", "head", "layers", "hidden_size", "ffn_size"]
    if need_attention:
        members.append("attention_map")
    missing = [m for m in members if not hasattr(adapter, m)]
    if missing:
        raise TypeError(
            f"{owner}: adapter must implement ModelAdapter; {type(adapter).__name__} lacks "
            f"{', '.join(missing)}."
        )
    return adapter


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
    from icml26.omnifit.compressor import AbstractCompressor

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
        A :class:`ModelAdapter`.
    batch
        What ``adapter.embed`` accepts.
    compressor
        A compressor (``OmniFitCompressor`` or a baseline, i.e. any
        :class:`~icml26.omnifit.compressor.AbstractCompressor`), or ``None`` for the full forward.

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
