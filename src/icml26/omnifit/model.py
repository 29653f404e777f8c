"""TinyOmni: a small decoder-only "omni" model for AV-Sync QA, and its training loop.

Patch, spectrum and text embeddings (plus a modality-type embedding, a time-window embedding
shared by the video and audio tokens of a window, and the token's place inside its window) feed
``L`` pre-norm decoder layers (RMSNorm, RoPE on 1-D positions, causal SDPA, SwiGLU); a linear
head reads the last position. Training minimises cross-entropy plus ``0.1 x`` an InfoNCE loss
between the mean video token and the mean audio token of each window of a stream (negatives: the
other windows of the same stream), a stand-in for the audio-visual alignment real omni models
learn in pre-training. TinyOmni implements :class:`~icml26.omnifit.ModelAdapter`.

Deviations (see docs/omnifit.md): the shared time-window embedding stands in for TMRoPE's
time-aligned positions, so that co-occurrence is visible in ``H^(0)``; the InfoNCE uses in-stream
negatives (content of different streams is independent, so only the window can be matched).
"""

from __future__ import annotations

import math
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
from icml26.omnifit.avsync import (
    AUDIO_BINS,
    AUDIO_TOKENS,
    MAX_WINDOWS,
    N_CLASSES,
    PATCH_DIM,
    PATCHES,
    VOCAB,
    AVSyncBatch,
    AVSyncData,
)
from icml26.omnifit.tokens import AUDIO, TEXT, VIDEO

__all__ = ["TinyOmni", "TinyOmniConfig", "TrainResult", "evaluate_accuracy", "train_tinyomni"]


@dataclass(frozen=True)
class TinyOmniConfig:
    """Sizes of :class:`TinyOmni` (spec §5 defaults: L = 8, d = 96, 4 heads, d_ff = 256)."""

    n_layers: int = 8
    d: int = 96
    n_heads: int = 4
    d_ff: int = 256
    rope_base: float = 10_000.0

    def __post_init__(self) -> None:
        owner = "TinyOmniConfig"
        check_positive_int("n_layers", self.n_layers, maximum=256, owner=owner)
        check_positive_int("d", self.d, maximum=4096, owner=owner)
        check_positive_int("n_heads", self.n_heads, maximum=self.d, owner=owner)
        check_positive_int("d_ff", self.d_ff, maximum=16384, owner=owner)
        check_in_interval("rope_base", self.rope_base, low=1.0, high=1e9, owner=owner)
        if self.d % self.n_heads or (self.d // self.n_heads) % 2:
            raise ValueError(
                f"{owner}: d / n_heads must be an even integer; got d={self.d}, "
                f"n_heads={self.n_heads}."
            )


class RMSNorm(nn.Module):
    """``x / rms(x) * g``."""

    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x: torch.Tensor, pos: torch.Tensor, base: float) -> torch.Tensor:
    """Rotate ``x`` (``(B, H, n, d_head)``) by the angles of positions ``pos`` (``(B, n)``)."""
    half = x.shape[-1] // 2
    freq = base ** (-torch.arange(half, dtype=x.dtype) / half)
    angle = (pos[..., None].to(x.dtype) * freq)[:, None]  # (B, 1, n, half)
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def _allowed(mask: torch.Tensor | None, n: int) -> torch.Tensor:
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    return causal if mask is None else mask & causal


