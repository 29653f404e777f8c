"""HybridLM: token embedding -> a pattern of attention / Mamba / MLP blocks -> RMSNorm -> head.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.2 (model zoo). Pattern letters: ``A`` = pre-norm causal
multi-head attention + GELU MLP (hidden ``mlp_ratio``·d), ``S`` = pre-norm Mamba-1 mixer (no
MLP, as in Mamba), ``M`` = MLP only; a residual around every sub-layer. ``"AA"`` is a
Transformer, ``"SS"`` an SSM, ``"SA"`` (the default) a hybrid.

Every model has a full-sequence ``forward(inputs) -> logits`` and a streaming
``step(token, cache) -> (logits, cache)`` (KV cache for attention, (h, conv) for Mamba) that
agree to round-off.

Deviations: ``pos_enc=None`` picks ``"rope"`` for a pattern without ``S`` and ``"none"``
otherwise (the spec's defaults); the MLP has biases, attention and Mamba projections do not;
torch's default initialisation (drawn from ``seed``) is kept for embeddings and projections. An
empty pattern is refused (a typo, not a model); the spec's "no blocks" limit is tested as a model
whose blocks' output projections are zero.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, final

import torch
from torch import nn

from icml26.core import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    seeded_default_init,
    torch_generator,
)
from icml26.hybrid_seq.mamba2 import Mamba2Block, Mamba2Config
from icml26.hybrid_seq.ssm import MAX_CACHE_NUMBERS, SCANS, MambaBlock, SSMCache, SSMConfig

__all__ = [
    "POS_ENCODINGS",
    "AbstractSequenceModel",
    "AttentionBlock",
    "CausalSelfAttention",
    "HybridLM",
    "KVCache",
    "LMCache",
    "MLPBlock",
    "SSMBlock",
    "check_architecture",
    "check_token_ids",
]

POS_ENCODINGS = ("none", "learned", "sinusoidal", "rope")
PATTERN_LETTERS = "ASM"
SSM_BACKENDS = ("auto", "torch", "mamba_ssm")


def check_token_ids(
    inputs: Any, vocab_size: int, *, owner: str, ndim: int = 2, name: str = "inputs"
) -> torch.Tensor:
    """Return ``inputs`` if it is an integer tensor of ids in [1, vocab_size) (PAD = 0 refused).

    ``name`` is the caller's parameter name, used in the messages.
    """
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(f"{owner}: {name} must be a torch.Tensor; got {type(inputs).__name__}.")
    if inputs.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"{owner}: {name} must hold integer token ids; got dtype {inputs.dtype}.")
    if inputs.dim() != ndim or inputs.numel() == 0:
        raise ValueError(
            f"{owner}: {name} must be a non-empty {ndim}-D tensor; got shape {tuple(inputs.shape)}."
        )
    low, high = int(inputs.min()), int(inputs.max())
    if low < 1 or high >= vocab_size:
        raise ValueError(
            f"{owner}: {name} must be token ids in [1, vocab_size - 1 = {vocab_size - 1}] "
            f"(0 is PAD, never an input); got ids in [{low}, {high}]."
        )
    return inputs.long()


# --- positional encodings -------------------------------------------------------------------


def sinusoidal_table(n_positions: int, d_model: int) -> torch.Tensor:
    """PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i+1] = cos(t / 10000^(2i/d)); (T, d)."""
    t = torch.arange(n_positions, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).float() / d_model)
    table = torch.zeros(n_positions, d_model)
    table[:, 0::2] = torch.sin(t * freq)
    table[:, 1::2] = torch.cos(t * freq)[:, : d_model // 2]
    return table


def apply_rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (x[2i], x[2i+1]) of x (B, H, T, dh) by angle t·10000^(-2i/dh)."""
    dh = x.shape[-1]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, dh, 2, device=x.device).float() / dh)
    angle = positions.float()[:, None] * freq  # (T, dh/2)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)


# --- caches ---------------------------------------------------------------------------------


@final
@dataclass(frozen=True)
class KVCache:
    """Keys and values seen so far by one attention layer, each ``(batch, heads, t, d_head)``."""

    k: torch.Tensor
    v: torch.Tensor


@final
@dataclass(frozen=True)
class LMCache:
    """Streaming state of a whole model: tokens read so far and one cache per block."""

    position: int
    layers: tuple[Any, ...]


# --- blocks ---------------------------------------------------------------------------------


