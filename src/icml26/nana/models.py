"""Model adapters: a transformer's MLP weights, unembedding and activations (spec §2.1–2.2).

*SVD as a Fast Interpretability Method for Transformers* (NaNA), ICML 2026 poster 66016; only
the abstract was found. An :class:`MLPModelAdapter` wraps an HF ``GPT2LMHeadModel`` (the real
GPT-2 family and the tiny stand-ins), a gated decoder (``LlamaForCausalLM``,
``Qwen2ForCausalLM``: :func:`from_hf_decoder` covers the three families) or an HF ``BertModel``
(MiniLM) and exposes, per layer, the MLP matrices ``W_in (d, d_mlp)``, ``b_in``, ``W_out (d_mlp,
d)``, ``b_out`` in the *processed* form of spec §2.2 (TransformerLens' ``fold_ln`` +
``center_writing_weights`` + ``center_unembed``):

* LN₂ folded into the reading weights, ``b_in ← b_in + β₂ W_in``, ``W_in ← diag(γ₂) W_in``, then
  each column of ``W_in`` centred over the ``d`` rows; the MLP then reads ``ñ = (x − μ)/σ``;
* writing weights centred, ``W_out ← W_out − rowmean``, ``b_out ← b_out − mean(b_out)``;
* LN_f folded into the unembedding, ``W_U ← diag(γ_f) W_U``, ``b_U ← β_f W_U``, both centred
  over the vocabulary (log-softmax unchanged; logits move by a per-position constant).

Activations come from hooks on the unmodified HF model (run in the adapter's dtype), so the
adapter's forward pass *is* the model's; edits (ablations) are hooks too. Since every read of the
residual stream goes through a LayerNorm, the processed frame differs from the raw one only by
multiples of the all-ones vector, which the LayerNorms remove.

Gated decoders (``kind="gated"``: Llama, Qwen2) compute ``out = (act(ñ W_gate) ⊙ (ñ W_in)) W_out``
with ``ñ = x / rms(x)`` (RMSNorm). The write side is the same object as GPT-2's (``a`` is the
gated hidden activation, ``W_out = down_projᵀ``), so DEUs, SCA, DLA and ablation apply as they
are; the read side decomposes ``W_in = up_projᵀ`` (the gate is a second reader, kept as it is).
Processing folds the RMSNorm scales into ``W_in``, ``W_gate`` and ``W_U``; nothing is centred
(RMSNorm does not remove the mean, so centring would change the model), and σ_f is ``rms(x)``.
HF's RMSNorm normalises in float32 even in a float64 model, so a gated model's float64 identities
hold to float32 round-off of the norm (about 1e-7 relative).

Deviations: the processing steps and conventions are the spec's inferred design (the paper's
full text was not found). Token and position embeddings and attention writes are not centred in
the weights; :func:`icml26.nana.dla` centres those components when it attributes them. BERT
(post-LN) is not processed: its adapter serves DEU structure and readout through the tied word
embeddings only, and refuses SCA (no LM head).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

import torch
from torch import nn

from icml26.core import check_in_interval, check_one_of, check_positive_int, check_tensor, require

__all__ = [
    "SUPPORTED_MODELS",
    "ActivationCache",
    "MLPModelAdapter",
    "MLPWeights",
    "check_adapter",
    "from_hf_bert",
    "from_hf_decoder",
    "from_hf_gpt2",
    "load_gpt2",
    "processing_logsoftmax_error",
]

SUPPORTED_MODELS = (
    "transformers.GPT2LMHeadModel",
    "transformers.LlamaForCausalLM",
    "transformers.Qwen2ForCausalLM",
    "transformers.BertModel",
)
GATED_MODELS = ("LlamaForCausalLM", "Qwen2ForCausalLM")

# A write-side edit maps (a, out) -> new out at one layer; a read-side edit maps (ñ, pre) -> pre.
Edit = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True, eq=False)
class MLPWeights:
    """The weights of one MLP: ``out = GELU(ñ W_in + b_in) W_out + b_out``."""

    W_in: torch.Tensor  # (d_model, d_mlp)
    b_in: torch.Tensor  # (d_mlp,)
    W_out: torch.Tensor  # (d_mlp, d_model)
    b_out: torch.Tensor  # (d_model,)
    # gated MLPs (Llama, Qwen2): a = act(ñ W_gate + b_gate) ⊙ (ñ W_in + b_in)
    W_gate: torch.Tensor | None = None  # (d_model, d_mlp)
    b_gate: torch.Tensor | None = None  # (d_mlp,)


@dataclass(frozen=True, eq=False)
class ActivationCache:
    """What one forward pass recorded (lists are indexed by layer; frames as in the module doc).

    ``normed``: the MLP's input ``ñ`` (GPT-2: LN₂ without its affine; gated: x / rms(x); BERT: the
    MLP input itself),
    ``pre``/``acts``: pre-activation and hidden activation ``a``, ``mlp_out``: the MLP output in
    the adapter's frame (centred for processed GPT-2), ``attn_out``/``embed``: the other writes to
    the residual stream (raw), ``resid_final``: the residual before LN_f, ``sigma_f``: the final
    LayerNorm scale ``sqrt(var + eps)``, ``logits`` in the adapter's frame (``None`` for BERT).
    """

    normed: list[torch.Tensor]  # (B, T, d_model) each
    pre: list[torch.Tensor]  # (B, T, d_mlp)
    acts: list[torch.Tensor]  # (B, T, d_mlp)
    mlp_out: list[torch.Tensor]  # (B, T, d_model)
    attn_out: list[torch.Tensor]  # (B, T, d_model); empty for BERT
    attn_z: list[torch.Tensor]  # (B, T, d_model) input of the attention output projection
    embed: torch.Tensor | None  # (B, T, d_model)
    resid_final: torch.Tensor | None  # (B, T, d_model)
    sigma_f: torch.Tensor | None  # (B, T)
    logits: torch.Tensor | None  # (B, T, vocab)


def check_adapter(adapter: Any, owner: str) -> MLPModelAdapter:
    """Return ``adapter`` if it is an :class:`MLPModelAdapter`, else raise ``TypeError``."""
    if not isinstance(adapter, MLPModelAdapter):
        raise TypeError(
            f"{owner}: adapter must be an MLPModelAdapter (from_hf_decoder / from_hf_bert); "
            f"got {type(adapter).__name__}."
        )
    return adapter


def _check_adapter_parts(
    kind: Any, model: Any, layers: Any, W_U: Any, b_U: Any, W_E: Any, ln_f: Any
) -> None:
    owner = "MLPModelAdapter"
    check_one_of("kind", kind, ("gpt2", "gated", "bert"), owner=owner)
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    if (
        not isinstance(layers, list)
        or not layers
        or not all(isinstance(w, MLPWeights) for w in layers)
    ):
        raise TypeError(f"{owner}: layers must be a non-empty list of MLPWeights.")
    check_tensor("W_U", W_U, ndim=2, owner=owner)
    d_model, vocab = W_U.shape
    if 0 in W_U.shape:
        raise ValueError(f"{owner}: W_U must be (d_model, vocab) with both >= 1.")
    check_tensor("b_U", b_U, shape=(vocab,), owner=owner)
    check_tensor("W_E", W_E, shape=(vocab, d_model), owner=owner)
    for i, w in enumerate(layers):
        check_tensor(f"layers[{i}].W_in", w.W_in, shape=(d_model, None), owner=owner)
        d_mlp = w.W_in.shape[1]
        check_tensor(f"layers[{i}].b_in", w.b_in, shape=(d_mlp,), owner=owner)
        check_tensor(f"layers[{i}].W_out", w.W_out, shape=(d_mlp, d_model), owner=owner)
        check_tensor(f"layers[{i}].b_out", w.b_out, shape=(d_model,), owner=owner)
        if (w.W_gate is None) != (kind != "gated"):
            raise TypeError(f"{owner}: layers[{i}].W_gate must be given exactly for gated MLPs.")
        if w.W_gate is not None:
            check_tensor(f"layers[{i}].W_gate", w.W_gate, shape=(d_model, d_mlp), owner=owner)
            check_tensor(f"layers[{i}].b_gate", w.b_gate, shape=(d_mlp,), owner=owner)
    if ln_f is not None and not (
        isinstance(ln_f, tuple)
        and len(ln_f) == 2
        and all(isinstance(t, torch.Tensor) and tuple(t.shape) == (d_model,) for t in ln_f)
    ):
        raise TypeError(f"{owner}: ln_f must be None or a (weight, bias) pair of (d_model,).")


def _layer_norm_scale(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x − μ, sqrt(var + eps))`` over the last axis, as ``nn.LayerNorm`` computes them."""
    centred = x - x.mean(-1, keepdim=True)
    return centred, torch.sqrt(centred.pow(2).mean(-1) + eps)


