"""Client side: local SGD on a sub-model while recording firing frequencies (spec §2.6, §2.3).

E local epochs of mini-batch SGD (cross-entropy) on the client's sub-model; an
:class:`~icml26.spinefl.activation.ActivationRecorder` counts, over every training forward pass,
how often each kept neuron fired. FjORD-lite's ordered dropout draws, before every step, one of
the allowed nested widths and zeroes the hidden units beyond it.

Deviations: FjORD-lite masks the units beyond the drawn width (their outputs are zero, so their
gradients are zero) instead of building a smaller network per step; with momentum > 0 masked
units still move by their momentum buffer. No HeteroFL masked cross-entropy (off in the spec too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icml26.core import check_in_interval, check_positive_int, torch_generator
from icml26.spinefl.activation import ActivationRecorder
from icml26.spinefl.models import AbstractSliceableModel

__all__ = ["ClientUpdate", "evaluate_accuracy", "local_train"]


@dataclass(frozen=True)
class ClientUpdate:
    """What a client returns after one round.

    Attributes
    ----------
    state
        The trained sub-model parameters by name (sub-model shapes).
    n_samples
        n_c, the client's number of training samples.
    freq
        Per prunable layer, the firing frequency of each kept neuron (sub-model order, i.e.
        aligned with the sorted index set).
    loss
        Mean training loss over the round's steps.
    """

    state: dict[str, torch.Tensor]
    n_samples: int
    freq: dict[str, np.ndarray]
    loss: float


def _as_tensors(
    X: object, y: object, dtype: torch.dtype, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    X_a = X.detach().cpu().numpy() if isinstance(X, torch.Tensor) else X
    y_a = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else y
    try:
        X_a, y_a = np.asarray(X_a), np.asarray(y_a)
    except ValueError:  # ragged lists
        raise TypeError(f"{owner}: X and y must be arrays; got ragged sequences.") from None
    if X_a.dtype.kind not in "biuf" or X_a.ndim < 1:
        raise TypeError(
            f"{owner}: X must be a numeric array (n, ...); got {X_a.dtype}, shape {X_a.shape}."
        )
    if y_a.dtype.kind not in "iu" and not (y_a.dtype.kind == "b" and y_a.size == 0):
        raise TypeError(f"{owner}: y must hold integer labels; got dtype {y_a.dtype}.")
    # copies: arrays shipped to a Ray actor are read-only, which torch does not support
    X_t = torch.tensor(X_a, dtype=dtype)
    y_t = torch.tensor(y_a, dtype=torch.long)
    if y_t.dim() != 1 or X_t.shape[0] != y_t.shape[0]:
        raise ValueError(
            f"{owner}: X and y must have the same number of samples and y must be 1-D; "
            f"got shapes {tuple(X_t.shape)} and {tuple(y_t.shape)}."
        )
    if X_t.shape[0] == 0:
        raise ValueError(f"{owner}: X and y must hold at least one sample; got 0.")
    return X_t, y_t


def _width_masks(
    model: AbstractSliceableModel, current: dict[str, int]
) -> list[torch.utils.hooks.RemovableHandle]:
    """Forward hooks zeroing every unit of a prunable layer beyond ``current[layer]``."""

    def hook(layer: str):
        def mask(module: nn.Module, inputs: object, output: torch.Tensor) -> torch.Tensor:
            keep = torch.zeros(output.shape[1], dtype=output.dtype)
            keep[: current[layer]] = 1.0
            shape = (1, -1) + (1,) * (output.dim() - 2)
            return output * keep.view(shape)

        return mask

    return [
        module.register_forward_hook(hook(layer))
        for layer, module in model.activation_modules().items()
    ]


def _n_classes(model: AbstractSliceableModel) -> int | None:
    """The number of classes of a package model (None for a model that does not say)."""
    if hasattr(model, "n_classes"):
        return int(model.n_classes)
    dims = getattr(model, "dims", None)
    return int(dims[-1]) if dims else None


def _masked_step(
    model: AbstractSliceableModel,
    optimizer: torch.optim.Optimizer,
    params: Mapping[str, torch.Tensor],
    current: Mapping[str, int],
    sizes: Mapping[str, int],
) -> None:
    """One SGD step that leaves units beyond ``current`` (and their momentum) untouched."""
    before = {name: p.detach().clone() for name, p in params.items()}
    optimizer.step()
    with torch.no_grad():
        for name, axes in model.param_axes().items():
            p = params[name]
            keep = torch.ones(p.shape, dtype=torch.bool)
            for dim, axis in enumerate(axes):
                if axis.layer is None or current[axis.layer] >= sizes[axis.layer]:
                    continue
                units = torch.arange(p.shape[dim]) // axis.repeat < current[axis.layer]
                shape = [1] * p.dim()
                shape[dim] = -1
                keep &= units.view(shape)
            if bool(keep.all()):
                continue
            p.copy_(torch.where(keep, p, before[name]))
            buf = optimizer.state.get(p, {}).get("momentum_buffer")
            if buf is not None:
                buf.mul_(keep)


def local_train(
    model: AbstractSliceableModel,
    X: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    *,
    epochs: int = 1,
    lr: float = 0.05,
    batch_size: int = 32,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    seed: int | np.random.Generator | torch.Generator | None = 0,
    nested_widths: Sequence[Mapping[str, int]] | None = None,
    threshold: float = 0.0,
    masked_ce: bool = False,
    rate: float = 1.0,
    clip: float | None = None,
) -> ClientUpdate:
    """Train ``model`` (a sub-model, modified in place) on ``(X, y)``; see :class:`ClientUpdate`.

    Parameters
    ----------
    model
        The client's sub-model.
    X, y
        Training inputs (``(n, ...)``) and integer labels ``(n,)``.
    epochs, lr, batch_size, momentum, weight_decay
        E local epochs of SGD with these settings.
    seed
        Shuffling (and FjORD width draws) come from ``torch_generator(seed)``.
    nested_widths
        FjORD-lite: widths (sub-model units per prunable layer) one of which is drawn uniformly
        before every step; ``None`` trains the whole sub-model.
    threshold
        theta of the firing frequency.
    masked_ce
        HeteroFL's masked cross-entropy: logits of classes absent from ``y`` are set to 0.
    rate
        HeteroFL's 1/r scaler: the model's ``rate`` attribute during training (only models
        with one, e.g. :class:`SliceableConvNet`; 1.0 leaves the model alone).
    clip
        Clip the gradient norm to this value before each step (``None``: no clipping).

    Notes
    -----
    FjORD-lite: units beyond the drawn width get no gradient, and after every step their
    parameters are restored and their momentum buffers zeroed, so they do not keep moving by
    momentum (issue 50).

    Examples
    --------
    >>> from icml26.spinefl import SliceableMLP
    >>> net = SliceableMLP([2, 4, 2])
    >>> X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20) % 2
    >>> update = local_train(net, X, y, epochs=1)
    >>> update.n_samples, update.freq["layers.0"].shape
    (20, (4,))
    """
    owner = "local_train"
    if not isinstance(model, AbstractSliceableModel):
        raise TypeError(f"{owner}: model must be an AbstractSliceableModel.")
    epochs = check_positive_int("epochs", epochs, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    momentum = check_in_interval(
        "momentum", momentum, low=0.0, high=1.0, closed="left", owner=owner
    )
    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, owner=owner)
    if not isinstance(masked_ce, bool):
        raise TypeError(f"{owner}: masked_ce must be a bool; got {masked_ce!r}.")
    rate = check_in_interval("rate", rate, low=0.0, high=1.0, closed="right", owner=owner)
    if rate != 1.0 and not hasattr(model, "rate"):
        raise ValueError(f"{owner}: rate != 1 needs a model with a scaler (a 'rate' attribute).")
    if clip is not None:
        clip = check_in_interval("clip", clip, low=0.0, closed="neither", owner=owner)
    dtype = next(model.parameters()).dtype
    X_t, y_t = _as_tensors(X, y, dtype, owner)
    n_classes = _n_classes(model)
    if n_classes is not None and (int(y_t.min()) < 0 or int(y_t.max()) >= n_classes):
        raise ValueError(
            f"{owner}: labels must lie in [0, {n_classes}); got [{int(y_t.min())}, "
            f"{int(y_t.max())}]."
        )
    if masked_ce and n_classes is None:
        raise ValueError(f"{owner}: masked_ce needs a model that states its n_classes.")
    absent = torch.ones(n_classes or 1, dtype=torch.bool)
    if masked_ce:
        absent[y_t.unique()] = False
    generator = torch_generator(seed)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay, foreach=True
    )
    sizes = model.layer_sizes()
    current = dict(sizes)
    handles = _width_masks(model, current) if nested_widths else []
    params = dict(model.named_parameters())
    loss_sum, steps = torch.zeros((), dtype=torch.float64), 0
    model.train()
    if hasattr(model, "rate"):
        model.rate = rate
    try:
        with ActivationRecorder(model, threshold=threshold) as recorder:
            for _ in range(epochs):
                order = torch.randperm(len(y_t), generator=generator)
                for start in range(0, len(y_t), batch_size):
                    batch = order[start : start + batch_size]
                    if nested_widths:
                        pick = int(torch.randint(len(nested_widths), (1,), generator=generator))
                        current.update(nested_widths[pick])
                    logits = model(X_t[batch])
                    if masked_ce:
                        logits = logits.masked_fill(absent, 0.0)
                    loss = nn.functional.cross_entropy(logits, y_t[batch])
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    if clip is not None:
                        nn.utils.clip_grad_norm_(model.parameters(), clip)
                    if nested_widths:
                        _masked_step(model, optimizer, params, current, sizes)
                    else:
                        optimizer.step()
                    loss_sum += loss.detach()
                    steps += 1
    finally:
        for handle in handles:
            handle.remove()
        if hasattr(model, "rate"):
            model.rate = 1.0
    state = {k: v.detach().clone() for k, v in model.named_parameters()}
    return ClientUpdate(state, len(y_t), recorder.frequencies(), float(loss_sum) / steps)


def evaluate_accuracy(
    model: nn.Module,
    X: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    *,
    batch: int = 2048,
) -> float:
    """Top-1 accuracy of ``model`` on ``(X, y)`` in eval mode under ``torch.no_grad()``.

    Examples
    --------
    >>> from icml26.spinefl import SliceableMLP
    >>> 0.0 <= evaluate_accuracy(SliceableMLP([2, 4, 2]), np.zeros((3, 2)), [0, 1, 1]) <= 1.0
    True
    """
    owner = "evaluate_accuracy"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    batch = check_positive_int("batch", batch, owner=owner, maximum=2**31 - 1)
    first = next(model.parameters(), None)
    dtype = first.dtype if first is not None else torch.get_default_dtype()
    X_t, y_t = _as_tensors(X, y, dtype, owner)
    was_training = model.training
    model.eval()
    correct = 0
    try:
        with torch.no_grad():
            for start in range(0, len(y_t), batch):
                logits = _logits(model, X_t[start : start + batch], owner)  # (batch, classes)
                correct += int((logits.argmax(dim=1) == y_t[start : start + batch]).sum())
    finally:
        model.train(was_training)
    return correct / len(y_t)


def _logits(model: nn.Module, X: torch.Tensor, owner: str) -> torch.Tensor:
    """The model's (batch, n_classes) logits, or a ValueError naming X when it cannot take X."""
    try:
        logits = model(X)
    except RuntimeError as err:  # shape mismatch inside the model's first layer
        raise ValueError(f"{owner}: model cannot take X of shape {tuple(X.shape)}: {err}") from None
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or logits.shape[1] == 0:
        raise ValueError(
            f"{owner}: model must map X to logits (batch, n_classes); got "
            f"{getattr(logits, 'shape', type(logits).__name__)}."
        )
    return logits
