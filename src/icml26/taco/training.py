"""End-to-end meta-training of TACO / POT on the synthetic prior, and checkpoints (spec §2.3, §5.5).

TACO (arXiv:2602.05649): each step samples a batch of prior datasets, (for TACO) draws p from
{1, 2, 4, 8, 16, 32} %, compresses the training rows, predicts the test rows and back-propagates
the cross-entropy through predictor, projection and compressor. AdamW (lr 1e-4, weight decay
0.01), cosine schedule with 2 % linear warm-up (``icml26.core.warmup_cosine_lr``), gradient-norm
clip 1.0.

Checkpoints are core's stand-in format (``icml26.core.save_checkpoint``): ``<stem>.safetensors``
(weights) + ``<stem>.json`` whose ``config`` holds the architecture and the model keywords and
whose ``recipe`` holds the training settings. The shipped stand-ins and the command that retrains
them are declared in :mod:`icml26.taco.standins`. ``load_official_checkpoint`` maps the official
``compressor.* / predictor.* / z_to_pred.*`` state-dict layout onto :class:`TACOModel`.

Deviations: float32 on CPU instead of bf16 AMP on GPUs; steps, batch size and model size are
scaled down by the caller; the names inside each backbone of an official checkpoint are not known
to us, so the loader requires them to equal ours and names every mismatch. The schedule is core's
``warmup_cosine_lr`` with ``round(warmup · steps)`` warm-up steps: it reaches the peak at the last
warm-up step and 0 at the last step; the shipped checkpoints were trained with the earlier private
schedule (at least one warm-up step ending at peak · n/(n + 1), cosine ending just above 0).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    TrainingCheckpoint,
    adamw,
    check_in_interval,
    check_positive_int,
    load_state_dict_strict,
    numpy_generator,
    optimizer_step,
    progress_reporter,
    set_lr,
    warmup_cosine_lr,
)
from icml26.core import load_checkpoint as load_core_checkpoint
from icml26.core import save_checkpoint as save_core_checkpoint
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import check_config
from icml26.taco.model import TACOModel, check_file_path
from icml26.taco.prior import MLPSCMPrior

__all__ = [
    "SHIPPED_CHECKPOINTS",
    "checkpoint_config",
    "init_from_pot",
    "load_checkpoint",
    "load_official_checkpoint",
    "save_checkpoint",
    "shipped_checkpoint",
    "train_taco",
]

log = logging.getLogger(__name__)
SHIPPED_CHECKPOINTS = {"taco": "taco_long", "pot": "pot_ext"}
_OFFICIAL_PREFIXES = {
    "compressor.": "compressor.",
    "predictor.": "predictor.",
    "z_to_pred.": "projection.",
}


def init_from_pot(model: TACOModel, pot: TACOModel | str | Path) -> list[str]:
    """Copy a trained POT's backbone into ``model``'s predictor and (if any) compressor.

    POT and TACO build every backbone from the same :class:`PerFeatureTransformer`, so the
    mapping is explicit: ``predictor.<name>`` of POT -> ``predictor.<name>`` and
    ``compressor.<name>`` of TACO. The projection keeps its identity initialisation.

    Parameters
    ----------
    model
        The model to initialise (in place).
    pot
        A POT model, or the stem of a POT checkpoint (``load_checkpoint``).

    Returns
    -------
    list of str
        The TACO parameter names that were copied.

    Raises
    ------
    icml26.core.StateDictMismatchError
        If a backbone parameter is missing on either side or a shape differs (every mismatch
        is named, with both shapes); nothing is copied then.

    Examples
    --------
    >>> pot = TACOModel(TACOConfig.small(nlayers=1), use_compressor=False)
    >>> taco = TACOModel(TACOConfig.small(nlayers=1))
    >>> len(init_from_pot(taco, pot)) == 2 * len(pot.predictor.state_dict())
    True
    """
    if not isinstance(model, TACOModel):
        raise TypeError(f"init_from_pot: model must be a TACOModel; got {type(model).__name__}.")
    if not isinstance(pot, TACOModel | str | os.PathLike):
        raise TypeError(
            f"init_from_pot: pot must be a TACOModel or a checkpoint path; "
            f"got {type(pot).__name__}."
        )
    if not isinstance(pot, TACOModel):
        pot = load_checkpoint(pot)
    source = pot.predictor.state_dict()
    targets = [model.predictor] + ([model.compressor] if model.use_compressor else [])
    prefixes = ["predictor."] + (["compressor."] if model.use_compressor else [])
    copied = []
    for prefix, backbone in zip(prefixes, targets, strict=True):
        # the keys are the backbone's own; the owner says which of TACO's backbones it is
        load_state_dict_strict(backbone, source, owner=f"init_from_pot ({prefix}*)")
        copied += [prefix + name for name in source]
    return copied


def train_taco(
    model: TACOModel,
    prior: MLPSCMPrior,
    *,
    steps: int,
    batch_size: int = 16,
    lr: float = 1e-4,
    weight_decay: float = 0.01,
    warmup: float = 0.02,
    clip: float = 1.0,
    seed: Seed = 0,
    checkpoint: str | Path | None = None,
    init_from: TACOModel | str | Path | None = None,
    rows_per_step: int | None = None,
    resume: TrainingCheckpoint | None = None,
    progress: Progress = None,
    shuffle_codes: bool = False,
) -> list[dict[str, float]]:
    """Meta-train ``model`` in place on datasets from ``prior``; return the per-step log.

    Parameters
    ----------
    model
        TACO (compressor enabled) or POT (``use_compressor=False``).
    prior
        Source of training datasets.
    steps, batch_size
        Optimiser steps and datasets per step.
    lr, weight_decay, warmup, clip
        AdamW peak learning rate and weight decay, warm-up fraction, gradient-norm clip. The
        learning rate follows ``icml26.core.warmup_cosine_lr`` with ``round(warmup · steps)``
        warm-up steps and decays to 0 at the last step.
    seed
        Seeds the prior draws and the per-step compression percentages.
    checkpoint
        If given, the trained model is saved there (:func:`save_checkpoint`).
    init_from
        A POT model or checkpoint stem: its backbone initialises the predictor and the
        compressor before training (:func:`init_from_pot`; the official code's option of starting
        from a POT checkpoint).
    rows_per_step
        If given, each step first draws T (``prior.draw_rows``) and then takes
        ``clip(rows_per_step // T, 1, batch_size)`` datasets of T rows, so a step costs about the
        same for small and large tables (TabPFN-style token budget). ``None``: always
        ``batch_size`` datasets.
    resume
        A :class:`icml26.core.TrainingCheckpoint`: the run starts from its saved state (model,
        optimiser, prior draws, log) if there is one and saves there every ``resume.every``
        steps, so an interrupted run continues where it stopped and ends with the same weights.
    progress
        ``True`` (a progress bar), a callable ``progress(done, total, {"loss": ...})`` or
        ``None`` (``icml26.core.progress``).
    shuffle_codes
        A training-time augmentation (not in the paper): every dataset of every step gets a
        fresh random permutation of the positional code table, so feature group j carries
        ``r[perm[j]]`` instead of r_j and no code sits on the same group in every table
        (``TACOModel.forward(code_order=...)``). The permutations come from a child stream of
        ``seed`` (``Generator.spawn``), so the prior draws, and thus the datasets, are the same
        with and without the shuffle. Inference keeps the paper's fixed assignment.

    Returns
    -------
    list of dict
        ``{"step", "loss", "lr", "percentage", "datasets", "rows"}`` per step (percentage is
        100 for POT; datasets and rows: the batch's B and T).

    Raises
    ------
    ValueError
        On a non-positive step count, batch size or learning rate.
    icml26.core.NonFiniteLossError
        If a step's loss is NaN or infinite (before that step updates the weights).

    Examples
    --------
    >>> model = TACOModel(TACOConfig.small(nlayers=1), seed=0)
    >>> prior = MLPSCMPrior(n_rows=(40, 60))
    >>> len(train_taco(model, prior, steps=2, batch_size=2, seed=0))
    2
    """
    owner = "train_taco"
    if not isinstance(model, TACOModel):
        raise TypeError(f"{owner}: model must be a TACOModel; got {type(model).__name__}.")
    if not callable(getattr(prior, "sample", None)):
        raise TypeError(
            f"{owner}: prior must be a prior with a sample method (MLPSCMPrior, MixturePrior); "
            f"got {type(prior).__name__}."
        )
    steps = check_positive_int("steps", steps, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    warmup = check_in_interval("warmup", warmup, low=0.0, high=1.0, owner=owner)
    if rows_per_step is not None:
        rows_per_step = check_positive_int("rows_per_step", rows_per_step, owner=owner)
    if not isinstance(shuffle_codes, bool):
        raise TypeError(f"{owner}: shuffle_codes must be a bool; got {shuffle_codes!r}.")
    if resume is not None and not isinstance(resume, TrainingCheckpoint):
        raise TypeError(
            f"{owner}: resume must be an icml26.core.TrainingCheckpoint or None; "
            f"got {type(resume).__name__}."
        )
    if init_from is not None:
        init_from_pot(model, init_from)
    rng = numpy_generator(seed)
    warmup_steps = round(warmup * steps)
    optimiser = adamw(model, lr=lr, weight_decay=weight_decay)
    generators = {"prior": rng}
    if shuffle_codes:  # a child stream: the prior draws stay those of the unshuffled run
        generators["codes"] = rng.spawn(1)[0]
    start = 0 if resume is None else resume.restore(model, optimiser, generators)
    history = [] if resume is None else list(resume.extra.get("history", []))[:start]
    model.train()
    with progress_reporter(progress, steps, owner) as report:
        for step in range(start, steps):
            if rows_per_step is None:
                batch = prior.sample(batch_size, seed=rng)
            else:
                T = prior.draw_rows(rng)
                size = min(batch_size, max(1, rows_per_step // T))
                batch = prior.sample(size, seed=rng, n_rows=T)
            n = batch.n_train
            code_order = None
            if shuffle_codes:
                G = model.config.max_groups
                code_order = torch.as_tensor(
                    np.stack([generators["codes"].permutation(G) for _ in batch.X])
                )
            p = 100.0
            if model.use_compressor:
                p = model.compression_percentage
                if model.rcp_sampling == "uniform":
                    p = float(rng.choice(model.rcp_choices))
            step_lr = warmup_cosine_lr(
                step, total_steps=steps, peak_lr=lr, warmup_steps=warmup_steps
            )
            set_lr(optimiser, step_lr)
            logits = model(batch.X, batch.y[:, :n], percentage=p, code_order=code_order)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.y[:, n:].flatten())
            value = optimizer_step(loss, optimiser, step=step, clip=clip, owner=owner)
            history.append(
                {
                    "step": step,
                    "loss": value,
                    "lr": step_lr,
                    "percentage": p,
                    "datasets": batch.X.shape[0],
                    "rows": batch.X.shape[1],
                }
            )
            log.info("step %d loss %.4f p %.0f", step, value, p)
            report(step + 1, loss=value)
            if resume is not None:
                resume.save_if_due(step + 1, model, optimiser, generators, {"history": history})
    model.eval()
    if checkpoint is not None:
        training = {
            "steps": steps,
            "batch_size": batch_size,
            "lr": lr,
            "weight_decay": weight_decay,
            "warmup": warmup,
            "clip": clip,
            "rows_per_step": rows_per_step,
            **({"shuffle_codes": True} if shuffle_codes else {}),
            "seed": seed if isinstance(seed, int) else None,
            "prior": vars(prior),
            "init_from": None
            if init_from is None or isinstance(init_from, TACOModel)
            else Path(init_from).name,
            "final_loss_mean_last_10": sum(h["loss"] for h in history[-10:]) / min(10, steps),
        }
        save_checkpoint(model, checkpoint, recipe=training)
    return history


def checkpoint_config(model: TACOModel) -> dict[str, Any]:
    """What rebuilds ``model``: ``{"architecture": TACOConfig fields, "model": its keywords}``.

    It is the ``config`` of a TACO checkpoint's metadata.

    Examples
    --------
    >>> checkpoint_config(TACOModel(TACOConfig.small(nlayers=1)))["architecture"]["nlayers"]
    1
    """
    if not isinstance(model, TACOModel):
        raise TypeError(
            f"checkpoint_config: model must be a TACOModel; got {type(model).__name__}."
        )
    return {"architecture": model.config.to_dict(), "model": model.hparams()}


def save_checkpoint(
    model: TACOModel, path: str | Path, *, recipe: dict[str, Any] | None = None
) -> None:
    """Write ``<path>.safetensors`` (weights) and ``<path>.json`` (config and training recipe).

    The files are core's stand-in format (``icml26.core.save_checkpoint``); the metadata's
    ``config`` is :func:`checkpoint_config` and its ``recipe`` is ``recipe`` (``{}`` if None).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_checkpoint(TACOModel(TACOConfig.small(nlayers=1)), Path(d) / "m")
    ...     load_checkpoint(Path(d) / "m").config.nlayers
    1
    """
    owner = "save_checkpoint"
    if not isinstance(model, TACOModel):
        raise TypeError(f"{owner}: model must be a TACOModel; got {type(model).__name__}.")
    if recipe is not None and not isinstance(recipe, dict):
        raise TypeError(f"{owner}: recipe must be a dict or None; got {type(recipe).__name__}.")
    stem = check_file_path(path, owner=owner).with_suffix("")
    meta = {"config": checkpoint_config(model), "recipe": recipe or {}}
    save_core_checkpoint(stem, model, json.loads(json.dumps(meta, default=str)))


def load_checkpoint(path: str | Path) -> TACOModel:
    """Build a :class:`TACOModel` from a checkpoint written by :func:`save_checkpoint`.

    Reads core's stand-in format (``icml26.core.load_checkpoint``): the shipped stand-ins
    (:mod:`icml26.taco.standins`) and files written by :func:`save_checkpoint` or
    ``icml26 tool taco train-standin``.

    Raises
    ------
    TypeError, ValueError
        If ``path`` is not a path naming a file, or its JSON record is not a checkpoint's.
    FileNotFoundError
        If the weights or the JSON file is missing.
    icml26.core.StateDictMismatchError
        If the weights do not match the architecture the JSON file describes (every missing,
        unexpected or misshapen tensor is named).
    """
    owner = "load_checkpoint"
    stem = check_file_path(path, owner=owner).with_suffix("")
    for suffix in (".safetensors", ".json"):
        if not stem.with_suffix(suffix).is_file():
            raise FileNotFoundError(
                f"{owner}: no checkpoint file {str(stem.with_suffix(suffix))!r}."
            )
    try:
        state, meta = load_core_checkpoint(stem)
        hparams = dict(meta["config"]["model"])
        hparams["rcp_choices"] = tuple(hparams["rcp_choices"])
        config = TACOConfig(**meta["config"]["architecture"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise ValueError(
            f"{owner}: path {str(path)!r} has no valid checkpoint record ({err!r})."
        ) from None
    model = TACOModel(config, **hparams)
    load_state_dict_strict(model, state, owner=f"load_checkpoint({str(path)!r})")
    return model.eval()


def shipped_checkpoint(use_compressor: bool = True) -> Path:
    """Path stem of the stand-in ``TACOClassifier()`` loads (TACO or, if False, POT).

    :data:`SHIPPED_CHECKPOINTS` names them; :mod:`icml26.taco.standins` declares how each
    shipped stand-in was trained.
    """
    name = SHIPPED_CHECKPOINTS["taco" if use_compressor else "pot"]
    return Path(__file__).parent / "checkpoints" / name


def load_official_checkpoint(
    path: str | Path, config: TACOConfig, *, use_compressor: bool = True
) -> TACOModel:
    """Load an official-layout state dict (``compressor.*``, ``predictor.*``, ``z_to_pred.*``).

    The file is read with ``torch.load(weights_only=True)``; a top-level ``"state_dict"`` entry is
    unwrapped. Every key and shape must match; the mismatch is named otherwise.

    Raises
    ------
    KeyError
        If a key has none of the official prefixes.
    icml26.core.StateDictMismatchError
        If, after renaming, keys are missing or unexpected or a tensor's shape differs from the
        model's (every mismatch is named).
    """
    owner = "load_official_checkpoint"
    path = check_file_path(path, owner=owner)
    config = check_config(config, owner=owner)
    state = torch.load(str(path), map_location="cpu", weights_only=True)
    state = state.get("state_dict", state)
    renamed = {}
    for key, value in state.items():
        prefix = next((p for p in _OFFICIAL_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            raise KeyError(f"load_official_checkpoint: unexpected key {key!r}.")
        renamed[_OFFICIAL_PREFIXES[prefix] + key[len(prefix) :]] = value
    model = TACOModel(config, use_compressor=use_compressor)
    load_state_dict_strict(model, renamed, owner="load_official_checkpoint")
    return model.eval()


def held_out_prior_loss(
    model: TACOModel,
    prior: MLPSCMPrior,
    *,
    n_datasets: int = 200,
    seed: Seed = 987_654,
    percentage: float = 4.0,
) -> dict[str, float]:
    """Mean test cross-entropy (nats per row) on ``n_datasets`` fresh prior datasets.

    One dataset at a time: TACO compresses its training rows at ``percentage`` and predicts the
    test rows; POT uses the full training table. Probabilities are the softmax over the
    dataset's C classes (as ``TACOClassifier`` does). ``label_frequency`` is the same loss of the
    Laplace-smoothed frequencies of the context labels, the floor a model has to beat. The
    draws come from ``seed`` only, so two models see the same datasets; the default seed is not
    one that training uses (``train_taco`` seeds 0).

    Returns
    -------
    dict
        ``{"model": nats, "label_frequency": nats, "n_datasets": n}``; datasets with more
        classes than the model has outputs are skipped (and not counted).
    """
    owner = "held_out_prior_loss"
    n_datasets = check_positive_int("n_datasets", n_datasets, owner=owner)
    rng = numpy_generator(seed)
    ours, floor = [], []
    model.eval()
    with torch.no_grad():
        for _ in range(n_datasets):
            batch = prior.sample(1, seed=rng)
            n, C = batch.n_train, int(batch.n_classes[0])
            if model.config.max_classes < C:
                continue
            y_test = batch.y[0, n:]
            if model.use_compressor:
                context = model.compress(batch.X[:, :n], batch.y[:, :n], percentage=percentage)
                logits = model.predict_logits(context, batch.X[:, n:])
            else:
                logits = model.predictor(batch.X, batch.y[:, :n])
            log_p = logits[0, :, :C].double().log_softmax(-1)
            ours.append(float(-log_p[torch.arange(len(y_test)), y_test].mean()))
            counts = torch.bincount(batch.y[0, :n], minlength=C).double() + 1.0
            floor.append(float(-(counts / counts.sum()).log()[y_test].mean()))
    count = len(ours)
    return {
        "model": sum(ours) / max(1, count),
        "label_frequency": sum(floor) / max(1, count),
        "n_datasets": count,
    }
