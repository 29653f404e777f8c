"""Selective diagonal recurrences and a pure-PyTorch Mamba-1 block with three agreeing scans.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.2 (the block follows Gu & Dao's Mamba-1 equations).

The generic recurrence is ``h_t = a_t ⊙ h_{t-1} + b_t``, ``y_t = Σ_n c_t[n] h_t[n]`` with
input-dependent a, b, c (a may be exactly 0 or 1); Mamba is one parameterisation of it:
Ā_t = exp(Δ_t ⊗ A), B̄_t x_t = (Δ_t ⊗ B_t) ⊙ x_t, C_t. Three scans compute it: ``"sequential"``
(a loop, the reference), ``"parallel"`` (a log-depth Hillis–Steele prefix scan over the
associative pairs (a, b)), and :meth:`MambaBlock.step` (one token with a cache, for streaming).

Deviations: the parallel scan is Hillis–Steele (O(T log T) work, log2 T steps), not Blelloch's
work-efficient two-pass scan; with ``backend="mamba_ssm"`` the forward pass calls that
package's CUDA ``selective_scan_fn`` on this block's own parameters (same names and shapes as
``mamba_ssm.Mamba``), while :meth:`step` stays in PyTorch; CPU tensors always take the PyTorch
scan. That kernel path is untested (no GPU, and ``mamba_ssm`` does not install without CUDA).
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
    require,
    seeded_default_init,
)

__all__ = [
    "MAX_ABS_INPUT",
    "SCANS",
    "MambaBlock",
    "SSMCache",
    "SSMConfig",
    "selective_recurrence",
]

SCANS = ("sequential", "parallel", "chunked")
CHUNK = 8  # time steps per chunk of the chunked scan
BACKENDS = ("torch", "mamba_ssm")
MAX_D_MODEL = 2**13  # widest block input (the same bound as HybridLM's residual stream)
MAX_D_INNER = 2**15  # most SSM channels E·D
MAX_D_STATE = 2**10  # largest SSM state N per channel (Mamba uses 16)
MAX_D_CONV = 2**10  # longest causal conv kernel (Mamba uses 4)
MAX_CACHE_NUMBERS = 2**28  # most numbers in a fresh cache: batch · E·D · (N + d_conv - 1)
# largest |input| a block accepts: its Δ·x·B products and their sums over time overflow float32
# from about 1e10 (issue 40's fuzz: NaN out of finite inputs); a HybridLM feeds RMS-normed inputs
MAX_ABS_INPUT = 1e6


def check_block_input(name: str, u: torch.Tensor, owner: str) -> None:
    """Refuse NaN/inf and entries beyond ``MAX_ABS_INPUT`` in a block's input (issue 40)."""
    if u.numel() and not bool(u.detach().abs().amax() <= MAX_ABS_INPUT):
        worst = float(u.detach().abs().amax())
        raise ValueError(
            f"{owner}: {name} must be finite with |entries| <= {MAX_ABS_INPUT:g} (larger ones "
            f"overflow float32 inside the SSM); got max |{name}| = {worst:g}."
        )


def check_block_output(out: torch.Tensor, owner: str) -> torch.Tensor:
    """``out``, or a ValueError when finite inputs overflowed to inf/NaN inside the block."""
    if not bool(torch.isfinite(out.detach()).all()):
        raise ValueError(
            f"{owner}: the output overflowed float32 (inf/NaN from finite inputs and "
            "parameters); scale the inputs or the cache down."
        )
    return out


