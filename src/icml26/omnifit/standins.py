"""Trained TinyOmni stand-ins: how they are trained, how they load, and the shipped one.

OmniFit is training-free: it compresses an already trained model. The quick reproductions
therefore evaluate a shipped stand-in instead of training one in the run (about 17
CPU-minutes). A stand-in is a core checkpoint (:mod:`icml26.core.standins`):
``<name>.safetensors`` beside ``<name>.json`` holding the :class:`TinyOmniConfig` sizes
(``config``), the training ``recipe``, the ``data``, the ``metrics`` at save time (training
accuracy over the last epoch, final cross-entropy), the command and the code fingerprint.
:data:`STANDINS` declares the shipped ``tinyomni_quick``; it is retrained (resuming after an
interruption) with::

    OMP_NUM_THREADS=1 icml26 tool omnifit train-standin tinyomni_quick [--out DIR]
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from icml26.core.progress import Progress
from icml26.core.standins import (
    Standin,
    TrainedStandin,
    TrainFn,
    checkpoint_dir,
    load_checkpoint,
)
from icml26.core.training import TrainingCheckpoint
from icml26.core.validation import Seed, check_positive_int, numpy_generator
from icml26.omnifit.avsync import make_dataset
from icml26.omnifit.model import TinyOmni, TinyOmniConfig, TrainResult, train_tinyomni
from icml26.omnifit.scene_model import SceneThinker, SceneThinkerConfig

__all__ = [
    "SCENE_STANDINS",
    "SHIPPED_STANDINS",
    "STANDINS",
    "load_scene_standin",
    "load_standin",
    "scene_trainer",
    "standin_trainer",
    "train_standin",
]


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
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> tuple[TinyOmni, TrainResult]:
    """Train a :class:`TinyOmni` of ``config`` on ``train_samples`` fresh AV-Sync QA streams.

    ``seed`` seeds the training streams, the initial weights and the shuffling (three seeds
    drawn from it); the rest is :func:`make_dataset` and :func:`train_tinyomni`, which reports
    to ``progress`` and restores from / saves to ``resume``. Returns the trained model (eval
    mode) and its training history.

    Examples
    --------
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
        model,
        data,
        epochs,
        batch_size,
        lr,
        infonce_weight,
        seed=shuffle_seed,
        progress=progress,
        resume=resume,
    )
    return model, history


def standin_trainer(config: TinyOmniConfig, **recipe: Any) -> TrainFn:
    """The ``train(resume, progress)`` of a :class:`~icml26.core.standins.Standin`.

    It runs :func:`train_standin` with ``config`` and the keyword ``recipe`` (its
    ``train_samples``, ``windows``, ``clutter``, ``epochs``, ``batch_size``, ``lr``,
    ``infonce_weight`` and ``seed``) and returns the model with its config, full recipe
    (defaults included) and final training metrics, ready for
    ``icml26.core.standins.train_standin``.

    Examples
    --------
    >>> train = standin_trainer(TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32),
    ...                         train_samples=8, windows=2, epochs=1, batch_size=4, seed=0)
    >>> trained = train(None, None)
    >>> trained.config["d"], sorted(trained.metrics)
    (16, ['final_ce', 'train_accuracy'])
    """
    if not isinstance(config, TinyOmniConfig):
        raise TypeError(
            f"standin_trainer: config must be a TinyOmniConfig; got {type(config).__name__}."
        )

    settings = ("train_samples", "windows", "clutter", "epochs", "batch_size", "lr",
                "infonce_weight", "seed")  # fmt: skip
    defaults = {
        name: p.default
        for name, p in inspect.signature(train_standin).parameters.items()
        if name in settings
    }
    full = {**defaults, **recipe}  # what the metadata records: every setting, defaults included

    def train(resume: TrainingCheckpoint | None, progress: Progress) -> TrainedStandin:
        model, history = train_standin(config, **recipe, progress=progress, resume=resume)
        return TrainedStandin(
            model=model,
            config=dataclasses.asdict(config),
            recipe=full,
            data=(
                f"{full['train_samples']} AV-Sync QA training streams (icml26.omnifit."
                "make_dataset, split 'train'), generated from the recipe's seed"
            ),
            metrics={
                "train_accuracy": history.train_accuracy,  # over the last epoch
                "final_ce": float(np.mean(history.ce[-50:])),
            },
        )

    return train


