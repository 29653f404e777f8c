"""Baselines of spec §2.6: a trained transcoder, the neuron basis and a random orthonormal basis.

*Transcoder* (Dunefsky et al. 2024): ``f = ReLU((ñ − b_pre) W_enc + b_enc)``,
``out ≈ f W_dec + b_dec`` with loss ``‖out − out̂‖² + λ Σ_i f_i ‖W_dec,i‖``, Adam (lr 1e-3),
4,096 tokens a batch and a dictionary of ``m = 8 d`` latents. *Neuron basis*: the hidden units
themselves, ``out = Σ_i a_i W_out[i] + b_out``. *Random basis*: a random rotation of the DEU
detectors within their span, ``ũ = R u`` with ``R`` Haar-orthogonal; it writes the same output
exactly but mixes the singular directions.

Deviations: the sparsity coefficient ``λ`` is not given by the spec; ``λ = 3e-4`` (with targets in
units of their RMS norm) is our choice; the transcoder reads the processed MLP input ``ñ`` and
predicts the processed (centred) output; it is initialised with decoder rows of norm 0.1 and
``W_enc ∝ W_decᵀ``; "plateau" stops training when the mean loss over the last 10 % of the steps no
longer improves by ``plateau_rtol`` relative to the 10 % before.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, final

import torch
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    check_in_interval,
    check_positive_int,
    check_tensor,
    optimizer_step,
    progress_reporter,
    torch_generator,
)
from icml26.nana.decompose import DEUSet
from icml26.nana.models import ActivationCache, MLPModelAdapter, check_adapter
from icml26.nana.sca import subspace_contributions

__all__ = [
    "Transcoder",
    "TranscoderFit",
    "neuron_basis",
    "neuron_contributions",
    "random_basis",
    "random_effectors",
    "train_transcoder",
    "transcoder_contributions",
    "transcoder_data",
    "transcoder_splice",
]


MAX_WIDTH = 2**20  # widest transcoder side
MAX_WEIGHTS = 2**27  # most encoder (or decoder) weights of a transcoder


@final
class Transcoder(nn.Module):
    """``out̂ = ReLU((ñ − b_pre) W_enc + b_enc) W_dec + b_dec`` with ``m`` latents."""

    def __init__(self, d_model: int, n_latents: int, *, seed: Seed = 0) -> None:
        super().__init__()
        owner = "Transcoder"
        d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_WIDTH)
        n_latents = check_positive_int("n_latents", n_latents, owner=owner, maximum=MAX_WIDTH)
        if d_model * n_latents > MAX_WEIGHTS:
            raise ValueError(
                f"{owner}: d_model x n_latents = {d_model * n_latents} exceeds {MAX_WEIGHTS}."
            )
        g = torch_generator(seed)
        W_dec = torch.randn(n_latents, d_model, generator=g)
        W_dec = W_dec / W_dec.norm(dim=1, keepdim=True)
        # small decoder rows: at init m active latents must not swamp a unit-norm target
        self.W_dec = nn.Parameter(0.1 * W_dec)  # (m, d)
        self.W_enc = nn.Parameter(W_dec.T.clone() / d_model**0.5)  # (d, m), O(1) pre-activations
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_pre = nn.Parameter(torch.zeros(d_model))
        self.b_dec = nn.Parameter(torch.zeros(d_model))

    def encode(self, normed: torch.Tensor) -> torch.Tensor:
        """Latents ``f`` of shape ``(..., m)``."""
        self._check_input(normed, "encode")
        return torch.relu((normed - self.b_pre) @ self.W_enc + self.b_enc)

    def forward(self, normed: torch.Tensor) -> torch.Tensor:
        """Predicted MLP output ``(..., d)``."""
        self._check_input(normed, "forward")
        return self.encode(normed) @ self.W_dec + self.b_dec

    def _check_input(self, normed: Any, method: str) -> None:
        d = self.b_pre.shape[0]
        check_tensor("normed", normed, owner=f"Transcoder.{method}")
        if normed.dim() == 0 or normed.shape[-1] != d or normed.dtype != self.b_pre.dtype:
            raise ValueError(
                f"Transcoder.{method}: normed must be (..., {d}) in {self.b_pre.dtype}; got "
                f"{tuple(normed.shape)} {normed.dtype}."
            )


@dataclass(frozen=True, eq=False)
class TranscoderFit:
    """A trained transcoder and how it did on held-out tokens."""

    transcoder: Transcoder
    layer: int
    losses: list[float]
    steps: int  # steps actually run (fewer at a plateau)
    wall_time: float  # seconds spent in the training loop
    nmse: float  # ‖out − out̂‖² / ‖out − mean‖² on held-out tokens
    l0: float  # mean number of active latents per held-out token


def transcoder_data(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    layer: int,
    *,
    cache: ActivationCache | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ñ, out)`` pairs of one MLP, flattened over tokens, in float32: ``(N, d)`` each.

    ``cache``: a cache of ``tokens`` from :meth:`MLPModelAdapter.run_with_cache` (computed if
    absent), so that the data of every layer comes from one forward pass.
    """
    owner = "transcoder_data"
    check_adapter(adapter, owner)
    layer = adapter.check_layer(layer, owner)
    if cache is not None and not isinstance(cache, ActivationCache):
        raise TypeError(f"{owner}: cache must be an ActivationCache or None.")
    cache = cache or adapter.run_with_cache(tokens)
    d = adapter.d_model
    return (
        cache.normed[layer].reshape(-1, d).float(),
        cache.mlp_out[layer].reshape(-1, d).float(),
    )


