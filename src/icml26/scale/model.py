"""TinyARVLA: a tiny autoregressive vision-language-action model with a KV cache (spec §5).

ViT encoder (stride 8 on 48x48 RGB => 36 tokens, d=64, 3 blocks, 4 heads; by default a
convolutional stem FiLM-conditioned on the instruction) -> linear projector -> causal decoder
(3 blocks, d=96, 4 heads) over [36 visual tokens; 1 instruction token; action tokens], a global
image embedding added to the instruction token. The vocabulary is the instruction ids followed
by 256 action bins, so, as in OpenVLA, the action tokens are the last 256 ids. ``prefill`` runs
the prefix once and returns the logits of the first action token with a KV cache; ``step`` feeds
one sampled token and returns the next logits, so decoding K_a tokens costs 1 prefix pass +
(K_a - 1) cached passes.

Every attention module exposes ``q_proj/k_proj/v_proj``, so :class:`AttentionTemperature`
tempers the vision encoder without any change here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.core.validation import Seed, check_positive_int, check_tensor
from icml26.core.weights import seeded_default_init

__all__ = ["KVCache", "MultiHeadAttention", "TinyARVLA"]


@dataclass
class KVCache:
    """Keys and values of every decoder layer, ``(B, heads, tokens, d_head)`` each."""

    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)

    @property
    def length(self) -> int:
        """Number of cached positions."""
        return 0 if not self.keys else int(self.keys[0].shape[2])


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with separate q/k/v projections (optionally causal, cached).

    Parameters
    ----------
    d_model, n_heads
        Width and number of heads (``d_model`` divisible by ``n_heads``), each at most 4096.

    Examples
    --------
    >>> attn = MultiHeadAttention(8, 2)
    >>> attn(torch.zeros(1, 3, 8))[0].shape
    torch.Size([1, 3, 8])
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        owner = "MultiHeadAttention"
        d_model = check_positive_int("d_model", d_model, owner=owner, maximum=4096)
        n_heads = check_positive_int("n_heads", n_heads, owner=owner, maximum=d_model)
        if d_model % n_heads:
            raise ValueError(
                f"{owner}: d_model ({d_model}) must be divisible by n_heads ({n_heads})."
            )
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, T, d_head)

    def forward(
        self,
        x: torch.Tensor,
        causal: bool = False,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Attend over ``x`` (and the cached ``past`` keys/values); return output and new k/v."""
        q, k, v = (
            self._heads(self.q_proj(x)),
            self._heads(self.k_proj(x)),
            self._heads(self.v_proj(x)),
        )
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        # A cached step's queries are the newest positions: they see every key, no mask needed.
        is_causal = causal and q.shape[2] > 1
        if is_causal and past is not None:
            raise ValueError(
                "MultiHeadAttention: a causal multi-token step after a cache is not supported."
            )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)  # (B, H, T, d_head)
        B, _, T, _ = y.shape
        return self.out_proj(y.transpose(1, 2).reshape(B, T, -1)), (k, v)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(LN x), then x + MLP(LN x)."""

    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, mlp_ratio * d_model),
            nn.GELU(),
            nn.Linear(mlp_ratio * d_model, d_model),
        )

    def forward(self, x, causal=False, past=None):
        h, kv = self.attn(self.norm1(x), causal=causal, past=past)
        x = x + h
        return x + self.mlp(self.norm2(x)), kv


def sincos_2d(side: int, d: int) -> torch.Tensor:
    """Fixed 2-D sine-cosine position embeddings (MAE): half the channels per axis, (side², d)."""
    quarter = d // 4
    omega = 1.0 / 10000 ** (torch.arange(quarter, dtype=torch.float64) / max(quarter, 1))
    ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    parts = []
    for axis in (xs, ys):
        angle = axis.reshape(-1, 1).double() * omega  # (side², d/4)
        parts += [angle.sin(), angle.cos()]
    emb = torch.cat(parts, dim=1)
    return torch.nn.functional.pad(emb, (0, d - emb.shape[1])).float()


class VisionEncoder(nn.Module):
    """ViT: patch stem -> fixed 2-D sin-cos positions -> blocks -> LayerNorm.

    ``stem="linear"`` is the classic non-overlapping patch projection; ``stem="conv"`` a
    convolutional stem of three 3x3 stride-2 convolutions (total stride 8, the same 6x6 tokens
    for a 48-px image; Xiao et al. 2021, "Early convolutions help transformers see better").
    With ``n_film`` > 0 the first stem layer is FiLM-conditioned on an id (the instruction), as
    RT-1 conditions its image tokenizer: features * (1 + g[id]) + b[id], g = b = 0 at init.
    """

    def __init__(
        self,
        image_size: int,
        patch: int,
        d: int,
        layers: int,
        heads: int,
        mlp_ratio: int,
        stem: str = "linear",
        n_film: int = 0,
    ):
        super().__init__()
        side = image_size // patch
        self.stem = stem
        if stem == "conv":
            if patch != 8:
                raise ValueError(f"TinyARVLA: stem='conv' needs patch 8; got patch {patch}.")
            width = max(8, d // 2)
            self.conv1 = nn.Conv2d(3, width, 3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(width, d, 3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(d, d, 3, stride=2, padding=1)
            self.film = nn.Embedding(n_film, 2 * width) if n_film else None
            if self.film is not None:
                nn.init.zeros_(self.film.weight)
        else:
            self.patch_embed = nn.Conv2d(3, d, kernel_size=patch, stride=patch)
            self.film = nn.Embedding(n_film, 2 * 3) if n_film else None
            if self.film is not None:
                nn.init.zeros_(self.film.weight)
        self.n_patches = side**2
        self.register_buffer("pos", sincos_2d(side, d)[None], persistent=False)
        self.blocks = nn.ModuleList(Block(d, heads, mlp_ratio) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def _film(self, h: torch.Tensor, ids: torch.Tensor | None) -> torch.Tensor:
        if self.film is None or ids is None:
            return h
        g, b = self.film(ids)[:, :, None, None].chunk(2, dim=1)
        return h * (1 + g) + b

    def forward(self, pixels: torch.Tensor, ids: torch.Tensor | None = None) -> torch.Tensor:
        if self.stem == "conv":
            h = self._film(F.gelu(self.conv1(pixels)), ids)
            h = self.conv3(F.gelu(self.conv2(h)))
        else:
            h = self.patch_embed(self._film(pixels, ids))
        x = h.flatten(2).transpose(1, 2) + self.pos  # (B, patches, d)
        for block in self.blocks:
            x, _ = block(x)
        return self.norm(x)


def _check_ids(name: str, ids: torch.Tensor, stop: int, owner: str, start: int = 0) -> None:
    """Token ids must be an integer tensor with values in [start, stop)."""
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{owner}: {name} must be an integer tensor; got dtype {ids.dtype}.")
    if ids.numel() and bool(((ids < start) | (ids >= stop)).any()):
        raise ValueError(f"{owner}: {name} must be ids in [{start}, {stop}).")


class TinyARVLA(nn.Module):
    """Tiny autoregressive VLA: ViT -> projector -> causal decoder over discrete action tokens.

    Parameters
    ----------
    n_instructions
        Number of instruction ids (target colours); token ids ``0 .. n_instructions - 1``.
    n_action_tokens
        K_a, action tokens per step (dx, dy, grip: 3).
    n_bins
        Action vocabulary size (256: the last 256 ids).
    image_size, patch
        Square RGB input side and patch side (48 and 8 => 36 visual tokens).
    d_vision, vision_layers, vision_heads
        ViT width, depth and heads (64, 3, 4).
    d_model, layers, heads
        Decoder width, depth and heads (96, 3, 4).
    mlp_ratio
        MLP hidden width / model width.
    stem
        ``"conv"`` (default: three 3x3 stride-2 convolutions, total stride 8) or ``"linear"``
        (the spec's patch projection).
    instruction_film
        FiLM-condition the ViT stem on the instruction (early fusion; default True).
    image_summary
        Add a linear map of the flattened ViT tokens to the instruction token (default True).
        With the spec's plain design (``stem="linear"``, both flags False) behaviour cloning
        stays on the marginal-action plateau within the CPU budget (docs/scale.md).
    seed
        Seed of the initialisation.

    Examples
    --------
    >>> model = TinyARVLA(seed=0)
    >>> images = torch.zeros(2, 48, 48, 3, dtype=torch.uint8)
    >>> logits, cache = model.prefill(images, torch.tensor([0, 1]))
    >>> logits.shape, cache.length
    (torch.Size([2, 264]), 37)
    """

    def __init__(
        self,
        n_instructions: int = 8,
        n_action_tokens: int = 3,
        n_bins: int = 256,
        image_size: int = 48,
        patch: int = 8,
        d_vision: int = 64,
        vision_layers: int = 3,
        vision_heads: int = 4,
        d_model: int = 96,
        layers: int = 3,
        heads: int = 4,
        mlp_ratio: int = 4,
        stem: str = "conv",
        instruction_film: bool = True,
        image_summary: bool = True,
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        owner = "TinyARVLA"
        if stem not in ("conv", "linear"):
            raise ValueError(f"{owner}: stem must be 'conv' or 'linear'; got {stem!r}.")
        for name, flag in {
            "instruction_film": instruction_film,
            "image_summary": image_summary,
        }.items():
            if not isinstance(flag, bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {type(flag).__name__}.")
        self.n_instructions = check_positive_int(
            "n_instructions", n_instructions, owner=owner, maximum=4096
        )
        self.n_action_tokens = check_positive_int(
            "n_action_tokens", n_action_tokens, owner=owner, maximum=64
        )
        self.n_bins = check_positive_int("n_bins", n_bins, owner=owner, minimum=2, maximum=4096)
        self.image_size = check_positive_int("image_size", image_size, owner=owner, maximum=256)
        self.patch = check_positive_int("patch", patch, owner=owner, maximum=self.image_size)
        if self.image_size % self.patch:
            raise ValueError(
                f"{owner}: image_size ({image_size}) must be divisible by patch ({patch})."
            )
        sizes = {"d_vision": d_vision, "d_model": d_model}
        for name, value in sizes.items():
            check_positive_int(name, value, owner=owner, maximum=1024)
        for name, value in {"vision_layers": vision_layers, "layers": layers}.items():
            check_positive_int(name, value, owner=owner, maximum=24)
        check_positive_int("mlp_ratio", mlp_ratio, owner=owner, maximum=8)
        check_positive_int("vision_heads", vision_heads, owner=owner, maximum=d_vision)
        check_positive_int("heads", heads, owner=owner, maximum=d_model)
        self.vocab_size = self.n_instructions + self.n_bins
        # the constructor keywords (all but the seed), so that a checkpoint can rebuild the model
        self.config = {
            "n_instructions": n_instructions, "n_action_tokens": n_action_tokens,
            "n_bins": n_bins, "image_size": image_size, "patch": patch, "d_vision": d_vision,
            "vision_layers": vision_layers, "vision_heads": vision_heads, "d_model": d_model,
            "layers": layers, "heads": heads, "mlp_ratio": mlp_ratio, "stem": stem,
            "instruction_film": instruction_film, "image_summary": image_summary,
        }  # fmt: skip
        with seeded_default_init(seed):
            self.vision = VisionEncoder(
                image_size, patch, d_vision, vision_layers, vision_heads, mlp_ratio, stem=stem,
                n_film=self.n_instructions if instruction_film else 0,
            )  # fmt: skip
            self.projector = nn.Linear(d_vision, d_model)
            # a global image embedding (flattened ViT tokens) added to the instruction token
            self.summary = (
                nn.Linear(self.vision.n_patches * d_vision, d_model) if image_summary else None
            )
            self.embed = nn.Embedding(self.vocab_size, d_model)
            self.n_prefix = self.vision.n_patches + 1
            self.pos = nn.Parameter(torch.zeros(1, self.n_prefix + self.n_action_tokens, d_model))
            nn.init.normal_(self.pos, std=0.02)
            self.blocks = nn.ModuleList(Block(d_model, heads, mlp_ratio) for _ in range(layers))
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, self.vocab_size)

    @property
    def action_token_range(self) -> tuple[int, int]:
        """``(start, stop)`` of the action token ids (the last ``n_bins`` ids)."""
        return self.n_instructions, self.vocab_size

    def vision_attention_modules(self) -> list[nn.Module]:
        """The self-attention modules of the vision encoder (what SCALE tempers)."""
        return [block.attn for block in self.vision.blocks]

    def _pixels(self, images: torch.Tensor) -> torch.Tensor:
        check_tensor("images", images, owner="TinyARVLA", floating=False)
        if images.is_complex() or images.dtype == torch.bool:
            raise TypeError(f"TinyARVLA: images must be uint8 or real; got dtype {images.dtype}.")
        side = self.image_size
        if images.ndim != 4 or tuple(images.shape[1:]) != (side, side, 3):
            raise ValueError(
                f"TinyARVLA: images must have shape (B, {side}, {side}, 3); "
                f"got {tuple(images.shape)}."
            )
        x = images.to(self.head.weight.dtype)
        if images.dtype == torch.uint8:
            x = x / 255.0
        return (x.permute(0, 3, 1, 2) - 0.5) / 0.25  # (B, 3, H, W), roughly unit scale

    def _check_instructions(self, instructions: torch.Tensor, batch: int) -> torch.Tensor:
        check_tensor(
            "instructions", instructions, owner="TinyARVLA", floating=False, shape=(batch,)
        )
        _check_ids("instructions", instructions, self.n_instructions, "TinyARVLA")
        return instructions.long()

    def _decode(self, x: torch.Tensor, cache: KVCache | None) -> tuple[torch.Tensor, KVCache]:
        """Run the decoder blocks on new positions ``x`` (B, T, d); return last hidden + cache."""
        new = KVCache()
        for i, block in enumerate(self.blocks):
            past = None if cache is None else (cache.keys[i], cache.values[i])
            x, (k, v) = block(x, causal=cache is None, past=past)
            new.keys.append(k)
            new.values.append(v)
        return self.norm(x), new

    def prefix_embeddings(self, images: torch.Tensor, instructions: torch.Tensor) -> torch.Tensor:
        """Embeddings of [visual tokens; instruction token] with positions: (B, 37, d_model)."""
        pixels = self._pixels(images)
        instructions = self._check_instructions(instructions, pixels.shape[0])
        features = self.vision(pixels, instructions)  # (B, 36, d_vision)
        visual = self.projector(features)  # (B, 36, d_model)
        instruction = self.embed(instructions)
        if self.summary is not None:
            instruction = instruction + self.summary(features.flatten(1))
        x = torch.cat([visual, instruction[:, None]], dim=1)  # (B, 37, d_model)
        return x + self.pos[:, : self.n_prefix]

    def prefill(
        self, images: torch.Tensor, instructions: torch.Tensor
    ) -> tuple[torch.Tensor, KVCache]:
        """One pass over the prefix: first action-token logits ``(B, vocab)`` and the cache."""
        h, cache = self._decode(self.prefix_embeddings(images, instructions), None)
        return self.head(h[:, -1]), cache

    def step(self, tokens: torch.Tensor, cache: KVCache) -> tuple[torch.Tensor, KVCache]:
        """Feed one token per row ``(B,)``; return the next logits ``(B, vocab)`` and the cache."""
        if not isinstance(cache, KVCache) or cache.length < self.n_prefix:
            raise TypeError("TinyARVLA.step: cache must be the KVCache returned by prefill/step.")
        position = cache.length
        if position >= self.pos.shape[1]:
            raise ValueError(
                f"TinyARVLA.step: all {self.n_action_tokens} action tokens are decoded."
            )
        check_tensor(
            "tokens",
            tokens,
            owner="TinyARVLA.step",
            floating=False,
            shape=(cache.keys[0].shape[0],),
        )
        _check_ids("tokens", tokens, self.vocab_size, "TinyARVLA.step")
        x = self.embed(tokens.long())[:, None] + self.pos[:, position : position + 1]  # (B, 1, d)
        h, cache = self._decode(x, cache)
        return self.head(h[:, -1]), cache

    def forward(
        self, images: torch.Tensor, instructions: torch.Tensor, action_tokens: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits of every action token, ``(B, K_a, vocab)`` (training, checks)."""
        x = self.prefix_embeddings(images, instructions)
        B = x.shape[0]
        check_tensor(
            "action_tokens", action_tokens, owner="TinyARVLA", floating=False,
            shape=(B, self.n_action_tokens),
        )  # fmt: skip
        _check_ids("action_tokens", action_tokens, self.vocab_size, "TinyARVLA")
        fed = action_tokens[:, :-1].long()  # a_1 .. a_{K_a - 1}
        if fed.numel():
            start = self.n_prefix
            fed_x = self.embed(fed) + self.pos[:, start : start + fed.shape[1]]
            x = torch.cat([x, fed_x], dim=1)
        h, _ = self._decode(x, None)
        return self.head(h[:, self.n_prefix - 1 :])  # (B, K_a, vocab)