def scene_trainer(config: SceneThinkerConfig, **recipe: Any) -> TrainFn:
    """The ``train(resume, progress)`` of a :class:`SceneThinker` stand-in on AV-Scene QA.

    ``recipe`` holds ``train_samples``, ``windows``, ``epochs``, ``batch_size``, ``lr``,
    ``drop_fraction``, ``max_drop`` and ``seed`` (all required): the training clips come from
    ``make_scene_dataset(train_samples, windows, seed, "train")``, the initial weights from
    ``seed`` and the shuffling from ``seed + 1``.

    Examples
    --------
    >>> train = scene_trainer(SceneThinkerConfig(n_layers=1, d=16, n_heads=1, kv_heads=1,
    ...                       d_ff=16), train_samples=8, windows=2, epochs=1, batch_size=4,
    ...                       lr=3e-3, drop_fraction=0.5, max_drop=0.8, seed=0)
    >>> sorted(train(None, None).metrics)
    ['final_ce', 'train_accuracy']
    """
    from icml26.omnifit.avscene import make_scene_dataset
    from icml26.omnifit.scene_model import train_scene_thinker

    if not isinstance(config, SceneThinkerConfig):
        raise TypeError(
            f"scene_trainer: config must be a SceneThinkerConfig; got {type(config).__name__}."
        )
    needed = {"train_samples", "windows", "epochs", "batch_size", "lr", "drop_fraction",
              "max_drop", "seed"}  # fmt: skip
    if set(recipe) != needed:
        raise ValueError(f"scene_trainer: recipe must have exactly the keys {sorted(needed)}.")

    def train(resume: TrainingCheckpoint | None, progress: Progress) -> TrainedStandin:
        seed = recipe["seed"]
        data = make_scene_dataset(recipe["train_samples"], recipe["windows"], seed, "train")
        model = SceneThinker(config, seed=seed)
        history = train_scene_thinker(
            model, data, recipe["epochs"], recipe["batch_size"], recipe["lr"],
            recipe["drop_fraction"], recipe["max_drop"], seed=seed + 1, progress=progress,
            resume=resume,
        )  # fmt: skip
        return TrainedStandin(
            model=model,
            config={"kind": "scene_thinker", **dataclasses.asdict(config)},
            recipe=dict(recipe),
            data=(
                f"{recipe['train_samples']} AV-Scene QA training clips of {recipe['windows']} "
                "chunks (icml26.omnifit.make_scene_dataset, split 'train', the recipe's seed)"
            ),
            metrics={
                "train_accuracy": history.train_accuracy,
                "final_ce": float(np.mean(history.ce[-50:])),
            },
        )

    return train


def load_scene_standin(name_or_path: str | Path) -> tuple[SceneThinker, dict[str, Any]]:
    """Load a :class:`SceneThinker` stand-in by name (:data:`SCENE_STANDINS`) or stem.

    Refuses (``ValueError``) a checkpoint whose metadata is not a SceneThinker's. Returns the
    model in eval mode and the metadata.

    Examples
    --------
    >>> model, meta = load_scene_standin("scene_s0")
    >>> model.config.n_layers, meta["recipe"]["seed"]
    (4, 0)
    """
    owner = "load_scene_standin"
    if not isinstance(name_or_path, str | Path):
        raise TypeError(
            f"{owner}: name_or_path must be a str or Path; got {type(name_or_path).__name__}."
        )
    if isinstance(name_or_path, str) and name_or_path in SCENE_STANDINS:
        name_or_path = checkpoint_dir("omnifit") / name_or_path
    try:
        state, meta = load_checkpoint(name_or_path)
    except FileNotFoundError:
        raise ValueError(
            f"{owner}: name_or_path must be one of {list(SCENE_STANDINS)} or a checkpoint stem "
            f"with a .safetensors and a .json file; got {str(name_or_path)!r}."
        ) from None
    config = dict(meta.get("config") or {})
    fields = {f.name for f in dataclasses.fields(SceneThinkerConfig)}
    if config.pop("kind", None) != "scene_thinker" or not set(config) <= fields:
        raise ValueError(f"{owner}: {str(name_or_path)!r} is not a SceneThinker checkpoint.")
    model = SceneThinker(SceneThinkerConfig(**config), seed=0)
    model.load_state_dict(state)
    model.eval()
    return model, meta


