"""Training-free readouts of units (spec §2.4): vocabulary lenses and top-activating contexts.

* Effector lens: ``scores = v_k W_U`` (processed ``W_U``); the top (and bottom) tokens.
* Detector lens (read side): ``W_E p_k`` (exact meaning only at layer 0) or ``p_kᵀ W_U``.
* Data lens: ``α_k`` over a corpus, and the contexts where it is largest.
* Coherence (N6): mean pairwise cosine similarity of a token set's embeddings.

Deviations: for BERT the lens ``W_U`` is the tied word-embedding matrix (no LM head), an
approximation the spec accepts; the coherence score is the spec's inferred N6 metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from icml26.core import check_one_of, check_positive_int, check_tensor
from icml26.nana.decompose import DEUSet, check_deus
from icml26.nana.models import MLPModelAdapter, check_adapter

__all__ = [
    "Context",
    "UnitTokens",
    "detector_tokens",
    "effector_tokens",
    "token_coherence",
    "top_activating_contexts",
]


@dataclass(frozen=True)
class UnitTokens:
    """The highest- (and lowest-) scoring tokens of one unit's lens, best first."""

    unit: int
    top_ids: list[int]
    top_scores: list[float]
    bottom_ids: list[int]
    bottom_scores: list[float]
    top_tokens: list[str]
    bottom_tokens: list[str]


def _units(units: Iterable[int] | None, deus: DEUSet, owner: str) -> list[int]:
    if units is not None and (isinstance(units, str) or not isinstance(units, Iterable)):
        raise TypeError(f"{owner}: units must be a list of unit indices or None; got {units!r}.")
    chosen = list(range(deus.rank)) if units is None else list(units)
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in chosen):
        raise TypeError(f"{owner}: units must hold integer indices; got {chosen!r}.")
    bad = [k for k in chosen if not 0 <= k < deus.rank]
    if bad:
        raise ValueError(f"{owner}: units must be in [0, {deus.rank - 1}]; got {bad}.")
    return chosen


def _check_readout(deus: Any, adapter: Any, tokenizer: Any, both_signs: Any, owner: str) -> None:
    check_adapter(adapter, owner)
    check_deus(deus, owner, adapter)
    if tokenizer is not None and not callable(getattr(tokenizer, "decode", None)):
        raise TypeError(f"{owner}: tokenizer must be None or have a decode method.")
    if not isinstance(both_signs, bool):
        raise TypeError(f"{owner}: both_signs must be a bool; got {both_signs!r}.")