def _rms_scale(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, sqrt(mean(x²) + eps))`` over the last axis, as an RMSNorm computes them."""
    return x, torch.sqrt(x.pow(2).mean(-1) + eps)


@final
class MLPModelAdapter:
    """A transformer seen as a stack of MLPs that write into a residual stream read by ``W_U``.

    Build it with :func:`from_hf_decoder` (GPT-2, Llama, Qwen2), :func:`from_hf_gpt2` or
    :func:`from_hf_bert`, not directly.

    Attributes
    ----------
    kind
        ``"gpt2"``, ``"gated"`` (Llama, Qwen2) or ``"bert"``.
    processed
        Whether the weights are folded and centred (spec §2.2).
    n_layers, d_model, d_mlp, vocab_size, n_heads
        Shapes.
    W_U, b_U
        Unembedding ``(d_model, vocab)`` and bias (BERT: the tied word embeddings, a lens).
    W_E
        Token embeddings ``(vocab, d_model)``.
    has_lm_head
        ``False`` for BERT: SCA and ablation of predictions are refused.
    model
        The wrapped HF module (in the adapter's dtype, eval mode).
    """

    def __init__(
        self,
        *,
        kind: str,
        model: nn.Module,
        layers: list[MLPWeights],
        W_U: torch.Tensor,
        b_U: torch.Tensor,
        W_E: torch.Tensor,
        processed: bool,
        has_lm_head: bool,
        n_heads: int,
        n_positions: int,
        ln_f: tuple[torch.Tensor, torch.Tensor] | None,
        ln_eps: float,
    ) -> None:
        owner = "MLPModelAdapter"
        _check_adapter_parts(kind, model, layers, W_U, b_U, W_E, ln_f)
        for name, flag in (("processed", processed), ("has_lm_head", has_lm_head)):
            if not isinstance(flag, bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {flag!r}.")
        n_heads = check_positive_int("n_heads", n_heads, owner=owner)
        n_positions = check_positive_int("n_positions", n_positions, owner=owner)
        ln_eps = check_in_interval("ln_eps", ln_eps, low=0.0, high=1.0, closed="right", owner=owner)
        self.kind = kind
        self.model = model
        self._layers = layers
        self.W_U = W_U
        self.b_U = b_U
        self.W_E = W_E
        self.processed = processed
        self.has_lm_head = has_lm_head
        self.n_heads = n_heads
        self.n_positions = n_positions
        self._ln_f = ln_f  # raw LN_f affine when it is not folded into W_U
        self.ln_eps = ln_eps
        self.n_layers = len(layers)
        self.d_model, self.vocab_size = W_U.shape
        self.d_mlp = layers[0].W_in.shape[1]
        self.dtype = W_U.dtype
        self._norm_scale = _rms_scale if kind == "gated" else _layer_norm_scale

    def __repr__(self) -> str:
        return (
            f"MLPModelAdapter(kind={self.kind!r}, n_layers={self.n_layers}, "
            f"d_model={self.d_model}, d_mlp={self.d_mlp}, vocab_size={self.vocab_size}, "
            f"processed={self.processed})"
        )

    def check_layer(self, layer: Any, owner: str) -> int:
        """Return ``layer`` if it indexes an MLP of this model, else raise ``ValueError``."""
        layer = check_positive_int("layer", layer, owner=owner, minimum=0)
        if layer >= self.n_layers:
            raise ValueError(
                f"{owner}: layer must be in [0, {self.n_layers - 1}] for this "
                f"{self.n_layers}-layer model; got {layer}."
            )
        return layer

    def check_tokens(self, tokens: Any, owner: str) -> torch.Tensor:
        """Return ``tokens`` as a ``(batch, T)`` int64 tensor of valid ids (1-D gets B = 1)."""
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"{owner}: tokens must be a torch.Tensor of ids; got {type(tokens)}.")
        if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
            raise TypeError(f"{owner}: tokens must be integer ids; got dtype {tokens.dtype}.")
        if tokens.dim() == 1:
            tokens = tokens[None]
        if tokens.dim() != 2 or tokens.shape[1] == 0:
            raise ValueError(
                f"{owner}: tokens must be (T,) or (batch, T); got {tuple(tokens.shape)}."
            )
        if tokens.shape[1] > self.n_positions:
            raise ValueError(
                f"{owner}: tokens has {tokens.shape[1]} positions; the model has "
                f"{self.n_positions}."
            )
        if int(tokens.min()) < 0 or int(tokens.max()) >= self.vocab_size:
            raise ValueError(
                f"{owner}: token ids must be in [0, {self.vocab_size - 1}] (vocab_size); got "
                f"range [{int(tokens.min())}, {int(tokens.max())}]."
            )
        return tokens.long()

    def require_lm_head(self, owner: str) -> None:
        """Raise ``ValueError`` for an adapter without an LM head (BERT)."""
        if not self.has_lm_head:
            raise ValueError(
                f"{owner}: this {self.kind} adapter has no LM head (post-LN encoder); SCA, DLA "
                "and ablation of predictions need a decoder (GPT-2, Llama, Qwen2) adapter."
            )

    def mlp(self, layer: int) -> MLPWeights:
        """The MLP weights of ``layer`` in the adapter's frame."""
        return self._layers[self.check_layer(layer, "MLPModelAdapter.mlp")]

    def unembed(self, resid_final: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits, sigma_f)`` from the residual before LN_f, in the adapter's frame."""
        centred, sigma_f = self._norm_scale(resid_final, self.ln_eps)
        normed = centred / sigma_f[..., None]
        if self._ln_f is not None:
            normed = normed * self._ln_f[0] + self._ln_f[1]
        return normed @ self.W_U + self.b_U, sigma_f  # (B, T, vocab), (B, T)

    def centre(self, write: torch.Tensor) -> torch.Tensor:
        """A write to the residual stream as the final norm sees it: minus its mean over ``d``
        for LayerNorm models, unchanged for RMSNorm (gated) models."""
        if self.kind == "gated":
            return write
        return write - write.mean(-1, keepdim=True)

    def hidden(self, layer: int, normed: torch.Tensor, pre: torch.Tensor) -> torch.Tensor:
        """The hidden activation ``a`` of ``layer`` from its input ``ñ`` and pre-activation
        (``act(pre)``; gated: ``act(ñ W_gate + b_gate) ⊙ pre``)."""
        act = self._mlp_modules(layer)[1]
        weights = self.mlp(layer)
        if weights.W_gate is None:
            return act(pre)
        return act(normed @ weights.W_gate + weights.b_gate) * pre

    def head_writes(
        self, cache: ActivationCache, layer: int
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``((B, T, H, d) per-head writes, (d,) output bias or None)`` of attention ``layer``."""
        z = cache.attn_z[layer]  # (B, T, H · d_head)
        proj = self._blocks()[layer][3]
        W_O = proj.weight if self.kind == "gpt2" else proj.weight.T  # (H · d_head, d)
        d_head = W_O.shape[0] // self.n_heads
        heads = z.unflatten(-1, (self.n_heads, d_head))  # (B, T, H, d_head)
        writes = torch.einsum("bthk,hkd->bthd", heads, W_O.unflatten(0, (self.n_heads, d_head)))
        return writes, proj.bias

    # --- forward passes through the wrapped HF model ----------------------------------------

    def _mlp_modules(self, layer: int) -> tuple[nn.Module, Callable[[torch.Tensor], torch.Tensor]]:
        """``(MLP module, its activation function)`` of ``layer``."""
        if self.kind == "gpt2":
            mlp = self.model.transformer.h[layer].mlp
            return mlp, mlp.act
        if self.kind == "gated":
            mlp = self.model.model.layers[layer].mlp
            return mlp, mlp.act_fn
        mlp = self.model.encoder.layer[layer].intermediate
        return mlp, mlp.intermediate_act_fn

    def _blocks(self) -> list[tuple[nn.Module, nn.Module, nn.Module, nn.Module | None]]:
        """Per layer: (module reading the MLP input, up and down projections, attention out)."""
        if self.kind == "gpt2":
            return [
                (blk.ln_2, blk.mlp.c_fc, blk.mlp.c_proj, blk.attn.c_proj)
                for blk in self.model.transformer.h
            ]
        if self.kind == "gated":
            return [
                (
                    lyr.post_attention_layernorm,
                    lyr.mlp.up_proj,
                    lyr.mlp.down_proj,
                    lyr.self_attn.o_proj,
                )
                for lyr in self.model.model.layers
            ]
        return [
            (lyr.intermediate.dense, lyr.intermediate.dense, lyr.output.dense, None)
            for lyr in self.model.encoder.layer
        ]

    @contextmanager
    def _hooks(
        self,
        record: dict[str, Any] | None,
        write_edits: Mapping[int, Edit],
        read_edits: Mapping[int, Edit],
        replacements: Mapping[int, Edit],
    ) -> Iterator[None]:
        handles = []
        normed: dict[int, torch.Tensor] = {}
        for layer, (norm_in, up, down, attn_proj) in enumerate(self._blocks()):

            def grab_normed(module, args, layer=layer):
                x = args[0]
                if self.kind != "bert":  # ñ = (x − μ)/σ or x / rms(x): the folded W_in's input
                    centred, scale = self._norm_scale(x, self.ln_eps)
                    x = centred / scale[..., None]
                normed[layer] = x
                if record is not None:
                    record.setdefault("normed", {})[layer] = x

            def on_up(module, args, pre, layer=layer):
                if layer in read_edits:
                    pre = read_edits[layer](normed[layer], pre)
                if record is not None:
                    record.setdefault("pre", {})[layer] = pre
                return pre

            def on_down(module, args, out, layer=layer):
                acts = args[0]
                if layer in replacements:
                    out = replacements[layer](normed[layer], out).to(out.dtype)
                if layer in write_edits:
                    out = write_edits[layer](acts, out)
                if record is not None:
                    record.setdefault("acts", {})[layer] = acts
                    record.setdefault("mlp_out_raw", {})[layer] = out
                return out

            def on_attn(module, args, out, layer=layer):
                if record is not None:
                    record.setdefault("attn_z", {})[layer] = args[0]
                    record.setdefault("attn_out", {})[layer] = out

            handles.append(norm_in.register_forward_pre_hook(grab_normed))
            handles.append(up.register_forward_hook(on_up))
            handles.append(down.register_forward_hook(on_down))
            if attn_proj is not None and record is not None:
                handles.append(attn_proj.register_forward_hook(on_attn))
        if self.kind != "bert" and record is not None:

            def on_final(module, args):
                record["resid_final"] = args[0]

            def on_embed(module, args, out):
                record["embed"] = out

            if self.kind == "gpt2":
                final, embed = self.model.transformer.ln_f, self.model.transformer.drop
            else:
                final, embed = self.model.model.norm, self.model.model.embed_tokens
            handles.append(final.register_forward_pre_hook(on_final))
            handles.append(embed.register_forward_hook(on_embed))
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def _run(
        self,
        tokens: torch.Tensor,
        record: dict[str, Any] | None,
        write_edits: Mapping[int, Edit],
        read_edits: Mapping[int, Edit],
        replacements: Mapping[int, Edit],
    ) -> None:
        with torch.no_grad(), self._hooks(record, write_edits, read_edits, replacements):
            if self.kind != "bert":
                self.model(input_ids=tokens, use_cache=False)
            else:
                self.model(input_ids=tokens, attention_mask=torch.ones_like(tokens))

    def _frame_out(self, layer: int, out_raw: torch.Tensor) -> torch.Tensor:
        """The MLP output in the adapter's frame (processed GPT-2: minus its mean over d)."""
        if self.kind == "gpt2" and self.processed:
            return out_raw - out_raw.mean(-1, keepdim=True)
        return out_raw

    def run_with_cache(
        self,
        tokens: torch.Tensor,
        *,
        write_edits: Mapping[int, Edit] | None = None,
        read_edits: Mapping[int, Edit] | None = None,
        replacements: Mapping[int, Edit] | None = None,
    ) -> ActivationCache:
        """Run the model once and record every MLP's input, activations and output.

        Parameters
        ----------
        tokens
            ``(T,)`` or ``(batch, T)`` token ids.
        write_edits, read_edits
            Optional ``{layer: f}`` hooks: ``f(a, out) -> out`` replaces the MLP's output (raw
            frame), ``f(ñ, pre) -> pre`` its pre-activation; later layers see the change.
        replacements
            Optional ``{layer: g}``: the MLP's output becomes ``g(ñ, out)``, e.g. a spliced-in
            transcoder (any frame: the mean over ``d`` is invisible downstream).

        Returns
        -------
        ActivationCache
        """
        tokens = self.check_tokens(tokens, "MLPModelAdapter.run_with_cache")
        record: dict[str, Any] = {}
        self._run(tokens, record, write_edits or {}, read_edits or {}, replacements or {})
        layers = range(self.n_layers)
        logits = sigma_f = None
        if self.kind != "bert":
            logits, sigma_f = self.unembed(record["resid_final"])
        return ActivationCache(
            normed=[record["normed"][i] for i in layers],
            pre=[record["pre"][i] for i in layers],
            acts=[record["acts"][i] for i in layers],
            mlp_out=[self._frame_out(i, record["mlp_out_raw"][i]) for i in layers],
            attn_out=[record["attn_out"][i] for i in layers] if "attn_out" in record else [],
            attn_z=[record["attn_z"][i] for i in layers] if "attn_z" in record else [],
            embed=record.get("embed"),
            resid_final=record.get("resid_final"),
            sigma_f=sigma_f,
            logits=logits,
        )

    def logits(self, tokens: torch.Tensor, **edits: Any) -> torch.Tensor:
        """``(batch, T, vocab)`` logits in the adapter's frame; ``edits`` as for run_with_cache."""
        self.require_lm_head("MLPModelAdapter.logits")
        return self.run_with_cache(tokens, **edits).logits

    def next_token_loss(self, tokens: torch.Tensor, **edits: Any) -> float:
        """Mean next-token cross-entropy (nats) of ``tokens``, optionally with MLP edits."""
        tokens = self.check_tokens(tokens, "MLPModelAdapter.next_token_loss")
        if tokens.shape[1] < 2:
            raise ValueError("MLPModelAdapter.next_token_loss: tokens need at least 2 positions.")
        logits = self.logits(tokens, **edits)[:, :-1]  # (B, T-1, vocab)
        return float(
            torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        )

    def next_token_losses(self, tokens: torch.Tensor, **edits: Any) -> list[float]:
        """Mean next-token cross-entropy (nats) of each sequence of ``tokens``, with ``edits``.

        One value per row, so that the change an edit makes can be compared sequence by
        sequence (paired); their mean is :meth:`next_token_loss` (rows of one length).
        """
        tokens = self.check_tokens(tokens, "MLPModelAdapter.next_token_losses")
        if tokens.shape[1] < 2:
            raise ValueError("MLPModelAdapter.next_token_losses: tokens need at least 2 positions.")
        logits = self.logits(tokens, **edits)[:, :-1]  # (B, T-1, vocab)
        losses = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), tokens[:, 1:], reduction="none"
        )  # (B, T-1)
        return [float(v) for v in losses.mean(1)]


