"""Shipped stand-ins: small trained models in package data, and the one way to (re)train them.

A stand-in is two files in ``icml26/<slug>/checkpoints/``: ``<name>.safetensors`` (the weights)
and ``<name>.json`` (how it was made: the model ``config``, the training ``recipe``, the
``data``, the ``metrics`` at save time, the ``command`` that retrains it, the system's ``code``
fingerprint and the date). Quick presets load them instead of training.

A system declares its stand-ins in ``icml26/<slug>/standins.py``::

    STANDINS = {
        "tiny_quick": Standin(
            name="tiny_quick", system="myslug", description="...",
            train=train_tiny_quick,   # train(resume, progress) -> TrainedStandin
        ),
    }

and ``icml26 tool SLUG train-standin NAME`` retrains one reproducibly: ``train`` gets a
:class:`~icml26.core.training.TrainingCheckpoint` to resume from after an interruption and a
progress callback; :func:`train_standin` writes the two files.
"""

from __future__ import annotations

import datetime
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icml26.core.progress import Progress
from icml26.core.training import TrainingCheckpoint

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = [
    "Standin",
    "TrainedStandin",
    "checkpoint_dir",
    "load_checkpoint",
    "save_checkpoint",
    "standins_of",
    "train_standin",
]

_ROOT = Path(__file__).resolve().parents[1]  # the folder holding icml26's systems


def checkpoint_dir(slug: str) -> Path:
    """``icml26/<slug>/checkpoints``, where a system's shipped stand-ins live."""
    return _ROOT / slug / "checkpoints"


def _files(stem: str | Path) -> tuple[Path, Path]:
    if not isinstance(stem, str | Path):
        raise TypeError(f"checkpoint stem must be a str or Path; got {type(stem).__name__}.")
    text = str(stem)
    for suffix in (".safetensors", ".json"):
        text = text.removesuffix(suffix)
    return Path(text + ".safetensors"), Path(text + ".json")


def save_checkpoint(
    stem: str | Path, weights: nn.Module | Mapping[str, torch.Tensor], meta: Mapping[str, Any]
) -> Path:
    """Write ``<stem>.safetensors`` (weights) and ``<stem>.json`` (``meta``); return the stem.

    ``weights`` is a module (its state dict is saved) or a state dict; tensors are saved
    contiguous and detached. ``meta`` must be JSON-serialisable.

    Examples
    --------
    >>> import tempfile, torch
    >>> stem = save_checkpoint(tempfile.mkdtemp() + "/m", torch.nn.Linear(2, 1), {"config": {}})
    >>> state, meta = load_checkpoint(stem)
    >>> sorted(state), meta
    (['bias', 'weight'], {'config': {}})
    """
    import torch
    from safetensors.torch import save_file

    state = weights.state_dict() if isinstance(weights, torch.nn.Module) else weights
    tensors = {k: v.detach().contiguous().cpu() for k, v in state.items()}
    text = (
        json.dumps(dict(meta), indent=2, sort_keys=True) + "\n"
    )  # fails before any file is written
    weights_file, meta_file = _files(stem)
    weights_file.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(weights_file))
    meta_file.write_text(text)
    return weights_file.with_suffix("")


def load_checkpoint(stem: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a checkpoint written by :func:`save_checkpoint`: ``(state_dict, meta)``.

    Raises
    ------
    FileNotFoundError
        Naming both files when either is missing.
    """
    from safetensors.torch import load_file

    weights_file, meta_file = _files(stem)
    if not (weights_file.is_file() and meta_file.is_file()):
        raise FileNotFoundError(
            f"no checkpoint at {weights_file.with_suffix('')}: need {weights_file.name} and "
            f"{meta_file.name}."
        )
    return load_file(str(weights_file)), json.loads(meta_file.read_text())


@dataclass(frozen=True)
class TrainedStandin:
    """What a stand-in's ``train`` returns: the model and how it was made.

    ``config`` rebuilds the model, ``recipe`` holds the training settings and seed, ``data``
    says what it was trained on, ``metrics`` what it reached.
    """

    model: nn.Module
    config: Mapping[str, Any]
    recipe: Mapping[str, Any]
    data: str
    metrics: Mapping[str, float] = field(default_factory=dict)


TrainFn = Callable[[TrainingCheckpoint, Progress], TrainedStandin]


@dataclass(frozen=True)
class Standin:
    """A shipped stand-in and the function that trains it reproducibly.

    Parameters
    ----------
    name
        The file stem in ``icml26/<system>/checkpoints``.
    system
        The system slug.
    description
        One line for ``icml26 tool SLUG train-standin --help`` and the metadata.
    train
        ``train(resume, progress) -> TrainedStandin``: deterministic given its fixed recipe;
        it restores from and saves to ``resume`` so an interrupted run continues.
    checkpoint_every
        Steps between resume saves.
    """

    name: str
    system: str
    description: str
    train: TrainFn = field(repr=False)
    checkpoint_every: int = 500

    @property
    def path(self) -> Path:
        """The shipped checkpoint's stem."""
        return checkpoint_dir(self.system) / self.name

    def load(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """The shipped weights and metadata (:func:`load_checkpoint`)."""
        return load_checkpoint(self.path)


def standins_of(slug: str) -> dict[str, Standin]:
    """The stand-ins system ``slug`` declares (``icml26.<slug>.standins.STANDINS``); may be {}."""
    name = f"icml26.{slug}.standins"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name in (name, f"icml26.{slug}"):
            return {}
        raise
    return dict(getattr(module, "STANDINS", {}))


def train_standin(
    standin: Standin, out: str | Path | None = None, progress: Progress = None
) -> Path:
    """Train ``standin`` (resuming where an interrupted run stopped) and save it; return the stem.

    ``out`` is the folder to write to (default: the shipped checkpoint folder). The resume state
    lives beside it as ``<name>.resume.pt`` until the checkpoint is written.
    """
    from icml26.core.results import code_fingerprint

    folder = checkpoint_dir(standin.system) if out is None else Path(out)
    resume = TrainingCheckpoint(folder / f"{standin.name}.resume.pt", standin.checkpoint_every)
    trained = standin.train(resume, progress)
    meta = {
        "name": standin.name,
        "description": standin.description,
        "config": dict(trained.config),
        "recipe": dict(trained.recipe),
        "data": trained.data,
        "metrics": {k: float(v) for k, v in trained.metrics.items()},
        "command": f"icml26 tool {standin.system} train-standin {standin.name}",
        "code_fingerprint": code_fingerprint(standin.train),
        "created": datetime.date.today().isoformat(),
        "python": sys.version.split()[0],
    }
    stem = save_checkpoint(folder / standin.name, trained.model, meta)
    resume.remove()
    return stem
