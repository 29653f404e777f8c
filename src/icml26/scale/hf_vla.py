"""TinyOpenVLA: a tiny OpenVLA-style policy built from transformers' own classes (issue 41).

OpenVLA = vision encoder -> MLP projector -> Llama decoder over [image patches; prompt] whose
vocabulary ends with 256 action bins. Here, at CPU size:

- vision: a ``SiglipVisionModel`` (d = 64, 2 layers, 4 heads) on the 32x32 observation. Its
  patch embedding (one 8x8 stride-8 convolution) is replaced by a convolutional stem (three 3x3
  stride-2 convolutions, the same 4x4 = 16 tokens; Xiao et al. 2021) unless ``stem="patch"``:
  with the plain patch embedding behaviour cloning of the v0 toy stayed on the marginal-action
  plateau within the CPU budget (docs/scale.md), so the shipped policies use the conv stem;
- projector: a 2-layer GELU MLP (OpenVLA's ``PrismaticProjector`` shape);
- language model: a ``LlamaForCausalLM`` (d = 64, 2 layers, 4 heads) over
  [instruction token; 16 projected patches; action tokens] with RoPE positions and HF's KV cache.
  The instruction comes first (OpenVLA puts the prompt after the image): in a 2-layer decoder the
  patches can then attend to the instruction (which colour to look for). The vocabulary is the
  instruction ids followed by the 256 action bins, the last 256 ids as in OpenVLA.

``prefill`` / ``step`` / ``forward`` have :class:`~icml26.scale.model.TinyARVLA`'s signatures, so
the same adapter, decoders, training loop and pass counter drive both; the vision self-attention
modules are SigLIP's (``q_proj/k_proj/v_proj``), which :class:`AttentionTemperature` tempers.
"""

from __future__ import annotations

import inspect
from functools import cache as _memo
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.core.validation import Seed, check_one_of, check_positive_int, check_tensor
from icml26.core.weights import seeded_default_init

__all__ = ["TinyOpenVLA"]


@_memo
def _cache_keyword() -> str:
    """transformers >= 5.24 names the KV cache ``cache``; earlier versions ``past_key_values``."""
    from transformers import LlamaForCausalLM

    return (
        "cache"
        if "cache" in inspect.signature(LlamaForCausalLM.forward).parameters
        else ("past_key_values")
    )


