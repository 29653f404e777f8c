"""The real path: the Hugging Face Qwen2.5-Omni thinker as a :class:`~icml26.omnifit.ModelAdapter`.

:func:`load_omni_model` loads the thinker only (``Qwen2_5OmniThinkerForConditionalGeneration``;
a full ``Qwen2_5OmniForConditionalGeneration`` checkpoint is loaded with its talker disabled and
its thinker kept). :class:`QwenOmniAdapter` drives the thinker's text decoder layer by layer:

- ``embed(batch)`` runs the thinker's own input path (audio/vision encoders, placeholder
  scattering, TMRoPE 3-D position ids from ``get_rope_index``) up to the text model and captures
  the ``inputs_embeds`` and ``position_ids`` it hands over; the modality codes come from the
  config's ``audio_token_index`` / ``image_token_index`` / ``video_token_index``;
- ``run_layer(layer, h, pos_ids, mask)`` recomputes the rotary embedding of the *gathered* 3-D
  position ids (kept tokens keep their original ids) and calls the HF decoder layer with an
  additive ``(B, 1, n, n)`` mask built from causality and ``mask``;
- ``attention_map`` is an eager pass of the layer's attention (calibration and FastV-like);
- ``head`` is the final norm + ``lm_head`` at the last position.

- ``run_layer_kv`` / ``embed_tokens`` / ``lm_head`` make it a
  :class:`~icml26.omnifit.DecodingAdapter`: each layer's cache is its own ``(keys, values)`` pair
  (a one-layer duck-typed stand-in for HF's ``Cache`` is handed to the layer), so layers keep
  caches of different lengths for :func:`~icml26.omnifit.generate`.

Written against transformers 5.24 (the ``omnifit`` extra pins it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icml26.core.imports import require
from icml26.core.validation import check_one_of
from icml26.omnifit.tokens import AUDIO, TEXT, VIDEO

if TYPE_CHECKING:
    import torch

__all__ = ["OMNI_MODEL_TYPES", "QwenOmniAdapter", "load_omni_model"]

ATTENTION = ("sdpa", "eager")


class _InputsCapturedError(Exception):
    """Raised by the pre-hook once the text model's inputs are known (stops the forward)."""


class _OneLayerCache:
    """A single-layer stand-in for an HF ``Cache``: prepends ``past`` and keeps the grown pair."""

    def __init__(self, past: tuple[torch.Tensor, torch.Tensor] | None) -> None:
        self.past = past
        self.grown: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *_: Any,
        **__: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        if self.past is not None:  # (B, kv_heads, P, head_dim) before the new entries
            key_states = torch.cat([self.past[0], key_states], dim=-2)
            value_states = torch.cat([self.past[1], value_states], dim=-2)
        self.grown = (key_states, value_states)
        return self.grown


