"""Detector-Effector Units: the SVD of an MLP's projection matrices (spec §2.3).

Write side (``c_proj``): ``W_out = Σ_k σ_k u_k v_kᵀ`` with orthonormal detectors ``u_k ∈ R^{d_mlp}``
and effectors ``v_k ∈ R^d``; then exactly ``out(x) = Σ_k α_k(x) v_k + b_out`` with
``α_k = σ_k ⟨a(x), u_k⟩``. Read side (``c_fc``): ``W_in = Σ_k λ_k p_k q_kᵀ``, ``p_k ∈ R^d``
detects a direction of ``ñ``, ``q_k ∈ R^{d_mlp}`` is the effector into pre-activation space and
``pre = Σ_k λ_k ⟨ñ, p_k⟩ q_k + b_in``. Both are one object, :class:`DEUSet`: a matrix written as
``Σ_k σ_k det_k eff_kᵀ`` with orthonormal detectors, applied to inputs ``x`` as
``coefficients(x) = σ ⊙ (x detᵀ)`` and ``reconstruct(x) = coefficients(x) eff + bias``.

Signs: SVD signs are arbitrary; ``sign="data"`` flips ``(det_k, eff_k)`` so that the mean of
``α_k`` over reference tokens is ``≥ 0``, ``sign="vocab"`` so that the largest-magnitude entry of
the unit's vocabulary projection is positive (write side: ``v_k W_U``; read side: ``p_kᵀ W_U``).

Deviations: the read-side vocabulary sign uses the detector ``p_k`` (the effector ``q_k`` lives
in hidden space, which has no vocabulary); the rank ``r`` keeps singular values above
``σ₁ · max(shape) · eps(dtype)``, since centring ``W_out`` leaves a null direction (the all-ones
vector) whose singular pair would be arbitrary. A mean ``α_k`` of exactly 0 under
``sign="data"`` falls back to the vocabulary sign.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import torch

from icml26.core import check_in_interval, check_one_of, check_positive_int, check_tensor
from icml26.nana.models import ActivationCache, MLPModelAdapter, check_adapter

__all__ = [
    "SIDES",
    "DEUSet",
    "decompose_mlp",
    "decompose_model",
    "deu_set_from_matrix",
    "reconstruction_errors",
]

SIDES = ("in", "out")
BASES = ("deu", "neuron", "random")


def check_deus(deus: Any, owner: str, adapter: Any = None, *, name: str = "deus") -> DEUSet:
    """A :class:`DEUSet` (whose residual-side width matches ``adapter`` when given)."""
    if not isinstance(deus, DEUSet):
        raise TypeError(f"{owner}: {name} must be a DEUSet; got {type(deus).__name__}.")
    if adapter is not None:
        width = deus.effectors.shape[1] if deus.side == "out" else deus.detectors.shape[1]
        if width != adapter.d_model or deus.layer >= adapter.n_layers:
            raise ValueError(
                f"{owner}: {name} (layer {deus.layer}, width {width}) does not fit the adapter "
                f"({adapter.n_layers} layers, d_model {adapter.d_model})."
            )
    return deus


@dataclass(frozen=True, eq=False)
class DEUSet:
    """Rank-1 units of one MLP matrix: ``W = Σ_k σ_k det_kᵀ eff_k`` (rows are units).

    Attributes
    ----------
    layer, side
        Where the units come from (``side`` ``"out"``: ``W_out``; ``"in"``: ``W_in``).
    detectors
        ``(r, n_in)`` orthonormal rows (write side: ``u_k`` in hidden space).
    sigmas
        ``(r,)`` non-negative weights, sorted decreasingly for an SVD basis.
    effectors
        ``(r, n_out)`` unit rows (write side: ``v_k`` in the residual stream); orthonormal for
        an SVD basis, only unit-norm for a neuron or random basis.
    bias
        ``(n_out,)`` the matrix's bias (``b_out`` or ``b_in``).
    basis
        ``"deu"`` (SVD), ``"neuron"`` or ``"random"``.
    truncation_error
        Frobenius norm of the part of ``W`` the units leave out (0 unless truncated).
    """

    layer: int
    side: str
    detectors: torch.Tensor  # (r, n_in)
    sigmas: torch.Tensor  # (r,)
    effectors: torch.Tensor  # (r, n_out)
    bias: torch.Tensor  # (n_out,)
    basis: str = "deu"
    truncation_error: float = 0.0

    def __post_init__(self) -> None:
        owner = "DEUSet"
        check_positive_int("layer", self.layer, minimum=0, owner=owner)
        check_one_of("side", self.side, SIDES, owner=owner)
        check_one_of("basis", self.basis, BASES, owner=owner)
        check_tensor("detectors", self.detectors, ndim=2, owner=owner)
        r = self.detectors.shape[0]
        check_tensor("sigmas", self.sigmas, shape=(r,), owner=owner)
        check_tensor("effectors", self.effectors, shape=(r, None), owner=owner)
        check_tensor("bias", self.bias, shape=(self.effectors.shape[1],), owner=owner)
        if len({t.dtype for t in (self.detectors, self.sigmas, self.effectors)}) != 1:
            raise TypeError(f"{owner}: detectors, sigmas and effectors must share one dtype.")
        check_in_interval("truncation_error", self.truncation_error, low=0.0, owner=owner)

    @property
    def rank(self) -> int:
        """Number of units ``r``."""
        return int(self.sigmas.shape[0])

    def matrix(self) -> torch.Tensor:
        """``Σ_k σ_k det_kᵀ eff_k``, the ``(n_in, n_out)`` matrix the units write."""
        return self.detectors.T @ (self.sigmas[:, None] * self.effectors)

    def coefficients(self, acts: torch.Tensor) -> torch.Tensor:
        """``α_k = σ_k ⟨x, det_k⟩`` for inputs ``x`` of shape ``(..., n_in)``: ``(..., r)``."""
        check_tensor("acts", acts, floating=False, owner="DEUSet.coefficients")
        if acts.dim() == 0 or acts.shape[-1] != self.detectors.shape[1]:
            raise ValueError(
                f"DEUSet.coefficients: acts must end in {self.detectors.shape[1]} "
                f"(the {self.side}-side input width); got shape {tuple(acts.shape)}."
            )
        return (acts.to(self.detectors.dtype) @ self.detectors.T) * self.sigmas  # (..., r)

    def contributions(self, acts: torch.Tensor) -> torch.Tensor:
        """Per-unit writes ``α_k eff_k``, shape ``(..., r, n_out)`` (sign-invariant)."""
        return self.coefficients(acts)[..., None] * self.effectors

    def reconstruct(self, acts: torch.Tensor) -> torch.Tensor:
        """``Σ_k α_k eff_k + bias``: the MLP's output (write side) or pre-activation (read side)."""
        return self.coefficients(acts) @ self.effectors + self.bias

    def energy(self) -> torch.Tensor:
        """Energy shares ``σ_k² / Σ σ²`` of the units, shape ``(r,)`` (all 0 for a zero matrix)."""
        sq = self.sigmas.pow(2)
        total = sq.sum()
        return sq / total if float(total) > 0 else torch.zeros_like(sq)

    def truncate(self, r: int) -> DEUSet:
        """The top ``r`` units; ``truncation_error`` becomes ``sqrt(Σ_{k>r} σ_k²)`` (Eckart–Young).

        Raises
        ------
        ValueError
            If ``r`` is not in ``[1, rank]``.
        """
        r = check_positive_int("r", r, owner="DEUSet.truncate")
        if r > self.rank:
            raise ValueError(f"DEUSet.truncate: r must be in [1, {self.rank}]; got {r}.")
        if self.basis != "deu":
            raise ValueError(f"DEUSet.truncate: only an SVD basis truncates; got {self.basis!r}.")
        dropped = float(self.sigmas[r:].pow(2).sum())
        return replace(
            self,
            detectors=self.detectors[:r],
            sigmas=self.sigmas[:r],
            effectors=self.effectors[:r],
            truncation_error=(self.truncation_error**2 + dropped) ** 0.5,
        )

    def select(self, units: Any) -> DEUSet:
        """The units at the given indices (order kept), as a new set."""
        owner = "DEUSet.select"
        if isinstance(units, str) or not isinstance(units, Iterable):
            raise TypeError(f"{owner}: units must be a list of unit indices; got {units!r}.")
        units = list(units)
        if not all(isinstance(k, int) and not isinstance(k, bool) for k in units):
            raise TypeError(f"{owner}: units must hold integer indices; got {units!r}.")
        if any(not 0 <= k < self.rank for k in units):
            raise ValueError(f"{owner}: units must be in [0, {self.rank - 1}]; got {units!r}.")
        index = torch.as_tensor(units, dtype=torch.long)
        return replace(
            self,
            detectors=self.detectors[index],
            sigmas=self.sigmas[index],
            effectors=self.effectors[index],
        )


