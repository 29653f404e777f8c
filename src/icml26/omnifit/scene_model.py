"""SceneThinker: a tiny *real* Qwen2.5-Omni thinker with stand-in media encoders (issue 43).

The decoder is transformers' ``Qwen2_5OmniThinkerForConditionalGeneration`` built from a small
config (its own text model, TMRoPE rotary embedding with ``mrope_section``, ``lm_head``); its
audio and vision towers are present but unused: two small MLP encoders (8x8 patch -> d, 16-bin
spectrum -> d) stand in for them and produce the ``inputs_embeds`` of the media placeholders.
Position ids follow Qwen2.5-Omni's TMRoPE rule for audio in video: each 2-second chunk holds its
video tokens (temporal id ``25 x seconds`` = ``50 k``, height and width ids of the 4x4 token
grid) then its audio tokens (``50 k + round(6.25 i)``: 8 tokens of 250 ms instead of the real
50 of 40 ms), all offset by the text before; the question after the media continues from the
largest id + 1. Answers are read from ``lm_head`` at the last position, over the 14 answer
tokens. The model is driven through :class:`~icml26.omnifit.hf.QwenOmniAdapter`'s layer loop,
so the compressors see the same code path as on a downloaded Qwen2.5-Omni.

Training (:func:`train_scene_thinker`): cross-entropy on the answer tokens, no InfoNCE; half the
batches drop a random 0-80 % of the media tokens before layer 0 (kept tokens keep their ids).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 (the usual alias)
from torch import nn

from icml26.core.progress import Progress, progress_reporter
from icml26.core.schedules import warmup_cosine_lr
from icml26.core.training import TrainingCheckpoint, adamw, optimizer_step, set_lr
from icml26.core.validation import check_in_interval, check_positive_int, torch_generator
from icml26.core.weights import seeded_default_init
from icml26.omnifit.avscene import (
    AUDIO_BINS,
    AUDIO_TOKENS,
    N_ANSWERS,
    PATCH_DIM,
    PATCHES,
    QUESTION_LEN,
    SceneBatch,
    SceneData,
    scene_batch,
    scene_token_layout,
)
from icml26.omnifit.hf import QwenOmniAdapter

__all__ = ["SceneThinker", "SceneThinkerConfig", "scene_position_ids", "train_scene_thinker"]

BOS, FAMILY_TOKEN, ARG_TOKEN = N_ANSWERS, N_ANSWERS + 1, N_ANSWERS + 5  # answers are ids 0-13
AUDIO_ID, IMAGE_ID, VIDEO_ID, VOCAB = 28, 29, 30, 32
POSITIONS_PER_CHUNK = 50  # Qwen2.5-Omni: 25 temporal ids per second, 2-second chunks


@dataclass(frozen=True)
class SceneThinkerConfig:
    """Sizes of the tiny thinker (``head_dim = d / n_heads`` must be divisible by 8)."""

    n_layers: int = 4
    d: int = 64
    n_heads: int = 4
    kv_heads: int = 2
    d_ff: int = 128
    rope_theta: float = 10_000.0

    def __post_init__(self) -> None:
        owner = "SceneThinkerConfig"
        check_positive_int("n_layers", self.n_layers, maximum=64, owner=owner)
        check_positive_int("d", self.d, maximum=4096, owner=owner)
        check_positive_int("n_heads", self.n_heads, maximum=self.d, owner=owner)
        check_positive_int("kv_heads", self.kv_heads, maximum=self.n_heads, owner=owner)
        check_positive_int("d_ff", self.d_ff, maximum=16384, owner=owner)
        check_in_interval("rope_theta", self.rope_theta, low=1.0, high=1e9, owner=owner)
        if self.d % self.n_heads or (self.d // self.n_heads) % 8 or self.n_heads % self.kv_heads:
            raise ValueError(
                f"{owner}: d / n_heads must be a multiple of 8 and n_heads a multiple of "
                f"kv_heads; got d={self.d}, n_heads={self.n_heads}, kv_heads={self.kv_heads}."
            )

    def thinker_config(self) -> Any:
        """The ``Qwen2_5OmniThinkerConfig`` (tiny unused audio/vision towers)."""
        from transformers import Qwen2_5OmniThinkerConfig

        eighth = self.d // self.n_heads // 8  # mrope_section (t, h, w) sums to head_dim / 2
        return Qwen2_5OmniThinkerConfig(
            text_config={
                "hidden_size": self.d, "intermediate_size": self.d_ff,
                "num_hidden_layers": self.n_layers, "num_attention_heads": self.n_heads,
                "num_key_value_heads": self.kv_heads, "vocab_size": VOCAB,
                "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "default", "rope_theta": float(self.rope_theta),
                                    "mrope_section": [2 * eighth, eighth, eighth]},
            },
            audio_config={"d_model": 8, "encoder_layers": 1, "encoder_attention_heads": 1,
                          "encoder_ffn_dim": 8, "num_mel_bins": 8, "output_dim": self.d},
            vision_config={"depth": 1, "hidden_size": 8, "intermediate_size": 8, "num_heads": 1,
                           "out_hidden_size": self.d, "fullatt_block_indexes": [0]},
            audio_token_index=AUDIO_ID, image_token_index=IMAGE_ID, video_token_index=VIDEO_ID,
        )  # fmt: skip


def scene_position_ids(windows: int) -> torch.Tensor:
    """TMRoPE ids ``(3, n)`` of an AV-Scene clip of ``windows`` chunks (see the module doc).

    Examples
    --------
    >>> pos = scene_position_ids(2)
    >>> pos[:, 1:3].tolist(), pos[:, 17].tolist(), pos[:, 25].tolist(), pos[:, -1].tolist()
    ([[1, 1], [1, 1], [1, 2]], [1, 1, 1], [51, 1, 1], [97, 97, 97])
    """
    W = check_positive_int("windows", windows, maximum=64, owner="scene_position_ids")
    start = 1  # after BOS (id 0)
    columns = [[0, 0, 0]]
    for k in range(W):
        t = start + POSITIONS_PER_CHUNK * k
        columns += [[t, start + i, start + j] for i in range(4) for j in range(4)]
        columns += [[t + round(6.25 * i)] * 3 for i in range(AUDIO_TOKENS)]
    top = max(max(c) for c in columns)
    columns += [[top + 1 + q] * 3 for q in range(QUESTION_LEN)]
    return torch.tensor(columns, dtype=torch.long).T


class SceneThinker(nn.Module):
    """The AV-Scene stand-in: encoders + a tiny Qwen2.5-Omni thinker (a ``ModelAdapter``).

    Parameters
    ----------
    config
        Sizes.
    seed
        Seed of the initial weights (HF initialises from torch's global generator; it is forked
        and restored, so the caller's stream is untouched).

    Examples
    --------
    >>> from icml26.omnifit.avscene import make_scene_dataset, scene_batch
    >>> model = SceneThinker(SceneThinkerConfig(n_layers=1, d=16, n_heads=1, kv_heads=1, d_ff=16))
    >>> batch = scene_batch(make_scene_dataset(2, windows=2, seed=0), slice(None))
    >>> h, ids, pos = model.embed(batch)
    >>> tuple(h.shape), tuple(pos.shape), tuple(model(batch).shape)
    ((2, 51, 16), (3, 2, 51), (2, 14))
    """

    def __init__(self, config: SceneThinkerConfig | None = None, seed: int = 0) -> None:
        super().__init__()
        from transformers import Qwen2_5OmniThinkerForConditionalGeneration

        config = SceneThinkerConfig() if config is None else config
        if not isinstance(config, SceneThinkerConfig):
            raise TypeError(
                f"SceneThinker: config must be a SceneThinkerConfig; got {type(config).__name__}."
            )
        seed = check_positive_int("seed", seed, minimum=0, maximum=2**62, owner="SceneThinker")
        self.config = config
        d = config.d
        with seeded_default_init(seed):
            thinker_config = config.thinker_config()
            thinker_config.text_config._attn_implementation = "sdpa"
            self.thinker = Qwen2_5OmniThinkerForConditionalGeneration(thinker_config)
            self.video_encoder = nn.Sequential(nn.Linear(PATCH_DIM, d), nn.GELU(), nn.Linear(d, d))
            self.audio_encoder = nn.Sequential(nn.Linear(AUDIO_BINS, d), nn.GELU(), nn.Linear(d, d))
            # a vision encoder knows where its patches are (Qwen's ViT: 2-D RoPE); so does ours
            self.patch_position = nn.Parameter(0.02 * torch.randn(PATCHES, d))
        self.eval()
        self.adapter = QwenOmniAdapter(self.thinker)

    hidden_size = property(lambda self: self.config.d, doc="Hidden size d.")
    ffn_size = property(lambda self: self.config.d_ff, doc="MLP width.")
    n_heads = property(lambda self: self.config.n_heads, doc="Attention heads.")
    layers = property(lambda self: self.adapter.layers, doc="The thinker's decoder layers.")

    def embed(self, batch: SceneBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``H0 (B, n, d)``, modality codes ``(n,)`` and TMRoPE ids ``(3, B, n)``."""
        if not isinstance(batch, SceneBatch):
            raise TypeError(
                f"SceneThinker: batch must be a SceneBatch; got {type(batch).__name__}."
            )
        B, W = batch.video.shape[:2]
        dtype = self.video_encoder[0].weight.dtype
        video = self.video_encoder(batch.video.to(dtype)) + self.patch_position  # (B, W, 16, d)
        audio = self.audio_encoder(batch.audio.to(dtype))  # (B, W, 8, d)
        media = torch.cat([video, audio], dim=2).reshape(B, -1, self.config.d)
        words = torch.stack([batch.question[:, 0] + FAMILY_TOKEN, batch.question[:, 1] + ARG_TOKEN])
        text = self.adapter.embed_tokens(torch.cat([torch.full((1, B), BOS), words]).T)
        h = torch.cat([text[:, :1], media, text[:, 1:]], dim=1)
        ids = torch.as_tensor(scene_token_layout(W))
        pos = scene_position_ids(W)[:, None].expand(3, B, -1)
        return h, ids, pos

    def _check_hidden(self, h: Any) -> None:
        from icml26.core.validation import check_tensor

        owner = "SceneThinker"
        check_tensor("h", h, shape=(None, None, self.config.d), finite=True, owner=owner)
        if h.shape[0] == 0 or h.shape[1] == 0 or h.dtype != self.video_encoder[0].weight.dtype:
            raise ValueError(
                f"{owner}: h must hold at least one token of one sample in the model's dtype "
                f"{self.video_encoder[0].weight.dtype}; got shape {tuple(h.shape)}, {h.dtype}."
            )

    def _check(self, layer: Any, h: Any, pos_ids: Any, mask: Any) -> int:
        from icml26.core.validation import check_tensor

        owner = "SceneThinker"
        layer = check_positive_int(
            "layer", layer, minimum=0, maximum=len(self.layers) - 1, owner=owner
        )
        self._check_hidden(h)
        check_tensor("pos_ids", pos_ids, shape=(3, *h.shape[:2]), floating=False, owner=owner)
        if pos_ids.is_floating_point() or pos_ids.dtype == torch.bool:
            raise TypeError(f"{owner}: pos_ids must be an integer tensor; got {pos_ids.dtype}.")
        if mask is not None:
            check_tensor("mask", mask, shape=(h.shape[0], h.shape[1], h.shape[1]), owner=owner)
            if mask.dtype != torch.bool:
                raise TypeError(f"{owner}: mask must be a bool tensor or None; got {mask.dtype}.")
        return layer

    def run_layer(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Decoder layer ``layer`` of the thinker on the alive tokens."""
        layer = self._check(layer, h, pos_ids, mask)
        return self.adapter.run_layer(layer, h, pos_ids, mask)

    def attention_map(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Eager attention probabilities of layer ``layer``, ``(B, heads, n, n)``."""
        layer = self._check(layer, h, pos_ids, mask)
        return self.adapter.attention_map(layer, h, pos_ids, mask)

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Logits of the 14 answer tokens at the last position, ``(B, 14)``."""
        self._check_hidden(h)
        return self.adapter.head(h)[:, :N_ANSWERS]

    def forward(self, batch: SceneBatch, keep: torch.Tensor | None = None) -> torch.Tensor:
        """Answer logits; ``keep`` (``(B, m)`` sorted indices) keeps only those tokens."""
        h, _, pos = self.embed(batch)
        if keep is not None:
            from icml26.core.validation import check_tensor

            check_tensor(
                "keep", keep, shape=(h.shape[0], None), floating=False, owner="SceneThinker"
            )
            if keep.is_floating_point() or keep.dtype == torch.bool or keep.shape[1] == 0:
                raise TypeError("SceneThinker: keep must be a non-empty integer (B, m) tensor.")
            if int(keep.min()) < 0 or int(keep.max()) >= h.shape[1]:
                raise ValueError(f"SceneThinker: keep must index tokens in [0, {h.shape[1]}).")
            h = h.gather(1, keep[..., None].expand(-1, -1, h.shape[-1]))
            pos = pos.gather(2, keep[None].expand(3, -1, -1))
        for layer in range(len(self.layers)):
            h = self.run_layer(layer, h, pos, None)
        return self.head(h)


def _random_keep(
    B: int, layout: torch.Tensor, rate: float, generator: torch.Generator
) -> torch.Tensor:
    """Sorted indices ``(B, m)``: every text token and a random ``1 - rate`` of the media."""
    media = torch.nonzero(layout != 0).squeeze(1)
    text = torch.nonzero(layout == 0).squeeze(1)
    n_keep = max(1, round((1 - rate) * len(media)))
    order = torch.rand(B, len(media), generator=generator).argsort(1)[:, :n_keep]
    keep = torch.cat([media[order], text.expand(B, -1)], dim=1)
    return keep.sort(dim=1).values


@dataclass(frozen=True)
class SceneTrainResult:
    """Losses of :func:`train_scene_thinker` (one per step) and the last epoch's accuracy."""

    ce: list[float]
    train_accuracy: float


def train_scene_thinker(
    model: SceneThinker,
    data: SceneData,
    epochs: int = 4,
    batch_size: int = 32,
    lr: float = 3e-3,
    drop_fraction: float = 0.5,
    max_drop: float = 0.8,
    seed: int = 0,
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> SceneTrainResult:
    """Train ``model`` on ``data``: AdamW (warm-up + cosine), cross-entropy on the answers.

    A ``drop_fraction`` of the batches drops a uniform ``[0, max_drop)`` share of the media
    tokens before layer 0 (random per clip), so the model meets shortened streams. ``resume``
    restores from and saves to a :class:`~icml26.core.TrainingCheckpoint`.

    Examples
    --------
    >>> from icml26.omnifit.avscene import make_scene_dataset
    >>> model = SceneThinker(SceneThinkerConfig(n_layers=1, d=16, n_heads=1, kv_heads=1, d_ff=16))
    >>> history = train_scene_thinker(model, make_scene_dataset(8, 2, seed=0), 1, batch_size=4)
    >>> len(history.ce), model.training
    (2, False)
    """
    owner = "train_scene_thinker"
    if not isinstance(model, SceneThinker):
        raise TypeError(f"{owner}: model must be a SceneThinker; got {type(model).__name__}.")
    if not isinstance(data, SceneData):
        raise TypeError(f"{owner}: data must be a SceneData; got {type(data).__name__}.")
    epochs = check_positive_int("epochs", epochs, maximum=10_000, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, maximum=100_000, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, high=1.0, closed="right", owner=owner)
    drop_fraction = check_in_interval(
        "drop_fraction", drop_fraction, low=0.0, high=1.0, owner=owner
    )
    max_drop = check_in_interval(
        "max_drop", max_drop, low=0.0, high=1.0, closed="left", owner=owner
    )
    generator = torch_generator(seed)
    epoch_start = torch.Generator()
    steps_per_epoch = max(1, len(data) // batch_size)
    total = epochs * steps_per_epoch
    optimizer = adamw(model, lr=lr, weight_decay=0.01)
    log: dict[str, Any] = {"ce": [], "correct": 0, "seen": 0}
    start = 0 if resume is None else resume.restore(model, optimizer, {"epoch": epoch_start})
    if start:
        log = resume.extra
        generator.set_state(epoch_start.get_state())
        order = torch.randperm(len(data), generator=generator).numpy()
        for _ in range(start % steps_per_epoch):  # the drop draws of the interrupted epoch
            torch.rand(3, generator=generator)
    layout = torch.as_tensor(scene_token_layout(data.windows))
    model.train()
    with progress_reporter(progress, total, "training SceneThinker") as report:
        for step in range(start, total):
            if step % steps_per_epoch == 0:
                epoch_start.set_state(generator.get_state())
                order = torch.randperm(len(data), generator=generator).numpy()
            first = step % steps_per_epoch * batch_size
            batch = scene_batch(data, np.sort(order[first : first + batch_size]))
            draw, rate, keep_seed = torch.rand(3, generator=generator).tolist()
            keep = None
            if draw < drop_fraction:
                keep_rng = torch.Generator().manual_seed(int(keep_seed * 2**31))
                keep = _random_keep(len(batch), layout, rate * max_drop, keep_rng)
            warmup = max(1, total // 20)
            set_lr(
                optimizer,
                warmup_cosine_lr(
                    step, total_steps=total, peak_lr=lr, warmup_steps=warmup, final_lr=0.0
                ),
            )
            logits = model(batch, keep)
            ce = F.cross_entropy(logits, batch.labels)
            optimizer_step(ce, optimizer, step=step, clip=1.0, owner=owner)
            log["ce"].append(float(ce.detach()))
            if step >= total - steps_per_epoch:
                log["correct"] += int((logits.argmax(-1) == batch.labels).sum())
                log["seen"] += len(batch)
            report(step + 1, ce=log["ce"][-1])
            if resume is not None:
                resume.save_if_due(step + 1, model, optimizer, {"epoch": epoch_start}, log)
    model.eval()
    return SceneTrainResult(log["ce"], log["correct"] / max(log["seen"], 1))