# issue 43's stand-in, scaled to the CPU budget: L = 4, d = 64 (issue: e.g. L = 6, d = 96)
SCENE_CONFIG = SceneThinkerConfig(n_layers=4, d=64, n_heads=4, kv_heads=2, d_ff=128)
SCENE_RECIPE = {
    "train_samples": 6_000,
    "windows": 4,
    "epochs": 6,
    "batch_size": 16,
    "lr": 2e-3,
    "drop_fraction": 0.5,
    "max_drop": 0.8,
}
SCENE_STANDINS = {
    f"scene_s{seed}": Standin(
        name=f"scene_s{seed}",
        system="omnifit",
        description=f"SceneThinker (tiny Qwen2.5-Omni thinker) on AV-Scene QA, seed {seed}",
        train=scene_trainer(SCENE_CONFIG, **SCENE_RECIPE, seed=seed),
        checkpoint_every=250,
    )
    for seed in range(3)
}


# spec §5's quick stand-in (L = 4, d = 64): 12K streams x 8 epochs = 3000 steps
TINYOMNI_QUICK = TinyOmniConfig(n_layers=4, d=64, n_heads=4, d_ff=128)
TINYOMNI_QUICK_RECIPE = {
    "train_samples": 12_000,
    "windows": 8,
    "clutter": 0.3,
    "epochs": 8,
    "batch_size": 32,
    "lr": 2e-3,
    "infonce_weight": 0.1,
    "seed": 0,
}
STANDINS = {
    "tinyomni_quick": Standin(
        name="tinyomni_quick",
        system="omnifit",
        description="TinyOmni L=4, d=64 on AV-Sync QA (3000 steps): the quick presets' model",
        train=standin_trainer(TINYOMNI_QUICK, **TINYOMNI_QUICK_RECIPE),
        checkpoint_every=250,
    ),
    **SCENE_STANDINS,
}
SHIPPED_STANDINS = tuple(STANDINS)


def load_standin(
    name_or_path: str | Path, expect: Mapping[str, Any] | None = None
) -> tuple[TinyOmni, dict[str, Any]]:
    """Load a shipped stand-in by name (:data:`SHIPPED_STANDINS`) or a checkpoint stem.

    A checkpoint is one written by :func:`icml26.core.standins.save_checkpoint` whose metadata
    holds the :class:`TinyOmniConfig` fields under ``"config"``. ``expect`` maps config or
    recipe keys to the values the caller needs; a stand-in made otherwise is refused with a
    ``ValueError`` listing each difference. Returns the model in eval mode and the metadata.

    Examples
    --------
    >>> model, meta = load_standin("tinyomni_quick", expect={"d": 64, "epochs": 8})
    >>> model.config.n_layers, meta["recipe"]["train_samples"]
    (4, 12000)
    """
    owner = "load_standin"
    if not isinstance(name_or_path, str | Path):
        raise TypeError(
            f"{owner}: name_or_path must be a str or Path; got {type(name_or_path).__name__}."
        )
    if expect is not None and not isinstance(expect, Mapping):
        raise TypeError(f"{owner}: expect must be a mapping; got {type(expect).__name__}.")
    if isinstance(name_or_path, str) and name_or_path in SHIPPED_STANDINS:
        name_or_path = checkpoint_dir("omnifit") / name_or_path
    try:
        state, meta = load_checkpoint(name_or_path)
    except FileNotFoundError:
        raise ValueError(
            f"{owner}: name_or_path must be one of {list(SHIPPED_STANDINS)} or a checkpoint "
            f"stem with a .safetensors and a .json file; got {str(name_or_path)!r}."
        ) from None
    fields = {f.name for f in dataclasses.fields(TinyOmniConfig)}
    config = meta.get("config")
    if not isinstance(config, dict) or not set(config) <= fields:
        raise ValueError(
            f"{owner}: {str(name_or_path)!r} is not a TinyOmni checkpoint (its metadata must "
            f"hold 'config' with fields of TinyOmniConfig: {sorted(fields)})."
        )
    saved = {**meta.get("recipe", {}), **config}
    wrong = [
        f"{key}={value!r} (stand-in: {saved.get(key)!r})"
        for key, value in (expect or {}).items()
        if saved.get(key) != value
    ]
    if wrong:
        raise ValueError(
            f"{owner}: {str(name_or_path)!r} was not made with the expected settings: "
            f"{', '.join(wrong)}."
        )
    model = TinyOmni(TinyOmniConfig(**config), seed=0)
    model.load_state_dict(state)
    model.eval()
    return model, meta
