"""The interface a decoder needs from a VLA (:class:`VLAAdapter`) and the TinyARVLA adapter.

A decoder sees a model only through five members: the vision attention modules (to temper),
``prefill`` (one pass over the prompt, returning the first action token's logits and a cache),
``step`` (one cached pass per fed-back token), the action token id range and ``detokenize``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn

from icml26.scale.tokenizer import ActionTokenizer

__all__ = ["TinyVLAAdapter", "VLAAdapter", "check_adapter"]


@runtime_checkable
class VLAAdapter(Protocol):
    """What SCALE and the baselines need from an autoregressive discrete-action VLA."""

    action_token_range: tuple[int, int]
    num_action_tokens: int

    def vision_attention_modules(self) -> list[nn.Module]:
        """Self-attention modules of the vision encoder(s)."""
        ...

    def prefill(self, obs: Any, instruction: Any) -> tuple[torch.Tensor, Any]:
        """One pass over [image, instruction]: first action token's logits ``(B, vocab)``, cache."""
        ...

    def step(self, token: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        """Feed one token per row; the next logits ``(B, vocab)`` and the updated cache."""
        ...

    def detokenize(self, tokens: torch.Tensor) -> np.ndarray:
        """``(B, K_a)`` token ids -> ``(B, action_dim)`` actions in the environment's units."""
        ...


def check_adapter(adapter: Any, owner: str) -> VLAAdapter:
    """Raise a TypeError naming ``adapter`` unless it has the :class:`VLAAdapter` members."""
    if not isinstance(adapter, VLAAdapter):
        raise TypeError(
            f"{owner}: adapter must implement VLAAdapter (vision_attention_modules, prefill, "
            "step, detokenize, action_token_range, num_action_tokens); "
            f"got {type(adapter).__name__}."
        )
    return adapter


class TinyVLAAdapter:
    """:class:`VLAAdapter` over a :class:`~icml26.scale.model.TinyARVLA` or a
    :class:`~icml26.scale.hf_vla.TinyOpenVLA`.

    ``obs`` is a batch of uint8 images ``(B, 48, 48, 3)`` (tensor or array) and ``instruction``
    the target colour ids ``(B,)``; ``detokenize`` returns OpenVLA bin centres in [-1, 1].

    Parameters
    ----------
    model
        The TinyARVLA (put in eval mode).

    Examples
    --------
    >>> from icml26.scale.model import TinyARVLA
    >>> adapter = TinyVLAAdapter(TinyARVLA(seed=0))
    >>> adapter.action_token_range, adapter.num_action_tokens
    ((8, 264), 3)
    """

    def __init__(self, model: nn.Module) -> None:
        from icml26.scale.hf_vla import TinyOpenVLA
        from icml26.scale.model import TinyARVLA

        if not isinstance(model, TinyARVLA | TinyOpenVLA):
            raise TypeError(
                "TinyVLAAdapter: model must be a TinyARVLA or TinyOpenVLA; "
                f"got {type(model).__name__}."
            )
        self.model = model.eval()
        self.action_token_range = model.action_token_range
        self.num_action_tokens = model.n_action_tokens
        self.tokenizer = ActionTokenizer(model.vocab_size, model.n_bins)

    def vision_attention_modules(self) -> list[nn.Module]:
        """The ViT's attention modules."""
        return self.model.vision_attention_modules()

    def prefill(self, obs: Any, instruction: Any) -> tuple[torch.Tensor, Any]:
        """Encode the images and the instruction once (one prefix pass)."""
        images, instr = _tensor("obs", obs), _tensor("instruction", instruction)
        try:
            return self.model.prefill(images, instr)
        except (TypeError, ValueError) as err:
            raise type(err)(f"TinyVLAAdapter.prefill: obs or instruction rejected: {err}") from None

    def step(self, token: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        """One cached pass for the fed-back token."""
        try:
            return self.model.step(_tensor("token", token), cache)
        except (TypeError, ValueError) as err:
            raise type(err)(f"TinyVLAAdapter.step: token or cache rejected: {err}") from None

    def detokenize(self, tokens: torch.Tensor) -> np.ndarray:
        """Token ids ``(B, K_a)`` -> normalised actions ``(B, K_a)`` in [-1, 1]."""
        try:
            return self.tokenizer.decode(_tensor("tokens", tokens).detach().cpu().numpy())
        except (TypeError, ValueError) as err:
            raise type(err)(f"TinyVLAAdapter.detokenize: tokens rejected: {err}") from None


def _tensor(name: str, value: Any) -> torch.Tensor:
    """``value`` as a tensor (arrays and nested lists convert); a TypeError naming ``name``."""
    if isinstance(value, torch.Tensor):
        return value
    try:
        return torch.as_tensor(np.asarray(value))
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"{name} must be a tensor or an array; got {type(value).__name__}."
        ) from None
