"""Removing the perturbation-induced bias: correction vectors, algorithms A, B, C (spec §2.4).

* :func:`add_correction_vectors` registers a zero-initialised vector ``c_m`` on each chosen module
  (as its parameter ``debias_correction``) and a forward hook that adds it to the module's output.
  Zero vectors leave every output bitwise unchanged; :meth:`CorrectionHandle.remove` deletes hooks
  and parameters, restoring the original model and its ``state_dict``.
* :func:`mean_shift_debias` (algorithm A, no gradients): for each module in order,
  ``Δ_l = mean_{x,k}[h_l^c(x'_k) − h_l^0(x)]`` with the already-corrected lower layers on the
  perturbed path and the original model on the clean path, then ``c_l = −Δ_l``.
* :func:`debias_finetune` (algorithm B, bias-only "debiasing for robustness"; algorithm C with
  ``params="output_bias"``; the full fine-tuning reference with ``params="all"``): Adam on
  ``D(F_c(x'), sg(F_0(x))) [+ λ CE(F_c(x'), y)]`` where ``x' = x`` with probability ``p_clean``
  and a random perturbation otherwise, ``D`` = MSE on logits or ``KL(softmax z_0 ‖ softmax z)``.

Deviations (inferred, see docs/debias.md): the clean-path reference of algorithm A is the
original model (the spec's "already-corrected lower layers" is read as applying to the perturbed
path); the teacher logits ``F_0(x)`` are those of the model when ``debias_finetune`` is called,
computed once per clean batch; training runs the model in eval mode (no dropout), because the
targets are deterministic clean outputs; ``params="lora"`` trains the parameters whose names
contain ``lora_`` (a model wrapped by ``peft``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    optimizer_step,
    progress_reporter,
)
from icml26.debias.analysis import (
    Inputs,
    Pool,
    _capture,
    _first_tensor,
    _n_rows,
    call_model,
    resolve_modules,
    split_perturbed,
)

__all__ = [
    "CORRECTION",
    "LOSSES",
    "PARAMS",
    "CorrectionHandle",
    "TrainLog",
    "add_correction_vectors",
    "bias_parameters",
    "debias_finetune",
    "freeze_all_but",
    "mean_shift_debias",
    "select_parameters",
]

CORRECTION = "debias_correction"  # the parameter name a correction vector gets on its module
LOSSES = ("mse", "kl")
PARAMS = ("bias", "output_bias", "all", "lora")
MAX_WIDTH = 2**24  # widest correction vector


# ------------------------------------------------------------------------- correction vectors


def _add_correction(module: nn.Module, args: Any, output: Any) -> Any:
    # a module-level function, so a deep copy of the model adds the copy's own vector
    c = getattr(module, CORRECTION)
    if isinstance(output, torch.Tensor):
        return output + c
    if isinstance(output, tuple) and output and isinstance(output[0], torch.Tensor):
        return (output[0] + c, *output[1:])
    raise TypeError(
        f"add_correction_vectors: the output of {type(module).__name__} is "
        f"{type(output).__name__}; a correction needs a tensor (or a tuple led by one)."
    )


def _infer_dim(module: nn.Module) -> int | None:
    # nf: transformers' Conv1D (GPT-2's transposed linear layers)
    for attr in ("out_features", "nf", "embedding_dim", "hidden_size", "num_features"):
        value = getattr(module, attr, None)
        if isinstance(value, int):
            return value
    shape = getattr(module, "normalized_shape", None)
    if shape is not None:
        return int(tuple(shape)[-1])
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.ndim == 1:  # RMSNorm-style scale
        return int(weight.shape[0])
    return None


@dataclass
class CorrectionHandle:
    """Correction vectors registered by :func:`add_correction_vectors`.

    Attributes
    ----------
    names
        Module names, in the order given.
    vectors
        ``name -> nn.Parameter`` (the module's ``debias_correction``).
    """

    names: tuple[str, ...]
    vectors: dict[str, nn.Parameter]
    _modules: dict[str, nn.Module] = field(repr=False)
    _hooks: list[Any] = field(repr=False)
    removed: bool = False

    def __post_init__(self) -> None:
        owner = "CorrectionHandle"
        if not isinstance(self.names, tuple) or not all(isinstance(n, str) for n in self.names):
            raise TypeError(f"{owner}: names must be a tuple of module names; got {self.names!r}.")
        if not isinstance(self.vectors, dict) or set(self.vectors) != set(self.names):
            raise TypeError(f"{owner}: vectors must map every name in names to its vector.")
        if not all(isinstance(v, nn.Parameter) for v in self.vectors.values()):
            raise TypeError(f"{owner}: vectors must hold nn.Parameter values.")
        if not isinstance(self._modules, dict) or not all(
            isinstance(m, nn.Module) for m in self._modules.values()
        ):
            raise TypeError(f"{owner}: _modules must map names to nn.Module.")
        if not isinstance(self._hooks, list) or not all(
            callable(getattr(h, "remove", None)) for h in self._hooks
        ):
            raise TypeError(f"{owner}: _hooks must be a list of hook handles (with .remove()).")
        if not isinstance(self.removed, bool):
            raise TypeError(f"{owner}: removed must be a bool; got {self.removed!r}.")

    def parameters(self) -> list[nn.Parameter]:
        """The correction vectors, in module order."""
        return [self.vectors[n] for n in self.names]

    def remove(self) -> None:
        """Remove hooks and vectors: the model is its original self again (idempotent)."""
        if self.removed:
            return
        for hook in self._hooks:
            hook.remove()
        for module in self._modules.values():
            if CORRECTION in module._parameters:
                del module._parameters[CORRECTION]
        self.removed = True

    @torch.no_grad()
    def set(self, name: str, value: torch.Tensor) -> None:
        """Overwrite the vector of module ``name``."""
        owner = "CorrectionHandle.set"
        if not isinstance(name, str) or name not in self.vectors:
            raise ValueError(f"{owner}: name {name!r} not in {list(self.names)}.")
        shape = tuple(self.vectors[name].shape)
        check_tensor("value", value, shape=shape, owner=owner)
        self.vectors[name].copy_(value)


def add_correction_vectors(
    model: nn.Module,
    module_names: Sequence[str],
    *,
    dims: Mapping[str, int] | None = None,
) -> CorrectionHandle:
    """Add a zero-initialised trainable vector to each named module's output via a forward hook.

    Parameters
    ----------
    model
        Any ``nn.Module`` (bias-free LLM layers included).
    module_names
        Names from ``model.named_modules()``.
    dims
        Output widths for modules whose width cannot be read from ``out_features`` (``nf``),
        ``embedding_dim``, ``normalized_shape`` or a 1-D ``weight`` (e.g. ``nn.ReLU``).

    Returns
    -------
    CorrectionHandle
        ``.remove()`` restores the model.

    Raises
    ------
    ValueError
        Unknown module (close matches listed), a module already corrected, or an unknown width.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> net = nn.Sequential(nn.Linear(3, 2, bias=False))
    >>> x = torch.randn(4, 3)
    >>> before = net(x)
    >>> h = add_correction_vectors(net, ["0"])
    >>> torch.equal(net(x), before)  # zero vectors: bitwise no-op
    True
    >>> h.remove(); "0.debias_correction" in net.state_dict()
    False
    """
    owner = "add_correction_vectors"
    modules = resolve_modules(model, module_names, owner)
    names = tuple(module_names)
    if len(set(names)) != len(names):
        raise ValueError(f"{owner}: module_names has duplicates: {list(names)}.")
    if dims is not None and not isinstance(dims, Mapping):
        raise TypeError(f"{owner}: dims must map module names to widths; got {dims!r}.")
    dims = {
        key: check_positive_int(f"dims[{key!r}]", value, owner=owner, maximum=MAX_WIDTH)
        for key, value in (dims or {}).items()
    }
    vectors, table, hooks = {}, {}, []
    for name, module in zip(names, modules, strict=True):
        if CORRECTION in module._parameters:
            raise ValueError(f"{owner}: module {name!r} already has a correction vector.")
        dim = dims.get(name, _infer_dim(module))
        if dim is None:
            raise ValueError(
                f"{owner}: cannot read the output width of {name!r} "
                f"({type(module).__name__}); pass dims={{{name!r}: width}}."
            )
        ref = next(module.parameters(), None)
        if ref is None:
            ref = next(model.parameters(), torch.zeros(()))
        vec = nn.Parameter(torch.zeros(int(dim), dtype=ref.dtype, device=ref.device))
        module.register_parameter(CORRECTION, vec)
        hooks.append(module.register_forward_hook(_add_correction))
        vectors[name], table[name] = vec, module
    return CorrectionHandle(names, vectors, table, hooks)


# ------------------------------------------------------------------------ choosing parameters


def bias_parameters(model: nn.Module) -> list[nn.Parameter]:
    """Every bias vector (BitFit) and every correction vector of ``model``.

    Examples
    --------
    >>> from torch import nn
    >>> sum(p.numel() for p in bias_parameters(nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))))
    6
    """
    _check_model(model, "bias_parameters")
    return [p for _, p in _named_bias(model)]


def _named_bias(model: nn.Module) -> list[tuple[str, nn.Parameter]]:
    out = []
    for name, p in model.named_parameters():
        leaf = name.rpartition(".")[2]
        if leaf == "bias" or leaf == CORRECTION or leaf.endswith("_bias"):
            out.append((name, p))
    return out


def select_parameters(
    model: nn.Module, params: str | Sequence[nn.Parameter]
) -> list[tuple[str, nn.Parameter]]:
    """The ``(name, parameter)`` pairs a ``params`` choice trains.

    ``"bias"``: every bias and correction vector; ``"output_bias"``: the last of them in
    registration order (the logit bias of a classifier head); ``"all"``: every parameter;
    ``"lora"``: parameters whose names contain ``lora_`` (a ``peft`` model); or an explicit
    list of the model's parameters (e.g. only a head's biases).

    Examples
    --------
    >>> from torch import nn
    >>> [n for n, _ in select_parameters(nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)),
    ...  "output_bias")]
    ['1.bias']
    """
    _check_model(model, "select_parameters")
    if not isinstance(params, str):
        return _explicit_parameters(model, params)
    check_one_of("params", params, PARAMS, owner="debias_finetune")
    if params == "all":
        chosen = list(model.named_parameters())
    elif params == "lora":
        chosen = [(n, p) for n, p in model.named_parameters() if "lora_" in n]
    else:
        chosen = _named_bias(model)
        if params == "output_bias":
            chosen = chosen[-1:]
    if not chosen:
        hint = {
            "lora": "wrap the model with peft first",
            "bias": "the model has no biases: add_correction_vectors first",
            "output_bias": "the model has no biases: add_correction_vectors on its output module",
        }.get(params, "")
        raise ValueError(f"debias_finetune: params={params!r} selects no parameter; {hint}.")
    return chosen


def _explicit_parameters(model: nn.Module, params: Any) -> list[tuple[str, nn.Parameter]]:
    if not isinstance(params, Sequence) or not all(isinstance(p, nn.Parameter) for p in params):
        raise TypeError(
            "debias_finetune: params must be 'bias', 'output_bias', 'all', 'lora' or a list of "
            f"the model's nn.Parameter; got {type(params).__name__}."
        )
    names = {id(p): n for n, p in model.named_parameters()}
    missing = [i for i, p in enumerate(params) if id(p) not in names]
    if missing or not params:
        raise ValueError(
            f"debias_finetune: params must be a non-empty list of the model's parameters; "
            f"entries {missing} are not parameters of the model."
        )
    return [(names[id(p)], p) for p in params]


def freeze_all_but(model: nn.Module, params: Sequence[nn.Parameter]) -> dict[str, bool]:
    """Set ``requires_grad`` on ``params`` only; return the previous flags by name.

    Examples
    --------
    >>> from torch import nn
    >>> net = nn.Linear(3, 2)
    >>> _ = freeze_all_but(net, [net.bias]); net.weight.requires_grad, net.bias.requires_grad
    (False, True)
    """
    owner = "freeze_all_but"
    _check_model(model, owner)
    if isinstance(params, nn.Parameter) or not isinstance(params, Iterable):
        raise TypeError(f"{owner}: params must be a list of the model's nn.Parameter.")
    params = list(params)
    if not all(isinstance(p, nn.Parameter) for p in params):
        raise TypeError(f"{owner}: params must hold nn.Parameter entries.")
    keep = {id(p) for p in params}
    before = {}
    for name, p in model.named_parameters():
        before[name] = p.requires_grad
        p.requires_grad_(id(p) in keep)
    return before


# --------------------------------------------------------------------------------- algorithm A


def _probe_dims(model: nn.Module, names: Sequence[str], X: Inputs, pool: Pool) -> dict[str, int]:
    one = _capture(model, names, _first_rows(X), **_ms_args(pool, 1), inputs_arg="X")
    return {name: int(t.shape[1]) for name, t in one.items()}


def _ms_args(pool: Pool | None, batch_size: int) -> dict[str, Any]:
    """Keywords of :func:`_capture` for :func:`mean_shift_debias`'s messages."""
    return {
        "pool": pool,
        "batch_size": batch_size,
        "skip_unused": False,
        "owner": "mean_shift_debias",
        "names_arg": "module_names",
    }