# --- constructors -----------------------------------------------------------------------------


def _unsupported(model: Any, owner: str) -> TypeError:
    return TypeError(
        f"{owner}: unsupported model class {type(model).__name__}; supported: "
        f"{', '.join(SUPPORTED_MODELS)}."
    )


def _in_dtype(model: nn.Module, dtype: torch.dtype) -> nn.Module:
    """The model in ``dtype`` and eval mode; a copy when its dtype differs (the caller's stays).

    In a copy, GPT-2's ``gelu_new`` (HF's ``NewGELUActivation``, five element-wise passes) becomes
    torch's fused ``GELU(approximate="tanh")``: the same function (equal to ~1 ulp), about 5×
    faster in float64, where it was half of a tiny GPT-2's forward pass.
    """
    if next(model.parameters()).dtype != dtype:
        from transformers.activations import NewGELUActivation

        model = copy.deepcopy(model).to(dtype)
        for module in model.modules():
            for name, child in module.named_children():
                if type(child) is NewGELUActivation:
                    setattr(module, name, nn.GELU(approximate="tanh"))
    return model.eval()


def _check_dtype(dtype: Any, owner: str) -> torch.dtype:
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{owner}: dtype must be torch.float32 or torch.float64; got {dtype!r}.")
    return dtype


def from_hf_gpt2(
    model: nn.Module, processed: bool = True, *, dtype: torch.dtype = torch.float64
) -> MLPModelAdapter:
    """Adapter for an HF ``GPT2LMHeadModel``, with weights processed as in spec §2.2.

    Parameters
    ----------
    model
        A ``transformers.GPT2LMHeadModel`` (GPT-2 small … xl, or a tiny one).
    processed
        Fold LN₂ into ``W_in`` and LN_f into ``W_U``, centre ``W_in``'s columns, the writing
        weights and the unembedding (log-softmax unchanged). ``False``: raw weights.
    dtype
        The dtype of the weights and of the forward passes (a copy of the model is made when it
        differs from the model's).

    Returns
    -------
    MLPModelAdapter

    Raises
    ------
    TypeError
        For a model that is not a ``GPT2LMHeadModel``.

    Examples
    --------
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> cfg = GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=2, n_head=2)
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(cfg))
    >>> ad.n_layers, ad.d_model, ad.d_mlp, ad.vocab_size
    (2, 16, 64, 64)
    """
    transformers = require("transformers", "nana", owner="from_hf_gpt2")
    if not isinstance(model, transformers.GPT2LMHeadModel):
        raise _unsupported(model, "from_hf_gpt2")
    if not isinstance(processed, bool):
        raise TypeError(f"from_hf_gpt2: processed must be a bool; got {processed!r}.")
    model = _in_dtype(model, _check_dtype(dtype, "from_hf_gpt2"))
    cfg = model.config
    layers = []
    with torch.no_grad():
        for blk in model.transformer.h:
            W_in, b_in = blk.mlp.c_fc.weight.clone(), blk.mlp.c_fc.bias.clone()  # (d, d_mlp)
            W_out, b_out = blk.mlp.c_proj.weight.clone(), blk.mlp.c_proj.bias.clone()  # (d_mlp, d)
            if processed:
                gamma, beta = blk.ln_2.weight, blk.ln_2.bias
                b_in = b_in + beta @ W_in  # fold LN₂'s shift with the original W_in
                W_in = gamma[:, None] * W_in
                W_in = W_in - W_in.mean(0, keepdim=True)  # ñ has zero mean: reading weights centred
                W_out = W_out - W_out.mean(1, keepdim=True)  # the next LN removes the mean
                b_out = b_out - b_out.mean()
            layers.append(MLPWeights(W_in, b_in, W_out, b_out))
        W_U = model.lm_head.weight.detach().T.clone()  # (d, vocab)
        b_U = torch.zeros(W_U.shape[1], dtype=dtype)
        ln_f = (model.transformer.ln_f.weight.clone(), model.transformer.ln_f.bias.clone())
        if processed:
            b_U = b_U + ln_f[1] @ W_U
            W_U = ln_f[0][:, None] * W_U
            W_U = W_U - W_U.mean(1, keepdim=True)  # softmax-invariant per-position shift
            b_U = b_U - b_U.mean()
            ln_f = None
        W_E = model.transformer.wte.weight.detach().clone()
    return MLPModelAdapter(
        kind="gpt2",
        model=model,
        layers=layers,
        W_U=W_U,
        b_U=b_U,
        W_E=W_E,
        processed=processed,
        has_lm_head=True,
        n_heads=cfg.n_head,
        n_positions=cfg.n_positions,
        ln_f=ln_f,
        ln_eps=cfg.layer_norm_epsilon,
    )