class AbstractBlock(nn.Module, abc.ABC):
    """A residual block: full-sequence ``forward``, streaming ``step``, and its memory layout."""

    @abc.abstractmethod
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, T, D)."""

    @abc.abstractmethod
    def step(self, x_t: torch.Tensor, cache: Any, position: int) -> tuple[torch.Tensor, Any]:
        """One position (B, D) -> ((B, D), new cache)."""

    @abc.abstractmethod
    def init_cache(self, batch_size: int) -> Any:
        """The empty cache of this block."""

    @abc.abstractmethod
    def memory(self) -> tuple[int, int, int]:
        """(recurrent state, conv cache, KV numbers per token) per sequence."""


@final
class MLP(nn.Module):
    """x -> fc2(GELU(fc1(x))), hidden width mlp_ratio·d."""

    def __init__(self, d_model: int, mlp_ratio: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(x)))


@final
class CausalSelfAttention(nn.Module):
    """Causal multi-head softmax attention, optionally with RoPE on q and k.

    Examples
    --------
    >>> attn = CausalSelfAttention(8, 2)
    >>> attn(torch.zeros(1, 3, 8)).shape
    torch.Size([1, 3, 8])
    """

    def __init__(self, d_model: int, n_heads: int, *, rope: bool = False) -> None:
        super().__init__()
        self.n_heads, self.d_head, self.rope = n_heads, d_model // n_heads, rope
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def _heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        return q, k, v  # each (B, H, T, dh)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self._heads(x)
        if self.rope:
            positions = torch.arange(T, device=x.device)
            q, k = apply_rope(q, positions), apply_rope(k, positions)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, dh)
        return self.out(y.transpose(1, 2).reshape(B, T, D))

    def step(
        self, x_t: torch.Tensor, cache: KVCache, position: int
    ) -> tuple[torch.Tensor, KVCache]:
        """Attend from one new position to the cached keys and itself."""
        B, D = x_t.shape
        q, k, v = self._heads(x_t[:, None])  # (B, H, 1, dh)
        if self.rope:
            pos = torch.tensor([position], device=x_t.device)
            q, k = apply_rope(q, pos), apply_rope(k, pos)
        keys, values = torch.cat([cache.k, k], dim=2), torch.cat([cache.v, v], dim=2)
        y = nn.functional.scaled_dot_product_attention(q, keys, values)  # (B, H, 1, dh)
        return self.out(y.reshape(B, D)), KVCache(k=keys, v=values)


@final
class AttentionBlock(AbstractBlock):
    """``A``: x + attn(norm(x)), then + MLP(norm(·))."""

    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int, *, rope: bool) -> None:
        super().__init__()
        self.d_model = d_model
        self.norm1, self.norm2 = nn.RMSNorm(d_model, eps=1e-5), nn.RMSNorm(d_model, eps=1e-5)
        self.attn = CausalSelfAttention(d_model, n_heads, rope=rope)
        self.mlp = MLP(d_model, mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))

    def step(self, x_t: torch.Tensor, cache: KVCache, position: int) -> tuple[torch.Tensor, Any]:
        a, cache = self.attn.step(self.norm1(x_t), cache, position)
        x_t = x_t + a
        return x_t + self.mlp(self.norm2(x_t)), cache

    def init_cache(self, batch_size: int) -> KVCache:
        w = self.attn.qkv.weight
        empty = w.new_zeros(batch_size, self.attn.n_heads, 0, self.attn.d_head)
        return KVCache(k=empty, v=empty)

    def memory(self) -> tuple[int, int, int]:
        return 0, 0, 2 * self.d_model


@final
class SSMBlock(AbstractBlock):
    """``S``: x + Mamba(norm(x)), a Mamba-1 mixer or, with a :class:`Mamba2Config`, Mamba-2."""

    def __init__(
        self,
        d_model: int,
        config: SSMConfig | Mamba2Config,
        *,
        scan: str,
        backend: str,
        seed: int,
    ) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(d_model, eps=1e-5)
        self.mixer: MambaBlock | Mamba2Block
        if isinstance(config, Mamba2Config):
            self.mixer = Mamba2Block(d_model, config, scan=scan, seed=seed)
        else:
            self.mixer = MambaBlock(d_model, config, scan=scan, backend=backend, seed=seed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mixer(self.norm(x))

    def step(self, x_t: torch.Tensor, cache: SSMCache, position: int) -> tuple[torch.Tensor, Any]:
        y, cache = self.mixer.step(self.norm(x_t), cache)
        return x_t + y, cache

    def init_cache(self, batch_size: int) -> SSMCache:
        return self.mixer.init_cache(batch_size)

    def memory(self) -> tuple[int, int, int]:
        state, conv = self.mixer.state_numbers()
        return state, conv, 0


@final
class MLPBlock(AbstractBlock):
    """``M``: x + MLP(norm(x))."""

    def __init__(self, d_model: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(d_model, eps=1e-5)
        self.mlp = MLP(d_model, mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))

    def step(self, x_t: torch.Tensor, cache: None, position: int) -> tuple[torch.Tensor, None]:
        return x_t + self.mlp(self.norm(x_t)), None

    def init_cache(self, batch_size: int) -> None:
        return None

    def memory(self) -> tuple[int, int, int]:
        return 0, 0, 0


# --- models ---------------------------------------------------------------------------------


class AbstractSequenceModel(nn.Module, abc.ABC):
    """A causal token model: ``forward(inputs) -> logits``, ``step(token, cache)``, memory.

    :class:`HybridLM` and the constructed models implement it, so :func:`evaluate`,
    :func:`count_params` and :func:`working_memory` take either.
    """

    vocab_size: int

    @property
    @abc.abstractmethod
    def max_positions(self) -> int | None:
        """Longest sequence the model accepts (``None``: unbounded)."""

    @abc.abstractmethod
    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab_size)."""

    @abc.abstractmethod
    def step(self, token: torch.Tensor, cache: Any = None) -> tuple[torch.Tensor, Any]:
        """Token ids (B,) -> (logits (B, vocab_size), new cache); ``cache=None`` starts afresh."""

    @abc.abstractmethod
    def memory_layout(self) -> list[tuple[int, int, int]]:
        """Per layer: (recurrent state numbers, conv cache numbers, KV numbers per token)."""