def _check_model(model: object, owner: str) -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    return model


def _first_rows(X: Inputs) -> Inputs:
    if isinstance(X, Mapping):
        return {k: v[:1] for k, v in X.items()}
    return X[:1]


@torch.no_grad()
def mean_shift_debias(
    model: nn.Module,
    X: Inputs,
    X_pert: Inputs,
    module_names: Sequence[str],
    *,
    pool: Pool | None = None,
    batch_size: int = 1024,
) -> CorrectionHandle:
    """Algorithm A: closed-form, layer-wise mean-shift correction (no gradients).

    Parameters
    ----------
    model
        The network; correction vectors are added to ``module_names`` (in the order given,
        lower layers first).
    X, X_pert
        Calibration inputs and their ``K`` perturbed copies (``(n, K, ...)`` or flat ``n·K``
        rows, input-major), as in :func:`~icml26.debias.analysis.module_bias`.
    pool, batch_size
        As in :func:`~icml26.debias.analysis.capture_outputs`; the correction is constant over
        positions when a module outputs a sequence.

    Returns
    -------
    CorrectionHandle
        With ``c_l = −Δ_l``; ``.remove()`` undoes the correction.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> g = torch.Generator().manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    >>> X = torch.randn(200, 2, generator=g)
    >>> Xp = X[:, None] + torch.randn(200, 16, 2, generator=g)
    >>> clean0 = net(X).detach()  # h^0 of the output layer
    >>> h = mean_shift_debias(net, X, Xp, ["2"])
    >>> shift = (net(Xp).mean(dim=1) - clean0).mean().detach()
    >>> float(shift.abs()) < 1e-6  # the calibration mean shift is removed
    True
    """
    owner = "mean_shift_debias"
    resolve_modules(model, module_names, owner)
    names = list(module_names)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    n = _n_rows(X, owner, "X")
    flat, k = split_perturbed(n, X_pert, owner, "X_pert")
    dims = _probe_dims(model, names, X, pool)
    clean = _capture(model, names, X, **_ms_args(pool, batch_size), inputs_arg="X")  # h_l^0(x)
    handle = add_correction_vectors(model, names, dims=dims)
    for name in names:
        # the perturbed path runs through the corrections already set on lower layers
        args = _ms_args(pool, batch_size)
        pert = _capture(model, [name], flat, **args, inputs_arg="X_pert")[name]
        pert = pert.reshape(n, k, -1).mean(dim=1)  # (n, dim)
        delta = (pert - clean[name]).mean(dim=0)  # Δ_l, (dim,)
        handle.set(name, -delta.to(handle.vectors[name].dtype))
    return handle