def _cache_of(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


class ConvStem(nn.Module):
    """Three 3x3 stride-2 convolutions (total stride 8): SigLIP's patch embedding replaced.

    With ``n_film`` > 0 the first convolution's features are FiLM-conditioned on an id (the
    instruction), as v0's stem (:class:`~icml26.scale.model.VisionEncoder`): features *
    (1 + g[id]) + b[id], with g = b = 0 at initialisation (the table is zeros, so building it
    draws no random numbers). SigLIP calls the stem with the pixels only, so the ids are set on
    :attr:`ids` for the duration of one vision forward (:meth:`TinyOpenVLA.prefix_embeddings`).
    """

    def __init__(self, d: int, n_film: int = 0) -> None:
        super().__init__()
        width = max(8, d // 2)
        self.conv1 = nn.Conv2d(3, width, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(width, d, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(d, d, 3, stride=2, padding=1)
        self.film = (
            nn.Embedding.from_pretrained(torch.zeros(n_film, 2 * width), freeze=False)
            if n_film
            else None
        )
        self.ids: torch.Tensor | None = None

    @property
    def weight(self) -> torch.Tensor:
        """The first convolution's weight (SigLIP reads the input dtype from it)."""
        return self.conv1.weight

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.conv1(pixels))
        if self.film is not None:
            if self.ids is None:
                raise RuntimeError("ConvStem: FiLM is on but no instruction ids were set.")
            g, b = self.film(self.ids)[:, :, None, None].chunk(2, dim=1)
            h = h * (1 + g) + b
        return self.conv3(F.gelu(self.conv2(h)))


class TinyOpenVLA(nn.Module):
    """SigLIP -> MLP projector -> Llama with the action bins at the end of the vocabulary.

    Parameters
    ----------
    n_instructions
        Instruction ids (target colours), token ids ``0 .. n_instructions - 1``, in [1, 4096].
    n_action_tokens
        K_a, action tokens per step (3: dx, dy, grip), in [1, 64].
    n_bins
        Action bins, the last ``n_bins`` ids (256), in [2, 4096].
    image_size
        Side of the square RGB input (32), a multiple of 8 in [8, 256].
    d_vision, vision_layers
        SigLIP width (in [8, 1024], divisible by ``heads``) and depth (in [1, 24]).
    d_model, layers
        Llama width (in [8, 1024], divisible by ``heads``) and depth (in [1, 24]).
    heads
        Attention heads of both, in [1, 64].
    mlp_ratio
        MLP width / model width of both, in [1, 8].
    stem
        ``"conv"`` (default) or ``"patch"`` (SigLIP's own 8x8 patch embedding).
    instruction_film
        FiLM-condition the conv stem's first layer on the instruction (default False: the
        vision encoder does not see the instruction, as OpenVLA's; a testbed option, see
        docs/scale.md). Recorded in :attr:`config` only when True, so the records of models
        without it are unchanged.
    seed
        Seed of the initialisation.

    Examples
    --------
    >>> model = TinyOpenVLA(seed=0)
    >>> images = torch.zeros(2, 32, 32, 3, dtype=torch.uint8)
    >>> logits, cache = model.prefill(images, torch.tensor([0, 1]))
    >>> logits.shape, model.action_token_range
    (torch.Size([2, 264]), (8, 264))
    """

    def __init__(
        self,
        n_instructions: int = 8,
        n_action_tokens: int = 3,
        n_bins: int = 256,
        image_size: int = 32,
        d_vision: int = 64,
        vision_layers: int = 2,
        d_model: int = 64,
        layers: int = 2,
        heads: int = 4,
        mlp_ratio: int = 4,
        stem: str = "conv",
        instruction_film: bool = False,
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        from transformers import (
            LlamaConfig,
            LlamaForCausalLM,
            SiglipVisionConfig,
            SiglipVisionModel,
        )

        owner = "TinyOpenVLA"
        self.n_instructions = check_positive_int(
            "n_instructions", n_instructions, owner=owner, maximum=4096
        )
        self.n_action_tokens = check_positive_int(
            "n_action_tokens", n_action_tokens, owner=owner, maximum=64
        )
        self.n_bins = check_positive_int("n_bins", n_bins, owner=owner, minimum=2, maximum=4096)
        self.image_size = check_positive_int(
            "image_size", image_size, owner=owner, minimum=8, maximum=256
        )
        if image_size % 8:
            raise ValueError(f"{owner}: image_size must be a multiple of 8; got {image_size}.")
        heads = check_positive_int("heads", heads, owner=owner, maximum=64)
        for name, value in {"d_vision": d_vision, "d_model": d_model}.items():
            check_positive_int(name, value, owner=owner, minimum=8, maximum=1024)
            if value % heads:
                raise ValueError(f"{owner}: {name} ({value}) must be divisible by heads ({heads}).")
        for name, value in {"vision_layers": vision_layers, "layers": layers}.items():
            check_positive_int(name, value, owner=owner, maximum=24)
        check_positive_int("mlp_ratio", mlp_ratio, owner=owner, maximum=8)
        check_one_of("stem", stem, ("conv", "patch"), owner=owner)
        if not isinstance(instruction_film, bool):
            raise TypeError(
                f"{owner}: instruction_film must be a bool; got {type(instruction_film).__name__}."
            )
        if instruction_film and stem != "conv":
            raise ValueError(f"{owner}: instruction_film needs stem='conv'; got stem={stem!r}.")
        self.instruction_film = instruction_film
        self.vocab_size = self.n_instructions + self.n_bins
        self.n_patches = (image_size // 8) ** 2
        self.n_prefix = 1 + self.n_patches
        self.config = {
            "n_instructions": n_instructions, "n_action_tokens": n_action_tokens,
            "n_bins": n_bins, "image_size": image_size, "d_vision": d_vision,
            "vision_layers": vision_layers, "d_model": d_model, "layers": layers,
            "heads": heads, "mlp_ratio": mlp_ratio, "stem": stem,
        }  # fmt: skip
        if instruction_film:
            self.config["instruction_film"] = True
        vision_config = SiglipVisionConfig(
            hidden_size=d_vision, intermediate_size=mlp_ratio * d_vision,
            num_hidden_layers=vision_layers, num_attention_heads=heads, num_channels=3,
            image_size=image_size, patch_size=8, vision_use_head=False, attn_implementation="sdpa",
        )  # fmt: skip
        llama_config = LlamaConfig(
            vocab_size=self.vocab_size, hidden_size=d_model, intermediate_size=mlp_ratio * d_model,
            num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
            max_position_embeddings=self.n_prefix + self.n_action_tokens, tie_word_embeddings=False,
            bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="sdpa",
        )  # fmt: skip
        with seeded_default_init(seed):
            self.vision = SiglipVisionModel(vision_config)
            if stem == "conv":
                self._siglip().embeddings.patch_embedding = ConvStem(
                    d_vision, n_film=self.n_instructions if instruction_film else 0
                )
            self.projector = nn.Sequential(
                nn.Linear(d_vision, d_model), nn.GELU(), nn.Linear(d_model, d_model)
            )
            self.llm = LlamaForCausalLM(llama_config)

    def _siglip(self) -> nn.Module:
        """The SigLIP transformer (transformers 5 flattens ``vision_model`` into the model)."""
        return getattr(self.vision, "vision_model", self.vision)

    @property
    def action_token_range(self) -> tuple[int, int]:
        """``(start, stop)`` of the action token ids (the last ``n_bins`` ids)."""
        return self.n_instructions, self.vocab_size

    @property
    def blocks(self) -> nn.ModuleList:
        """The Llama decoder layers (one decoder pass runs the first of them once)."""
        return self.llm.model.layers

    def vision_attention_modules(self) -> list[nn.Module]:
        """SigLIP's self-attention modules (what SCALE tempers)."""
        return [layer.self_attn for layer in self._siglip().encoder.layers]

    def _pixels(self, images: torch.Tensor) -> torch.Tensor:
        owner = "TinyOpenVLA"
        check_tensor("images", images, owner=owner, floating=False)
        if images.is_complex() or images.dtype == torch.bool:
            raise TypeError(f"{owner}: images must be uint8 or real; got dtype {images.dtype}.")
        side = self.image_size
        if images.ndim != 4 or tuple(images.shape[1:]) != (side, side, 3):
            raise ValueError(
                f"{owner}: images must have shape (B, {side}, {side}, 3); "
                f"got {tuple(images.shape)}."
            )
        x = images.float()
        if images.dtype == torch.uint8:
            x = x / 255.0
        return (x.permute(0, 3, 1, 2) - 0.5) / 0.5  # SigLIP's normalisation

    def _ids(self, name: str, ids: Any, shape: tuple[int, ...]) -> torch.Tensor:
        check_tensor(name, ids, owner="TinyOpenVLA", floating=False, shape=shape)
        if ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"TinyOpenVLA: {name} must be an integer tensor; got {ids.dtype}.")
        stop = self.n_instructions if name == "instructions" else self.vocab_size
        if ids.numel() and bool(((ids < 0) | (ids >= stop)).any()):
            raise ValueError(f"TinyOpenVLA: {name} must be ids in [0, {stop}).")
        return ids.long()

    def prefix_embeddings(self, images: torch.Tensor, instructions: torch.Tensor) -> torch.Tensor:
        """[instruction token; projected patches] as Llama input embeddings ``(B, 17, d)``."""
        pixels = self._pixels(images)
        instructions = self._ids("instructions", instructions, (pixels.shape[0],))
        if not self.instruction_film:
            patches = self.vision(pixel_values=pixels).last_hidden_state  # (B, 16, d_vision)
        else:
            stem = self._siglip().embeddings.patch_embedding
            stem.ids = instructions
            try:
                patches = self.vision(pixel_values=pixels).last_hidden_state
            finally:
                stem.ids = None
        embed = self.llm.get_input_embeddings()
        return torch.cat([embed(instructions)[:, None], self.projector(patches)], dim=1)

    def prefill(self, images: torch.Tensor, instructions: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """One pass over the prefix: first action-token logits ``(B, vocab)`` and HF's cache."""
        out = self.llm(inputs_embeds=self.prefix_embeddings(images, instructions), use_cache=True)
        return out.logits[:, -1], _cache_of(out)

    def step(self, tokens: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        """Feed one token per row ``(B,)``; the next logits ``(B, vocab)`` and the cache."""
        from transformers import Cache

        if not isinstance(cache, Cache) or cache.get_seq_length() < self.n_prefix:
            raise TypeError("TinyOpenVLA.step: cache must be the Cache returned by prefill/step.")
        if cache.get_seq_length() >= self.n_prefix + self.n_action_tokens - 1:
            raise ValueError(f"TinyOpenVLA.step: all {self.n_action_tokens} tokens are decoded.")
        if not isinstance(tokens, torch.Tensor) or tokens.ndim != 1:
            raise TypeError("TinyOpenVLA.step: tokens must be a 1-D tensor of token ids.")
        tokens = self._ids("tokens", tokens, (tokens.shape[0],))
        out = self.llm(input_ids=tokens[:, None], use_cache=True, **{_cache_keyword(): cache})
        return out.logits[:, -1], _cache_of(out)

    def forward(
        self, images: torch.Tensor, instructions: torch.Tensor, action_tokens: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits of every action token, ``(B, K_a, vocab)`` (training)."""
        x = self.prefix_embeddings(images, instructions)
        fed = self._ids("action_tokens", action_tokens, (x.shape[0], self.n_action_tokens))
        x = torch.cat([x, self.llm.get_input_embeddings()(fed[:, :-1])], dim=1)
        logits = self.llm(inputs_embeds=x, use_cache=False).logits
        return logits[:, self.n_prefix - 1 :]
