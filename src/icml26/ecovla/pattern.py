"""Structured sparsity patterns and physical slicing of linear layers (EcoVLA §2.1, §4.3).

A pattern keeps, in every decoder block l, a set of MLP intermediate channels C^l (rows of W_gate
and W_up, columns of W_down) and a set of query heads (rows of W_Q, columns of W_O; W_K and W_V
rows of the KV groups that keep a head). Slicing is physical: the retained rows/columns are
gathered into smaller contiguous ``nn.Linear`` layers, so a sparse step does less arithmetic; masks
alone would not (the Wanda issue tracker's "no real speed-up" reports).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from icml26.core.validation import check_positive_int

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = ["SparsityPattern", "slice_linear"]


def _check_indices(name: str, idx: object, owner: str, size: int | None = None) -> torch.Tensor:
    """A 1-D integer tensor of distinct indices in [0, size), returned sorted (int64)."""
    import torch

    if not isinstance(idx, torch.Tensor):
        raise TypeError(
            f"{owner}: {name} must be a 1-D integer torch.Tensor; got {type(idx).__name__}."
        )
    if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == torch.bool:
        raise TypeError(f"{owner}: {name} must hold integer indices; got dtype {idx.dtype}.")
    if idx.ndim != 1 or idx.numel() == 0:
        raise ValueError(
            f"{owner}: {name} must be 1-D and non-empty; got shape {tuple(idx.shape)}."
        )
    idx = idx.detach().to(torch.long).cpu()
    low, high = int(idx.min()), int(idx.max())
    if low < 0 or (size is not None and high >= size):
        bound = f"[0, {size})" if size is not None else ">= 0"
        raise ValueError(f"{owner}: {name} must be in {bound}; got indices from {low} to {high}.")
    ordered = torch.sort(idx).values
    if bool((ordered[1:] == ordered[:-1]).any()):
        raise ValueError(f"{owner}: {name} must not repeat an index; got duplicates.")
    return ordered


@final
@dataclass(frozen=True, eq=False)
class SparsityPattern:
    """Per-layer kept MLP channels and kept query heads of a decoder stack.

    Parameters
    ----------
    mlp
        One sorted LongTensor of kept intermediate channels per layer.
    heads
        One sorted LongTensor of kept query heads per layer (same number of layers).

    Examples
    --------
    >>> import torch
    >>> a = SparsityPattern((torch.tensor([0, 1, 2]),), (torch.tensor([0, 1]),))
    >>> b = SparsityPattern((torch.tensor([1, 2, 3]),), (torch.tensor([0, 1]),))
    >>> a.jaccard(b)  # (2/4 + 2/2) / 2
    0.75
    """

    mlp: tuple[torch.Tensor, ...]
    heads: tuple[torch.Tensor, ...]
    key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = "SparsityPattern"
        for name in ("mlp", "heads"):
            value = getattr(self, name)
            if not isinstance(value, Sequence) or isinstance(value, str) or not len(value):
                raise TypeError(
                    f"{owner}: {name} must be a non-empty sequence of index tensors "
                    f"(one per layer); got {type(value).__name__}."
                )
            checked = tuple(_check_indices(f"{name}[{i}]", v, owner) for i, v in enumerate(value))
            object.__setattr__(self, name, checked)
        if len(self.mlp) != len(self.heads):
            raise ValueError(
                f"{owner}: mlp and heads must have one entry per layer each; got "
                f"{len(self.mlp)} and {len(self.heads)}."
            )
        digest = hashlib.sha1()
        for idx in (*self.mlp, *self.heads):
            digest.update(idx.numpy().tobytes() + b"|")
        object.__setattr__(self, "key", digest.hexdigest())

    @property
    def n_layers(self) -> int:
        """Number of decoder layers the pattern covers."""
        return len(self.mlp)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparsityPattern) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def jaccard(self, other: SparsityPattern) -> float:
        """Mean Jaccard overlap |A ∩ B| / |A ∪ B| over layers and both module kinds."""
        if not isinstance(other, SparsityPattern):
            raise TypeError(
                f"SparsityPattern.jaccard: other must be a SparsityPattern; got "
                f"{type(other).__name__}."
            )
        if other.n_layers != self.n_layers:
            raise ValueError(
                f"SparsityPattern.jaccard: other must have {self.n_layers} layers; "
                f"got {other.n_layers}."
            )
        overlaps = []
        for a, b in zip((*self.mlp, *self.heads), (*other.mlp, *other.heads), strict=True):
            sa, sb = set(a.tolist()), set(b.tolist())
            overlaps.append(len(sa & sb) / len(sa | sb))
        return sum(overlaps) / len(overlaps)

    def kept_fraction(self, d_ff: int, n_heads: int) -> tuple[float, float]:
        """Mean kept fraction of MLP channels and of heads, given the dense sizes."""
        owner = "SparsityPattern.kept_fraction"
        d_ff = check_positive_int("d_ff", d_ff, owner=owner)
        n_heads = check_positive_int("n_heads", n_heads, owner=owner)
        mlp = sum(len(m) for m in self.mlp) / (d_ff * self.n_layers)
        heads = sum(len(h) for h in self.heads) / (n_heads * self.n_layers)
        return mlp, heads


def slice_linear(
    linear: nn.Linear, rows: torch.Tensor | None = None, cols: torch.Tensor | None = None
) -> nn.Linear:
    """A smaller ``nn.Linear`` holding only the given output rows and input columns.

    y' = W[rows][:, cols] x' + b[rows]: the retained weights are copied into a new contiguous
    matrix (the layer's dtype and device), so the result computes exactly the kept outputs of the
    dense layer fed with the kept inputs (the dropped inputs being zero).

    Parameters
    ----------
    linear
        The dense layer, weight shape ``(out_features, in_features)``.
    rows, cols
        Distinct output / input indices to keep (1-D integer tensors); ``None`` keeps all.

    Returns
    -------
    nn.Linear
        A new layer, not sharing storage with ``linear``, with gradients off.

    Raises
    ------
    ValueError
        If an index is out of range or repeated, or an index tensor is empty or not 1-D.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> dense = nn.Linear(4, 3)
    >>> small = slice_linear(dense, rows=torch.tensor([0, 2]), cols=torch.tensor([1, 3]))
    >>> tuple(small.weight.shape)
    (2, 2)
    >>> x = torch.tensor([[0.0, 1.0, 0.0, 2.0]])
    >>> bool(torch.allclose(small(x[:, [1, 3]]), dense(x)[:, [0, 2]]))
    True
    """
    import torch
    from torch import nn

    if not isinstance(linear, nn.Linear):
        raise TypeError(
            f"slice_linear: linear must be a torch.nn.Linear; got {type(linear).__name__}."
        )
    weight = linear.weight.detach()
    if rows is not None:
        rows = _check_indices("rows", rows, "slice_linear", weight.shape[0]).to(weight.device)
        weight = weight.index_select(0, rows)
    if cols is not None:
        cols = _check_indices("cols", cols, "slice_linear", weight.shape[1]).to(weight.device)
        weight = weight.index_select(1, cols)
    bias = linear.bias
    out = torch.nn.utils.skip_init(  # no random init: the weights are copied right away
        nn.Linear,
        weight.shape[1],
        weight.shape[0],
        bias=bias is not None,
        device=weight.device,
        dtype=weight.dtype,
    )
    with torch.no_grad():
        out.weight.copy_(weight)
        if bias is not None:
            out.bias.copy_(bias.detach() if rows is None else bias.detach().index_select(0, rows))
    return out.requires_grad_(False)