class QwenOmniAdapter:
    """A Qwen2.5-Omni thinker seen through the :class:`~icml26.omnifit.ModelAdapter` protocol.

    Parameters
    ----------
    thinker
        A ``Qwen2_5OmniThinkerForConditionalGeneration`` (its ``model.language_model`` is the
        text decoder).

    Examples
    --------
    >>> adapter = QwenOmniAdapter(object())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: QwenOmniAdapter: thinker must be a Qwen2.5-Omni thinker ...
    """

    def __init__(self, thinker: Any) -> None:
        language_model = getattr(getattr(thinker, "model", None), "language_model", None)
        if language_model is None or not hasattr(thinker, "lm_head"):
            raise TypeError(
                "QwenOmniAdapter: thinker must be a Qwen2.5-Omni thinker (with "
                f"model.language_model and lm_head); got {type(thinker).__name__}."
            )
        self.thinker = thinker
        self.text = language_model
        config = thinker.config
        self.token_ids = {
            AUDIO: [config.audio_token_index],
            VIDEO: [config.image_token_index, config.video_token_index],
        }
        text_config = language_model.config
        self.hidden_size = int(text_config.hidden_size)
        self.ffn_size = int(text_config.intermediate_size)
        self.n_heads = int(text_config.num_attention_heads)
        self.kv_heads = int(text_config.num_key_value_heads)

    @property
    def layers(self) -> Any:
        """The text decoder's layers."""
        return self.text.layers

    def modality_ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Codes of a ``(B, n)`` batch of ids (the batch must share one layout)."""
        import torch

        ids = torch.full(input_ids.shape, TEXT, dtype=torch.long)
        for code, tokens in self.token_ids.items():
            for token in tokens:
                ids[input_ids == token] = code
        if ids.shape[0] > 1 and not bool((ids == ids[:1]).all()):
            raise ValueError(
                "QwenOmniAdapter: every sample of a batch must have the same token layout "
                "(pad the streams to equal audio/video token counts)."
            )
        return ids[0]

    def embed(self, batch: Mapping[str, Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(H0, modality_ids, pos_ids (3, B, n))`` from the thinker's own input path.

        ``batch`` holds the processor's outputs (``input_ids``, ``attention_mask``,
        ``input_features``, ``pixel_values_videos``, ``video_grid_thw``, ...), or ``input_ids``
        with ready ``inputs_embeds`` and ``position_ids``.
        """
        if not isinstance(batch, Mapping) or "input_ids" not in batch:
            raise TypeError("QwenOmniAdapter: batch must be a mapping with input_ids.")
        captured: dict[str, Any] = {}

        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            captured.update(kwargs)
            raise _InputsCapturedError

        handle = self.text.register_forward_pre_hook(hook, with_kwargs=True)
        try:
            self.thinker.model(**batch, use_cache=False)
        except _InputsCapturedError:
            pass
        finally:
            handle.remove()
        h = captured["inputs_embeds"]
        pos = captured["position_ids"]
        if pos.ndim == 3 and pos.shape[0] == 4:  # packed: text positions first, then 3-D
            pos = pos[1:]
        elif pos.ndim == 2:
            pos = pos[None].expand(3, -1, -1)
        return h, self.modality_ids(batch["input_ids"]), pos

    def _mask(self, h: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        import torch

        n = h.shape[1]
        allowed = torch.ones(n, n, dtype=torch.bool, device=h.device).tril()
        if mask is not None:
            allowed = allowed & mask
        allowed = allowed.expand(h.shape[0], n, n)[:, None]
        zero = torch.zeros((), dtype=h.dtype, device=h.device)
        return torch.where(allowed, zero, torch.finfo(h.dtype).min)  # (B, 1, n, n) additive

    def run_layer(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Decoder layer ``layer`` on the alive tokens (3-D ids gathered, mask additive)."""
        embeddings = self.text.rotary_emb(h, pos_ids)
        return self.text.layers[layer](
            h, attention_mask=self._mask(h, mask), position_embeddings=embeddings,
            position_ids=None, use_cache=False,
        )  # fmt: skip

    def run_layer_kv(
        self,
        layer: int,
        h: torch.Tensor,
        pos_ids: torch.Tensor,
        mask: torch.Tensor | None,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Decoder layer ``layer`` on ``h`` (``(B, t, d)``) after the cached ``past``.

        ``past`` is ``None`` (prefill) or the ``(keys, values)`` pair, ``(B, kv_heads, P,
        head_dim)``, this method returned before; new tokens attend to all ``P`` entries and
        causally among themselves (``mask``: ``(B, t, P + t)`` bool, or ``(B, t, t)`` without a
        cache). Returns ``(out, (keys, values))`` with ``P + t`` entries (keys after RoPE).
        """
        import torch

        t = h.shape[1]
        P = 0 if past is None else int(past[0].shape[-2])
        allowed = torch.ones(t, P + t, dtype=torch.bool, device=h.device)
        allowed[:, P:] = torch.ones(t, t, dtype=torch.bool, device=h.device).tril()
        if mask is not None:
            allowed = allowed & mask
        allowed = allowed.expand(h.shape[0], t, P + t)[:, None]
        zero = torch.zeros((), dtype=h.dtype, device=h.device)
        additive = torch.where(allowed, zero, torch.finfo(h.dtype).min)  # (B, 1, t, P + t)
        cache = _OneLayerCache(past)
        out = self.text.layers[layer](
            h, attention_mask=additive, position_embeddings=self.text.rotary_emb(h, pos_ids),
            position_ids=None, cache=cache, use_cache=True,
        )  # fmt: skip
        return out, cache.grown

    def embed_tokens(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Text embeddings of generated tokens, ``(B, t)`` -> ``(B, t, d)``."""
        return self.text.embed_tokens(token_ids)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        """Next-token logits at the last position, ``(B, vocab)`` (the same as :meth:`head`)."""
        return self.head(h)

    def attention_map(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Eager attention probabilities of layer ``layer``, ``(B, heads, n, n)``."""
        import torch
        from transformers.models.qwen2_5_omni.modeling_qwen2_5_omni import (
            apply_rotary_pos_emb,
            repeat_kv,
        )

        block = self.text.layers[layer]
        attn = block.self_attn
        B, n, _ = h.shape
        x = block.input_layernorm(h)
        q = attn.q_proj(x).view(B, n, -1, attn.head_dim).transpose(1, 2)
        k = attn.k_proj(x).view(B, n, -1, attn.head_dim).transpose(1, 2)
        cos, sin = self.text.rotary_emb(h, pos_ids)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = repeat_kv(k, attn.num_key_value_groups)
        scores = q @ k.transpose(-2, -1) * attn.scaling + self._mask(h, mask)
        return torch.softmax(scores.float(), dim=-1).to(h.dtype)

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Next-token logits at the last position, ``(B, vocab)``."""
        return self.thinker.lm_head(self.text.norm(h[:, -1]))


OMNI_MODEL_TYPES = ("qwen2_5_omni", "qwen2_5_omni_thinker")


def load_omni_model(
    name_or_dir: str | Path,
    device: str = "cpu",
    attn: str = "sdpa",
    dtype: str = "bfloat16",
    revision: str | None = None,
) -> QwenOmniAdapter:
    """Load a Qwen2.5-Omni thinker (e.g. ``"Qwen/Qwen2.5-Omni-3B"`` or a local folder).

    The folder's ``config.json`` is read first (no weights, no code: ``trust_remote_code`` is
    never set) and a ``model_type`` other than ``"qwen2_5_omni"`` / ``"qwen2_5_omni_thinker"``
    is refused before any model is built.

    Parameters
    ----------
    name_or_dir
        Hub id or local directory of a thinker or of a full Qwen2.5-Omni checkpoint (its talker
        is disabled and dropped).
    device
        Where the weights go.
    attn
        ``"sdpa"`` (online) or ``"eager"`` (calibration: attention maps).
    dtype
        ``"bfloat16"`` (default), ``"float16"``, ``"float32"`` or ``"float64"``.
    revision
        A Hub revision (commit hash, branch or tag) to pin; ``None`` takes the default branch.

    Returns
    -------
    QwenOmniAdapter

    Raises
    ------
    ValueError
        If the checkpoint's ``model_type`` is not a Qwen2.5-Omni one.

    Examples
    --------
    >>> import tempfile
    >>> from transformers import LlamaConfig
    >>> folder = tempfile.mkdtemp()
    >>> LlamaConfig(hidden_size=8, num_attention_heads=2).save_pretrained(folder)
    >>> load_omni_model(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: load_omni_model: ... has model_type 'llama' ...
    """
    require("transformers", "omnifit")
    import torch
    import transformers

    check_one_of("attn", attn, ATTENTION, owner="load_omni_model")
    check_one_of(
        "dtype", dtype, ("bfloat16", "float16", "float32", "float64"), owner="load_omni_model"
    )
    if not isinstance(name_or_dir, str | Path):
        raise TypeError(
            f"load_omni_model: name_or_dir must be a str or Path; got {type(name_or_dir).__name__}."
        )
    if revision is not None and not isinstance(revision, str):
        raise TypeError(
            f"load_omni_model: revision must be a str or None; got {type(revision).__name__}."
        )
    # the architecture check reads config.json only (a dict: nothing is built or executed)
    config, _ = transformers.PretrainedConfig.get_config_dict(name_or_dir, revision=revision)
    model_type = config.get("model_type")
    if model_type not in OMNI_MODEL_TYPES:
        raise ValueError(
            f"load_omni_model: {str(name_or_dir)!r} has model_type {model_type!r} "
            f"(architectures {config.get('architectures')}); expected one of "
            f"{list(OMNI_MODEL_TYPES)}. For other decoder-only models write a ModelAdapter."
        )
    kwargs = {"attn_implementation": attn, "dtype": getattr(torch, dtype), "revision": revision}
    if model_type == "qwen2_5_omni":
        full = transformers.Qwen2_5OmniForConditionalGeneration.from_pretrained(
            name_or_dir, **kwargs
        )
        full.disable_talker()
        thinker = full.thinker
    else:
        thinker = transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(
            name_or_dir, **kwargs
        )
    return QwenOmniAdapter(thinker.to(device).eval())
