"""Greedy decoding after a compressed prefill, with per-layer KV caches of different lengths.

OmniFit (spec §2.3-2.4, step 7) shrinks the tokens alive at each decoder layer during prefill,
so layer ``l``'s KV cache holds only the ``alive_l`` tokens kept there: caches of different
lengths per layer. :func:`generate` runs the compressed prefill through a
:class:`DecodingAdapter` (a :class:`~icml26.omnifit.ModelAdapter` that can also run a layer
against a cache), then feeds each greedily chosen token back through every layer, where it
attends to that layer's cache (the kept prompt tokens plus the tokens generated so far) and is
appended to it. After ``T`` new tokens (``T - 1`` of them fed back: the last one is only
emitted) layer ``l``'s cache holds ``alive_l + T - 1`` entries.

Generated tokens take the positions after the prompt's largest position id (``max + 1``,
``max + 2``, ...; for 3-D M-RoPE ids all three components, as Qwen2.5-Omni continues text after
multimodal input), so with ``mu = 1`` decoding is exactly the uncompressed one.

Deviations: greedy only; a prefill ``mask`` is not carried into
decoding (new tokens attend to every cached entry of their layer); the compressor acts on the
prompt only (generated tokens are text, which OmniFit never drops). Implemented by
:class:`~icml26.omnifit.TinyOmni` and :class:`~icml26.omnifit.hf.QwenOmniAdapter`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from icml26.core.validation import check_positive_int
from icml26.omnifit.adapter import check_compressor_fits
from icml26.omnifit.protocols import ModelAdapter, check_adapter

if TYPE_CHECKING:
    import torch

__all__ = ["DecodingAdapter", "GenerateOutput", "generate"]

MAX_NEW_TOKENS = 100_000


@runtime_checkable
class DecodingAdapter(ModelAdapter, Protocol):
    """A :class:`~icml26.omnifit.ModelAdapter` that also decodes with a KV cache per layer."""

    def run_layer_kv(
        self,
        layer: int,
        h: torch.Tensor,
        pos_ids: torch.Tensor,
        mask: torch.Tensor | None,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Layer ``l`` on ``h`` after ``past``; returns ``(out, (keys, values))``, grown.

        Keys and values carry the sequence on dimension ``-2``.
        """
        ...

    def embed_tokens(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Input embeddings of generated tokens, ``(B, t)`` -> ``(B, t, d)``."""
        ...

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        """Next-token logits from the last position, ``(B, vocab)``."""
        ...


@dataclass(frozen=True)
class GenerateOutput:
    """Outcome of :func:`generate`.

    Attributes
    ----------
    tokens
        Generated token ids, ``(B, T)`` (fewer columns if every sample stopped at ``eos``).
    logits
        The logits each token was chosen from, ``(B, T, vocab)``.
    alive
        Prompt tokens alive in each layer after compression.
    kept
        Original indices of the prompt tokens alive in each layer, ``(B, alive_l)`` each.
    cache_lengths
        Entries in each layer's KV cache at the end (``alive_l + T - 1``).
    """

    tokens: torch.Tensor
    logits: torch.Tensor
    alive: list[int]
    kept: list[torch.Tensor]
    cache_lengths: list[int]


def _next_positions(pos: torch.Tensor, offset: int) -> torch.Tensor:
    """Position ids of the generated token ``offset`` (0-based): prompt max + 1 + offset."""
    if pos.ndim == 3:  # (3, B, n) M-RoPE ids: all three components advance together
        start = pos.amax(dim=(0, 2)) + 1  # (B,)
        return (start + offset)[None, :, None].expand(pos.shape[0], -1, 1)
    return (pos.amax(dim=1) + 1 + offset)[:, None]  # (B, 1)


def generate(
    adapter: Any,
    batch: Any,
    compressor: Any = None,
    max_new_tokens: int = 16,
    eos_token_id: int | None = None,
) -> GenerateOutput:
    """Greedy decoding after a (compressed) prefill, one KV cache per layer.

    Parameters
    ----------
    adapter
        A :class:`DecodingAdapter` (e.g. :class:`~icml26.omnifit.TinyOmni`).
    batch
        What ``adapter.embed`` accepts (the prompt).
    compressor
        An ``OmniFitCompressor`` or a baseline applied during prefill, or ``None`` (full cache).
    max_new_tokens
        Tokens to generate, ``T >= 1``.
    eos_token_id
        End-of-sequence id: a sample that emits it keeps emitting it (as padding), and decoding
        stops early once every sample has emitted it; ``None`` always generates ``T`` tokens.

    Returns
    -------
    GenerateOutput

    Raises
    ------
    TypeError
        If ``adapter`` lacks a member of the protocol or ``compressor`` is not a compressor.
    ValueError
        If the compressor's profile has a different number of layers than the model.

    Examples
    --------
    >>> import torch
    >>> from icml26.omnifit import LAHPProfile, OmniFitCompressor, TinyOmni, TinyOmniConfig
    >>> from icml26.omnifit import make_dataset
    >>> model = TinyOmni(TinyOmniConfig(n_layers=2, d=32, n_heads=2, d_ff=64), seed=0).eval()
    >>> batch = make_dataset(2, windows=4, seed=0).batch(slice(None))
    >>> compressor = OmniFitCompressor(LAHPProfile.uniform(2, 32), mu=0.25)
    >>> with torch.no_grad():
    ...     out = generate(model, batch, compressor, max_new_tokens=3)
    >>> tuple(out.tokens.shape), out.alive, out.cache_lengths
    ((2, 3), [30, 30], [32, 32])
    """
    import torch

    owner = "generate"
    check_adapter(adapter, owner=owner)
    missing = [m for m in ("run_layer_kv", "embed_tokens", "lm_head") if not hasattr(adapter, m)]
    if missing:
        raise TypeError(
            f"{owner}: adapter must implement DecodingAdapter; {type(adapter).__name__} lacks "
            f"{', '.join(missing)}."
        )
    check_compressor_fits(compressor, adapter, owner=owner)
    T = check_positive_int("max_new_tokens", max_new_tokens, maximum=MAX_NEW_TOKENS, owner=owner)
    if eos_token_id is not None:
        eos_token_id = check_positive_int(
            "eos_token_id", eos_token_id, minimum=0, maximum=2**62, owner=owner
        )
    L = len(adapter.layers)
    # prefill: the compressed layer loop of run_compressed, keeping each layer's keys/values
    h, ids, pos = adapter.embed(batch)
    prompt_pos = pos
    mask = None
    idx = torch.arange(h.shape[1]).expand(h.shape[0], -1)
    if compressor is not None:
        compressor.prepare(h, ids, adapter=adapter, pos_ids=pos)
    alive, kept, caches = [], [], []
    for layer in range(L):
        if compressor is not None:
            h, pos, mask, idx = compressor.before_layer(layer, h, pos, mask)
        alive.append(int(h.shape[1]))
        kept.append(idx)
        h, cache = adapter.run_layer_kv(layer, h, pos, mask, None)  # cache: alive_l entries
        caches.append(cache)
    logits = [adapter.lm_head(h)]  # (B, vocab)
    tokens = [logits[-1].argmax(-1)]  # (B,)
    finished = torch.zeros_like(tokens[0], dtype=torch.bool)
    # decode: each new token attends to its layer's cache, then joins it
    for step in range(T - 1):
        if eos_token_id is not None:
            finished = finished | (tokens[-1] == eos_token_id)
            if bool(finished.all()):
                break
        x = adapter.embed_tokens(tokens[-1][:, None])  # (B, 1, d)
        new_pos = _next_positions(prompt_pos, step)
        for layer in range(L):
            x, caches[layer] = adapter.run_layer_kv(layer, x, new_pos, None, caches[layer])
        logits.append(adapter.lm_head(x))
        token = logits[-1].argmax(-1)
        if eos_token_id is not None:  # finished samples keep emitting eos
            token = torch.where(finished, torch.full_like(token, eos_token_id), token)
        tokens.append(token)
    return GenerateOutput(
        tokens=torch.stack(tokens, dim=1),
        logits=torch.stack(logits, dim=1),
        alive=alive,
        kept=kept,
        cache_lengths=[int(keys.shape[-2]) for keys, _ in caches],
    )