# ------------------------------------------------------------------------------ algorithms B/C


@dataclass(frozen=True)
class TrainLog:
    """What :func:`debias_finetune` did.

    Attributes
    ----------
    losses
        Training loss after each step.
    param_names
        Names of the trained parameters.
    n_trainable, n_total
        Trained and total scalar parameter counts.
    """

    losses: list[float]
    param_names: tuple[str, ...]
    n_trainable: int
    n_total: int

    @property
    def trainable_fraction(self) -> float:
        """``n_trainable / n_total``."""
        return self.n_trainable / self.n_total


def _mix(clean: Any, pert: Any, use_clean: np.ndarray, owner: str) -> Any:
    """Row-wise mixture: row ``i`` from ``clean`` where ``use_clean[i]``, else from ``pert``."""
    if isinstance(clean, torch.Tensor):
        if not isinstance(pert, torch.Tensor) or pert.shape != clean.shape:
            raise ValueError(
                f"{owner}: perturb_fn must return a batch of the clean batch's shape "
                f"{tuple(clean.shape)}; got {getattr(pert, 'shape', type(pert).__name__)}."
            )
        mask = torch.as_tensor(use_clean, device=clean.device).view(-1, *([1] * (clean.ndim - 1)))
        return torch.where(mask, clean, pert)
    if isinstance(clean, Mapping):
        if not isinstance(pert, Mapping) or set(pert) != set(clean):
            raise ValueError(f"{owner}: perturb_fn must return a mapping with the same keys.")
        return {key: _mix(clean[key], pert[key], use_clean, owner) for key in clean}
    if isinstance(clean, Sequence):
        if not isinstance(pert, Sequence) or len(pert) != len(clean):
            raise ValueError(f"{owner}: perturb_fn must return as many items as it was given.")
        return [c if u else p for c, p, u in zip(clean, pert, use_clean, strict=True)]
    raise TypeError(f"{owner}: a batch must be a tensor, mapping or list; got {type(clean)}.")


