"""Trained TinyOmni stand-ins: train, save, load, and the command that made the shipped one.

OmniFit is training-free: it compresses an already trained model. The quick reproductions
therefore evaluate a shipped stand-in instead of training one in the run (about 17
CPU-minutes). A stand-in is ``<stem>.pt`` (the state dict, read with ``weights_only=True``)
beside ``<stem>.json`` (the :class:`TinyOmniConfig` sizes, the training recipe and its final
training accuracy). The shipped ``tinyomni_quick`` comes from::

    OMP_NUM_THREADS=1 python -m icml26.omnifit.standins --layers 4 --d 64 --d-ff 128 \\
        --train-samples 12000 --epochs 8 --seed 0 \\
        --out src/icml26/omnifit/checkpoints/tinyomni_quick
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.core.validation import Seed, check_positive_int, numpy_generator
from icml26.omnifit.avsync import make_dataset
from icml26.omnifit.model import TinyOmni, TinyOmniConfig, TrainResult, train_tinyomni

__all__ = ["SHIPPED_STANDINS", "load_standin", "save_standin", "train_standin"]

_LOG = logging.getLogger(__name__)
CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"
SHIPPED_STANDINS = ("tinyomni_quick",)


def _files(stem: str | Path) -> tuple[Path, Path]:
    """The ``.pt`` and ``.json`` files of a stem (which may name either file)."""
    text = str(stem)
    if text.endswith((".pt", ".json")):
        text = text.rsplit(".", 1)[0]
    return Path(text + ".pt"), Path(text + ".json")


def train_standin(
    config: TinyOmniConfig | None = None,
    train_samples: int = 30_000,
    windows: int = 8,
    clutter: float = 0.3,
    epochs: int = 3,
    batch_size: int = 32,
    lr: float = 2e-3,
    infonce_weight: float = 0.1,
    seed: Seed = 0,
    on_step: Callable[[int], Any] | None = None,
) -> tuple[TinyOmni, TrainResult]:
    """Train a :class:`TinyOmni` of ``config`` on ``train_samples`` fresh AV-Sync QA streams.

    ``seed`` seeds the training streams, the initial weights and the shuffling (three seeds
    drawn from it); the rest is :func:`make_dataset` and :func:`train_tinyomni`. Returns the
    trained model (eval mode) and its training history.

    Example
    -------
    >>> model, history = train_standin(
    ...     TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32), train_samples=8, windows=2,
    ...     epochs=1, batch_size=4)
    >>> len(history.ce)
    2
    """
    config = TinyOmniConfig() if config is None else config
    if not isinstance(config, TinyOmniConfig):
        raise TypeError(
            f"train_standin: config must be a TinyOmniConfig; got {type(config).__name__}."
        )
    train_samples = check_positive_int(
        "train_samples", train_samples, maximum=200_000, owner="train_standin"
    )
    data_seed, init_seed, shuffle_seed = (
        int(s) for s in numpy_generator(seed).integers(0, 2**31 - 1, size=3)
    )
    data = make_dataset(train_samples, windows, data_seed, "train", clutter)
    model = TinyOmni(config, seed=init_seed)
    history = train_tinyomni(
        model, data, epochs, batch_size, lr, infonce_weight, seed=shuffle_seed, on_step=on_step
    )
    return model, history


def save_standin(model: TinyOmni, path: str | Path, recipe: dict[str, Any]) -> Path:
    """Write ``model`` to ``<path>.pt`` and ``<path>.json`` (sizes, recipe); returns the stem.

    Example
    -------
    >>> import tempfile
    >>> model = TinyOmni(TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32), seed=0)
    >>> stem = save_standin(model, tempfile.mkdtemp() + "/standin", {})
    >>> load_standin(stem)[0].config.d
    16
    """
    if not isinstance(model, TinyOmni):
        raise TypeError(f"save_standin: model must be a TinyOmni; got {type(model).__name__}.")
    if not isinstance(recipe, dict):
        raise TypeError(f"save_standin: recipe must be a dict; got {type(recipe).__name__}.")
    if not isinstance(path, str | Path):
        raise TypeError(f"save_standin: path must be a str or Path; got {type(path).__name__}.")
    weights, meta_file = _files(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), weights)
    meta = {"model": dataclasses.asdict(model.config), "recipe": recipe}
    meta_file.write_text(json.dumps(meta, indent=2) + "\n")
    return weights.with_suffix("")


def load_standin(name_or_path: str | Path) -> tuple[TinyOmni, dict[str, Any]]:
    """Load a shipped stand-in by name (:data:`SHIPPED_STANDINS`) or a saved stem.

    Returns the model in eval mode and its metadata (``{"model": sizes, "recipe": ...}``).

    Example
    -------
    >>> model, meta = load_standin("tinyomni_quick")
    >>> model.config.n_layers, meta["recipe"]["train_samples"]
    (4, 12000)
    """
    if not isinstance(name_or_path, str | Path):
        raise TypeError(
            f"load_standin: name_or_path must be a str or Path; got {type(name_or_path).__name__}."
        )
    if isinstance(name_or_path, str) and name_or_path in SHIPPED_STANDINS:
        name_or_path = CHECKPOINT_DIR / name_or_path
    weights, meta_file = _files(name_or_path)
    if not (weights.is_file() and meta_file.is_file()):
        raise ValueError(
            f"load_standin: name_or_path must be one of {list(SHIPPED_STANDINS)} or a stem with "
            f"a .pt and a .json file; got {str(name_or_path)!r}."
        )
    meta = json.loads(meta_file.read_text())
    model = TinyOmni(TinyOmniConfig(**meta["model"]), seed=0)
    model.load_state_dict(torch.load(weights, weights_only=True))
    model.eval()
    return model, meta


def main(argv: list[str] | None = None) -> None:
    """Command line: train a stand-in with :func:`train_standin` and save it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--d", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=256)
    parser.add_argument("--train-samples", type=int, default=30_000)
    parser.add_argument("--windows", type=int, default=8)
    parser.add_argument("--clutter", type=float, default=0.3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--infonce-weight", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    recipe = {
        "train_samples": args.train_samples, "windows": args.windows, "clutter": args.clutter,
        "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
        "infonce_weight": args.infonce_weight, "seed": args.seed,
    }  # fmt: skip
    config = TinyOmniConfig(args.layers, args.d, args.heads, args.d_ff)

    def log(step: int) -> None:
        if step % 250 == 0:
            _LOG.info("step %d", step)

    model, history = train_standin(config, **recipe, on_step=log)
    recipe["train_accuracy"] = history.train_accuracy
    recipe["final_ce"] = float(np.mean(history.ce[-50:]))
    stem = save_standin(model, args.out, recipe)
    _LOG.info("saved %s (last-epoch training accuracy %.3f)", stem, history.train_accuracy)


if __name__ == "__main__":
    main()