def _decode(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    if tokenizer is None:
        return [str(i) for i in ids]
    return [tokenizer.decode([i]) for i in ids]


def _rank(scores: torch.Tensor, units, tokenizer, top: int, both_signs: bool) -> list[UnitTokens]:
    top = min(top, scores.shape[1])
    out = []
    for row, unit in zip(scores, units, strict=True):
        hi = torch.topk(row, top)
        lo = torch.topk(-row, top) if both_signs else None
        out.append(
            UnitTokens(
                unit=unit,
                top_ids=hi.indices.tolist(),
                top_scores=hi.values.tolist(),
                bottom_ids=lo.indices.tolist() if lo is not None else [],
                bottom_scores=(-lo.values).tolist() if lo is not None else [],
                top_tokens=_decode(tokenizer, hi.indices.tolist()),
                bottom_tokens=_decode(tokenizer, lo.indices.tolist()) if lo is not None else [],
            )
        )
    return out


def effector_tokens(
    deus: DEUSet,
    adapter: MLPModelAdapter,
    tokenizer: Any = None,
    units: Iterable[int] | None = None,
    top: int = 20,
    both_signs: bool = True,
) -> list[UnitTokens]:
    """Tokens each write-side effector promotes (``v_k W_U``) and, with ``both_signs``, suppresses.

    Parameters
    ----------
    deus
        Write-side units.
    adapter
        Gives ``W_U``.
    tokenizer
        Decodes ids (``None``: ids as strings).
    units
        Unit indices (default: all).
    top
        Tokens per sign.
    both_signs
        Also report the lowest-scoring tokens.

    Returns
    -------
    list of UnitTokens

    Raises
    ------
    ValueError
        For read-side units (use :func:`detector_tokens`) or a unit index out of range.
    """
    owner = "effector_tokens"
    _check_readout(deus, adapter, tokenizer, both_signs, owner)
    if deus.side != "out":
        raise ValueError(f"{owner}: needs write-side units (side 'out'); got side {deus.side!r}.")
    top = check_positive_int("top", top, owner=owner)
    chosen = _units(units, deus, owner)
    scores = deus.effectors[chosen] @ adapter.W_U.to(deus.effectors.dtype)  # (k, vocab)
    return _rank(scores, chosen, tokenizer, top, both_signs)


def detector_tokens(
    deus: DEUSet,
    adapter: MLPModelAdapter,
    tokenizer: Any = None,
    units: Iterable[int] | None = None,
    top: int = 20,
    both_signs: bool = True,
    lens: str = "embed",
) -> list[UnitTokens]:
    """Tokens a read-side detector ``p_k`` responds to: ``W_E p_k`` (``lens="embed"``) or
    ``p_kᵀ W_U`` (``lens="unembed"``, Millidge & Black).

    Raises
    ------
    ValueError
        For write-side units (their detectors live in hidden space) or an unknown lens.
    """
    owner = "detector_tokens"
    _check_readout(deus, adapter, tokenizer, both_signs, owner)
    if deus.side != "in":
        raise ValueError(f"{owner}: needs read-side units (side 'in'); got side {deus.side!r}.")
    check_one_of("lens", lens, ("embed", "unembed"), owner=owner)
    top = check_positive_int("top", top, owner=owner)
    chosen = _units(units, deus, owner)
    dets = deus.detectors[chosen]  # (k, d)
    matrix = adapter.W_E.T if lens == "embed" else adapter.W_U
    scores = dets @ matrix.to(dets.dtype)  # (k, vocab)
    return _rank(scores, chosen, tokenizer, top, both_signs)


@dataclass(frozen=True)
class Context:
    """One activating context: where, how strongly, and the tokens up to that position."""

    unit: int
    sequence: int
    position: int
    alpha: float
    token_ids: list[int]
    text: str


def top_activating_contexts(
    deus: DEUSet,
    adapter: MLPModelAdapter,
    tokens: torch.Tensor,
    units: Iterable[int] | None = None,
    top: int = 10,
    *,
    window: int = 8,
    tokenizer: Any = None,
) -> dict[int, list[Context]]:
    """The ``top`` positions of ``tokens`` with the largest ``α_k`` per unit, with their contexts.

    Returns
    -------
    dict
        unit -> list of :class:`Context`, largest ``α_k`` first.
    """
    owner = "top_activating_contexts"
    _check_readout(deus, adapter, tokenizer, True, owner)
    tokens = adapter.check_tokens(tokens, owner)
    top = check_positive_int("top", top, owner=owner)
    window = check_positive_int("window", window, owner=owner)
    chosen = _units(units, deus, owner)
    cache = adapter.run_with_cache(tokens)
    inputs = cache.acts[deus.layer] if deus.side == "out" else cache.normed[deus.layer]
    alpha = deus.coefficients(inputs)[..., chosen]  # (B, T, k)
    T = tokens.shape[1]
    out: dict[int, list[Context]] = {}
    for j, unit in enumerate(chosen):
        flat = alpha[..., j].reshape(-1)
        best = torch.topk(flat, min(top, flat.numel()))
        contexts = []
        for value, index in zip(best.values.tolist(), best.indices.tolist(), strict=True):
            b, t = divmod(index, T)
            ids = tokens[b, max(0, t - window + 1) : t + 1].tolist()
            text = tokenizer.decode(ids) if tokenizer is not None else " ".join(map(str, ids))
            contexts.append(Context(unit, b, t, value, ids, text))
        out[unit] = contexts
    return out


def token_coherence(token_ids: Sequence[int], embeddings: torch.Tensor) -> float:
    """Mean pairwise cosine similarity of the rows ``embeddings[token_ids]`` (``i < j``)."""
    owner = "token_coherence"
    check_tensor("embeddings", embeddings, ndim=2, owner=owner)
    if isinstance(token_ids, str) or not isinstance(token_ids, Iterable):
        raise TypeError(f"{owner}: token_ids must be a list of token ids; got {token_ids!r}.")
    token_ids = list(token_ids)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in token_ids):
        raise TypeError(f"{owner}: token_ids must hold integer ids; got {token_ids!r}.")
    if len(token_ids) < 2:
        raise ValueError(f"{owner}: token_ids must hold at least 2 tokens; got {len(token_ids)}.")
    if not all(0 <= i < embeddings.shape[0] for i in token_ids):
        raise ValueError(
            f"{owner}: token_ids must be rows of embeddings, in [0, {len(embeddings)})."
        )
    ids = torch.as_tensor(token_ids, dtype=torch.long)
    rows = embeddings[ids].double()
    rows = rows / rows.norm(dim=1, keepdim=True).clamp_min(1e-300)
    sim = rows @ rows.T  # (n, n)
    n = ids.numel()
    return float((sim.sum() - sim.diagonal().sum()) / (n * (n - 1)))
