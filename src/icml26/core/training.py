"""Pieces every training loop needs, written once; each system keeps its own loop readable.

A loop reads top to bottom with these pieces::

    optimizer = adamw(model, lr=lr, weight_decay=0.01)
    resume = TrainingCheckpoint(path, every=500)             # optional: survive a stop
    start = resume.restore(model, optimizer, generators={"batches": g})
    with progress_reporter(progress, steps, "training") as report:
        for step in range(start, steps):
            set_lr(optimizer, warmup_cosine_lr(step, total_steps=steps, peak_lr=lr, warmup_steps=w))
            loss = ...
            value = optimizer_step(loss, optimizer, step=step, clip=1.0, owner="train_x")
            report(step + 1, loss=value)
            resume.save_if_due(step + 1, model, optimizer, generators={"batches": g})

torch is imported inside the functions, so importing core stays light.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core.validation import check_in_interval, check_positive_int

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = [
    "NonFiniteLossError",
    "TrainingCheckpoint",
    "adamw",
    "decay_groups",
    "optimizer_step",
    "set_lr",
]


class NonFiniteLossError(FloatingPointError):
    """The loss of a training step is NaN or infinite; the message names the loop and the step."""


def decay_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Parameter groups: weight decay on matrices (>= 2-D), none on biases, norms and scalars.

    Examples
    --------
    >>> from torch import nn
    >>> groups = decay_groups(nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2)), 0.1)
    >>> [(g["weight_decay"], len(g["params"])) for g in groups]
    [(0.1, 1), (0.0, 3)]
    """
    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, owner="decay_groups")
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


def adamw(
    model: nn.Module | Iterable[Any],
    *,
    lr: float,
    weight_decay: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
    no_decay_on_vectors: bool = False,
) -> torch.optim.AdamW:
    """``torch.optim.AdamW`` over ``model``'s parameters (or the parameters/groups given).

    ``no_decay_on_vectors=True`` applies the weight decay to matrices only
    (:func:`decay_groups`), the GPT-style recipe.

    Examples
    --------
    >>> from torch import nn
    >>> opt = adamw(nn.Linear(2, 2), lr=1e-3, weight_decay=0.1, no_decay_on_vectors=True)
    >>> [g["weight_decay"] for g in opt.param_groups]
    [0.1, 0.0]
    """
    import torch

    lr = check_in_interval("lr", lr, low=0.0, closed="right", owner="adamw")
    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, owner="adamw")
    if no_decay_on_vectors:
        if not isinstance(model, torch.nn.Module):
            raise TypeError("adamw: no_decay_on_vectors=True needs an nn.Module.")
        params: Any = decay_groups(model, weight_decay)
    else:
        params = model.parameters() if isinstance(model, torch.nn.Module) else model
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Set the learning rate of every parameter group (schedules are pure functions of the step).

    Examples
    --------
    >>> from torch import nn
    >>> opt = adamw(nn.Linear(2, 2), lr=1.0)
    >>> set_lr(opt, 0.5); opt.param_groups[0]["lr"]
    0.5
    """
    for group in optimizer.param_groups:
        group["lr"] = lr


def optimizer_step(
    loss: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    *,
    step: int,
    clip: float | None = None,
    owner: str = "training",
) -> float:
    """Check the loss is finite, back-propagate, clip the gradient norm, step; return the loss.

    Raises
    ------
    NonFiniteLossError
        Before touching the weights when ``loss`` is NaN or infinite, naming ``owner`` and
        ``step`` (lower the learning rate, or check the inputs).

    Examples
    --------
    >>> import torch
    >>> w = torch.nn.Parameter(torch.tensor(2.0))
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> optimizer_step((w - 1.0) ** 2, opt, step=0, clip=10.0), float(w)
    (1.0, 1.0)
    """
    import torch

    value = float(loss.detach())
    if not math.isfinite(value):
        raise NonFiniteLossError(
            f"{owner}: the loss is {value} at step {step}; training stopped before the update "
            "(lower the learning rate or check the inputs)."
        )
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip is not None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()
    return value


def _generator_state(generator: Any) -> Any:
    import torch

    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    if isinstance(generator, torch.Generator):
        return generator.get_state()
    raise TypeError(
        f"generators must be numpy or torch Generators; got {type(generator).__name__}."
    )


def _set_generator_state(generator: Any, state: Any) -> None:
    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    else:
        generator.set_state(state)


class TrainingCheckpoint:
    """The resume state of a training loop in one file, so that a stop loses minutes, not hours.

    It holds the model and optimizer states, the step reached, the named random generators'
    states and a small ``extra`` dict (e.g. the loss history); it is written atomically every
    ``every`` steps and read with ``torch.load(weights_only=True)``.

    Parameters
    ----------
    path
        The file (created with its folder on the first save).
    every
        Steps between saves.

    Examples
    --------
    >>> import tempfile, torch
    >>> net = torch.nn.Linear(2, 1); opt = adamw(net, lr=0.1)
    >>> ckpt = TrainingCheckpoint(tempfile.mkdtemp() + "/run.pt", every=2)
    >>> ckpt.restore(net, opt)
    0
    >>> ckpt.save_if_due(2, net, opt, extra={"losses": [1.0, 0.5]})
    True
    >>> ckpt.restore(net, opt), ckpt.extra
    (2, {'losses': [1.0, 0.5]})
    """

    def __init__(self, path: str | Path, every: int) -> None:
        if not isinstance(path, str | Path):
            raise TypeError(f"TrainingCheckpoint: path must be a str or Path; got {path!r}.")
        self.path = Path(path)
        self.every = check_positive_int("every", every, owner="TrainingCheckpoint")
        self.extra: dict[str, Any] = {}

    def restore(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        generators: Mapping[str, Any] | None = None,
    ) -> int:
        """Load the saved state into the objects given; return the step to start from (0: none)."""
        import torch

        if not self.path.is_file():
            return 0
        state = torch.load(self.path, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        for name, generator in (generators or {}).items():
            _set_generator_state(generator, state["generators"][name])
        self.extra = state["extra"]
        return int(state["step"])

    def save(
        self,
        step: int,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        generators: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Write the state after ``step`` steps (atomically: temp file, then rename)."""
        import torch

        state = {
            "step": int(step),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generators": {k: _generator_state(g) for k, g in (generators or {}).items()},
            "extra": dict(extra or {}),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        torch.save(state, tmp)
        tmp.replace(self.path)
        self.extra = state["extra"]

    def save_if_due(
        self,
        step: int,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        generators: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> bool:
        """:meth:`save` when ``step`` is a multiple of ``every``; return whether it saved."""
        if step % self.every:
            return False
        self.save(step, model, optimizer, generators, extra)
        return True

    def remove(self) -> None:
        """Delete the file (after the run finished and its result was saved)."""
        self.path.unlink(missing_ok=True)
