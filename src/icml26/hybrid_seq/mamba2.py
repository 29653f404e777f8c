"""A pure-PyTorch Mamba-2 mixer (Dao & Gu 2024, SSD), the spec's ``--ssm mamba2`` option.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §5 real-scale path. Mamba-2 restricts Mamba-1's diagonal A
to a scalar per head: with H heads of width P (H·P = E·D) and G groups sharing B and C,

    [z, xBC, dt] = in_proj(u);  xBC <- SiLU(causal depthwise conv1d(xBC));  [x, B, C] = xBC
    Δ_t = softplus(dt_t + dt_bias) ∈ R^H;  A = -exp(A_log) ∈ R^H
    h_t[h] = exp(Δ_t[h] A[h]) h_{t-1}[h] + Δ_t[h] x_t[h] ⊗ B_t[g(h)]        (P × N per head)
    y_t[h] = h_t[h] C_t[g(h)] + D[h] x_t[h]
    out = out_proj(RMSNorm_G(y ⊙ SiLU(z)))     (RMS over each of the G groups, then a gain)

It is the same selective diagonal recurrence as Mamba-1 (``selective_recurrence``) over E·D
channels of N states, with the decay shared by the P channels of a head; the parameters carry
the names and shapes of ``mamba_ssm.Mamba2`` / ``transformers``' ``Mamba2Mixer``.

Deviations: the scan is the channel-wise recurrence (sequential or log-depth parallel), not the
chunked SSD matrix form; no ``dt_limit`` clamp, no learnable initial state, no ``mamba_ssm``
kernel backend; initialisation follows ``transformers`` (A_log = log(1..H), D = 1, Δ bias =
softplus⁻¹ of dt ~ logUniform[1e-3, 0.1] floored at 1e-4, torch's default for the rest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import final

import torch
from torch import nn

from icml26.core import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    seeded_default_init,
)
from icml26.hybrid_seq.ssm import (
    MAX_CACHE_NUMBERS,
    MAX_D_CONV,
    MAX_D_INNER,
    MAX_D_MODEL,
    MAX_D_STATE,
    SCANS,
    SSMCache,
    check_block_input,
    check_block_output,
    selective_recurrence,
)

__all__ = ["Mamba2Block", "Mamba2Config"]


@final
@dataclass(frozen=True)
class Mamba2Config:
    """Hyper-parameters of a Mamba-2 mixer.

    Parameters
    ----------
    d_state
        N, the state size per channel (at most 2**10; Mamba-2 uses 64-128).
    expand
        E: the mixer works on E·D channels.
    d_conv
        Causal conv kernel length (at most 2**10).
    head_dim
        P, the channels per head; E·D must be a multiple of it (H = E·D / P heads).
    n_groups
        G, the groups sharing B and C; H must be a multiple of it.
    dt_min, dt_max, dt_floor
        Range and floor of the initial Δ.
    norm_eps
        ε of the gated RMSNorm.

    Examples
    --------
    >>> Mamba2Config(head_dim=8).n_heads(16)
    4
    """

    d_state: int = 64
    expand: int = 2
    d_conv: int = 4
    head_dim: int = 16
    n_groups: int = 1
    dt_min: float = 1e-3
    dt_max: float = 0.1
    dt_floor: float = 1e-4
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        owner = "Mamba2Config"
        check_positive_int("d_state", self.d_state, owner=owner, maximum=MAX_D_STATE)
        check_positive_int("expand", self.expand, owner=owner, maximum=MAX_D_INNER)
        check_positive_int("d_conv", self.d_conv, owner=owner, maximum=MAX_D_CONV)
        check_positive_int("head_dim", self.head_dim, owner=owner, maximum=MAX_D_INNER)
        check_positive_int("n_groups", self.n_groups, owner=owner, maximum=MAX_D_INNER)
        check_in_interval("dt_min", self.dt_min, low=0.0, closed="neither", owner=owner)
        check_in_interval("dt_max", self.dt_max, low=self.dt_min, owner=owner)
        check_in_interval("dt_floor", self.dt_floor, low=0.0, owner=owner)
        check_in_interval("norm_eps", self.norm_eps, low=0.0, closed="neither", owner=owner)

    def n_heads(self, d_model: int) -> int:
        """H = E·D / P."""
        return self.expand * d_model // self.head_dim


@final
class Mamba2Block(nn.Module):
    """Mamba-2 mixer (no outer norm, no residual): u (B, T, D) -> out (B, T, D).

    Same interface as :class:`MambaBlock` (``forward``, ``prefill``, ``step``, ``init_cache``,
    ``state_numbers``); the cache is an :class:`SSMCache` with ``h`` of shape (B, E·D, N)
    (head-major: channel h·P + p) and ``conv`` of shape (B, E·D + 2·G·N, d_conv - 1).

    Parameters
    ----------
    d_model
        D, at most 2**13.
    config
        :class:`Mamba2Config`.
    scan
        ``"parallel"``, ``"sequential"`` or ``"chunked"``.
    seed
        Seed of the initialisation.

    Examples
    --------
    >>> block = Mamba2Block(8, Mamba2Config(d_state=4, head_dim=4), seed=0)
    >>> u = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(0))
    >>> out, cache = block.prefill(u)
    >>> tuple(out.shape), tuple(cache.h.shape)
    ((2, 5, 8), (2, 16, 4))
    """

    def __init__(
        self,
        d_model: int,
        config: Mamba2Config | None = None,
        *,
        scan: str = "parallel",
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        owner = "Mamba2Block"
        self.d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_D_MODEL)
        self.config = Mamba2Config() if config is None else config
        if not isinstance(self.config, Mamba2Config):
            raise TypeError(f"{owner}: config must be a Mamba2Config; got {type(config).__name__}.")
        cfg = self.config
        E_D = cfg.expand * d_model
        if E_D > MAX_D_INNER:
            raise ValueError(
                f"{owner}: config.expand * d_model (E·D) must be at most {MAX_D_INNER}; got "
                f"{cfg.expand} * {d_model}."
            )
        if E_D % cfg.head_dim:
            raise ValueError(
                f"{owner}: config.head_dim must divide E·D = {E_D}; got {cfg.head_dim}."
            )
        H = E_D // cfg.head_dim
        if H % cfg.n_groups:
            raise ValueError(
                f"{owner}: config.n_groups must divide the number of heads H = {H}; got "
                f"{cfg.n_groups}."
            )
        self.scan = check_one_of("scan", scan, SCANS, owner=owner)
        N, G = cfg.d_state, cfg.n_groups
        self.d_inner, self.d_state, self.n_heads, self.head_dim = E_D, N, H, cfg.head_dim
        self.n_groups = G
        self.conv_dim = E_D + 2 * G * N
        with seeded_default_init(seed):
            self.in_proj = nn.Linear(d_model, E_D + self.conv_dim + H, bias=False)
            self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, cfg.d_conv, groups=self.conv_dim)
            self.out_proj = nn.Linear(E_D, d_model, bias=False)
            with torch.no_grad():
                log_dt = torch.rand(H) * (math.log(cfg.dt_max) - math.log(cfg.dt_min))
                dt = torch.exp(log_dt + math.log(cfg.dt_min)).clamp(min=cfg.dt_floor)
                inv_dt = dt + torch.log(-torch.expm1(-dt))  # softplus⁻¹(dt)
        self.dt_bias = nn.Parameter(inv_dt)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, H + 1).float()))
        self.D = nn.Parameter(torch.ones(H))
        self.norm_weight = nn.Parameter(torch.ones(E_D))

    # --- shared parts ----------------------------------------------------------------------

    def init_cache(self, batch_size: int) -> SSMCache:
        """The empty cache for ``batch_size`` sequences (at most 2**28 numbers in all)."""
        owner = "Mamba2Block.init_cache"
        batch_size = check_positive_int("batch_size", batch_size, owner=owner)
        per_sequence = sum(self.state_numbers())
        if batch_size * per_sequence > MAX_CACHE_NUMBERS:
            raise ValueError(
                f"{owner}: batch_size must be at most {MAX_CACHE_NUMBERS // per_sequence}; "
                f"got {batch_size}."
            )
        w = self.A_log
        return SSMCache(
            h=w.new_zeros(batch_size, self.d_inner, self.d_state),
            conv=w.new_zeros(batch_size, self.conv_dim, self.config.d_conv - 1),
        )

    def state_numbers(self) -> tuple[int, int]:
        """(SSM state, conv cache) numbers per sequence: (E·D·N, (E·D + 2GN)(d_conv - 1))."""
        return self.d_inner * self.d_state, self.conv_dim * (self.config.d_conv - 1)

    def _split(self, xBC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (..., E·D) and B, C per channel (..., E·D, N) from the conv output (..., conv_dim)."""
        E_D, G, N = self.d_inner, self.n_groups, self.d_state
        x, B, C = xBC.split([E_D, G * N, G * N], dim=-1)
        per_group = E_D // G  # channels of the H / G heads of a group
        B = B.unflatten(-1, (G, N)).repeat_interleave(per_group, dim=-2)  # (..., E·D, N)
        C = C.unflatten(-1, (G, N)).repeat_interleave(per_group, dim=-2)
        return x, B, C

    def _heads_to_channels(self, v: torch.Tensor) -> torch.Tensor:
        """(..., H) -> (..., E·D): each head's value for its P channels."""
        return v.repeat_interleave(self.head_dim, dim=-1)

    def _gated_norm(self, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """RMSNorm over each group of y ⊙ SiLU(z), times the gain.

        Computed on g / s with s = max |g| per group (g / sqrt(mean g² + ε) =
        (g/s) / sqrt(mean (g/s)² + ε/s²)), so the squares of large finite g do not overflow
        float32 (issue 40's fuzz found inf/NaN here).
        """
        g = (y * nn.functional.silu(z)).unflatten(-1, (self.n_groups, -1))
        scale = g.detach().abs().amax(-1, keepdim=True).clamp_min(1e-12)
        g = g / scale
        eps = self.config.norm_eps / scale.pow(2)
        g = g * torch.rsqrt(g.pow(2).mean(-1, keepdim=True) + eps)
        return g.flatten(-2) * self.norm_weight

    def _check(self, name: str, u: object, ndim: int, owner: str) -> torch.Tensor:
        shape = (None,) * (ndim - 1) + (self.d_model,)
        u = check_tensor(name, u, owner=owner, shape=shape)
        w = self.A_log
        if u.dtype != w.dtype or u.device != w.device:
            raise TypeError(
                f"{owner}: {name} must be {w.dtype} on {w.device} like the block's parameters; "
                f"got {u.dtype} on {u.device}."
            )
        check_block_input(name, u, owner)
        return u

    def _check_cache(self, cache: object, batch: int, owner: str) -> None:
        if not isinstance(cache, SSMCache):
            raise TypeError(f"{owner}: cache must be an SSMCache; got {type(cache).__name__}.")
        h_shape = (batch, self.d_inner, self.d_state)
        conv_shape = (batch, self.conv_dim, self.config.d_conv - 1)
        if not isinstance(cache.h, torch.Tensor) or not isinstance(cache.conv, torch.Tensor):
            raise TypeError(f"{owner}: cache.h and cache.conv must be tensors.")
        if tuple(cache.h.shape) != h_shape or tuple(cache.conv.shape) != conv_shape:
            raise ValueError(
                f"{owner}: cache must hold h {h_shape} and conv {conv_shape}; got "
                f"{tuple(cache.h.shape)} and {tuple(cache.conv.shape)}."
            )
        w = self.A_log
        for part in (cache.h, cache.conv):
            if part.dtype != w.dtype or part.device != w.device:
                raise TypeError(f"{owner}: cache must be {w.dtype} on {w.device}.")

    # --- passes ----------------------------------------------------------------------------

    def prefill(
        self, u: torch.Tensor, cache: SSMCache | None = None
    ) -> tuple[torch.Tensor, SSMCache]:
        """Run u (B, T, D), optionally after ``cache``; returns (out, cache)."""
        owner = "Mamba2Block.prefill"
        u = self._check("u", u, 3, owner)
        batch, T = u.shape[0], u.shape[1]
        if cache is not None:
            self._check_cache(cache, batch, owner)
        h0 = None if cache is None else cache.h
        if cache is None:
            fresh = self.init_cache(max(batch, 1))
            cache = SSMCache(h=fresh.h[:batch], conv=fresh.conv[:batch])
        if T == 0:
            return u.new_zeros(batch, 0, self.d_model), cache
        z, xBC_raw, dt = self.in_proj(u).split([self.d_inner, self.conv_dim, self.n_heads], -1)
        padded = torch.cat([cache.conv, xBC_raw.transpose(1, 2)], dim=2)  # (B, conv, d_conv-1+T)
        xBC = nn.functional.silu(self.conv1d(padded)).transpose(1, 2)
        new_conv = padded[:, :, padded.shape[2] - (self.config.d_conv - 1) :]
        x, B, C = self._split(xBC)  # (B, T, E·D), (B, T, E·D, N) ×2
        delta = nn.functional.softplus(dt + self.dt_bias)  # (B, T, H)
        A = -torch.exp(self.A_log)  # (H,)
        a = self._heads_to_channels(torch.exp(delta * A))[..., None].expand_as(B)  # (B,T,ED,N)
        b = (self._heads_to_channels(delta) * x)[..., None] * B  # Δ x ⊗ B
        y, h_T = selective_recurrence(a.contiguous(), b, C, h0, scan=self.scan)
        y = y + self._heads_to_channels(self.D) * x
        out = check_block_output(self.out_proj(self._gated_norm(y, z)), owner)
        return out, SSMCache(h=h_T, conv=new_conv)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """out (B, T, D) for u (B, T, D), from h = 0."""
        return self.prefill(u)[0]

    def step(self, u_t: torch.Tensor, cache: SSMCache) -> tuple[torch.Tensor, SSMCache]:
        """One token u_t (B, D) -> (out_t (B, D), new cache): the recurrent form."""
        owner = "Mamba2Block.step"
        u_t = self._check("u_t", u_t, 2, owner)
        self._check_cache(cache, u_t.shape[0], owner)
        z, xBC_raw, dt = self.in_proj(u_t).split([self.d_inner, self.conv_dim, self.n_heads], -1)
        window = torch.cat([cache.conv, xBC_raw[:, :, None]], dim=2)  # (B, conv, d_conv)
        xBC = nn.functional.silu((window * self.conv1d.weight[:, 0]).sum(-1) + self.conv1d.bias)
        x, B, C = self._split(xBC)  # (B, E·D), (B, E·D, N) ×2
        delta = nn.functional.softplus(dt + self.dt_bias)  # (B, H)
        a = self._heads_to_channels(torch.exp(delta * -torch.exp(self.A_log)))[..., None]
        h = a * cache.h + (self._heads_to_channels(delta) * x)[..., None] * B
        y = (h * C).sum(-1) + self._heads_to_channels(self.D) * x
        return self.out_proj(self._gated_norm(y, z)), SSMCache(h=h, conv=window[:, :, 1:])
