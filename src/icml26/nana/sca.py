"""Subspace Contribution Analysis: direct logit attribution of single units, ablations, pathways.

Spec §2.5 (inferred). With ``w_y = W_U[:, y]`` (or ``W_U[:, y] − W_U[:, y′]``) and the final
LayerNorm scale ``σ_f(t)`` of position ``t``, the direct contribution of unit ``k`` of layer ℓ is

    SCA_{ℓ,k}(t, y) = α_{ℓ,k}(x_t) ⟨v_{ℓ,k}, w_y⟩ / σ_f(t),

and ``Σ_k SCA_{ℓ,k} + ⟨b_out, w_y⟩/σ_f`` is the direct logit attribution (DLA) of MLP ℓ; the DLA of
all components (embeddings, attention heads and biases, MLPs) plus ``b_U[y]`` is the logit in the
adapter's frame. Ablating unit ``k`` moves ``out ← out − (α_k − ᾱ_k) v_k`` (mean) or
``out ← out − α_k v_k`` (zero); the *direct* effect keeps downstream components and ``σ_f`` frozen,
the *total* effect re-runs the model. The dominant pathway is the smallest set of units whose
cumulative signed mean SCA covers ``ρ`` of the units' summed contribution toward ``y``.

Deviations: the dominant pathway covers ``ρ`` of the summed *unit* contributions (the MLP DLA
minus its bias terms, which belong to no unit) and ranks units by their mean SCA over prompts
at the last position; a read-side unit's direct effect is computed by re-running the edited MLP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from icml26.core import check_in_interval, check_one_of, check_tensor
from icml26.nana.decompose import DEUSet, check_deus, decompose_mlp
from icml26.nana.models import ActivationCache, MLPModelAdapter, check_adapter

__all__ = [
    "Pathway",
    "ablate",
    "coverage_size",
    "dla",
    "dominant_pathway",
    "mean_coefficients",
    "sca_identity_error",
    "subspace_contributions",
    "target_directions",
]

ModelEdit = tuple[int, str, Sequence[int], str]  # (layer, side, units, "mean" | "zero")


def _check_cache(cache: Any, owner: str) -> None:
    if cache is not None and not isinstance(cache, ActivationCache):
        raise TypeError(f"{owner}: cache must be an ActivationCache or None.")


def _check_targets(adapter: MLPModelAdapter, tokens: torch.Tensor, ids: Any, name: str, owner: str):
    if not isinstance(ids, torch.Tensor):
        try:
            ids = torch.as_tensor(ids)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{owner}: {name} must be integer token ids; got {ids!r}.") from None
    if ids.dtype == torch.bool or ids.is_complex() or ids.numel() == 0:
        raise TypeError(f"{owner}: {name} must be non-empty integer token ids.")
    if ids.is_floating_point():
        raise TypeError(f"{owner}: {name} must be integer token ids; got dtype {ids.dtype}.")
    if ids.dim() == 1 and tokens.shape[0] == 1:
        ids = ids[None]
    if tuple(ids.shape) != tuple(tokens.shape):
        raise ValueError(
            f"{owner}: {name} must have the shape of tokens {tuple(tokens.shape)}; "
            f"got {tuple(ids.shape)}."
        )
    if int(ids.min()) < 0 or int(ids.max()) >= adapter.vocab_size:
        raise ValueError(f"{owner}: {name} must be in [0, {adapter.vocab_size - 1}] (vocab_size).")
    return ids.long()


def target_directions(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    target_ids: Any,
    contrast_ids: Any = None,
    *,
    owner: str = "target_directions",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(tokens, w, b)``: validated ``(B, T)`` tokens, ``w = W_U[:, y] (− W_U[:, y′])`` per
    position ``(B, T, d)`` and the matching unembedding bias ``(B, T)``."""
    check_adapter(adapter, owner)
    adapter.require_lm_head(owner)
    tokens = adapter.check_tokens(tokens, owner)
    y = _check_targets(adapter, tokens, target_ids, "target_ids", owner)
    w, b = adapter.W_U.T[y], adapter.b_U[y]  # (B, T, d), (B, T)
    if contrast_ids is not None:
        y2 = _check_targets(adapter, tokens, contrast_ids, "contrast_ids", owner)
        w, b = w - adapter.W_U.T[y2], b - adapter.b_U[y2]
    return tokens, w, b


def _squeeze(x: torch.Tensor, batched: bool) -> torch.Tensor:
    return x if batched else x[0]