def _distill_loss(z: torch.Tensor, z0: torch.Tensor, loss: str) -> torch.Tensor:
    if loss == "mse":
        return F.mse_loss(z, z0)
    # KL(softmax(z0) || softmax(z)), T = 1, averaged over rows
    return F.kl_div(
        F.log_softmax(z, dim=-1).flatten(0, -2),
        F.log_softmax(z0, dim=-1).flatten(0, -2),
        log_target=True,
        reduction="batchmean",
    )


def debias_finetune(
    model: nn.Module,
    clean_batches: Sequence[Inputs],
    perturb_fn: Callable[[Any, np.random.Generator], Any],
    *,
    loss: str = "mse",
    p_clean: float = 0.2,
    lr: float = 1e-3,
    steps: int = 300,
    params: str | Sequence[nn.Parameter] = "bias",
    labels: Sequence[torch.Tensor] | None = None,
    lam: float = 0.0,
    seed: Seed = 0,
    progress: Progress = None,
) -> TrainLog:
    """Algorithm B (bias-only debiasing), C (``params="output_bias"``) or full fine-tuning.

    The targets are the model's own clean outputs at call time, ``z_0 = F_0(x)`` (label-free);
    step ``t`` uses ``clean_batches[t % len(clean_batches)]``, perturbs it with
    ``perturb_fn(batch, rng)``, keeps each clean row with probability ``p_clean`` and takes one
    Adam step on ``D(F_c(x'), z_0) + lam · CE(F_c(x'), y)``.

    Parameters
    ----------
    model
        Maps a batch to logits ``(batch, classes)`` (a tensor, an HF output with ``.logits``
        or a tuple led by the logits); a mapping batch is passed as ``model(**batch)``.
    clean_batches
        Non-empty sequence of clean batches (tensors, mappings of tensors, or lists of texts).
    perturb_fn
        ``(batch, numpy Generator) -> perturbed batch`` of the same structure and shape.
    loss
        ``"mse"`` on logits (default) or ``"kl"`` (``KL(softmax z_0 ‖ softmax z)``, ``T = 1``).
    p_clean
        Probability in ``[0, 1]`` that a row stays clean (the mixture's ``δ = 0`` share).
    lr, steps
        Adam learning rate (``> 0``) and number of steps.
    params
        ``"bias"`` (every bias and correction vector), ``"output_bias"``, ``"all"``, ``"lora"``
        or an explicit list of the model's parameters.
    labels
        One label tensor per clean batch; needed only when ``lam > 0``.
    lam
        Weight ``λ ≥ 0`` of the cross-entropy term.
    seed
        Seed of the mixture and of ``perturb_fn``'s generator.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after every step with the loss
        (:mod:`icml26.core.progress`).

    Returns
    -------
    TrainLog

    Raises
    ------
    ValueError
        Unknown ``loss``/``params``, ``p_clean`` outside ``[0, 1]``, ``lam > 0`` without
        ``labels``, labels of the wrong count, or an empty ``clean_batches``.
    NonFiniteLossError
        If the loss becomes NaN or infinite: training stops before that update, naming the step
        (the model's trainable flags and train/eval modes are restored).

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
    >>> X = [torch.randn(32, 2, generator=torch.Generator().manual_seed(0))]
    >>> shift = lambda x, rng: x + 1.0
    >>> log = debias_finetune(net, X, shift, lr=1e-2, steps=50)
    >>> log.losses[-1] < log.losses[0], log.n_trainable
    (True, 11)
    """
    owner = "debias_finetune"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    check_one_of("loss", loss, LOSSES, owner=owner)
    chosen = select_parameters(model, params)
    p_clean = check_in_interval("p_clean", p_clean, low=0.0, high=1.0, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    steps = check_positive_int("steps", steps, owner=owner)
    lam = check_in_interval("lam", lam, low=0.0, owner=owner)
    if isinstance(clean_batches, Mapping | torch.Tensor) or not isinstance(clean_batches, Sequence):
        raise TypeError(f"{owner}: clean_batches must be a list of batches.")
    if len(clean_batches) == 0:
        raise ValueError(f"{owner}: clean_batches is empty; give at least one batch.")
    if not callable(perturb_fn):
        raise TypeError(f"{owner}: perturb_fn must be callable (batch, rng) -> batch.")
    if lam > 0 and labels is None:
        raise ValueError(f"{owner}: lam={lam} > 0 needs labels (one tensor per clean batch).")
    if labels is not None and len(labels) != len(clean_batches):
        raise ValueError(
            f"{owner}: labels has {len(labels)} entries for {len(clean_batches)} clean batches."
        )
    rng = numpy_generator(seed)
    modes = {m: m.training for m in model.modules()}
    model.eval()
    with torch.no_grad():  # teacher logits z_0 = F_0(x), fixed for the whole run
        targets = [_first_tensor(call_model(model, b)).detach() for b in clean_batches]
    flags = freeze_all_but(model, [p for _, p in chosen])
    optimizer = torch.optim.Adam([p for _, p in chosen], lr=lr)
    losses = []
    try:
        with progress_reporter(progress, steps, owner) as report:
            for step in range(steps):
                i = step % len(clean_batches)
                batch = clean_batches[i]
                n = _n_rows(batch, owner, "a clean batch")
                use_clean = rng.random(n) < p_clean
                x_mix = _mix(batch, perturb_fn(batch, rng), use_clean, owner)
                z = _first_tensor(call_model(model, x_mix))  # (batch, classes)
                objective = _distill_loss(z, targets[i], loss)
                if lam > 0:
                    objective = objective + lam * F.cross_entropy(z, labels[i])
                losses.append(optimizer_step(objective, optimizer, step=step, owner=owner))
                report(step + 1, loss=losses[-1])
    finally:
        for name, p in model.named_parameters():
            p.requires_grad_(flags.get(name, p.requires_grad))
        for module, training in modes.items():  # each module's own mode, not the root's
            module.training = training
    n_total = sum(p.numel() for p in model.parameters())
    return TrainLog(
        losses=losses,
        param_names=tuple(name for name, _ in chosen),
        n_trainable=sum(p.numel() for _, p in chosen),
        n_total=n_total,
    )
