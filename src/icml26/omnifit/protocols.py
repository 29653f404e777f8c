"""The two interfaces OmniFit is written against; the bottom layer of the package.

A decoder (the TinyOmni stand-in, the Qwen2.5-Omni thinker) is driven through a
:class:`ModelAdapter`: ``embed`` gives ``H^(0)``, the modality codes and the position ids;
``run_layer`` runs decoder layer ``l`` on the tokens alive there (their original position ids are
gathered, never recomputed, and ``mask`` is ``None`` for plain causal attention or a boolean
``(B, n, n)`` "may attend" mask combined with causality); ``head`` reads the last position.
A token compressor (OmniFit or a baseline) is an :class:`AbstractCompressor`: it sees ``H^(0)``
once and shrinks the tokens before each layer.

Layering of :mod:`icml26.omnifit` (each module imports only modules above it in this list):
``tokens``, ``protocols``, ``accounting``, ``avsync`` -> ``lahp`` -> ``arts`` -> ``compressor``
-> ``baselines``; ``adapter`` (the compressed prefill), ``calibration`` (Phase I over a model),
``model``, ``decoding``, ``hf``, ``qa_benchmark``; ``standins`` on top.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

__all__ = ["AbstractCompressor", "ModelAdapter", "check_adapter"]


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


class AbstractCompressor(abc.ABC):
    """A token compressor driven by :func:`~icml26.omnifit.run_compressed`.

    ``prepare`` sees the input embeddings once per batch; ``before_layer`` returns the hidden
    states, position ids and mask of the tokens alive at layer ``l`` and their original indices.
    """

    @abc.abstractmethod
    def prepare(
        self,
        H0: torch.Tensor,
        modality_ids: torch.Tensor,
        *,
        adapter: Any = None,
        pos_ids: torch.Tensor | None = None,
    ) -> None:
        """Score the tokens of a new batch (``H0``: ``(B, n, d)``)."""

    @abc.abstractmethod
    def before_layer(
        self, layer: int, hidden: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """``(hidden, pos_ids, mask, idx)`` of the tokens alive at layer ``l``."""