def dla(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    target_ids: Any,
    contrast_ids: Any = None,
    *,
    cache: ActivationCache | None = None,
) -> dict[str, torch.Tensor]:
    """Direct logit attribution of every component toward ``y`` (optionally ``y − y′``).

    Components: ``"embed"`` (token + position; gated decoders: token), ``"L{l}H{h}"``
    (attention head), ``"attn{l}.b"`` (attention output bias, where the model has one),
    ``"mlp{l}"`` (MLP with its bias) and ``"b_U"``; each is ``⟨write, w_y⟩ / σ_f`` with the write
    centred for LayerNorm models. Their sum is the logit (difference) in the adapter's frame.

    Returns
    -------
    dict
        Name -> ``(T,)`` (or ``(B, T)`` for batched tokens).

    Raises
    ------
    ValueError
        For a BERT adapter (no LM head) or targets whose shape differs from ``tokens``.

    Examples
    --------
    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from icml26.nana import from_hf_gpt2
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=1,
    ...                                              n_head=2, n_positions=16)))
    >>> toks = torch.tensor([1, 2, 3]); y = torch.tensor([4, 5, 6])
    >>> parts = dla(ad, toks, y)
    >>> logit = ad.logits(toks)[0].gather(1, y[:, None])[:, 0]
    >>> bool(torch.allclose(sum(parts.values()), logit))
    True
    """
    owner = "dla"
    _check_cache(cache, owner)
    batched = isinstance(tokens, torch.Tensor) and tokens.dim() == 2
    tokens, w, b = target_directions(adapter, tokens, target_ids, contrast_ids, owner=owner)
    cache = cache or adapter.run_with_cache(tokens)
    sigma = cache.sigma_f  # (B, T)

    def attribute(write: torch.Tensor) -> torch.Tensor:  # write (B, T, d)
        return _squeeze((adapter.centre(write) * w).sum(-1) / sigma, batched)

    parts = {"embed": attribute(cache.embed)}
    for layer in range(adapter.n_layers):
        heads, b_O = adapter.head_writes(cache, layer)  # (B, T, H, d), (d,) or None
        for h in range(adapter.n_heads):
            parts[f"L{layer}H{h}"] = attribute(heads[..., h, :])
        if b_O is not None:
            parts[f"attn{layer}.b"] = attribute(b_O.expand_as(cache.attn_out[layer]))
        parts[f"mlp{layer}"] = attribute(cache.mlp_out[layer])
    parts["b_U"] = _squeeze(b, batched)
    return parts


def subspace_contributions(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    layer: int,
    target_ids: Any,
    deus: DEUSet,
    contrast_ids: Any = None,
    *,
    cache: ActivationCache | None = None,
) -> torch.Tensor:
    """SCA: ``α_k(x_t) ⟨v_k, w_y⟩ / σ_f(t)`` for every unit of a write-side set.

    Parameters
    ----------
    adapter
        A GPT-2 adapter.
    tokens
        ``(T,)`` or ``(B, T)`` ids.
    layer
        The MLP whose units ``deus`` holds.
    target_ids, contrast_ids
        Target ``y`` (and optional contrast ``y′``) per position, shaped like ``tokens``.
    deus
        Write-side units of ``layer`` (an SVD, neuron or random basis).
    cache
        A cache of ``tokens`` from :meth:`MLPModelAdapter.run_with_cache` (computed if absent).

    Returns
    -------
    torch.Tensor
        ``(T, r)`` (``(B, T, r)`` for batched tokens). Row sums plus ``⟨b_out, w_y⟩/σ_f`` equal
        the MLP's DLA.

    Raises
    ------
    ValueError
        For a BERT adapter, a layer out of range, read-side units or mismatched shapes.
    """
    owner = "subspace_contributions"
    check_adapter(adapter, owner)
    _check_cache(cache, owner)
    layer = adapter.check_layer(layer, owner)
    check_deus(deus, owner, adapter)
    if not isinstance(deus, DEUSet):
        raise TypeError(f"{owner}: deus must be a DEUSet; got {type(deus).__name__}.")
    if deus.side != "out" or deus.layer != layer:
        raise ValueError(
            f"{owner}: deus must be write-side units of layer {layer}; got side={deus.side!r}, "
            f"layer={deus.layer}."
        )
    batched = isinstance(tokens, torch.Tensor) and tokens.dim() == 2
    tokens, w, _ = target_directions(adapter, tokens, target_ids, contrast_ids, owner=owner)
    cache = cache or adapter.run_with_cache(tokens)
    alpha = deus.coefficients(cache.acts[layer])  # (B, T, r)
    readout = w.to(deus.effectors.dtype) @ deus.effectors.T  # (B, T, r): ⟨v_k, w_y⟩
    return _squeeze(alpha * readout / cache.sigma_f[..., None], batched)