def _scan_sequential(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """h_t = a_t h_{t-1} + b_t from h_{-1} = 0, one step at a time; a, b: (B, T, ...)."""
    h = torch.empty_like(b)
    h[:, 0] = b[:, 0]
    for t in range(1, a.shape[1]):
        h[:, t] = a[:, t] * h[:, t - 1] + b[:, t]
    return h


def _scan_parallel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Same as :func:`_scan_sequential` by log-depth doubling (Hillis–Steele).

    After the round with distance d, (a_t, b_t) is the composition of steps max(0, t-2d+1)..t
    under (a1, b1) then (a2, b2) = (a2 a1, a2 b1 + b2), so after ceil(log2 T) rounds b_t = h_t.
    """
    a, b = a.clone(), b.clone()
    T, d = a.shape[1], 1
    while d < T:
        b[:, d:] = a[:, d:] * b[:, :-d] + b[:, d:]  # the right side is built before writing
        if 2 * d < T:
            a[:, d:] = a[:, d:] * a[:, :-d]
        d *= 2
    return b


def _adjoint_sequential(a: torch.Tensor, grad_h: torch.Tensor) -> torch.Tensor:
    """g_t = grad_h_t + a_{t+1} g_{t+1}, g_{T-1} = grad_h_{T-1}: the scan backwards in time."""
    g = torch.empty_like(grad_h)
    g[:, -1] = grad_h[:, -1]
    for t in range(a.shape[1] - 2, -1, -1):
        g[:, t] = a[:, t + 1] * g[:, t + 1] + grad_h[:, t]
    return g


def _adjoint_parallel(a: torch.Tensor, grad_h: torch.Tensor) -> torch.Tensor:
    """:func:`_adjoint_sequential` by doubling: (α_t, g_t) composes steps t..t+2d-1."""
    alpha, g = a[:, 1:].clone(), grad_h.clone()  # alpha_t = a_{t+1} for t < T - 1
    T, d = grad_h.shape[1], 1
    while d < T:
        g[:, : T - d] = alpha[:, : T - d] * g[:, d:] + g[:, : T - d]
        if 2 * d < T:
            alpha[:, : T - 1 - d] = alpha[:, : T - 1 - d] * alpha[:, d:]
        d *= 2
    return g


def _scan_chunked(a: torch.Tensor, b: torch.Tensor, chunk: int = CHUNK) -> torch.Tensor:
    """Same as :func:`_scan_sequential` by chunks: about 2·sqrt(T) loop steps instead of T.

    Time is cut into ``n`` chunks of ``chunk`` steps. (1) Inside every chunk at once, the states
    from a zero start: ``chunk`` steps of the recurrence, each on all chunks together. (2) The
    cumulative decay inside each chunk, Π_{k<=i} a_k. (3) The state entering each chunk, carried
    over the ``n`` chunk ends. (4) h = local state + cumulative decay × entering state, for
    all steps at once. Work stays O(T) (Mamba-2's quadratic segment-sum form is cheap only
    for a scalar decay per head; with Mamba-1's decay per channel and state it multiplies the
    work by the chunk length).
    """
    batch, T = a.shape[:2]
    rest = a.shape[2:]
    n = -(-T // chunk)
    pad = n * chunk - T
    if pad:
        a = torch.cat([a, a.new_ones(batch, pad, *rest)], dim=1)
        b = torch.cat([b, b.new_zeros(batch, pad, *rest)], dim=1)
    # (chunk, batch, n, ...): step i of every chunk is one contiguous slice
    a = a.reshape(batch, n, chunk, *rest).movedim(2, 0).contiguous()
    b = b.reshape(batch, n, chunk, *rest).movedim(2, 0).contiguous()
    local = torch.empty_like(b)
    local[0] = b[0]
    for i in range(1, chunk):
        torch.addcmul(b[i], a[i], local[i - 1], out=local[i])
    decay = a.cumprod(dim=0)
    entering = torch.zeros_like(b[0])  # (batch, n, ...)
    for c in range(1, n):
        entering[:, c] = local[-1, :, c - 1] + decay[-1, :, c - 1] * entering[:, c - 1]
    h = torch.addcmul(local, decay, entering[None])
    return h.movedim(0, 2).reshape(batch, n * chunk, *rest)[:, :T]


def _adjoint_chunked(a: torch.Tensor, grad_h: torch.Tensor) -> torch.Tensor:
    """:func:`_adjoint_sequential` as a chunked scan run backwards in time."""
    a_rev = torch.cat([torch.ones_like(a[:, :1]), a[:, 1:].flip(1)], dim=1)
    return _scan_chunked(a_rev, grad_h.flip(1)).flip(1)


_FORWARD = {"sequential": _scan_sequential, "parallel": _scan_parallel, "chunked": _scan_chunked}
_ADJOINT = {
    "sequential": _adjoint_sequential,
    "parallel": _adjoint_parallel,
    "chunked": _adjoint_chunked,
}


class _LinearScan(torch.autograd.Function):
    """h = scan(a, b) with the adjoint scan as its backward pass.

    Backward of h_t = a_t h_{t-1} + b_t (h_{-1} = 0): g_t = ∂L/∂h_t + a_{t+1} g_{t+1}, then
    ∂L/∂b_t = g_t and ∂L/∂a_t = g_t h_{t-1}. Both passes run outside autograd, so a scan costs
    one (B, T, ...) tensor per pass instead of one per round.
    """

    @staticmethod
    def forward(ctx, a, b, scan):  # type: ignore[override]
        h = _FORWARD[scan](a, b)
        ctx.save_for_backward(a, h)
        ctx.scan = scan
        return h

    @staticmethod
    def backward(ctx, grad_h):  # type: ignore[override]
        a, h = ctx.saved_tensors
        grad_h = grad_h.contiguous()
        g = _ADJOINT[ctx.scan](a, grad_h)
        grad_a = torch.zeros_like(a)
        grad_a[:, 1:] = g[:, 1:] * h[:, :-1]
        return grad_a, g, None


def selective_recurrence(
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    h0: torch.Tensor | None = None,
    *,
    scan: str = "parallel",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Selective diagonal recurrence h_t = a_t ⊙ h_{t-1} + b_t, y_t = Σ_n c_t[n] h_t[n].

    Parameters
    ----------
    a, b
        ``(batch, T, channels, N)`` input-dependent decay and input; ``a`` may be exactly 0
        (memoryless) or 1 (a pure accumulator).
    c
        Read-out, broadcastable to ``(batch, T, channels, N)`` (e.g. ``(batch, T, 1, N)``).
    h0
        Initial state ``(batch, channels, N)``; zeros if ``None``.
    scan
        ``"sequential"`` (reference loop), ``"parallel"`` (log-depth prefix scan) or
        ``"chunked"`` (chunks of 8 steps scanned together, then a loop over chunk ends).

    Returns
    -------
    y, h_T
        Outputs ``(batch, T, channels)`` and the final state ``(batch, channels, N)``.

    Raises
    ------
    ValueError
        On an unknown ``scan``, or shapes that do not fit together.

    Examples
    --------
    >>> ones = torch.ones(1, 4, 1, 1)
    >>> y, h = selective_recurrence(ones, ones, ones)  # prefix sums of 1
    >>> y.flatten().tolist(), h.item()
    ([1.0, 2.0, 3.0, 4.0], 4.0)
    """
    owner = "selective_recurrence"
    check_one_of("scan", scan, SCANS, owner=owner)
    check_tensor("a", a, owner=owner, ndim=4)
    check_tensor("b", b, owner=owner, shape=tuple(a.shape))
    check_tensor("c", c, owner=owner, ndim=4)
    if a.shape[1] < 1:
        raise ValueError(f"{owner}: a must have T >= 1 time steps; got shape {tuple(a.shape)}.")
    try:
        torch.broadcast_shapes(c.shape, a.shape)
    except RuntimeError:
        raise ValueError(
            f"{owner}: c must broadcast to a's shape {tuple(a.shape)}; got {tuple(c.shape)}."
        ) from None
    if h0 is not None:
        check_tensor("h0", h0, owner=owner, shape=(a.shape[0], a.shape[2], a.shape[3]))
        # fold h0 into the first input: h_0 = a_0 h0 + b_0
        b = torch.cat([b[:, :1] + a[:, :1] * h0[:, None], b[:, 1:]], dim=1)
    states = _LinearScan.apply(a, b, scan)  # (batch, T, channels, N)
    if c.dim() == 4 and c.shape[2] == 1:  # one read-out shared by the channels: a matmul
        y = (states @ c[:, :, 0, :, None].expand(*a.shape[:2], -1, 1))[..., 0]
    else:
        y = (states * c).sum(dim=-1)  # (batch, T, channels)
    return y, states[:, -1]


@final
@dataclass(frozen=True)
class SSMConfig:
    """Hyper-parameters of a Mamba-1 mixer (spec §2.2; Mamba's defaults).

    Parameters
    ----------
    d_state
        N, the state size per channel.
    expand
        E: the inner width is E·d_model.
    d_conv
        Kernel of the causal depthwise convolution.
    dt_rank
        r, the rank of the Δ projection; ``None`` = ceil(d_model / 16).
    dt_min, dt_max, dt_floor
        Δ's bias is initialised to softplus⁻¹ of dt ~ logUniform[dt_min, dt_max], floored.

    Examples
    --------
    >>> SSMConfig().d_state
    16
    """

    d_state: int = 16
    expand: int = 2
    d_conv: int = 4
    dt_rank: int | None = None
    dt_min: float = 1e-3
    dt_max: float = 0.1
    dt_floor: float = 1e-4

    def __post_init__(self) -> None:
        owner = "SSMConfig"
        check_positive_int("d_state", self.d_state, owner=owner, maximum=MAX_D_STATE)
        check_positive_int("expand", self.expand, owner=owner, maximum=MAX_D_INNER)
        check_positive_int("d_conv", self.d_conv, owner=owner, maximum=MAX_D_CONV)
        if self.dt_rank is not None:
            check_positive_int("dt_rank", self.dt_rank, owner=owner, maximum=MAX_D_MODEL)
        check_in_interval("dt_min", self.dt_min, low=0.0, closed="neither", owner=owner)
        check_in_interval("dt_max", self.dt_max, low=self.dt_min, owner=owner)
        check_in_interval("dt_floor", self.dt_floor, low=0.0, closed="neither", owner=owner)

    def rank(self, d_model: int) -> int:
        """r = ``dt_rank`` or ceil(d_model / 16)."""
        return self.dt_rank if self.dt_rank is not None else math.ceil(d_model / 16)


@final
@dataclass(frozen=True)
class SSMCache:
    """Streaming state of one Mamba block after t tokens.

    Attributes
    ----------
    h
        ``(batch, E·D, N)`` SSM state.
    conv
        ``(batch, E·D, d_conv - 1)`` the last conv inputs, oldest first.
    """

    h: torch.Tensor
    conv: torch.Tensor


@final
class MambaBlock(nn.Module):
    """Mamba-1 mixer (no norm, no residual): u (B, T, D) -> out (B, T, D).

    1. [x, z] = in_proj(u); x <- SiLU(causal depthwise conv1d(x)).
    2. [δ, B, C] = x_proj(x); Δ = softplus(dt_proj(δ)); A = -exp(A_log).
    3. h_t = exp(Δ_t ⊗ A) ⊙ h_{t-1} + (Δ_t ⊗ B_t) ⊙ x_t; y_t = h_t C_t + D ⊙ x_t.
    4. out = out_proj(y ⊙ SiLU(z)).

    Parameters
    ----------
    d_model
        D, at most ``MAX_D_MODEL`` = 2**13.
    config
        :class:`SSMConfig`; E·D = ``config.expand * d_model`` is at most ``MAX_D_INNER`` = 2**15.
    scan
        ``"parallel"``, ``"sequential"`` or ``"chunked"``; all give the same outputs.
    backend
        ``"torch"`` or ``"mamba_ssm"`` (the CUDA kernel for the forward scan; needs a GPU).
    seed
        Seed of the initialisation.

    Examples
    --------
    >>> block = MambaBlock(8, seed=0)
    >>> u = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(0))
    >>> bool(torch.allclose(block(u), MambaBlock(8, scan="sequential", seed=0)(u), atol=1e-6))
    True
    """

    def __init__(
        self,
        d_model: int,
        config: SSMConfig | None = None,
        *,
        scan: str = "parallel",
        backend: str = "torch",
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        owner = "MambaBlock"
        self.d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_D_MODEL)
        self.config = SSMConfig() if config is None else config
        if not isinstance(self.config, SSMConfig):
            raise TypeError(f"{owner}: config must be an SSMConfig; got {type(config).__name__}.")
        if self.config.expand * d_model > MAX_D_INNER:
            raise ValueError(
                f"{owner}: config.expand * d_model (the SSM width E·D) must be at most "
                f"{MAX_D_INNER}; got {self.config.expand} * {d_model}."
            )
        self.scan = check_one_of("scan", scan, SCANS, owner=owner)
        self.backend = check_one_of("backend", backend, BACKENDS, owner=owner)
        cfg = self.config
        E_D, N, r = cfg.expand * d_model, cfg.d_state, cfg.rank(d_model)
        self.d_inner, self.d_state, self.dt_rank = E_D, N, r
        with seeded_default_init(seed):
            self.in_proj = nn.Linear(d_model, 2 * E_D, bias=False)
            self.conv1d = nn.Conv1d(E_D, E_D, cfg.d_conv, groups=E_D, bias=True)
            self.x_proj = nn.Linear(E_D, r + 2 * N, bias=False)
            self.dt_proj = nn.Linear(r, E_D, bias=True)
            self.out_proj = nn.Linear(E_D, d_model, bias=False)
            with torch.no_grad():
                bound = r**-0.5
                self.dt_proj.weight.uniform_(-bound, bound)
                log_dt = torch.rand(E_D) * (math.log(cfg.dt_max) - math.log(cfg.dt_min))
                dt = torch.exp(log_dt + math.log(cfg.dt_min)).clamp(min=cfg.dt_floor)
                # softplus⁻¹(dt) = dt + log(1 - exp(-dt))
                self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        # S4D-real: A = -(1..N) per channel
        self.A_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(E_D, 1))
        self.D = nn.Parameter(torch.ones(E_D))
        if self.backend == "mamba_ssm":
            require("mamba_ssm", "hybrid_seq", owner="MambaBlock(backend='mamba_ssm')")

    # --- the parts shared by every scan ---------------------------------------------------

    def _ssm_inputs(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Δ (B, T, ED), A (ED, N), B and C (B, T, N) from the conv output x (B, T, ED)."""
        delta_raw, B, C = self.x_proj(x).split([self.dt_rank, self.d_state, self.d_state], -1)
        delta = nn.functional.softplus(self.dt_proj(delta_raw))  # (B, T, ED)
        A = -torch.exp(self.A_log)  # (ED, N)
        return delta, A, B, C

    def _conv(self, x: torch.Tensor, past: torch.Tensor) -> torch.Tensor:
        """Causal depthwise conv of x (B, T, ED) after the past inputs (B, ED, d_conv - 1)."""
        padded = torch.cat([past, x.transpose(1, 2)], dim=2)  # (B, ED, d_conv - 1 + T)
        return nn.functional.silu(self.conv1d(padded)).transpose(1, 2)  # (B, T, ED)

    def init_cache(self, batch_size: int) -> SSMCache:
        """The empty cache (h = 0, zero conv history) for ``batch_size`` sequences.

        At most ``MAX_CACHE_NUMBERS`` = 2**28 numbers: batch_size · E·D · (N + d_conv - 1).
        """
        owner = "MambaBlock.init_cache"
        batch_size = check_positive_int("batch_size", batch_size, owner=owner)
        per_sequence = sum(self.state_numbers())
        if batch_size * per_sequence > MAX_CACHE_NUMBERS:
            raise ValueError(
                f"{owner}: batch_size must be at most {MAX_CACHE_NUMBERS // per_sequence} "
                f"(a cache holds {per_sequence} numbers per sequence, at most "
                f"{MAX_CACHE_NUMBERS} in all); got {batch_size}."
            )
        weight = self.A_log
        h = weight.new_zeros(batch_size, self.d_inner, self.d_state)
        conv = weight.new_zeros(batch_size, self.d_inner, self.config.d_conv - 1)
        return SSMCache(h=h, conv=conv)

    def state_numbers(self) -> tuple[int, int]:
        """(SSM state, conv cache) numbers held per sequence: (ED·N, ED·(d_conv - 1))."""
        return self.d_inner * self.d_state, self.d_inner * (self.config.d_conv - 1)

    # --- full-sequence and streaming passes ------------------------------------------------

    def prefill(
        self, u: torch.Tensor, cache: SSMCache | None = None
    ) -> tuple[torch.Tensor, SSMCache]:
        """Run a whole sequence u (B, T, D), optionally after ``cache``; returns (out, cache).

        An empty sequence (T = 0) returns an empty output and the cache unchanged.
        """
        u = self._check_input("u", u, 3, "MambaBlock.prefill")
        B_size = u.shape[0]
        if cache is not None:
            self._check_cache(cache, B_size, "MambaBlock.prefill")
        h0 = None if cache is None else cache.h
        if cache is None:
            cache = self.init_cache(max(B_size, 1))
            cache = SSMCache(h=cache.h[:B_size], conv=cache.conv[:B_size])
        if u.shape[1] == 0:
            return u.new_zeros(B_size, 0, self.d_model), cache
        x_raw, z = self.in_proj(u).chunk(2, dim=-1)  # (B, T, ED) each
        x = self._conv(x_raw, cache.conv)  # (B, T, ED)
        history = torch.cat([cache.conv, x_raw.transpose(1, 2)], dim=2)
        new_conv = history[:, :, history.shape[2] - (self.config.d_conv - 1) :]
        delta, A, B, C = self._ssm_inputs(x)
        if self.backend == "mamba_ssm" and u.is_cuda and h0 is None:
            y, h_T = self._mamba_ssm_scan(x, delta, A, B, C, z)
            return self.out_proj(y), SSMCache(h=h_T, conv=new_conv)
        a = torch.exp(delta[..., None] * A)  # Ā: (B, T, ED, N)
        b = (delta * x)[..., None] * B[:, :, None, :]  # B̄x = (Δ ⊗ B) ⊙ x: (B, T, ED, N)
        y, h_T = selective_recurrence(a, b, C[:, :, None, :], h0, scan=self.scan)
        y = y + self.D * x  # (B, T, ED)
        out = self.out_proj(y * nn.functional.silu(z))
        return check_block_output(out, "MambaBlock.prefill"), SSMCache(h=h_T, conv=new_conv)

    def _mamba_ssm_scan(
        self,
        x: torch.Tensor,
        delta: torch.Tensor,
        A: torch.Tensor,
        B: torch.Tensor,
        C: torch.Tensor,
        z: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The CUDA selective scan of ``mamba_ssm`` on this block's Δ, A, B, C, D from h = 0
        (GPU tensors only; a prefill that continues a cache takes the PyTorch scan)."""
        interface = require("mamba_ssm.ops.selective_scan_interface", "hybrid_seq")
        out, last = interface.selective_scan_fn(
            x.transpose(1, 2).contiguous(),
            delta.transpose(1, 2).contiguous(),
            A,
            B.transpose(1, 2).contiguous(),
            C.transpose(1, 2).contiguous(),
            self.D,
            z=z.transpose(1, 2).contiguous(),
            return_last_state=True,
        )
        return out.transpose(1, 2), last  # y ⊙ SiLU(z) already applied

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """out (B, T, D) for u (B, T, D), from h = 0."""
        return self.prefill(u)[0]

    def _check_input(self, name: str, u: object, ndim: int, owner: str) -> torch.Tensor:
        """``u`` if it is a floating tensor (..., D) of this block's dtype and device."""
        shape = (None,) * (ndim - 1) + (self.d_model,)
        u = check_tensor(name, u, owner=owner, shape=shape)
        weight = self.A_log
        if u.dtype != weight.dtype or u.device != weight.device:
            raise TypeError(
                f"{owner}: {name} must be {weight.dtype} on {weight.device} like the block's "
                f"parameters; got {u.dtype} on {u.device}."
            )
        check_block_input(name, u, owner)
        return u

    def _check_cache(self, cache: object, batch: int, owner: str) -> None:
        """``cache`` must be an :class:`SSMCache` of this block for ``batch`` sequences."""
        if not isinstance(cache, SSMCache):
            raise TypeError(f"{owner}: cache must be an SSMCache; got {type(cache).__name__}.")
        h_shape = (batch, self.d_inner, self.d_state)
        conv_shape = (batch, self.d_inner, self.config.d_conv - 1)
        if not isinstance(cache.h, torch.Tensor) or not isinstance(cache.conv, torch.Tensor):
            raise TypeError(f"{owner}: cache.h and cache.conv must be tensors.")
        if tuple(cache.h.shape) != h_shape or tuple(cache.conv.shape) != conv_shape:
            raise ValueError(
                f"{owner}: cache must hold h {h_shape} and conv {conv_shape} for this block and "
                f"batch; got {tuple(cache.h.shape)} and {tuple(cache.conv.shape)}."
            )
        weight = self.A_log
        for part in (cache.h, cache.conv):
            if part.dtype != weight.dtype or part.device != weight.device:
                raise TypeError(
                    f"{owner}: cache must be {weight.dtype} on {weight.device} like the "
                    f"block's parameters; got {part.dtype} on {part.device}."
                )

    def step(self, u_t: torch.Tensor, cache: SSMCache) -> tuple[torch.Tensor, SSMCache]:
        """One token u_t (B, D) -> (out_t (B, D), new cache): the recurrent form."""
        u_t = self._check_input("u_t", u_t, 2, "MambaBlock.step")
        self._check_cache(cache, u_t.shape[0], "MambaBlock.step")
        x_raw, z = self.in_proj(u_t).chunk(2, dim=-1)  # (B, ED)
        window = torch.cat([cache.conv, x_raw[:, :, None]], dim=2)  # (B, ED, d_conv)
        # depthwise conv at one position: Σ_j w[c, j] window[c, j] + bias
        x = nn.functional.silu(
            (window * self.conv1d.weight[:, 0]).sum(-1) + self.conv1d.bias
        )  # (B, ED)
        delta, A, B, C = self._ssm_inputs(x)
        a = torch.exp(delta[..., None] * A)  # (B, ED, N)
        h = a * cache.h + delta[..., None] * B[:, None, :] * x[..., None]
        y = (h * C[:, None, :]).sum(-1) + self.D * x  # (B, ED)
        out = self.out_proj(y * nn.functional.silu(z))
        return out, SSMCache(h=h, conv=window[:, :, 1:])