def deu_set_from_matrix(
    W: torch.Tensor, bias: torch.Tensor, *, layer: int = 0, side: str = "out"
) -> DEUSet:
    """SVD ``W = U diag(σ) Vᵀ`` of an ``(n_in, n_out)`` matrix as a :class:`DEUSet` (raw signs).

    Units with ``σ_k ≤ σ₁ · max(W.shape) · eps`` are dropped (numerical rank).

    Examples
    --------
    >>> import torch
    >>> W = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> deus = deu_set_from_matrix(W, torch.zeros(4, dtype=torch.float64))
    >>> bool(torch.allclose(deus.matrix(), W))
    True
    """
    owner = "deu_set_from_matrix"
    check_tensor("W", W, ndim=2, finite=True, owner=owner)
    if 0 in W.shape:
        raise ValueError(
            f"{owner}: W must be a non-empty (n_in, n_out) matrix; got {tuple(W.shape)}."
        )
    check_tensor("bias", bias, shape=(W.shape[1],), owner=owner)
    check_positive_int("layer", layer, minimum=0, owner=owner)
    check_one_of("side", side, SIDES, owner=owner)
    bias = bias.to(W.dtype)
    U, S, Vh = torch.linalg.svd(W, full_matrices=False)  # (n_in, k), (k,), (k, n_out)
    tol = float(S[0]) * max(W.shape) * torch.finfo(W.dtype).eps if S.numel() else 0.0
    r = max(int((tol < S).sum()), 1)
    return DEUSet(layer, side, U[:, :r].T.contiguous(), S[:r].clone(), Vh[:r].clone(), bias)


