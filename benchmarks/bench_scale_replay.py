"""Records of the shipped v1 policies of ``scale``; a cheap check that retraining reproduces them.

``record NAME --losses FILE [--time FILE]`` writes ``benchmarks/records/scale/NAME.json`` after
``icml26 tool scale train-standin NAME``: the checkpoint's recipe and metrics, the training loss
history as the train-standin run saved it in its resume file (``FILE``: ``{"step", "losses"}``,
copied out while it ran; the first steps in full, then means per 1000 steps), the CPU time of
the run (``/usr/bin/time -f "%U user %S sys %e wall"`` output) and a summary of the shipped
weights' prefill logits on fixed inputs (``icml26.scale.standins._logits_summary``;
``tests/scale`` compares the shipped weights with it). ``replay NAME [--steps 20]`` reruns the
declared stand-in's ``train``
(what ``train-standin`` runs: same data, initialisation and minibatch draws), stops after
``--steps`` optimiser steps, and stores those losses and their largest difference from the
recorded ones in the record: the first minibatches replayed, not a full retrain (about 30 CPU-s:
the 8000 + 800 DART episodes are rebuilt first).

    OMP_NUM_THREADS=1 python benchmarks/bench_scale_replay.py record reach_v1_film_s0 \\
        --losses runs/scale_train/reach_v1_film_s0_losses.json --time runs/scale_train/s0.time
    OMP_NUM_THREADS=1 python benchmarks/bench_scale_replay.py replay reach_v1_film_s0
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

RECORDS = Path(__file__).resolve().parent / "records" / "scale"
FIRST = 50  # training losses kept step by step
KEPT = ("recipe", "config", "metrics", "command", "code_fingerprint", "created")


class _StopError(Exception):
    pass


def _path(name: str) -> Path:
    return RECORDS / f"{name}.json"


def _record(args: argparse.Namespace) -> None:
    from icml26.scale import load_policy
    from icml26.scale.standins import _logits_summary

    model, meta = load_policy(args.name)
    history = json.loads(Path(args.losses).read_text())
    losses = [float(x) for x in history["losses"]]
    if len(losses) != int(history["step"]):
        raise SystemExit(f"{args.losses}: {len(losses)} losses for step {history['step']}")
    record: dict[str, Any] = {
        "name": args.name,
        "checkpoint": {k: meta[k] for k in KEPT},
        "training_losses_first": losses[:FIRST],
        "training_loss_means_per_1000_steps": [
            float(np.mean(losses[i : i + 1000])) for i in range(0, len(losses) - 999, 1000)
        ],
        "training_losses_saved_until_step": len(losses),
        "logits_summary": _logits_summary(model),
    }
    if args.time:
        user, _, system, _, wall, _ = Path(args.time).read_text().split()[-6:]
        record["training_cpu_s"] = round(float(user) + float(system), 1)
        record["training_wall_s"] = round(float(wall), 1)
    RECORDS.mkdir(parents=True, exist_ok=True)
    _path(args.name).write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({k: record[k] for k in ("name", "logits_summary")}))


def _replay(args: argparse.Namespace) -> None:
    from icml26.scale.standins import STANDINS

    torch.set_num_threads(1)
    record = json.loads(_path(args.name).read_text())
    if args.name not in STANDINS:
        raise SystemExit(f"{args.name} is not a declared stand-in")
    losses: list[float] = []

    def progress(done: int, total: int, metrics: dict[str, float]) -> None:
        losses.append(float(metrics["loss"]))
        if done >= args.steps:
            raise _StopError

    start = time.process_time()
    with contextlib.suppress(_StopError):
        STANDINS[args.name].train(None, progress)
    recorded = record["training_losses_first"][: args.steps]
    diff = float(np.max(np.abs(np.subtract(losses, recorded))))
    record["replay"] = {
        "steps": args.steps,
        "losses": losses,
        "max_abs_diff_to_training": diff,
        "cpu_s": round(time.process_time() - start, 1),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    _path(args.name).write_text(json.dumps(record, indent=2) + "\n")
    shown = ("steps", "max_abs_diff_to_training", "cpu_s")
    print(json.dumps({"name": args.name, **{k: record["replay"][k] for k in shown}}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="write the record of a freshly trained stand-in")
    rec.add_argument("name")
    rec.add_argument("--losses", required=True, help="JSON {step, losses} from the resume file")
    rec.add_argument("--time", default=None, help="/usr/bin/time output of the training run")
    rep = sub.add_parser("replay", help="rerun the first steps of the recipe, compare losses")
    rep.add_argument("name")
    rep.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    (_record if args.command == "record" else _replay)(args)


if __name__ == "__main__":
    main()
