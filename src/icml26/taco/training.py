"""End-to-end meta-training of TACO / POT on the synthetic prior, and checkpoints (spec §2.3, §5.5).

TACO (arXiv:2602.05649): each step samples a batch of prior datasets, (for TACO) draws p from
{1, 2, 4, 8, 16, 32} %, compresses the training rows, predicts the test rows and back-propagates
the cross-entropy through predictor, projection and compressor. AdamW (lr 1e-4, weight decay
0.01), cosine schedule with 2 % linear warm-up (``icml26.core.warmup_cosine_lr``), gradient-norm
clip 1.0.

Checkpoints are ``<stem>.safetensors`` (weights) + ``<stem>.json`` (architecture, model keywords,
training config). ``load_official_checkpoint`` maps the official ``compressor.* / predictor.* /
z_to_pred.*`` state-dict layout onto :class:`TACOModel`.

Deviations: float32 on CPU instead of bf16 AMP on GPUs; steps, batch size and model size are
scaled down by the caller; the names inside each backbone of an official checkpoint are not known
to us, so the loader requires them to equal ours and names every mismatch. The schedule is core's
``warmup_cosine_lr`` with ``round(warmup · steps)`` warm-up steps: it reaches the peak at the last
warm-up step and 0 at the last step; the shipped checkpoints were trained with the earlier private
schedule (at least one warm-up step ending at peak · n/(n + 1), cosine ending just above 0).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from icml26.core import (
    Seed,
    check_in_interval,
    check_positive_int,
    load_state_dict_strict,
    numpy_generator,
    warmup_cosine_lr,
)
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import check_config
from icml26.taco.model import TACOModel, check_file_path
from icml26.taco.prior import MLPSCMPrior

__all__ = [
    "SHIPPED_CHECKPOINTS",
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

    Example
    -------
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
    on_step: Callable[[dict[str, float]], None] | None = None,
    rows_per_step: int | None = None,
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
        If given, the trained model is saved there (``.safetensors`` + ``.json``).
    init_from
        A POT model or checkpoint stem: its backbone initialises the predictor and the
        compressor before training (:func:`init_from_pot`; the official code's option of starting
        from a POT checkpoint).
    on_step
        Called after every step with that step's log entry (e.g. to advance a progress bar).
    rows_per_step
        If given, each step first draws T (``prior.draw_rows``) and then takes
        ``clip(rows_per_step // T, 1, batch_size)`` datasets of T rows, so a step costs about the
        same for small and large tables (TabPFN-style token budget). ``None``: always
        ``batch_size`` datasets.

    Returns
    -------
    list of dict
        ``{"step", "loss", "lr", "percentage", "datasets", "rows"}`` per step (percentage is
        100 for POT; datasets and rows: the batch's B and T).

    Raises
    ------
    ValueError
        On a non-positive step count, batch size or learning rate.

    Example
    -------
    >>> model = TACOModel(TACOConfig.small(nlayers=1), seed=0)
    >>> prior = MLPSCMPrior(n_rows=(40, 60))
    >>> len(train_taco(model, prior, steps=2, batch_size=2, seed=0))
    2
    """
    owner = "train_taco"
    steps = check_positive_int("steps", steps, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    warmup = check_in_interval("warmup", warmup, low=0.0, high=1.0, owner=owner)
    if rows_per_step is not None:
        rows_per_step = check_positive_int("rows_per_step", rows_per_step, owner=owner)
    if init_from is not None:
        init_from_pot(model, init_from)
    rng = numpy_generator(seed)
    warmup_steps = round(warmup * steps)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    history = []
    model.train()
    for step in range(steps):
        if rows_per_step is None:
            batch = prior.sample(batch_size, seed=rng)
        else:
            T = prior.draw_rows(rng)
            size = min(batch_size, max(1, rows_per_step // T))
            batch = prior.sample(size, seed=rng, n_rows=T)
        n = batch.n_train
        p = 100.0
        if model.use_compressor:
            p = model.compression_percentage
            if model.rcp_sampling == "uniform":
                p = float(rng.choice(model.rcp_choices))
        step_lr = warmup_cosine_lr(step, total_steps=steps, peak_lr=lr, warmup_steps=warmup_steps)
        for group in optimiser.param_groups:
            group["lr"] = step_lr
        logits = model(batch.X, batch.y[:, :n], percentage=p)  # (B, M, C)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.y[:, n:].flatten())
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimiser.step()
        history.append(
            {
                "step": step,
                "loss": loss.item(),
                "lr": step_lr,
                "percentage": p,
                "datasets": batch.X.shape[0],
                "rows": batch.X.shape[1],
            }
        )
        log.info("step %d loss %.4f p %.0f", step, history[-1]["loss"], p)
        if on_step is not None:
            on_step(history[-1])
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
            "seed": seed if isinstance(seed, int) else None,
            "prior": vars(prior),
            "init_from": None
            if init_from is None or isinstance(init_from, TACOModel)
            else Path(init_from).name,
            "final_loss_mean_last_10": sum(h["loss"] for h in history[-10:]) / min(10, steps),
        }
        save_checkpoint(model, checkpoint, training=training)
    return history


def _paths(path: str | Path, owner: str) -> tuple[Path, Path]:
    stem = check_file_path(path, owner=owner).with_suffix("")
    return stem.with_suffix(".safetensors"), stem.with_suffix(".json")


def save_checkpoint(
    model: TACOModel, path: str | Path, *, training: dict[str, Any] | None = None
) -> None:
    """Write ``<path>.safetensors`` (weights) and ``<path>.json`` (config and training record).

    Example
    -------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_checkpoint(TACOModel(TACOConfig.small(nlayers=1)), Path(d) / "m")
    ...     load_checkpoint(Path(d) / "m").config.nlayers
    1
    """
    owner = "save_checkpoint"
    if not isinstance(model, TACOModel):
        raise TypeError(f"{owner}: model must be a TACOModel; got {type(model).__name__}.")
    if training is not None and not isinstance(training, dict):
        raise TypeError(f"{owner}: training must be a dict or None; got {type(training).__name__}.")
    weights, meta = _paths(path, owner)
    weights.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(weights))
    record = {"config": model.config.to_dict(), "model": model.hparams(), "training": training}
    meta.write_text(json.dumps(record, indent=2, default=str))


def load_checkpoint(path: str | Path) -> TACOModel:
    """Build a :class:`TACOModel` from a checkpoint written by :func:`save_checkpoint`.

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
    weights, meta = _paths(path, owner)
    for file in (weights, meta):
        if not file.is_file():
            raise FileNotFoundError(f"{owner}: no checkpoint file {str(file)!r}.")
    try:
        record = json.loads(meta.read_text())
        hparams = dict(record["model"])
        hparams["rcp_choices"] = tuple(hparams["rcp_choices"])
        config = TACOConfig(**record["config"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise ValueError(
            f"{owner}: path {str(path)!r} has no valid checkpoint record ({err})."
        ) from None
    model = TACOModel(config, **hparams)
    load_state_dict_strict(model, load_file(str(weights)), owner=f"load_checkpoint({str(path)!r})")
    return model.eval()


def shipped_checkpoint(use_compressor: bool = True) -> Path:
    """Path stem of the small checkpoint shipped in the package (TACO or, if False, POT)."""
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


SHIPPED_CONFIG = TACOConfig(
    emsize=32, nlayers=3, nhead=4, max_classes=4, max_features=32, pre_norm=True
)
SHIPPED_PRIOR = {"n_rows": (64, 256), "n_features": (2, 12)}


def main(argv: list[str] | None = None) -> None:
    """Rebuild the shipped checkpoints (commands in docs/taco.md)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--model", choices=sorted(SHIPPED_CHECKPOINTS), default="taco")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="POT checkpoint stem whose backbone initialises TACO's predictor and compressor",
    )
    parser.add_argument(
        "--prior",
        type=json.loads,
        default={},
        help='MLPSCMPrior keywords over the shipped ones, as JSON, e.g. \'{"tree_prob": 0.5, '
        '"missing_prob": 0.2, "n_rows": [64, 1024]}\' (ranges as 2-element lists)',
    )
    parser.add_argument(
        "--config",
        type=json.loads,
        default={},
        help='TACOConfig fields over the shipped architecture, as JSON, e.g. \'{"emsize": 48, '
        '"max_classes": 10}\'',
    )
    parser.add_argument(
        "--rows-per-step",
        type=int,
        default=None,
        help="row budget of a step: batch = clip(rows_per_step // T, 1, batch_size) (train_taco)",
    )
    args = parser.parse_args(argv)
    prior = {
        **SHIPPED_PRIOR,
        **{k: tuple(v) if isinstance(v, list) else v for k, v in args.prior.items()},
    }
    use_compressor = args.model == "taco"
    config = dataclasses.replace(SHIPPED_CONFIG, **args.config)
    model = TACOModel(config, use_compressor=use_compressor, seed=args.seed)
    out = args.out or shipped_checkpoint(use_compressor)
    train_taco(
        model,
        MLPSCMPrior(**prior),
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        checkpoint=out,
        init_from=args.init_from,
        rows_per_step=args.rows_per_step,
    )


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