MAX_VOCAB = 2**20  # largest vocabulary of a HybridLM
MAX_D_MODEL = 2**13  # widest residual stream
MAX_LEN = 2**20  # most positions of a learned positional table
MAX_MLP_RATIO = 64
MAX_BLOCKS = 256  # longest pattern


def check_architecture(
    owner: str,
    *,
    vocab_size: Any,
    d_model: Any,
    pattern: Any,
    n_heads: Any,
    pos_enc: Any,
    scan: Any,
    mlp_ratio: Any,
    max_len: Any,
    ssm_backend: Any,
) -> dict[str, Any]:
    """Validate :class:`HybridLM`'s architecture keywords (sizes against the ``MAX_*`` bounds).

    Returns them checked, ``pos_enc=None`` resolved to its default.
    """
    vocab_size = check_positive_int(
        "vocab_size", vocab_size, owner=owner, minimum=2, maximum=MAX_VOCAB
    )
    d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_D_MODEL)
    if not isinstance(pattern, str):
        raise TypeError(f"{owner}: pattern must be a str; got {type(pattern).__name__}.")
    bad = sorted({c for c in pattern if c not in PATTERN_LETTERS})
    if not pattern or bad or len(pattern) > MAX_BLOCKS:
        raise ValueError(
            f"{owner}: pattern must be a non-empty string of the letters A (attention + MLP), "
            f"S (Mamba SSM), M (MLP), at most {MAX_BLOCKS} long; got {pattern!r}"
            + (f" (unknown letters {bad})." if bad else ".")
        )
    n_heads = check_positive_int("n_heads", n_heads, owner=owner)
    if d_model % n_heads:
        raise ValueError(
            f"{owner}: d_model must be divisible by n_heads={n_heads}; got d_model={d_model}."
        )
    if pos_enc is None:
        pos_enc = "none" if "S" in pattern else "rope"
    pos_enc = check_one_of("pos_enc", pos_enc, POS_ENCODINGS, owner=owner)
    if pos_enc == "rope" and (d_model // n_heads) % 2:
        raise ValueError(
            f"{owner}: pos_enc='rope' needs an even head width d_model / n_heads; "
            f"got {d_model // n_heads}."
        )
    return {
        "vocab_size": vocab_size,
        "d_model": d_model,
        "pattern": pattern,
        "n_heads": n_heads,
        "pos_enc": pos_enc,
        "scan": check_one_of("scan", scan, SCANS, owner=owner),
        "mlp_ratio": check_positive_int("mlp_ratio", mlp_ratio, owner=owner, maximum=MAX_MLP_RATIO),
        "max_len": check_positive_int("max_len", max_len, owner=owner, maximum=MAX_LEN),
        "ssm_backend": check_one_of("ssm_backend", ssm_backend, SSM_BACKENDS, owner=owner),
    }


MAMBA_SSM_KERNEL = "mamba_ssm.ops.selective_scan_interface"  # the module the kernel path calls


def _resolve_backend(backend: str) -> str:
    """``"auto"`` -> ``"mamba_ssm"`` if its kernel module imports, else ``"torch"``.

    Any failure to import (package missing, or installed but broken: a CUDA extension that does
    not load raises ``ImportError``/``OSError``) falls back to the PyTorch scan; an explicit
    ``"mamba_ssm"`` is kept and the block raises a clear error when the package is missing.
    """
    if backend != "auto":
        return backend
    import importlib

    try:
        importlib.import_module(MAMBA_SSM_KERNEL)
    except Exception:  # any import failure means "not usable here"
        return "torch"
    return "mamba_ssm"


@final
class HybridLM(AbstractSequenceModel):
    """Token embedding -> blocks given by ``pattern`` -> final RMSNorm -> linear head.

    Parameters
    ----------
    vocab_size
        Number of token ids (at most ``MAX_VOCAB`` = 2**20).
    d_model
        Residual width d (at most ``MAX_D_MODEL`` = 2**13).
    pattern
        Non-empty string over ``A`` (attention + MLP), ``S`` (Mamba) and ``M`` (MLP), first
        block first: ``"SA"`` hybrid, ``"AA"`` Transformer, ``"SS"`` SSM.
    n_heads
        Attention heads; must divide ``d_model``.
    pos_enc
        ``"none"``, ``"learned"``, ``"sinusoidal"``, ``"rope"``, or ``None``: ``"rope"`` for a
        pattern without ``S``, else ``"none"``.
    ssm
        :class:`SSMConfig` (Mamba-1) or :class:`Mamba2Config` (Mamba-2, spec's ``--ssm mamba2``;
        PyTorch scan only) of every ``S`` block.
    scan
        ``"parallel"``, ``"sequential"`` or ``"chunked"`` (same outputs).
    mlp_ratio
        MLP hidden width / d (at most 64).
    max_len
        Positions of the learned positional table (only for ``pos_enc="learned"``; at most
        ``MAX_LEN`` = 2**20).
    ssm_backend
        ``"torch"``, ``"mamba_ssm"`` (CUDA kernel for the forward scan on GPU tensors), or
        ``"auto"``: ``mamba_ssm`` when its kernel module imports, else ``"torch"`` (a missing
        or broken install falls back silently). The kernel runs only on CUDA tensors; on CPU
        every backend takes the PyTorch scan. The ``mamba_ssm`` path is untested (no GPU here).
    seed
        Seed of the initialisation.

    Examples
    --------
    >>> m = HybridLM(vocab_size=12, d_model=16, pattern="SA", n_heads=2, seed=0)
    >>> m(torch.tensor([[1, 5, 7]])).shape
    torch.Size([1, 3, 12])
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        *,
        pattern: str = "SA",
        n_heads: int = 1,
        pos_enc: str | None = None,
        ssm: SSMConfig | Mamba2Config | None = None,
        scan: str = "parallel",
        mlp_ratio: int = 2,
        max_len: int = 2048,
        ssm_backend: str = "auto",
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        arch = check_architecture(
            "HybridLM",
            vocab_size=vocab_size,
            d_model=d_model,
            pattern=pattern,
            n_heads=n_heads,
            pos_enc=pos_enc,
            scan=scan,
            mlp_ratio=mlp_ratio,
            max_len=max_len,
            ssm_backend=ssm_backend,
        )
        self.vocab_size, self.d_model, self.pattern = arch["vocab_size"], arch["d_model"], pattern
        self.n_heads, self.pos_enc, self.scan = arch["n_heads"], arch["pos_enc"], arch["scan"]
        self.mlp_ratio, self.max_len = arch["mlp_ratio"], arch["max_len"]
        pos_enc = self.pos_enc
        self.ssm = SSMConfig() if ssm is None else ssm
        if not isinstance(self.ssm, (SSMConfig, Mamba2Config)):
            raise TypeError(
                f"HybridLM: ssm must be an SSMConfig or Mamba2Config; got {type(ssm).__name__}."
            )
        if isinstance(self.ssm, Mamba2Config):
            if arch["ssm_backend"] == "mamba_ssm":
                raise ValueError(
                    "HybridLM: ssm_backend must be 'torch' or 'auto' with a Mamba2Config (the "
                    "mamba_ssm kernel path runs Mamba-1 blocks only); got 'mamba_ssm'."
                )
            self.ssm_backend = "torch"
        else:
            self.ssm_backend = _resolve_backend(arch["ssm_backend"])
        generator = torch_generator(seed)
        with seeded_default_init(generator):
            self.embedding = nn.Embedding(vocab_size, d_model)
            self.position_table = nn.Embedding(max_len, d_model) if pos_enc == "learned" else None
            self.blocks = nn.ModuleList(self._block(letter, generator) for letter in pattern)
            self.norm_f = nn.RMSNorm(d_model, eps=1e-5)
            self.head = nn.Linear(d_model, vocab_size, bias=False)

    def _block(self, letter: str, generator: torch.Generator) -> AbstractBlock:
        if letter == "A":
            return AttentionBlock(
                self.d_model, self.n_heads, self.mlp_ratio, rope=self.pos_enc == "rope"
            )
        if letter == "S":
            seed = int(torch.randint(0, 2**62, (1,), generator=generator))
            return SSMBlock(
                self.d_model, self.ssm, scan=self.scan, backend=self.ssm_backend, seed=seed
            )
        return MLPBlock(self.d_model, self.mlp_ratio)

    @property
    def max_positions(self) -> int | None:
        """``max_len`` with a learned positional table, else ``None`` (unbounded)."""
        return self.max_len if self.pos_enc == "learned" else None

    def _check_length(self, length: int) -> None:
        if self.max_positions is not None and length > self.max_positions:
            raise ValueError(
                f"HybridLM: pos_enc='learned' has max_len={self.max_len} positions; got a "
                f"sequence of length {length} (sequence length must be in [1, {self.max_len}])."
            )

    def _positional(self, positions: torch.Tensor) -> torch.Tensor | None:
        """Additive positional encoding (T, d), or None for ``none`` / ``rope``."""
        if self.position_table is not None:
            return self.position_table(positions)
        if self.pos_enc == "sinusoidal":
            table = sinusoidal_table(int(positions.max()) + 1, self.d_model)
            return table.to(self.embedding.weight)[positions]
        return None

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab_size)."""
        return self.logits(check_token_ids(inputs, self.vocab_size, owner="HybridLM"))

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the PAD check, for vocabularies where id 0 is a real token
        (the Hugging Face wrapper); ``inputs`` must be int64 ids in [0, vocab_size)."""
        T = inputs.shape[1]
        self._check_length(T)
        x = self.embedding(inputs)  # (B, T, d)
        pe = self._positional(torch.arange(T, device=inputs.device))
        if pe is not None:
            x = x + pe
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm_f(x))  # (B, T, vocab)

    def init_cache(self, batch_size: int) -> LMCache:
        """The empty streaming cache for ``batch_size`` sequences.

        The whole model's cache is bounded, not only each block's: ``batch_size`` times the
        numbers one streaming step holds per sequence (every block's SSM state and conv cache,
        the residual d and the vocab_size logits) must be at most ``MAX_CACHE_NUMBERS`` = 2**28.

        Raises
        ------
        ValueError
            If ``batch_size`` is not a positive int within that bound (the message gives the
            largest allowed).
        """
        owner = "HybridLM.init_cache"
        batch_size = check_positive_int("batch_size", batch_size, owner=owner)
        per_sequence = (
            sum(state + conv for state, conv, _ in self.memory_layout())
            + self.d_model
            + self.vocab_size
        )
        if batch_size * per_sequence > MAX_CACHE_NUMBERS:
            raise ValueError(
                f"{owner}: batch_size must be at most {MAX_CACHE_NUMBERS // per_sequence} "
                f"(one streaming step holds {per_sequence} numbers per sequence, at most "
                f"{MAX_CACHE_NUMBERS} in all); got {batch_size}."
            )
        return LMCache(0, tuple(b.init_cache(batch_size) for b in self.blocks))

    def step(self, token: torch.Tensor, cache: LMCache | None = None) -> tuple[torch.Tensor, Any]:
        """Token ids (B,) -> (logits (B, vocab_size), new cache), the recurrent/KV-cached form."""
        token = check_token_ids(token, self.vocab_size, owner="HybridLM.step", ndim=1, name="token")
        if cache is None:
            cache = self.init_cache(token.shape[0])
        position = cache.position
        self._check_length(position + 1)
        x = self.embedding(token)  # (B, d)
        pe = self._positional(torch.tensor([position], device=token.device))
        if pe is not None:
            x = x + pe[0]
        layers = []
        for block, layer_cache in zip(self.blocks, cache.layers, strict=True):
            x, layer_cache = block.step(x, layer_cache, position)
            layers.append(layer_cache)
        return self.head(self.norm_f(x)), LMCache(position + 1, tuple(layers))

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.Tensor,
        max_new_tokens: int,
        *,
        do_sample: bool = False,
        temperature: float = 1.0,
        top_k: int | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Continue ``input_ids`` (B, T) by ``max_new_tokens`` tokens through the recurrent state.

        The prompt is fed token by token through :meth:`step` (SSM state, conv and KV caches),
        then each new token is the argmax of the last logits (``do_sample=False``, greedy) or a
        draw from softmax(logits / ``temperature``) restricted to the ``top_k`` largest
        (``do_sample=True``). Returns prompt and continuation, (B, T + max_new_tokens), like
        ``transformers``' ``generate``. Ids must lie in [1, vocab_size) (0 is PAD).

        Raises
        ------
        ValueError
            On an empty prompt, ``max_new_tokens`` outside [0, 2**20] or beyond the model's
            positions, ``temperature`` not finite and > 0, ``top_k`` outside [1, vocab_size].
        TypeError
            If ``do_sample`` is not a bool or ``generator`` not a ``torch.Generator``.

        Examples
        --------
        >>> m = HybridLM(vocab_size=12, d_model=16, pattern="SA", n_heads=2, seed=0)
        >>> m.generate(torch.tensor([[1, 5, 7]]), max_new_tokens=4).shape
        torch.Size([1, 7])
        """
        owner = "HybridLM.generate"
        ids = check_token_ids(input_ids, self.vocab_size, owner=owner, name="input_ids")
        if ids.shape[1] == 0:
            raise ValueError(f"{owner}: input_ids must hold at least one token per sequence.")
        n_new = check_positive_int("max_new_tokens", max_new_tokens, owner=owner, minimum=0,
                                   maximum=MAX_LEN)  # fmt: skip
        if not isinstance(do_sample, bool):
            raise TypeError(f"{owner}: do_sample must be a bool; got {do_sample!r}.")
        temperature = check_in_interval(
            "temperature", temperature, low=0.0, closed="neither", owner=owner
        )
        if top_k is not None:
            top_k = check_positive_int("top_k", top_k, owner=owner, maximum=self.vocab_size)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"{owner}: generator must be a torch.Generator or None.")
        self._check_length(ids.shape[1] + n_new)
        cache = self.init_cache(ids.shape[0])
        for t in range(ids.shape[1]):
            logits, cache = self.step(ids[:, t], cache)
        out = [ids]
        for i in range(n_new):
            logits = logits.clone()
            logits[:, 0] = -math.inf  # never PAD
            if do_sample:
                scores = logits / temperature
                if top_k is not None and top_k < self.vocab_size:
                    kth = scores.topk(top_k, dim=-1).values[:, -1:]
                    scores = scores.masked_fill(scores < kth, -math.inf)
                probs = torch.softmax(scores, dim=-1)
                token = torch.multinomial(probs, 1, generator=generator)[:, 0]
            else:
                token = logits.argmax(-1)
            out.append(token[:, None])
            if i + 1 < n_new:
                logits, cache = self.step(token, cache)
        return torch.cat(out, dim=1)

    def memory_layout(self) -> list[tuple[int, int, int]]:
        """Per block: (SSM state, conv cache, KV numbers per token)."""
        return [block.memory() for block in self.blocks]

    def config_dict(self) -> dict[str, Any]:
        """The constructor keywords (JSON-able) that rebuild this architecture."""
        return {
            "vocab_size": self.vocab_size,
            "d_model": self.d_model,
            "pattern": self.pattern,
            "n_heads": self.n_heads,
            "pos_enc": self.pos_enc,
            "ssm": dataclasses.asdict(self.ssm)
            | {"kind": "mamba2" if isinstance(self.ssm, Mamba2Config) else "mamba1"},
            "scan": self.scan,
            "mlp_ratio": self.mlp_ratio,
            "max_len": self.max_len,
        }