def _flip(deus: DEUSet, signs: torch.Tensor) -> DEUSet:
    return replace(
        deus, detectors=deus.detectors * signs[:, None], effectors=deus.effectors * signs[:, None]
    )


def _vocab_signs(deus: DEUSet, adapter: MLPModelAdapter) -> torch.Tensor:
    W_U = adapter.W_U.to(deus.detectors.dtype)
    lens = deus.effectors @ W_U if deus.side == "out" else deus.detectors @ W_U  # (r, vocab)
    peak = lens.gather(1, lens.abs().argmax(1, keepdim=True))[:, 0]
    return torch.where(peak < 0, -1.0, 1.0).to(deus.detectors.dtype)


def decompose_mlp(
    adapter: MLPModelAdapter,
    layer: int,
    side: str = "out",
    dtype: torch.dtype = torch.float64,
    sign: str = "vocab",
    ref_tokens: torch.Tensor | None = None,
    *,
    cache: ActivationCache | None = None,
) -> DEUSet:
    """The Detector-Effector Units of one MLP matrix.

    Parameters
    ----------
    adapter
        From :func:`icml26.nana.from_hf_gpt2` or :func:`icml26.nana.from_hf_bert`.
    layer
        MLP index in ``[0, n_layers)``.
    side
        ``"out"`` (``W_out``, the primary units) or ``"in"`` (``W_in``).
    dtype
        SVD precision (``torch.float64`` by default, spec §2.2 step 4).
    sign
        ``"vocab"`` (no data) or ``"data"`` (needs ``ref_tokens``), see the module doc.
    ref_tokens
        ``(T,)`` or ``(batch, T)`` ids whose mean coefficient sets the signs (``sign="data"``).
    cache
        A cache of ``ref_tokens`` (saves the forward pass when decomposing many layers).

    Returns
    -------
    DEUSet

    Raises
    ------
    ValueError
        For a layer out of range, an unknown side or sign, or ``sign="data"`` without tokens.

    Examples
    --------
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from icml26.nana import from_hf_gpt2
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=1,
    ...                                              n_head=2, n_positions=16)))
    >>> deus = decompose_mlp(ad, 0, side="out")
    >>> deus.rank <= ad.d_model, tuple(deus.effectors.shape[1:])
    (True, (16,))
    """
    owner = "decompose_mlp"
    check_adapter(adapter, owner)
    layer = adapter.check_layer(layer, owner)
    if cache is not None and not isinstance(cache, ActivationCache):
        raise TypeError(f"{owner}: cache must be an ActivationCache or None.")
    check_one_of("side", side, SIDES, owner=owner)
    check_one_of("sign", sign, ("vocab", "data"), owner=owner)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{owner}: dtype must be torch.float32 or torch.float64; got {dtype!r}.")
    if sign == "data" and ref_tokens is None:
        raise ValueError(f"{owner}: sign='data' needs ref_tokens (ids whose mean α sets signs).")
    weights = adapter.mlp(layer)
    if side == "out":
        deus = deu_set_from_matrix(
            weights.W_out.to(dtype), weights.b_out.to(dtype), layer=layer, side=side
        )
    else:
        deus = deu_set_from_matrix(
            weights.W_in.to(dtype), weights.b_in.to(dtype), layer=layer, side=side
        )
    signs = _vocab_signs(deus, adapter)
    if sign == "data":
        tokens = adapter.check_tokens(ref_tokens, owner)
        cache = cache or adapter.run_with_cache(tokens)
        inputs = cache.acts[layer] if side == "out" else cache.normed[layer]
        mean_alpha = deus.coefficients(inputs).reshape(-1, deus.rank).mean(0)  # (r,)
        signs = torch.where(mean_alpha > 0, 1.0, torch.where(mean_alpha < 0, -1.0, signs))
        signs = signs.to(deus.detectors.dtype)
    return _flip(deus, signs)