def train_transcoder(
    inputs: torch.Tensor,
    outputs: torch.Tensor,
    *,
    layer: int = 0,
    expansion: int = 8,
    l1_coeff: float = 3e-4,
    lr: float = 1e-3,
    batch_tokens: int = 4096,
    steps: int = 3000,
    plateau_rtol: float | None = None,
    val_fraction: float = 0.1,
    seed: Seed = 0,
    progress: Progress = None,
) -> TranscoderFit:
    """Train a transcoder ``ñ -> out`` of one MLP (see the module doc for the loss).

    Parameters
    ----------
    inputs, outputs
        ``(N, d)`` MLP inputs ``ñ`` and outputs, e.g. from :func:`transcoder_data`.
    layer
        Recorded in the result.
    expansion
        ``m = expansion · d`` latents (spec: 8 on CPU, 32 at real scale).
    l1_coeff
        ``λ``, with outputs measured in units of their RMS norm (scale-free).
    lr, batch_tokens, steps
        Adam learning rate, tokens per batch, maximum steps.
    plateau_rtol
        Stop early at a plateau (relative improvement below this); ``None`` runs all steps.
    val_fraction
        The last fraction of the pairs is held out for ``nmse`` and ``l0``.
    seed
        Initialisation and batch order.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after each step with the step's loss.

    Returns
    -------
    TranscoderFit

    Examples
    --------
    >>> import torch
    >>> x = torch.randn(512, 8, generator=torch.Generator().manual_seed(0))
    >>> fit = train_transcoder(x, torch.relu(x), expansion=2, steps=200, batch_tokens=64, lr=1e-2)
    >>> fit.steps, fit.nmse < 0.1
    (200, True)
    """
    owner = "train_transcoder"
    check_tensor("inputs", inputs, finite=True, owner=owner)
    check_tensor("outputs", outputs, finite=True, owner=owner)
    bad_shape = inputs.dim() != 2 or outputs.shape != inputs.shape
    if bad_shape or inputs.shape[0] < 2 or inputs.shape[1] < 1:
        raise ValueError(
            f"{owner}: inputs and outputs must both be (N, d), N >= 2, d >= 1; got "
            f"{tuple(inputs.shape)} and {tuple(outputs.shape)}."
        )
    expansion = check_positive_int("expansion", expansion, owner=owner)
    l1_coeff = check_in_interval("l1_coeff", l1_coeff, low=0.0, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    batch_tokens = check_positive_int("batch_tokens", batch_tokens, owner=owner)
    steps = check_positive_int("steps", steps, owner=owner)
    val_fraction = check_in_interval(
        "val_fraction", val_fraction, low=0.0, high=1.0, closed="neither", owner=owner
    )
    if plateau_rtol is not None:
        check_in_interval("plateau_rtol", plateau_rtol, low=0.0, closed="neither", owner=owner)
    n_val = max(1, int(val_fraction * inputs.shape[0]))
    if inputs.shape[0] - n_val < 1:
        raise ValueError(f"{owner}: need at least 2 token pairs; got {inputs.shape[0]}.")
    x_train, y_train = inputs[:-n_val], outputs[:-n_val]
    x_val, y_val = inputs[-n_val:], outputs[-n_val:]
    g = torch_generator(seed)
    model = Transcoder(inputs.shape[1], expansion * inputs.shape[1], seed=g)
    # Targets in units of their RMS norm, so that λ and lr do not depend on the output scale;
    # the scale is folded back into W_dec and b_dec after training.
    rms = float(y_train.pow(2).sum(-1).mean().sqrt()) or 1.0
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    window = max(steps // 10, 1)
    start = time.perf_counter()
    with progress_reporter(progress, steps, "training a transcoder") as report:
        for step in range(steps):
            index = torch.randint(0, x_train.shape[0], (batch_tokens,), generator=g)
            x, y = x_train[index], y_train[index] / rms  # (batch, d)
            f = model.encode(x)  # (batch, m)
            y_hat = f @ model.W_dec + model.b_dec
            mse = (y - y_hat).pow(2).sum(-1).mean()
            sparsity = (f * model.W_dec.norm(dim=1)).sum(-1).mean()
            loss = mse + l1_coeff * sparsity
            losses.append(optimizer_step(loss, optimizer, step=step, owner=owner))
            report(step + 1, loss=losses[-1])
            if plateau_rtol is not None and step + 1 >= 2 * window and (step + 1) % window == 0:
                recent = sum(losses[-window:]) / window
                before = sum(losses[-2 * window : -window]) / window
                if before - recent < plateau_rtol * before:
                    break
    with torch.no_grad():
        model.W_dec.mul_(rms)
        model.b_dec.mul_(rms)
    wall = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        pred = model(x_val)
        nmse = float((y_val - pred).pow(2).sum() / (y_val - y_val.mean(0)).pow(2).sum())
        l0 = float((model.encode(x_val) > 0).float().sum(-1).mean())
    return TranscoderFit(model, layer, losses, len(losses), wall, nmse, l0)


def neuron_basis(adapter: MLPModelAdapter, layer: int) -> DEUSet:
    """The hidden units as a basis: detectors ``e_i``, ``σ_i = ‖W_out[i]‖``, effectors
    ``W_out[i]/σ_i``.

    Writes the MLP output exactly (``reconstruct``), like the DEUs, but its effectors are not
    orthogonal. Neurons with a zero row keep effector 0.
    """
    check_adapter(adapter, "neuron_basis")
    weights = adapter.mlp(adapter.check_layer(layer, "neuron_basis"))
    W_out = weights.W_out  # (d_mlp, d)
    norms = W_out.norm(dim=1)
    effectors = W_out / torch.where(norms > 0, norms, 1.0)[:, None]
    eye = torch.eye(W_out.shape[0], dtype=W_out.dtype)
    return DEUSet(layer, "out", eye, norms, effectors, weights.b_out, basis="neuron")


def neuron_contributions(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    layer: int,
    target_ids: Any,
    contrast_ids: Any = None,
    *,
    cache: Any = None,
) -> torch.Tensor:
    """Per-neuron direct attribution ``a_i ⟨W_out[i], w_y⟩ / σ_f``: ``(T, d_mlp)`` (or batched)."""
    check_adapter(adapter, "neuron_contributions")
    basis = neuron_basis(adapter, layer)
    return subspace_contributions(
        adapter, tokens, layer, target_ids, basis, contrast_ids, cache=cache
    )


def random_basis(deus: DEUSet, *, seed: Seed = 0) -> DEUSet:
    """A Haar-random orthonormal basis of the detectors' span writing the same matrix.

    Detectors ``ũ = R u`` (``R`` a random orthogonal ``r × r``), writes ``ũ_j W`` split into
    ``σ̃_j = ‖ũ_j W‖`` and unit effectors. ``reconstruct`` equals the DEUs' exactly.

    Examples
    --------
    >>> import torch
    >>> from icml26.nana import deu_set_from_matrix
    >>> W = torch.randn(8, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> deus = deu_set_from_matrix(W, torch.zeros(4, dtype=torch.float64))
    >>> bool(torch.allclose(random_basis(deus, seed=1).matrix(), W))
    True
    """
    if not isinstance(deus, DEUSet):
        raise TypeError(f"random_basis: deus must be a DEUSet; got {type(deus).__name__}.")
    g = torch_generator(seed)
    draw = torch.randn(deus.rank, deus.rank, generator=g, dtype=deus.detectors.dtype)
    q, r = torch.linalg.qr(draw)
    q = q * torch.sign(torch.diagonal(r))  # Haar measure (Mezzadri's sign fix)
    detectors = q @ deus.detectors  # (r, n_in), orthonormal rows in the same span
    writes = (q * deus.sigmas) @ deus.effectors  # ũ_j W = Σ_k q_jk σ_k eff_k
    sigmas = writes.norm(dim=1)
    effectors = writes / torch.where(sigmas > 0, sigmas, 1.0)[:, None]
    return DEUSet(deus.layer, deus.side, detectors, sigmas, effectors, deus.bias, basis="random")


def random_effectors(
    n_units: int,
    d_model: int,
    *,
    layer: int = 0,
    seed: Seed = 0,
    dtype: torch.dtype = torch.float64,
) -> DEUSet:
    """``n_units`` Gaussian unit directions of the residual stream as a write-side unit set.

    The control of the effector readouts (spec §5, N6): effectors ``v_j = g_j / ‖g_j‖`` with
    ``g_j ~ N(0, I_d)``, identity detectors and ``σ_j = 1``, so that :func:`effector_tokens`
    and :func:`token_coherence` treat them like DEU effectors.

    Parameters
    ----------
    n_units, d_model
        How many directions, and the residual width.
    layer
        Recorded on the set.
    seed
        Source of the directions; a ``torch.Generator`` is drawn from in place, so consecutive
        calls with one generator give fresh directions.
    dtype
        Floating dtype of the set (that of the embeddings it will be read against).

    Examples
    --------
    >>> units = random_effectors(4, 8, seed=0)
    >>> units.rank, bool(torch.allclose(units.effectors.norm(dim=1), torch.ones(4).double()))
    (4, True)
    """
    owner = "random_effectors"
    n_units = check_positive_int("n_units", n_units, owner=owner, maximum=MAX_WIDTH)
    d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_WIDTH)
    if n_units * d_model > MAX_WEIGHTS:
        raise ValueError(f"{owner}: n_units x d_model must be <= {MAX_WEIGHTS}.")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{owner}: dtype must be torch.float32 or torch.float64; got {dtype!r}.")
    directions = torch.randn(n_units, d_model, generator=torch_generator(seed), dtype=dtype)
    directions = directions / directions.norm(dim=1, keepdim=True)  # (n_units, d_model)
    return DEUSet(
        check_positive_int("layer", layer, owner=owner, minimum=0),
        "out",
        torch.eye(n_units, dtype=dtype),
        torch.ones(n_units, dtype=dtype),
        directions,
        torch.zeros(d_model, dtype=dtype),
        basis="random",
    )


def transcoder_contributions(
    adapter: MLPModelAdapter,
    transcoder: Transcoder,
    tokens: torch.Tensor,
    layer: int,
    target_ids: Any,
    *,
    cache: Any = None,
) -> torch.Tensor:
    """Per-latent direct attribution ``f_j(ñ) ⟨W_dec[j], w_y⟩ / σ_f``: ``(B, T, m)``.

    The transcoder's analogue of SCA (the write ``f_j W_dec[j]`` read by the target direction).
    """
    from icml26.nana.sca import target_directions

    owner = "transcoder_contributions"
    check_adapter(adapter, owner)
    if not isinstance(transcoder, Transcoder):
        raise TypeError(
            f"{owner}: transcoder must be a Transcoder; got {type(transcoder).__name__}."
        )
    if cache is not None and not isinstance(cache, ActivationCache):
        raise TypeError(f"{owner}: cache must be an ActivationCache or None.")
    layer = adapter.check_layer(layer, owner)
    if transcoder.b_pre.shape[0] != adapter.d_model:
        raise ValueError(f"{owner}: transcoder width {transcoder.b_pre.shape[0]} is not d_model.")
    tokens, w, _ = target_directions(adapter, tokens, target_ids, owner="transcoder_contributions")
    cache = cache or adapter.run_with_cache(tokens)
    with torch.no_grad():
        f = transcoder.encode(cache.normed[layer].float()).double()  # (B, T, m)
        W_dec = transcoder.W_dec.double()
    W_dec = W_dec - W_dec.mean(1, keepdim=True)  # the LN-invisible mean removed, as for W_out
    return f * (w @ W_dec.T) / cache.sigma_f[..., None]


def transcoder_splice(
    transcoder: Transcoder,
    latents: Any = None,
    ref_means: torch.Tensor | None = None,
) -> Any:
    """A ``replacements`` hook for :meth:`MLPModelAdapter.run_with_cache`.

    With ``latents=None`` the MLP's output is replaced by the transcoder's prediction (spliced
    model); otherwise the MLP output is kept and latents ``j`` are ablated from it,
    ``out ← out − Σ_j (f_j − f̄_j) W_dec[j]`` (``ref_means`` ``f̄``, zero when ``None``).
    """
    owner = "transcoder_splice"
    if not isinstance(transcoder, Transcoder):
        raise TypeError(
            f"{owner}: transcoder must be a Transcoder; got {type(transcoder).__name__}."
        )
    index = None
    if latents is not None:
        if isinstance(latents, str) or not isinstance(latents, Iterable):
            raise TypeError(f"{owner}: latents must be a list of latent indices or None.")
        latents = list(latents)
        m = transcoder.b_enc.shape[0]
        if not all(isinstance(j, int) and not isinstance(j, bool) and 0 <= j < m for j in latents):
            raise ValueError(f"{owner}: latents must be indices in [0, {m}); got {latents!r}.")
        index = torch.as_tensor(latents, dtype=torch.long)
    if ref_means is not None:
        check_tensor("ref_means", ref_means, shape=(transcoder.b_enc.shape[0],), owner=owner)

    def replace(normed: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            if index is None:
                return transcoder(normed.float()).to(out.dtype)
            f = transcoder.encode(normed.float())[..., index]  # (B, T, k)
            if ref_means is not None:
                f = f - ref_means[index].to(f.dtype)
            return out - (f @ transcoder.W_dec[index]).to(out.dtype)

    return replace