def _from_hf_gated(model: nn.Module, processed: bool, dtype: torch.dtype) -> MLPModelAdapter:
    """Adapter for a Llama-family decoder (gated MLP, RMSNorm; see the module docstring)."""
    model = _in_dtype(model, dtype)
    cfg = model.config

    def linear(module: nn.Linear, scale: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        W = module.weight.T.clone()  # (in, out)
        b = module.bias.clone() if module.bias is not None else torch.zeros(W.shape[1], dtype=dtype)
        return (scale[:, None] * W if scale is not None else W), b

    layers = []
    with torch.no_grad():
        for lyr in model.model.layers:
            gamma = lyr.post_attention_layernorm.weight if processed else None
            W_in, b_in = linear(lyr.mlp.up_proj, gamma)
            W_gate, b_gate = linear(lyr.mlp.gate_proj, gamma)
            W_out, b_out = linear(lyr.mlp.down_proj, None)
            layers.append(MLPWeights(W_in, b_in, W_out, b_out, W_gate, b_gate))
        W_U = model.lm_head.weight.detach().T.clone()  # (d, vocab)
        b_U = (
            model.lm_head.bias.detach().clone()
            if model.lm_head.bias is not None
            else torch.zeros(W_U.shape[1], dtype=dtype)
        )
        ln_f = (model.model.norm.weight.clone(), torch.zeros_like(model.model.norm.weight))
        if processed:
            W_U = ln_f[0][:, None] * W_U
            ln_f = None
        W_E = model.model.embed_tokens.weight.detach().clone()
    return MLPModelAdapter(
        kind="gated",
        model=model,
        layers=layers,
        W_U=W_U,
        b_U=b_U,
        W_E=W_E,
        processed=processed,
        has_lm_head=True,
        n_heads=cfg.num_attention_heads,
        n_positions=cfg.max_position_embeddings,
        ln_f=ln_f,
        ln_eps=cfg.rms_norm_eps,
    )


def from_hf_decoder(
    model: nn.Module, processed: bool = True, *, dtype: torch.dtype = torch.float64
) -> MLPModelAdapter:
    """Adapter for an HF decoder-only LM: ``GPT2LMHeadModel``, ``LlamaForCausalLM`` or
    ``Qwen2ForCausalLM``.

    GPT-2 goes through :func:`from_hf_gpt2`; Llama and Qwen2 (gated MLP, RMSNorm) get the
    ``"gated"`` adapter of the module docstring: write-side DEUs of ``down_proj``, read-side
    units of ``up_proj``, RMSNorm scales folded when ``processed``.

    Parameters
    ----------
    model
        One of the classes above (the architecture is checked before anything is built).
    processed
        Fold the norm scales into the reading weights and ``W_U`` (GPT-2: also centre, as
        :func:`from_hf_gpt2`). ``False``: raw weights.
    dtype
        ``torch.float32`` or ``torch.float64`` (a copy of the model when it differs).

    Returns
    -------
    MLPModelAdapter

    Raises
    ------
    TypeError
        For another model class or a non-bool ``processed``.

    Examples
    --------
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
    ...                   num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
    ...                   max_position_embeddings=32)
    >>> ad = from_hf_decoder(LlamaForCausalLM(cfg))
    >>> ad.kind, ad.n_layers, ad.d_mlp
    ('gated', 2, 32)
    """
    owner = "from_hf_decoder"
    transformers = require("transformers", "nana", owner=owner)
    if isinstance(model, transformers.GPT2LMHeadModel):
        return from_hf_gpt2(model, processed, dtype=dtype)
    gated = tuple(getattr(transformers, name) for name in GATED_MODELS)
    if not isinstance(model, gated):
        raise _unsupported(model, owner)
    if not isinstance(processed, bool):
        raise TypeError(f"{owner}: processed must be a bool; got {processed!r}.")
    return _from_hf_gated(model, processed, _check_dtype(dtype, owner))


def from_hf_bert(model: nn.Module, *, dtype: torch.dtype = torch.float64) -> MLPModelAdapter:
    """Adapter for an HF ``BertModel`` (e.g. MiniLM): MLP structure and a tied-embedding lens.

    ``W_in = intermediate.dense.weightᵀ``, ``W_out = output.dense.weightᵀ``; ``W_U`` is the word
    embedding matrix transposed (an approximate lens, there is no LM head). Weights are not
    processed (post-LN: the LayerNorm follows the residual sum).

    Raises
    ------
    TypeError
        For a model that is not a ``BertModel``.

    Examples
    --------
    >>> from transformers import BertConfig, BertModel
    >>> cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
    ...                  num_attention_heads=2, intermediate_size=32)
    >>> ad = from_hf_bert(BertModel(cfg))
    >>> ad.has_lm_head, ad.d_mlp
    (False, 32)
    """
    transformers = require("transformers", "nana", owner="from_hf_bert")
    if not isinstance(model, transformers.BertModel):
        raise _unsupported(model, "from_hf_bert")
    model = _in_dtype(model, _check_dtype(dtype, "from_hf_bert"))
    cfg = model.config
    with torch.no_grad():
        layers = [
            MLPWeights(
                lyr.intermediate.dense.weight.T.clone(),
                lyr.intermediate.dense.bias.clone(),
                lyr.output.dense.weight.T.clone(),
                lyr.output.dense.bias.clone(),
            )
            for lyr in model.encoder.layer
        ]
        W_E = model.embeddings.word_embeddings.weight.detach().clone()
    return MLPModelAdapter(
        kind="bert",
        model=model,
        layers=layers,
        W_U=W_E.T.contiguous(),
        b_U=torch.zeros(W_E.shape[0], dtype=W_E.dtype),
        W_E=W_E,
        processed=False,
        has_lm_head=False,
        n_heads=cfg.num_attention_heads,
        n_positions=cfg.max_position_embeddings,
        ln_f=None,
        ln_eps=cfg.layer_norm_eps,
    )


GPT2_NAMES = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def load_gpt2(
    name_or_dir: str | Path, *, allow_hub: bool = False, with_tokenizer: bool = False
) -> Any:
    """Load a GPT-2 with ``GPT2LMHeadModel.from_pretrained`` (local files unless ``allow_hub``).

    Parameters
    ----------
    name_or_dir
        ``"gpt2"``, ``"gpt2-medium"``, ``"gpt2-large"``, ``"gpt2-xl"``, a hub id ``"org/name"``
        or a local folder written by ``save_pretrained``; anything else is refused before any
        lookup.
    allow_hub
        Let ``from_pretrained`` download from the Hugging Face hub; by default only local files
        (a cache or a folder) are read and nothing downloads.
    with_tokenizer
        Also load the folder's tokenizer with ``AutoTokenizer`` and return ``(model, tokenizer)``.

    Returns
    -------
    transformers.GPT2LMHeadModel, or (model, tokenizer)

    Examples
    --------
    >>> import tempfile
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> d = tempfile.mkdtemp()
    >>> cfg = GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=32)
    >>> GPT2LMHeadModel(cfg).save_pretrained(d)
    >>> type(load_gpt2(d)).__name__
    'GPT2LMHeadModel'
    """
    transformers = require("transformers", "nana", owner="load_gpt2")
    if not isinstance(name_or_dir, str | Path):
        raise TypeError(f"load_gpt2: name_or_dir must be a str or Path; got {type(name_or_dir)}.")
    if not Path(name_or_dir).is_dir() and not (
        str(name_or_dir) in GPT2_NAMES or _HUB_ID.fullmatch(str(name_or_dir))
    ):
        raise FileNotFoundError(
            f"load_gpt2: name_or_dir {str(name_or_dir)!r} is no local folder, none of "
            f"{GPT2_NAMES} and no hub id 'org/name'."
        )
    model = transformers.GPT2LMHeadModel.from_pretrained(
        str(name_or_dir), local_files_only=not allow_hub
    ).eval()
    if not with_tokenizer:
        return model
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        str(name_or_dir), local_files_only=not allow_hub
    )
    return model, tokenizer


def processing_logsoftmax_error(adapter: MLPModelAdapter, tokens: torch.Tensor) -> float:
    """``max |log_softmax(adapter logits) − log_softmax(HF model logits)|`` over ``tokens``.

    The weight processing of spec §2.2 moves the logits by a per-position constant only, so
    this is round-off (spec §5, N1d: <= 1e-4).

    Raises
    ------
    ValueError
        For an adapter without an LM head (BERT) or tokens it cannot take.

    Examples
    --------
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=1,
    ...                                              n_head=2, n_positions=16)))
    >>> processing_logsoftmax_error(ad, torch.tensor([[1, 2, 3]])) < 1e-10
    True
    """
    owner = "processing_logsoftmax_error"
    check_adapter(adapter, owner)
    tokens = adapter.check_tokens(tokens, owner)
    ours = torch.log_softmax(adapter.logits(tokens), -1)  # (B, T, vocab)
    with torch.no_grad():
        ref = torch.log_softmax(adapter.model(input_ids=tokens, use_cache=False).logits, -1)
    return float((ours - ref).abs().max())
