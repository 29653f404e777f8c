"""A planted MLP with known Detector-Effector Units, built as a one-layer HF GPT-2 (spec §5.3).

``W_out = Σ_{k<K} σ_k u_k v_kᵀ + ε N`` with orthonormal detectors ``u_k ∈ R^{d_mlp}``, zero-mean
orthonormal effectors ``v_k ∈ R^d``, ``σ_{k+1} = ratio · σ_k`` (≥ 10 % apart) and Gaussian noise
of scale ``ε``. Input token ``i_k`` embeds as ``√d e_k`` (zero mean, norm ``√d``: LayerNorm keeps
it) and ``W_in = s Σ_k e_k u_kᵀ / √d`` makes its pre-activation ``s u_k``, so its hidden activation
``≈ s · relu(u_k)`` loads on ``u_k``. The unembedding gives unit ``k`` five designated tokens
``c_j v_k`` (``c_j`` decreasing), filler tokens small random columns; attention writes nothing.
Everything goes through the same adapter code path as a real GPT-2.

Deviations: the spec fixes d = 32, d_mlp = 128, 8 units and "small noise"; the input construction
(orthogonal embeddings, ``W_in`` aimed at ``u_k``), ``ε = 1e-3``, ``ratio = 0.8`` and the
designated-token scales are inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from icml26.core import (
    Seed,
    check_in_interval,
    check_positive_int,
    check_tensor,
    require,
    seeded_default_init,
    torch_generator,
)

__all__ = ["PlantedMLP", "planted_mlp"]


@dataclass(frozen=True, eq=False)
class PlantedMLP:
    """The planted model and its ground truth."""

    model: Any  # transformers.GPT2LMHeadModel with one layer
    u: torch.Tensor  # (K, d_mlp) planted detectors
    v: torch.Tensor  # (K, d) planted effectors
    sigmas: torch.Tensor  # (K,)
    input_tokens: torch.Tensor  # (K,) token i_k drives unit k
    designated: torch.Tensor  # (K, n_designated) tokens unit k writes, best first

    def __post_init__(self) -> None:
        owner = "PlantedMLP"
        from torch import nn

        if not isinstance(self.model, nn.Module):
            raise TypeError(f"{owner}: model must be a torch.nn.Module (the planted GPT-2).")
        check_tensor("u", self.u, ndim=2, owner=owner)
        K = self.u.shape[0]
        if K == 0:
            raise ValueError(f"{owner}: u must hold at least one planted unit.")
        check_tensor("v", self.v, shape=(K, None), owner=owner)
        check_tensor("sigmas", self.sigmas, shape=(K,), owner=owner)
        check_tensor("input_tokens", self.input_tokens, shape=(K,), floating=False, owner=owner)
        check_tensor("designated", self.designated, shape=(K, None), floating=False, owner=owner)
        for name in ("input_tokens", "designated"):
            if getattr(self, name).dtype not in (torch.int64, torch.int32):
                raise TypeError(f"{owner}: {name} must hold integer token ids.")

    def crafted_inputs(self, n_sequences: int = 8, length: int = 8, *, seed: Seed = 0):
        """``(tokens, units)``: random sequences of input tokens and the unit each position drives.

        Examples
        --------
        >>> p = planted_mlp()
        >>> tokens, units = p.crafted_inputs(2, 4)
        >>> tuple(tokens.shape), bool((p.input_tokens[units] == tokens).all())
        ((2, 4), True)
        """
        owner = "crafted_inputs"
        n_sequences = check_positive_int("n_sequences", n_sequences, owner=owner, maximum=10**6)
        length = check_positive_int("length", length, owner=owner, maximum=10**4)
        if n_sequences * length > 10**8:
            raise ValueError(f"{owner}: n_sequences x length must be <= 10**8 tokens.")
        units = torch.randint(
            0, self.u.shape[0], (n_sequences, length), generator=torch_generator(seed)
        )
        return self.input_tokens[units], units


def _orthonormal(rows: int, dim: int, generator: torch.Generator, *, zero_mean: bool = False):
    """``rows`` orthonormal vectors of ``R^dim`` (orthogonal to the all-ones vector if asked)."""
    draw = torch.randn(dim, rows + int(zero_mean), generator=generator, dtype=torch.float64)
    if zero_mean:
        draw[:, 0] = 1.0
    q, _ = torch.linalg.qr(draw)  # (dim, rows [+1])
    return q[:, int(zero_mean) :].T.contiguous()  # (rows, dim)


MAX_WIDTH = 4096  # widest residual or hidden layer of the planted model


def planted_mlp(
    *,
    d_model: int = 32,
    d_mlp: int = 128,
    n_units: int = 8,
    sigma_max: float = 8.0,
    ratio: float = 0.8,
    noise: float = 1e-3,
    n_designated: int = 5,
    n_filler: int = 16,
    input_scale: float = 20.0,
    seed: Seed = 0,
) -> PlantedMLP:
    """Build the planted one-layer GPT-2 (float64) with known units.

    Parameters
    ----------
    d_model, d_mlp, n_units
        Residual width, hidden width, planted units (``2 n_units < d_model``).
    sigma_max, ratio
        ``σ_k = sigma_max · ratio^k``; ``ratio ≤ 0.9`` keeps them ≥ 10 % apart.
    noise
        Standard deviation of the Gaussian noise added to ``W_out``.
    n_designated, n_filler
        Designated tokens per unit and extra filler tokens in the vocabulary.
    input_scale
        ``s``: the pre-activation of input token ``i_k`` is ``s u_k``.
    seed
        Draw of ``u``, ``v``, embeddings and noise.

    Returns
    -------
    PlantedMLP

    Examples
    --------
    >>> p = planted_mlp(seed=1)
    >>> p.model.config.vocab_size, tuple(p.designated.shape)
    (64, (8, 5))
    """
    owner = "planted_mlp"
    transformers = require("transformers", "nana", owner=owner)
    d_model = check_positive_int("d_model", d_model, owner=owner, minimum=4, maximum=MAX_WIDTH)
    d_mlp = check_positive_int("d_mlp", d_mlp, owner=owner, maximum=MAX_WIDTH)
    n_units = check_positive_int("n_units", n_units, owner=owner, maximum=MAX_WIDTH)
    if 2 * n_units >= d_model or n_units > d_mlp:
        raise ValueError(f"{owner}: need 2 n_units < d_model and n_units <= d_mlp; got {n_units}.")
    ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, closed="neither", owner=owner)
    sigma_max = check_in_interval("sigma_max", sigma_max, low=0.0, closed="neither", owner=owner)
    noise = check_in_interval("noise", noise, low=0.0, owner=owner)
    n_designated = check_positive_int("n_designated", n_designated, owner=owner, maximum=10**4)
    n_filler = check_positive_int("n_filler", n_filler, owner=owner, minimum=0, maximum=10**5)
    input_scale = check_in_interval("input_scale", input_scale, owner=owner)
    if n_units * n_designated > 10**5:
        raise ValueError(f"{owner}: n_units x n_designated must be <= 10**5 designated tokens.")
    g = torch_generator(seed)
    f64 = torch.float64
    basis = _orthonormal(2 * n_units, d_model, g, zero_mean=True)  # (2K, d), zero-mean rows
    v, e = basis[:n_units], basis[n_units:]  # effectors, input directions
    u = _orthonormal(n_units, d_mlp, g)  # (K, d_mlp)
    sigmas = sigma_max * ratio ** torch.arange(n_units, dtype=f64)
    W_out = u.T @ (sigmas[:, None] * v) + noise * torch.randn(
        d_mlp, d_model, generator=g, dtype=f64
    )
    W_in = input_scale * e.T @ u / d_model**0.5  # (d, d_mlp): ñ = √d e_k  ->  pre = s u_k

    vocab = n_units + n_units * n_designated + n_filler
    input_tokens = torch.arange(n_units)
    designated = n_units + torch.arange(n_units * n_designated).view(n_units, n_designated)
    W_E = 0.1 * torch.randn(vocab, d_model, generator=g, dtype=f64) / d_model**0.5
    W_E[input_tokens] = d_model**0.5 * e
    unembed = 0.1 * torch.randn(vocab, d_model, generator=g, dtype=f64) / d_model**0.5
    unembed[input_tokens] = 0.0
    scales = 1.0 - 0.05 * torch.arange(n_designated, dtype=f64)  # best designated token first
    for k in range(n_units):
        unembed[designated[k]] = scales[:, None] * v[k]

    config = transformers.GPT2Config(
        vocab_size=vocab,
        n_positions=64,
        n_embd=d_model,
        n_inner=d_mlp,
        n_layer=1,
        n_head=1,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    with seeded_default_init(g):  # attention weights are drawn but never matter
        model = transformers.GPT2LMHeadModel(config).to(f64).eval()
    with torch.no_grad():
        model.transformer.wte.weight.copy_(W_E)
        model.transformer.wpe.weight.zero_()
        block = model.transformer.h[0]
        block.attn.c_proj.weight.zero_()  # attention writes nothing
        block.attn.c_proj.bias.zero_()
        block.mlp.c_fc.weight.copy_(W_in)
        block.mlp.c_fc.bias.zero_()
        block.mlp.c_proj.weight.copy_(W_out)
        block.mlp.c_proj.bias.zero_()
        model.lm_head.weight.copy_(unembed)
    return PlantedMLP(model, u, v, sigmas, input_tokens, designated)