def mean_coefficients(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    deus: Mapping[tuple[int, str], DEUSet],
    *,
    cache: ActivationCache | None = None,
) -> dict[tuple[int, str], torch.Tensor]:
    """``{(layer, side): ᾱ}``: each unit's mean coefficient over all positions of ``tokens``.

    The reference means for mean-ablation (:func:`ablate`). ``cache``: a cache of ``tokens``
    from :meth:`MLPModelAdapter.run_with_cache` (computed if absent), so that several unit sets
    of one layer (DEUs, neurons) share one forward pass.
    """
    owner = "mean_coefficients"
    check_adapter(adapter, owner)
    _check_cache(cache, owner)
    tokens = adapter.check_tokens(tokens, owner)
    if not isinstance(deus, Mapping):
        raise TypeError(f"{owner}: deus must map (layer, side) to a DEUSet; got {deus!r}.")
    for key, units in deus.items():
        check_deus(units, owner, adapter, name=f"deus[{key!r}]")
    cache = cache or adapter.run_with_cache(tokens)
    out = {}
    for (layer, side), units in deus.items():
        inputs = cache.acts[layer] if side == "out" else cache.normed[layer]
        out[(layer, side)] = units.coefficients(inputs).reshape(-1, units.rank).mean(0)
    return out


def _check_edits(adapter, edits, ref_means, deus, owner):
    if isinstance(edits, tuple) and edits and isinstance(edits[0], int):
        edits = [edits]
    checked = []
    for edit in edits:
        if not (isinstance(edit, tuple | list) and len(edit) == 4):
            raise ValueError(
                f"{owner}: each edit must be (layer, side, units, mode); got {edit!r}."
            )
        layer, side, units, mode = edit
        layer = adapter.check_layer(layer, owner)
        check_one_of("side", side, ("in", "out"), owner=owner)
        check_one_of("mode", mode, ("mean", "zero"), owner=owner)
        units_set = deus.get((layer, side)) if deus is not None else None
        if units_set is None:
            units_set = decompose_mlp(adapter, layer, side)
        index = torch.as_tensor(list(units), dtype=torch.long)
        if index.numel() and (int(index.min()) < 0 or int(index.max()) >= units_set.rank):
            raise ValueError(f"{owner}: units must be in [0, {units_set.rank - 1}]; got {units!r}.")
        mean = None
        if mode == "mean":
            if ref_means is None or (layer, side) not in ref_means:
                raise ValueError(
                    f"{owner}: mode 'mean' needs ref_means[({layer}, {side!r})] "
                    "(see mean_coefficients)."
                )
            mean = ref_means[(layer, side)][index]
        checked.append((layer, side, units_set.select(index.tolist()), mean))
    return checked


def _delta(units: DEUSet, inputs: torch.Tensor, mean: torch.Tensor | None) -> torch.Tensor:
    """``Σ_k (α_k − ᾱ_k) eff_k`` over the selected units (``ᾱ = 0`` for zero-ablation)."""
    alpha = units.coefficients(inputs)  # (B, T, k)
    if mean is not None:
        alpha = alpha - mean.to(alpha.dtype)
    return alpha @ units.effectors  # (B, T, n_out)


