"""TinyVLA: a small vision-language-action policy on Hugging Face Llama decoder layers (spec §5).

A convolutional patch encoder turns the 64 x 64 image into 64 visual tokens (never pruned); the
instruction (object id, goal id) and the proprioception (gripper x, y, grip) are one token each;
four learned action queries follow. The sequence runs through ``transformers`` Llama decoder
layers (pre-norm, RoPE, SwiGLU MLP with gate/up/down, q/k/v/o attention: the layout of
OpenVLA's Llama-2 backbone), and an MLP on the pooled action-query tokens regresses an action
chunk of 4 steps x (dx, dy, grip) (OpenVLA-OFT style parallel decoding: one backbone pass per
chunk). FastV-style token pruning can drop visual tokens after a chosen layer.

Deviations: a stand-in for the paper's 7B backbones; sizes follow the spec (d = 128, 6 blocks,
4 heads, d_ff = 512 in ``full``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, final

import numpy as np
import torch
from torch import nn

from icml26.core.validation import Seed, check_in_interval, check_positive_int
from icml26.core.weights import seeded_default_init
from icml26.ecovla.adapter import BackboneAdapter
from icml26.ecovla.tokens import fastv_token_prune

__all__ = ["TinyVLA", "TinyVLAConfig"]

MAX_WIDTH = 4096  # widths beyond this are not a tiny stand-in


@dataclass(frozen=True)
class TinyVLAConfig:
    """Sizes of :class:`TinyVLA` (defaults: the spec's full-size stand-in).

    Parameters
    ----------
    d_model, n_layers, n_heads, n_kv_heads, d_ff
        Backbone width, depth, query heads, KV heads (GQA when fewer than heads), MLP width.
    image_size, patch
        Image side and patch side in pixels (image_size / patch squared visual tokens).
    chunk
        Action-chunk length (steps per backbone pass).
    conv_channels
        Channels of the encoder's first convolution.
    """

    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 4
    n_kv_heads: int = 4
    d_ff: int = 512
    image_size: int = 64
    patch: int = 8
    chunk: int = 4
    conv_channels: int = 16

    def __post_init__(self) -> None:
        owner = "TinyVLAConfig"
        for name in ("d_model", "d_ff", "conv_channels"):
            check_positive_int(name, getattr(self, name), maximum=MAX_WIDTH, owner=owner)
        for name in ("n_layers", "n_heads", "n_kv_heads", "chunk"):
            check_positive_int(name, getattr(self, name), maximum=64, owner=owner)
        check_positive_int("image_size", self.image_size, maximum=256, owner=owner)
        check_positive_int("patch", self.patch, maximum=self.image_size, owner=owner)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"{owner}: d_model must be n_heads times an even head size; got "
                f"d_model={self.d_model}, n_heads={self.n_heads}."
            )
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"{owner}: n_kv_heads must divide n_heads; got "
                f"{self.n_kv_heads} and {self.n_heads}."
            )
        if self.patch % 2:
            raise ValueError(f"{owner}: patch must be even; got {self.patch}.")
        if self.image_size % self.patch:
            raise ValueError(
                f"{owner}: patch must divide image_size; got {self.patch} and {self.image_size}."
            )

    @property
    def n_visual(self) -> int:
        """Number of visual tokens."""
        return (self.image_size // self.patch) ** 2

    @property
    def n_tokens(self) -> int:
        """Sequence length: instruction (1) + proprio (1) + visual + action queries."""
        return 2 + self.n_visual + self.chunk


@final
class TinyVLA(nn.Module, BackboneAdapter):
    """A tiny VLA policy whose backbone is a stack of HF ``LlamaDecoderLayer`` s.

    Parameters
    ----------
    config
        Sizes (:class:`TinyVLAConfig`).
    seed
        Seed of the parameter initialisation.

    Example
    -------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64), seed=0)
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> model.act(obs).shape  # (chunk, (dx, dy, grip))
    (4, 3)
    """

    VISUAL_START = 2  # tokens before the visual ones: instruction, proprio

    def __init__(self, config: TinyVLAConfig | None = None, *, seed: Seed = 0) -> None:
        super().__init__()
        from transformers import LlamaConfig, LlamaModel

        config = TinyVLAConfig() if config is None else config
        if not isinstance(config, TinyVLAConfig):
            raise TypeError(
                f"TinyVLA: config must be a TinyVLAConfig; got {type(config).__name__}."
            )
        self.config = config
        c = config
        llama = LlamaConfig(
            vocab_size=1,
            bos_token_id=None,
            eos_token_id=None,
            hidden_size=c.d_model,
            intermediate_size=c.d_ff,
            num_hidden_layers=c.n_layers,
            num_attention_heads=c.n_heads,
            num_key_value_heads=c.n_kv_heads,
            max_position_embeddings=max(64, c.n_tokens),
            attn_implementation="eager",  # FastV reads the last row of the attention map
        )
        with seeded_default_init(seed):
            # two non-overlapping strided convolutions (cheap on CPU): patch = sub-patch x 2
            # RGB + (x, y) coordinate maps (CoordConv): sub-patch positions are linear features
            self.conv = nn.Conv2d(5, c.conv_channels, c.patch // 2, stride=c.patch // 2)
            self.patchify = nn.Conv2d(c.conv_channels, c.d_model, 2, stride=2)
            self.visual_pos = nn.Parameter(torch.randn(c.n_visual, c.d_model) * 0.02)
            self.object_emb = nn.Embedding(3, c.d_model)
            self.goal_emb = nn.Embedding(2, c.d_model)
            self.proprio = nn.Linear(3, c.d_model)
            self.queries = nn.Parameter(torch.randn(c.chunk, c.d_model) * 0.02)
            self.backbone = LlamaModel(llama)
            self.head = nn.Sequential(
                nn.Linear(c.d_model, c.d_model), nn.GELU(), nn.Linear(c.d_model, c.chunk * 3)
            )
        self.backbone.embed_tokens = None  # inputs are embeddings; no vocabulary
        self.token_keep = 1.0
        self.token_layer = 2

    @property
    def layers(self) -> Sequence[nn.Module]:
        """The Llama decoder layers (the prunable backbone)."""
        return self.backbone.layers

    def set_token_pruning(self, keep_ratio: float = 1.0, start_layer: int = 2) -> None:
        """FastV-style: keep ``keep_ratio`` of the visual tokens from layer ``start_layer`` on.

        Tokens are ranked by the attention the last token pays them in layer start_layer - 1;
        ``keep_ratio = 1`` turns token pruning off.
        """
        owner = "TinyVLA.set_token_pruning"
        self.token_keep = check_in_interval(
            "keep_ratio", keep_ratio, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.token_layer = check_positive_int(
            "start_layer", start_layer, maximum=self.config.n_layers - 1, owner=owner
        )

    # --- encoders ---------------------------------------------------------------------------

    def encode_images(self, images: torch.Tensor) -> torch.Tensor:
        """Visual tokens (before position embeddings), ``(B, N, D)`` from uint8 ``(B, H, W, 3)``."""
        dtype = self.visual_pos.dtype
        x = images.permute(0, 3, 1, 2).to(dtype) / 255.0 - 0.5  # (B, 3, H, W)
        n = x.shape[-1]
        ramp = torch.linspace(-0.5, 0.5, n, dtype=dtype)
        coords = torch.stack([ramp.expand(n, n), ramp[:, None].expand(n, n)])  # (2, H, W): x, y
        x = torch.cat([x, coords.expand(x.shape[0], -1, -1, -1)], dim=1)  # (B, 5, H, W)
        x = self.patchify(nn.functional.gelu(self.conv(x)))  # (B, D, H/p, W/p)
        return x.flatten(2).transpose(1, 2)  # (B, N, D)

    def forward(
        self,
        images: torch.Tensor,
        instruction: torch.Tensor,
        proprio: torch.Tensor,
        visual: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Action chunks ``(B, chunk, 3)`` from a batch of observations."""
        c = self.config
        visual = self.encode_images(images) if visual is None else visual
        instr = self.object_emb(instruction[:, 0]) + self.goal_emb(instruction[:, 1])  # (B, D)
        tokens = torch.cat(
            [
                instr[:, None],
                self.proprio(proprio.to(visual.dtype))[:, None],
                visual + self.visual_pos,
                self.queries.expand(visual.shape[0], -1, -1),
            ],
            dim=1,
        )  # (B, S, D)
        h = self._backbone(tokens)
        pooled = h[:, -c.chunk :].mean(dim=1)  # (B, D)
        return self.head(pooled).view(-1, c.chunk, 3)

    def _backbone(self, h: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(h.shape[1])
        mask = _causal_mask(h.shape[1], h.dtype)
        pe = self.backbone.rotary_emb(h, position_ids=positions[None])
        last_attention: list[torch.Tensor] = []
        handle = None
        if self.token_keep < 1.0:

            def grab(module: Any, args: Any, output: Any) -> None:
                last_attention.append(output[1][:, :, -1].mean(dim=1))  # (B, S)

            handle = self.layers[self.token_layer - 1].self_attn.register_forward_hook(grab)
        try:
            for i, layer in enumerate(self.layers):
                if handle is not None and i == self.token_layer:
                    h, kept = fastv_token_prune(
                        h,
                        last_attention[0],
                        self.token_keep,
                        self.VISUAL_START,
                        self.config.n_visual,
                    )
                    positions = positions[kept]
                    mask = _causal_mask(h.shape[1], h.dtype)
                    pe = self.backbone.rotary_emb(h, position_ids=positions[None])
                h = layer(
                    h, attention_mask=mask, position_ids=positions[None], position_embeddings=pe
                )
        finally:
            if handle is not None:
                handle.remove()
        return self.backbone.norm(h)

    # --- BackboneAdapter --------------------------------------------------------------------

    def visual_features(self, obs: Mapping[str, Any]) -> torch.Tensor:
        """The encoder's visual tokens of one observation, ``(N, D)``."""
        images, _, _ = _batch(obs, self.config)
        with torch.no_grad():
            return self.encode_images(images)[0]

    def act(self, obs: Mapping[str, Any], *, features: torch.Tensor | None = None) -> np.ndarray:
        """The action chunk ``(chunk, 3)`` for one observation (switches to eval mode).

        ``features`` (from :meth:`visual_features`) avoids encoding the image twice.
        """
        images, instruction, proprio = _batch(obs, self.config)
        visual = None if features is None else features[None]
        if self.training:
            self.eval()
        with torch.no_grad():
            out = self(images, instruction, proprio, visual=visual)[0]
        return out.numpy().astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        """The constructor config as a JSON-able dict."""
        return asdict(self.config)


def _causal_mask(n: int, dtype: torch.dtype) -> torch.Tensor:
    return torch.full((n, n), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]


def _batch(obs: Any, config: TinyVLAConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One env observation as a batch of one: image, instruction, proprio tensors."""
    if not isinstance(obs, Mapping) or not {"image", "instruction", "proprio"} <= set(obs):
        raise TypeError(
            "TinyVLA: obs must be a mapping with 'image', 'instruction' and "
            f"'proprio' (a Shift2DPickPlace observation); got {type(obs).__name__}."
        )
    n = config.image_size
    image = np.asarray(obs["image"])
    if image.shape != (n, n, 3):
        raise ValueError(f"TinyVLA: obs['image'] must have shape ({n}, {n}, 3); got {image.shape}.")
    instruction = np.asarray(obs["instruction"], dtype=np.int64).reshape(-1)
    if instruction.shape != (2,) or not (0 <= instruction[0] < 3 and 0 <= instruction[1] < 2):
        raise ValueError(
            f"TinyVLA: obs['instruction'] must be (object in 0..2, goal in 0..1); "
            f"got {obs['instruction']!r}."
        )
    proprio = np.asarray(obs["proprio"], dtype=np.float32).reshape(-1)
    if proprio.shape != (3,) or not np.all(np.isfinite(proprio)):
        raise ValueError(
            f"TinyVLA: obs['proprio'] must be 3 finite numbers; got {obs['proprio']!r}."
        )
    return (
        torch.from_numpy(np.ascontiguousarray(image))[None],
        torch.from_numpy(instruction)[None],
        torch.from_numpy(proprio)[None],
    )
