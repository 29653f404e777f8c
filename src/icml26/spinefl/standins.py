"""Shipped seed-0 global models of the conv testbed (issue 50/51), and how they are trained.

One stand-in per method of ``spinefl.fmnist_conv``: the final global :class:`SliceableConvNet`
of one federated run on the shipped Fashion-MNIST subset (Dirichlet alpha = 0.1, seed 0,
:data:`STANDIN_RECIPE`; SpineFL with the knobs frozen after tuning, :data:`SPINE_TUNED`). The
quick preset evaluates them instead of training. Retrain one with::

    OMP_NUM_THREADS=1 icml26 tool spinefl train-standin fmnist_conv_spinefl [--out DIR]

A stand-in is one federated run (about 1-2 CPU-minutes); an interrupted run restarts from round
0 (the resume unit is the stand-in, not the round).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from icml26.core.progress import Progress
from icml26.core.standins import Standin, TrainedStandin, TrainFn, load_checkpoint
from icml26.core.training import TrainingCheckpoint
from icml26.spinefl.conv_testbed import (
    SPINE_TUNED,
    ConvRecipe,
    item_correct,
    make_conv_task,
    run_conv_method,
)
from icml26.spinefl.models import SliceableConvNet
from icml26.spinefl.names import CONV_METHODS

__all__ = ["CONV_METHODS", "STANDINS", "STANDIN_RECIPE", "load_conv_standin", "standin_name"]

STANDIN_RECIPE = ConvRecipe(rounds=20, spine=SPINE_TUNED)
STANDIN_ALPHA, STANDIN_SEED = 0.1, 0


def standin_name(method: str) -> str:
    """``fmnist_conv_<method>`` in lower case with ``-`` as ``_``."""
    if method not in CONV_METHODS:
        raise ValueError(f"standin_name: method must be one of {CONV_METHODS}; got {method!r}.")
    return "fmnist_conv_" + method.lower().replace("-", "_")


def _trainer(method: str) -> TrainFn:
    def train(resume: TrainingCheckpoint | None, progress: Progress) -> TrainedStandin:
        torch.set_num_threads(1)
        task = make_conv_task(STANDIN_ALPHA, STANDIN_SEED, STANDIN_RECIPE)
        history, model = run_conv_method(
            task, method, STANDIN_RECIPE, STANDIN_SEED, progress=progress
        )
        val = float(item_correct(model, *task.val).mean())
        mech = {k: float(v) for k, v in history.mechanism.items() if isinstance(v, int | float)}
        return TrainedStandin(
            model=model,
            config={"class": "SliceableConvNet", "channels": list(model.channels)},
            recipe={
                "method": method,
                "alpha": STANDIN_ALPHA,
                "seed": STANDIN_SEED,
                **{k: v for k, v in STANDIN_RECIPE.__dict__.items() if k != "spine"},
                "spine": dict(STANDIN_RECIPE.spine),
            },
            data="icml26/spinefl/data/fashion_mnist_subset.npz (12 000 train, Dirichlet 0.1 "
            "over 20 clients; val/test 2 000 each)",
            metrics={"test_acc": history.global_acc[-1], "val_acc": val, **mech},
        )

    return train


STANDINS = {
    standin_name(m): Standin(
        name=standin_name(m),
        system="spinefl",
        description=f"{m}: seed-0 global conv net after {STANDIN_RECIPE.rounds} rounds, "
        "Fashion-MNIST subset, alpha 0.1",
        train=_trainer(m),
    )
    for m in CONV_METHODS
}


@cache
def load_conv_standin(method: str) -> tuple[SliceableConvNet, dict[str, Any]]:
    """The shipped seed-0 global model of ``method`` (eval mode) and its record; cached.

    Refuses a checkpoint whose config is not a :class:`SliceableConvNet`.
    """
    state, meta = load_checkpoint(STANDINS[standin_name(method)].path)
    config = meta.get("config", {})
    if config.get("class") != "SliceableConvNet":
        raise ValueError(f"load_conv_standin: {method!r} is not a SliceableConvNet checkpoint.")
    model = SliceableConvNet(channels=tuple(config["channels"]), device="meta")
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval(), meta