def ablate(
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    edits: Sequence[ModelEdit],
    ref_means: Mapping[tuple[int, str], torch.Tensor] | None = None,
    effect: str = "total",
    *,
    deus: Mapping[tuple[int, str], DEUSet] | None = None,
) -> torch.Tensor:
    """Logits after ablating units: ``out ← out − Σ_k (α_k − ᾱ_k) v_k`` (``ᾱ = 0`` for ``"zero"``).

    Parameters
    ----------
    adapter
        A GPT-2 adapter.
    tokens
        ``(T,)`` or ``(B, T)`` ids.
    edits
        ``[(layer, side, units, mode), ...]`` with ``side`` ``"out"``/``"in"``, ``units`` indices
        into that MLP's units and ``mode`` ``"mean"`` or ``"zero"``.
    ref_means
        ``{(layer, side): ᾱ}`` from :func:`mean_coefficients`; required for ``"mean"``.
    effect
        ``"total"`` re-runs the model; ``"direct"`` freezes downstream components and ``σ_f``:
        ``logits + (Δout) W_U / σ_f``.
    deus
        ``{(layer, side): DEUSet}`` giving the units (by default ``decompose_mlp``'s).

    Returns
    -------
    torch.Tensor
        ``(T, vocab)`` (or ``(B, T, vocab)``) logits in the adapter's frame.

    Raises
    ------
    ValueError
        For an unknown side, mode or effect, ``"mean"`` without ``ref_means``, or BERT.
    """
    owner = "ablate"
    check_adapter(adapter, owner)
    adapter.require_lm_head(owner)
    if deus is not None and not isinstance(deus, Mapping):
        raise TypeError(f"{owner}: deus must map (layer, side) to a DEUSet or be None.")
    if ref_means is not None and not isinstance(ref_means, Mapping):
        raise TypeError(f"{owner}: ref_means must map (layer, side) to means or be None.")
    check_one_of("effect", effect, ("direct", "total"), owner=owner)
    batched = isinstance(tokens, torch.Tensor) and tokens.dim() == 2
    tokens = adapter.check_tokens(tokens, owner)
    checked = _check_edits(adapter, edits, ref_means, deus, owner)
    if effect == "direct":
        cache = adapter.run_with_cache(tokens)
        delta_out = torch.zeros_like(cache.resid_final)
        for layer, side, units, mean in checked:
            if side == "out":
                delta_out = delta_out - _delta(units, cache.acts[layer], mean)
            else:  # re-run the MLP on the edited pre-activation (nonlinear, exact)
                weights = adapter.mlp(layer)
                pre = cache.pre[layer] - _delta(units, cache.normed[layer], mean)
                acts = adapter.hidden(layer, cache.normed[layer], pre)
                delta_out = delta_out + (acts - cache.acts[layer]) @ weights.W_out
        delta_out = adapter.centre(delta_out)
        logits = cache.logits + (delta_out / cache.sigma_f[..., None]) @ adapter.W_U
        return _squeeze(logits, batched)
    write_edits: dict[int, list] = {}
    read_edits: dict[int, list] = {}
    for layer, side, units, mean in checked:
        (write_edits if side == "out" else read_edits).setdefault(layer, []).append((units, mean))

    def combine(groups):
        def edit(inputs: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
            for units, mean in groups:
                value = value - _delta(units, inputs, mean).to(value.dtype)
            return value

        return edit

    logits = adapter.logits(
        tokens,
        write_edits={k: combine(v) for k, v in write_edits.items()},
        read_edits={k: combine(v) for k, v in read_edits.items()},
    )
    return _squeeze(logits, batched)


def coverage_size(contributions: torch.Tensor, coverage: float = 0.8) -> int:
    """``K_ρ``: the fewest units, taken by decreasing signed contribution, whose cumulative sum
    reaches ``ρ · Σ contributions`` (all units when the total is not positive).

    Examples
    --------
    >>> import torch
    >>> coverage_size(torch.tensor([0.5, 3.0, 1.0, -0.5]), 0.8)
    2
    """
    coverage = check_in_interval(
        "coverage", coverage, low=0.0, high=1.0, closed="right", owner="coverage_size"
    )
    check_tensor("contributions", contributions, finite=True, owner="coverage_size")
    values = contributions.reshape(-1)
    if values.numel() == 0:
        raise ValueError("coverage_size: contributions is empty; there are no units to cover.")
    total = float(values.sum())
    if total <= 0:
        return int(values.numel())
    cumulative = torch.sort(values, descending=True).values.cumsum(0)
    reached = torch.nonzero(cumulative >= coverage * total)
    return int(reached[0, 0]) + 1 if reached.numel() else int(values.numel())


@dataclass(frozen=True)
class Pathway:
    """A dominant pathway: units ``(layer, k)`` by decreasing mean SCA, and what they cover."""

    units: list[tuple[int, int]]
    contributions: list[float]  # mean SCA of each unit, same order
    total: float  # Σ over all units of the mean SCA toward the targets
    coverage: float  # the ρ asked for
    covered: float  # fraction of ``total`` the units reach

    @property
    def size(self) -> int:
        """``K_ρ``."""
        return len(self.units)


def dominant_pathway(
    adapter: MLPModelAdapter,
    prompts: Sequence[torch.Tensor],
    targets: Sequence[int] | torch.Tensor,
    coverage: float = 0.8,
    *,
    deus: Mapping[tuple[int, str], DEUSet] | None = None,
    layers: Sequence[int] | None = None,
) -> Pathway:
    """The smallest set of write-side units whose mean SCA (last position) covers ``ρ`` of the
    summed unit contributions toward each prompt's target (spec §2.5 step 7).

    Parameters
    ----------
    prompts
        Token-id sequences; the prediction at each one's last position is attributed.
    targets
        One target id per prompt.
    coverage
        ``ρ`` in ``(0, 1]``.
    deus, layers
        Write-side units per ``(layer, "out")`` (default: decomposed) and the layers searched
        (default: all).

    Returns
    -------
    Pathway
    """
    owner = "dominant_pathway"
    check_adapter(adapter, owner)
    if isinstance(prompts, torch.Tensor | str) or not isinstance(prompts, Sequence):
        raise TypeError(f"{owner}: prompts must be a list of token-id tensors; got {prompts!r}.")
    if deus is not None and not isinstance(deus, Mapping):
        raise TypeError(f"{owner}: deus must map (layer, 'out') to a DEUSet or be None.")
    coverage = check_in_interval(
        "coverage", coverage, low=0.0, high=1.0, closed="right", owner=owner
    )
    adapter.require_lm_head(owner)
    targets = torch.as_tensor(targets).reshape(-1)
    if len(prompts) == 0 or len(prompts) != targets.numel():
        raise ValueError(
            f"{owner}: need one target per prompt and at least one prompt; got {len(prompts)} "
            f"prompts and {targets.numel()} targets."
        )
    layers = (
        list(range(adapter.n_layers))
        if layers is None
        else [adapter.check_layer(layer, owner) for layer in layers]
    )
    units = {
        layer: (deus or {}).get((layer, "out")) or decompose_mlp(adapter, layer, "out")
        for layer in layers
    }
    sums = {layer: torch.zeros(units[layer].rank, dtype=torch.float64) for layer in layers}
    for prompt, target in zip(prompts, targets.tolist(), strict=True):
        tokens = adapter.check_tokens(prompt, owner)
        y = torch.full_like(tokens, target)
        cache = adapter.run_with_cache(tokens)
        for layer in layers:
            sca = subspace_contributions(adapter, tokens, layer, y, units[layer], cache=cache)
            sums[layer] += sca[0, -1].double()
    mean = torch.cat([sums[layer] / len(prompts) for layer in layers])
    labels = [(layer, k) for layer in layers for k in range(units[layer].rank)]
    k = coverage_size(mean, coverage)
    order = torch.argsort(mean, descending=True)[:k].tolist()
    total = float(mean.sum())
    chosen = [float(mean[i]) for i in order]
    covered = sum(chosen) / total if total > 0 else float("nan")
    return Pathway([labels[i] for i in order], chosen, total, coverage, covered)


def sca_identity_error(adapter: MLPModelAdapter, tokens: torch.Tensor, target_ids: Any) -> float:
    """Worst violation of ``Σ_k SCA_k + ⟨b_out, w_y⟩/σ_f = MLP DLA`` over every layer.

    Returned relative to the largest ``|DLA|`` of an MLP (spec §5, N1c: <= 1e-5); the identity
    holds exactly, so this is round-off.

    Examples
    --------
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from icml26.nana import from_hf_gpt2
    >>> ad = from_hf_gpt2(GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=16, n_layer=2,
    ...                                              n_head=2, n_positions=16)))
    >>> sca_identity_error(ad, torch.tensor([[1, 2, 3]]), torch.tensor([[4, 5, 6]])) < 1e-10
    True
    """
    owner = "sca_identity_error"
    tokens, w, _ = target_directions(adapter, tokens, target_ids, owner=owner)
    cache = adapter.run_with_cache(tokens)
    parts = dla(adapter, tokens, target_ids, cache=cache)
    worst, scale = 0.0, 0.0
    for layer in range(adapter.n_layers):
        deus = decompose_mlp(adapter, layer, "out")
        sca = subspace_contributions(adapter, tokens, layer, target_ids, deus, cache=cache)
        bias = (w @ adapter.mlp(layer).b_out) / cache.sigma_f  # (B, T)
        worst = max(worst, float((sca.sum(-1) + bias - parts[f"mlp{layer}"]).abs().max()))
        scale = max(scale, float(parts[f"mlp{layer}"].abs().max()))
    return worst / scale
