"""The interface a decoder needs from a VLA (:class:`VLAAdapter`) and the TinyARVLA adapter.

A decoder sees a model only through five members: the vision attention modules (to temper),
``prefill`` (one pass over the prompt, returning the first action token's logits and a cache),
``step`` (one cached pass per fed-back token), the action token id range and ``detokenize``.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn

from icml26.scale.tokenizer import ActionTokenizer

__all__ = ["SharedPrefixAdapter", "TinyVLAAdapter", "VLAAdapter", "check_adapter"]


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


class SharedPrefixAdapter(TinyVLAAdapter):
    """:class:`TinyVLAAdapter` that computes the prefix pass once per batch of inputs.

    A Best-of-N decoder over a base sampler at vision temperature 1 decodes the same images and
    instructions N times, so its N prefix passes are identical: the first call of ``prefill``
    with given ``obs`` and ``instruction`` objects computes it, later calls with the same
    objects get its logits and a copy of its KV cache. The candidates and the random draws are
    those of :class:`TinyVLAAdapter`; the passes a decoder reports stay N per step (the
    method's cost where the passes are not shared). Use it only where every prefill of the same
    inputs runs at the same vision temperature (it does not see the temperature).

    Parameters
    ----------
    model
        The TinyARVLA or TinyOpenVLA.

    Examples
    --------
    >>> from icml26.scale.model import TinyARVLA
    >>> adapter = SharedPrefixAdapter(TinyARVLA(d_vision=16, d_model=16, seed=0))
    >>> images, instr = torch.zeros(2, 48, 48, 3, dtype=torch.uint8), torch.tensor([0, 1])
    >>> adapter.prefill(images, instr)[0] is adapter.prefill(images, instr)[0]
    True
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__(model)
        self._last: tuple[Any, Any, tuple[torch.Tensor, Any]] | None = None

    def prefill(self, obs: Any, instruction: Any) -> tuple[torch.Tensor, Any]:
        """:meth:`TinyVLAAdapter.prefill`, computed once for the same ``obs``/``instruction``."""
        last = self._last
        if last is None or last[0] is not obs or last[1] is not instruction:
            # holding the inputs keeps their ids from being reused by new objects; no graph
            # (decoding is inference, and a cache with one cannot be copied)
            with torch.no_grad():
                last = self._last = (obs, instruction, super().prefill(obs, instruction))
        logits, cache = last[2]
        return logits, copy.deepcopy(cache)


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