class DecoderLayer(nn.Module):
    """Pre-norm attention + SwiGLU block."""

    def __init__(self, config: TinyOmniConfig) -> None:
        super().__init__()
        d = config.d
        self.n_heads, self.base = config.n_heads, config.rope_base
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.w1 = nn.Linear(d, config.d_ff, bias=False)
        self.w3 = nn.Linear(d, config.d_ff, bias=False)
        self.w2 = nn.Linear(config.d_ff, d, bias=False)

    def _qkv(self, x: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, ...]:
        B, n, _ = x.shape
        h = self.norm1(x)
        q, k, v = (
            p(h).view(B, n, self.n_heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v)
        )
        return rope(q, pos, self.base), rope(k, pos, self.base), v  # (B, H, n, d_head) each

    @staticmethod
    def _probs(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, n, n)
        allowed = _allowed(mask, q.shape[2])
        allowed = allowed[:, None] if allowed.ndim == 3 else allowed
        return torch.softmax(scores.masked_fill(~allowed, -torch.inf), dim=-1)

    def attention_probs(
        self, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Eager attention probabilities, ``(B, H, n, n)``."""
        q, k, _ = self._qkv(x, pos)
        return self._probs(q, k, mask)

    def _finish(self, x: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
        """Output projection, residual and SwiGLU block (``attended``: ``(B, H, n, d_head)``)."""
        B, n, d = x.shape
        x = x + self.o(attended.transpose(1, 2).reshape(B, n, d))
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    def _attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None,
        eager: bool = False,
    ) -> torch.Tensor:
        """Causal attention of ``n`` tokens among themselves, ``(B, H, n, d_head)``."""
        if eager:
            return self._probs(q, k, mask) @ v
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        allowed = _allowed(mask, q.shape[2])[:, None]  # (B, 1, n, n)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)

    def forward(
        self, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor | None, eager: bool = False
    ) -> torch.Tensor:
        q, k, v = self._qkv(x, pos)
        return self._finish(x, self._attend(q, k, v, mask, eager))

    def forward_kv(
        self,
        x: torch.Tensor,
        pos: torch.Tensor,
        mask: torch.Tensor | None,
        past: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """The layer on ``t`` new tokens after ``P`` cached ones; returns the grown cache too.

        The new tokens attend to every cached entry and causally among themselves; ``mask``
        (``(B, t, P + t)``, or ``(B, t, t)`` without a cache) further restricts that.
        """
        q, k, v = self._qkv(x, pos)
        if past is None:
            return self._finish(x, self._attend(q, k, v, mask)), (k, v)
        t, P = x.shape[1], past[0].shape[2]
        k = torch.cat([past[0], k], dim=2)  # (B, H, P + t, d_head)
        v = torch.cat([past[1], v], dim=2)
        allowed = torch.ones(t, P + t, dtype=torch.bool)
        allowed[:, P:] = torch.ones(t, t, dtype=torch.bool).tril()
        allowed = allowed if mask is None else (mask & allowed)[:, None]  # (B, 1, t, P + t)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return self._finish(x, attended), (k, v)


class TinyOmni(nn.Module):
    """The stand-in omni model (a :class:`~icml26.omnifit.ModelAdapter`).

    Parameters
    ----------
    config
        Sizes.
    seed
        Seed of the initial weights.

    Examples
    --------
    >>> from icml26.omnifit import make_dataset
    >>> model = TinyOmni(TinyOmniConfig(n_layers=2, d=32, n_heads=2, d_ff=64), seed=0)
    >>> batch = make_dataset(2, windows=2, seed=0).batch(slice(None))
    >>> h, ids, pos = model.embed(batch)
    >>> tuple(h.shape), model(batch).shape[-1]
    ((2, 54, 32), 22)
    """

    def __init__(self, config: TinyOmniConfig | None = None, seed: int = 0) -> None:
        super().__init__()
        config = TinyOmniConfig() if config is None else config
        if not isinstance(config, TinyOmniConfig):
            raise TypeError(
                f"TinyOmni: config must be a TinyOmniConfig; got {type(config).__name__}."
            )
        seed = check_positive_int("seed", seed, minimum=0, maximum=2**62, owner="TinyOmni")
        self.config = config
        d = config.d
        with seeded_default_init(seed):
            self.video_proj = nn.Linear(PATCH_DIM, d)
            self.audio_proj = nn.Linear(AUDIO_BINS, d)
            self.text_emb = nn.Embedding(VOCAB, d)
            self.type_emb = nn.Embedding(3, d)
            self.time_emb = nn.Embedding(MAX_WINDOWS, d)
            # where a token sits inside its window: a patch's place in the frame (M-RoPE's
            # height/width ids play this role in Qwen-Omni) and an audio frame's place in time
            self.patch_emb = nn.Embedding(PATCHES, d)
            self.frame_emb = nn.Embedding(AUDIO_TOKENS, d)
            self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_layers))
            self.norm = RMSNorm(d)
            self.classifier = nn.Linear(d, N_CLASSES)
            # small embeddings (GPT-2's 0.02) so that the patch and spectrum content, not the
            # N(0, 1) type/time/position vectors, dominates H0
            for table in (
                self.text_emb,
                self.type_emb,
                self.time_emb,
                self.patch_emb,
                self.frame_emb,
            ):
                nn.init.normal_(table.weight, std=0.02)

    hidden_size = property(lambda self: self.config.d, doc="Hidden size d.")
    ffn_size = property(lambda self: self.config.d_ff, doc="SwiGLU width d_ff.")
    n_heads = property(lambda self: self.config.n_heads, doc="Attention heads.")

    def embed(self, batch: AVSyncBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``H0`` ``(B, n, d)``, codes ``(n,)`` and 1-D positions ``(B, n)`` of a batch.

        The layout is ``[V_1 A_1 ... V_W A_W][question]``.
        """
        if not isinstance(batch, AVSyncBatch):
            raise TypeError(f"TinyOmni: batch must be an AVSyncBatch; got {type(batch).__name__}.")
        B, W = batch.video.shape[:2]
        dtype = self.video_proj.weight.dtype
        window = self.time_emb(torch.arange(W))[None, :, None]  # (1, W, 1, d)
        video = self.video_proj(batch.video.to(dtype)) + self.patch_emb.weight + window
        video = video + self.type_emb.weight[VIDEO]
        audio = self.audio_proj(batch.audio.to(dtype)) + self.frame_emb.weight + window
        audio = audio + self.type_emb.weight[AUDIO]
        text = self.text_emb(batch.text) + self.type_emb.weight[TEXT]
        streams = torch.cat([video, audio], dim=2).reshape(B, W * (PATCHES + AUDIO_TOKENS), -1)
        h = torch.cat([streams, text], dim=1)  # (B, n, d)
        window_ids = torch.tensor([VIDEO] * PATCHES + [AUDIO] * AUDIO_TOKENS).repeat(W)
        ids = torch.cat([window_ids, torch.full((text.shape[1],), TEXT)])
        pos = torch.arange(h.shape[1]).expand(B, -1)
        return h, ids, pos

    def _check_hidden(self, h: torch.Tensor) -> None:
        from icml26.core.validation import check_tensor

        check_tensor("h", h, shape=(None, None, self.config.d), owner="TinyOmni")
        if h.shape[1] == 0:
            raise ValueError("TinyOmni: h must hold at least one token.")
        if h.dtype != self.video_proj.weight.dtype:
            raise TypeError(
                f"TinyOmni: h must have the model's dtype {self.video_proj.weight.dtype}; "
                f"got {h.dtype}."
            )

    def _check(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> int:
        from icml26.core.validation import check_tensor

        owner = "TinyOmni"
        layer = check_positive_int(
            "layer", layer, minimum=0, maximum=len(self.layers) - 1, owner=owner
        )
        self._check_hidden(h)
        check_tensor("pos_ids", pos_ids, shape=h.shape[:2], floating=False, owner=owner)
        if mask is not None:
            check_tensor(
                "mask", mask, shape=(h.shape[0], h.shape[1], h.shape[1]), floating=False,
                owner=owner,
            )  # fmt: skip
            if mask.dtype != torch.bool:
                raise TypeError(f"{owner}: mask must be a bool tensor; got {mask.dtype}.")
        return layer

    def run_layer(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Layer ``layer`` on the alive tokens (SDPA; ``mask`` combined with causality)."""
        layer = self._check(layer, h, pos_ids, mask)
        return self.layers[layer](h, pos_ids, mask)

    def attention_map(
        self, layer: int, h: torch.Tensor, pos_ids: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Eager attention probabilities of layer ``layer``, ``(B, H, n, n)``."""
        layer = self._check(layer, h, pos_ids, mask)
        return self.layers[layer].attention_probs(h, pos_ids, mask)

    def run_layer_kv(
        self,
        layer: int,
        h: torch.Tensor,
        pos_ids: torch.Tensor,
        mask: torch.Tensor | None,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Layer ``layer`` on ``h`` (``(B, t, d)``) after the cache ``past``, and the grown cache.

        ``past`` is ``None`` (prefill: ``h`` are the alive tokens, ``mask`` as in
        :meth:`run_layer`) or the ``(keys, values)`` pair (``(B, heads, P, d_head)`` each)
        this method returned before; the new tokens attend to all ``P`` cached entries and
        causally among themselves. Returns ``(out, (keys, values))`` with ``P + t`` entries.
        """
        from icml26.core.validation import check_tensor

        owner = "TinyOmni"
        if past is None:
            layer = self._check(layer, h, pos_ids, mask)
            return self.layers[layer].forward_kv(h, pos_ids, mask, None)
        layer = check_positive_int(
            "layer", layer, minimum=0, maximum=len(self.layers) - 1, owner=owner
        )
        self._check_hidden(h)
        check_tensor("pos_ids", pos_ids, shape=h.shape[:2], floating=False, owner=owner)
        if not isinstance(past, tuple) or len(past) != 2:
            raise TypeError(f"{owner}: past must be a (keys, values) pair or None.")
        d_head = self.config.d // self.config.n_heads
        B, t = h.shape[:2]
        for name, cached in zip(("past[0]", "past[1]"), past, strict=True):
            check_tensor(name, cached, shape=(B, self.config.n_heads, None, d_head), owner=owner)
            if cached.dtype != h.dtype:
                raise TypeError(f"{owner}: {name} must have dtype {h.dtype}; got {cached.dtype}.")
        P = past[0].shape[2]
        if past[1].shape[2] != P:
            raise ValueError(f"{owner}: past keys and values must have the same length.")
        if mask is not None:
            check_tensor("mask", mask, shape=(B, t, P + t), floating=False, owner=owner)
            if mask.dtype != torch.bool:
                raise TypeError(f"{owner}: mask must be a bool tensor; got {mask.dtype}.")
        return self.layers[layer].forward_kv(h, pos_ids, mask, past)

    def embed_tokens(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Embeddings of generated text tokens ``(B, t)`` -> ``(B, t, d)`` (as in :meth:`embed`)."""
        from icml26.core.validation import check_tensor

        check_tensor("token_ids", token_ids, ndim=2, floating=False, owner="TinyOmni")
        if token_ids.numel() and (int(token_ids.min()) < 0 or int(token_ids.max()) >= VOCAB):
            raise ValueError(f"TinyOmni: token_ids must be in [0, {VOCAB}).")
        return self.text_emb(token_ids.long()) + self.type_emb.weight[TEXT]

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        """Next-text-token logits from the last position, ``(B, vocab)``.

        The output embedding is tied to the text input embedding (GPT-2's weight tying), so
        this adds no parameters; TinyOmni is trained as a classifier, so what it generates is
        meaningless text: this head exists to exercise decoding with per-layer caches.
        """
        self._check_hidden(h)
        return self.norm(h[:, -1]) @ self.text_emb.weight.T

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Class logits from the last position, ``(B, 22)``."""
        self._check_hidden(h)
        return self.classifier(self.norm(h[:, -1]))

    def forward(self, batch: AVSyncBatch) -> torch.Tensor:
        """Uncompressed logits."""
        h, _, pos = self.embed(batch)
        for layer in range(len(self.layers)):
            h = self.run_layer(layer, h, pos, None)
        return self.head(h)


def window_infonce(model: TinyOmni, batch: AVSyncBatch, temperature: float = 0.1) -> torch.Tensor:
    """InfoNCE between the mean video and mean audio token of each window, in-stream negatives."""
    h, _, _ = model.embed(batch)
    B, W = batch.video.shape[:2]
    per_window = h[:, : W * (PATCHES + AUDIO_TOKENS)].reshape(B, W, PATCHES + AUDIO_TOKENS, -1)
    video = F.normalize(per_window[:, :, :PATCHES].mean(2), dim=-1)  # (B, W, d)
    audio = F.normalize(per_window[:, :, PATCHES:].mean(2), dim=-1)
    logits = video @ audio.transpose(1, 2) / temperature  # (B, W, W)
    target = torch.arange(W).expand(B, -1)
    return 0.5 * (
        F.cross_entropy(logits.reshape(B * W, W), target.reshape(-1))
        + F.cross_entropy(logits.transpose(1, 2).reshape(B * W, W), target.reshape(-1))
    )


@dataclass(frozen=True)
class TrainResult:
    """Losses of :func:`train_tinyomni` (one per step) and the final training accuracy."""

    ce: list[float]
    infonce: list[float]
    train_accuracy: float


def train_tinyomni(
    model: TinyOmni,
    data: AVSyncData,
    epochs: int = 4,
    batch_size: int = 64,
    lr: float = 2e-3,
    infonce_weight: float = 0.1,
    seed: int = 0,
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> TrainResult:
    """Train ``model`` on ``data`` with AdamW (cosine decay) and CE + weighted InfoNCE.

    Parameters
    ----------
    model
        The :class:`TinyOmni` to train (in place; left in eval mode).
    data
        Training streams.
    epochs, batch_size, lr
        Schedule (``lr`` decays by a cosine to 0 over all steps after 5 % warm-up).
    infonce_weight
        Weight of :func:`window_infonce` (spec: 0.1).
    seed
        Shuffling seed.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or ``progress(done, total,
        metrics)`` after every step (:mod:`icml26.core.progress`).
    resume
        A :class:`~icml26.core.TrainingCheckpoint`: training restores from it (model, optimizer,
        shuffling state, losses so far) and saves to it every ``resume.every`` steps, so an
        interrupted run continues where it stopped with the same result as an uninterrupted one.

    Examples
    --------
    >>> model = TinyOmni(TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32), seed=0)
    >>> from icml26.omnifit.avsync import make_dataset
    >>> history = train_tinyomni(model, make_dataset(8, windows=2, seed=0), epochs=1, batch_size=4)
    >>> len(history.ce), model.training
    (2, False)
    """
    owner = "train_tinyomni"
    if not isinstance(model, TinyOmni):
        raise TypeError(f"{owner}: model must be a TinyOmni; got {type(model).__name__}.")
    if not isinstance(data, AVSyncData):
        raise TypeError(f"{owner}: data must be an AVSyncData; got {type(data).__name__}.")
    epochs = check_positive_int("epochs", epochs, maximum=10_000, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, maximum=100_000, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, high=1.0, closed="right", owner=owner)
    infonce_weight = check_in_interval(
        "infonce_weight", infonce_weight, low=0.0, high=1e3, owner=owner
    )
    generator = torch_generator(seed)
    epoch_start = torch.Generator()  # the shuffling state at the start of the current epoch
    steps_per_epoch = max(1, len(data) // batch_size)
    total = epochs * steps_per_epoch
    optimizer = adamw(model, lr=lr, weight_decay=0.01)
    log: dict[str, Any] = {"ce": [], "infonce": [], "correct": 0, "seen": 0}
    start = 0 if resume is None else resume.restore(model, optimizer, {"epoch": epoch_start})
    if start:
        log = resume.extra
        generator.set_state(epoch_start.get_state())
        order = torch.randperm(len(data), generator=generator).numpy()  # the interrupted epoch's
    model.train()
    with progress_reporter(progress, total, "training TinyOmni") as report:
        for step in range(start, total):
            if step % steps_per_epoch == 0:
                epoch_start.set_state(generator.get_state())
                order = torch.randperm(len(data), generator=generator).numpy()
            first = step % steps_per_epoch * batch_size
            batch = data.batch(np.sort(order[first : first + batch_size]))
            set_lr(
                optimizer,
                warmup_cosine_lr(
                    step,
                    total_steps=total,
                    peak_lr=lr,
                    warmup_steps=max(1, total // 20),
                    final_lr=0.0,
                ),
            )
            logits = model(batch)
            ce = F.cross_entropy(logits, batch.labels)
            nce = window_infonce(model, batch) if infonce_weight > 0 else ce.new_zeros(())
            optimizer_step(ce + infonce_weight * nce, optimizer, step=step, clip=1.0, owner=owner)
            log["ce"].append(float(ce.detach()))
            log["infonce"].append(float(nce.detach()))
            if step >= total - steps_per_epoch:  # accuracy over the last epoch
                log["correct"] += int((logits.argmax(-1) == batch.labels).sum())
                log["seen"] += len(batch)
            report(step + 1, ce=log["ce"][-1])
            if resume is not None:
                resume.save_if_due(step + 1, model, optimizer, {"epoch": epoch_start}, log)
    model.eval()
    return TrainResult(log["ce"], log["infonce"], log["correct"] / max(log["seen"], 1))


def evaluate_accuracy(
    model: Any,
    data: AVSyncData,
    compressor: Any = None,
    batch_size: int = 256,
) -> tuple[float, list[int]]:
    """Accuracy of ``model`` on ``data`` under ``compressor`` (``None``: full), and alive counts.

    ``compressor`` may be a compressor or a zero-argument factory returning a fresh one per
    batch. Returns ``(accuracy, alive tokens per layer of the first batch)``.
    """
    from icml26.omnifit.adapter import run_compressed

    owner = "evaluate_accuracy"
    if not isinstance(data, AVSyncData):
        raise TypeError(f"{owner}: data must be an AVSyncData; got {type(data).__name__}.")
    batch_size = check_positive_int("batch_size", batch_size, maximum=100_000, owner=owner)
    correct, alive = 0, None
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            batch = data.batch(slice(start, start + batch_size))
            c = (
                compressor()
                if callable(compressor) and not hasattr(compressor, "prepare")
                else compressor
            )
            out = run_compressed(model, batch, c)
            correct += int((out.logits.argmax(-1) == batch.labels).sum())
            alive = out.alive if alive is None else alive
    return correct / len(data), alive