def decompose_model(
    adapter: MLPModelAdapter,
    sides: tuple[str, ...] = ("in", "out"),
    *,
    dtype: torch.dtype = torch.float64,
    sign: str = "vocab",
    ref_tokens: torch.Tensor | None = None,
) -> dict[tuple[int, str], DEUSet]:
    """``{(layer, side): DEUSet}`` for every MLP of the model and each side in ``sides``.

    Examples
    --------
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from icml26.nana import from_hf_gpt2
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=2,
    ...                                              n_head=2, n_positions=16)))
    >>> sorted(decompose_model(ad))
    [(0, 'in'), (0, 'out'), (1, 'in'), (1, 'out')]
    """
    check_adapter(adapter, "decompose_model")
    check_one_of("sign", sign, ("vocab", "data"), owner="decompose_model")
    if isinstance(sides, str) or not isinstance(sides, tuple | list) or not sides:
        raise ValueError(
            f"decompose_model: sides must be a non-empty tuple of {SIDES}; got {sides!r}."
        )
    for side in sides:
        check_one_of("side", side, SIDES, owner="decompose_model")
    cache = (
        adapter.run_with_cache(ref_tokens) if sign == "data" and ref_tokens is not None else None
    )
    return {
        (layer, side): decompose_mlp(adapter, layer, side, dtype, sign, ref_tokens, cache=cache)
        for layer in range(adapter.n_layers)
        for side in sides
    }


def reconstruction_errors(
    adapter: MLPModelAdapter, tokens: torch.Tensor, *, dtype: torch.dtype = torch.float64
) -> dict[tuple[int, str], float]:
    """Relative error of the DEU reconstruction of every MLP on ``tokens`` (spec §5, N1).

    ``{(layer, "out"): ‖Σ_k α_k v_k + b_out − out‖ / ‖out‖, (layer, "in"): the same for the
    pre-activation from ñ}``, with units decomposed in ``dtype``: zero up to round-off.

    Examples
    --------
    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from icml26.nana import from_hf_gpt2
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=2,
    ...                                              n_head=2, n_positions=16)))
    >>> errors = reconstruction_errors(ad, torch.tensor([[1, 2, 3]]))
    >>> sorted(errors), max(errors.values()) < 1e-12
    ([(0, 'in'), (0, 'out'), (1, 'in'), (1, 'out')], True)
    """
    owner = "reconstruction_errors"
    check_adapter(adapter, owner)
    tokens = adapter.check_tokens(tokens, owner)
    cache = adapter.run_with_cache(tokens)

    def relative(a: torch.Tensor, b: torch.Tensor) -> float:
        return float((a - b).norm() / b.norm())

    errors = {}
    for layer in range(adapter.n_layers):
        out = decompose_mlp(adapter, layer, "out", dtype=dtype)
        errors[(layer, "out")] = relative(out.reconstruct(cache.acts[layer]), cache.mlp_out[layer])
        inn = decompose_mlp(adapter, layer, "in", dtype=dtype)
        errors[(layer, "in")] = relative(inn.reconstruct(cache.normed[layer]), cache.pre[layer])
    return errors
