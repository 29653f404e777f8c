"""Pilot of a candidate TinyVLA recipe (issue 42): train one seed, then judge it on dense competence
and the testbed gates only — never on EAP's or any other pruning method's closed-loop success.

    python benchmarks/bench_ecovla_pilot.py --tag L6_pt --layers 6 --pretrain-episodes 300 \\
        --pretrain-steps 1000 [--steps 1200] [--encoder-steps 600] [--seed 0] \\
        [--episodes 150] [--out benchmarks/records/ecovla/pilots.jsonl]

Training is ``train_policy_recipe`` (what ``icml26 tool ecovla train-standin`` runs) on the
recipe given on the command line, resumable (``runs/ecovla_pilot/<tag>_s<seed>.resume.pt``); the
weights go to ``runs/ecovla_pilot/<tag>_s<seed>``. The gates are measured as ``ecovla.indist``
and ``ecovla.shift`` measure them, but on episodes and frames of another evaluation seed
(``--eval-seed``, default 4242, not quick's 20261207), so choosing a recipe here does not select
on the quick run's episodes: G1 dense success in distribution, G5 skipped backbone, G4 action
noise sigma 0.1, G2/G3 open-loop static Wanda / random error at 25 % on 300 expert frames, G6
reach/carry keep-set Jaccard, G1s dense success on the shift split. One JSON line per pilot is
appended to ``--out`` (with the recipe, training and evaluation CPU-s).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch


def train(recipe, stem: Path) -> tuple[dict, float]:
    """Train (or load a finished) pilot; returns its record and the training CPU-s."""
    from icml26.core import TrainingCheckpoint, load_checkpoint, save_checkpoint
    from icml26.ecovla.standins import train_policy_recipe

    if stem.with_suffix(".json").is_file():
        return load_checkpoint(stem)[1], 0.0
    stem.parent.mkdir(parents=True, exist_ok=True)
    start = time.process_time()
    resume = TrainingCheckpoint(stem.parent / f"{stem.name}.resume.pt", every=200)

    def progress(done: int, total: int, metrics: dict) -> None:
        if done % 100 == 0 or done == total:
            print(f"  step {done}/{total} loss {metrics['loss']:.4f}", flush=True)

    trained = train_policy_recipe(recipe, resume, progress)
    cpu = time.process_time() - start
    meta = {
        "config": trained.config,
        "recipe": trained.recipe,
        "metrics": trained.metrics,
        "data": trained.data,
        "train_cpu_s": cpu,
    }
    save_checkpoint(stem, trained.model, meta)
    resume.remove()
    return meta, cpu


def gates(stem: Path, episodes: int, eval_seed: int) -> dict:
    """The gates of ``ecovla.indist`` / ``ecovla.shift`` on the pilot's weights."""
    from icml26.core import load_checkpoint
    from icml26.ecovla import (
        DensePolicy,
        NoisyPolicy,
        TinyVLA,
        TinyVLAConfig,
        calibration_energy,
        first_action_errors,
        random_pattern,
    )
    from icml26.ecovla.experiments.common import (
        PRESETS,
        calibration_sets,
        openloop_frames,
        play,
        relative_errors,
        success,
    )
    from icml26.ecovla.experiments.indist import _phase_jaccard
    from icml26.ecovla.pruner import SkipBackbonePolicy

    state, meta = load_checkpoint(stem)
    model = TinyVLA(TinyVLAConfig(**meta["config"]), seed=0)
    model.load_state_dict(state)
    model.eval()
    config = replace(
        PRESETS["full"],
        episodes=episodes,
        eval_seed=eval_seed,
        openloop_frames=300,
        openloop_random=3,
        phase_pairs=20,
    )
    rng = np.random.default_rng(config.eval_seed + 2)
    initial, _ = calibration_sets(config)
    frames = openloop_frames(config, "train")
    energy = calibration_energy(model, initial)
    dense_errors = first_action_errors(model, frames)
    r = config.openloop_ratio
    static = first_action_errors(model, frames, model.pattern_from_energy(*energy, r))
    rand = np.mean(
        [
            first_action_errors(model, frames, random_pattern(model, r, seed=rng.integers(2**31)))
            for _ in range(config.openloop_random)
        ],
        axis=0,
    )
    jaccard = _phase_jaccard(model, frames, config, rng)
    dense = DensePolicy(model)
    methods = {
        "dense": dense,
        "skip": SkipBackbonePolicy(model),
        "noisy": NoisyPolicy(dense, config.noise, seed=rng.integers(2**31)),
    }
    played = play(model, methods, "train", config)
    shift = play(model, {"dense": dense}, "shift", config)
    sr = {key: success(value) for key, value in played.items() if ":" not in key}
    per_frame = relative_errors(static, dense_errors)
    return {
        "G1_dense_indist": float(sr["dense"].mean()),
        "G5_skip": float(sr["skip"].mean()),
        "G4_noise_minus_dense": float((sr["noisy"] - sr["dense"]).mean()),
        "G2_static_openloop_ratio": float(np.mean(per_frame)),
        "G3_random_openloop_ratio": float(np.mean(relative_errors(rand, dense_errors))),
        "G6_phase_jaccard": float(np.mean(jaccard)),
        "G1s_dense_shift": float(success(shift["dense"]).mean()),
        "openloop_dense_error": float(np.mean(dense_errors)),
        "dense_failures": dict(
            zip(*np.unique(played["dense"].failure, return_counts=True), strict=True)
        ),
        "episodes": episodes,
        "eval_seed": eval_seed,
    }


def main() -> None:
    from icml26.ecovla.standins import PolicyRecipe

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tag", required=True)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--pretrain-episodes", type=int, default=0)
    parser.add_argument("--pretrain-steps", type=int, default=0)
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--encoder-steps", type=int, default=600)
    parser.add_argument("--demo-episodes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=150)
    parser.add_argument("--eval-seed", type=int, default=4242)
    parser.add_argument("--out", default="benchmarks/records/ecovla/pilots.jsonl")
    args = parser.parse_args()
    torch.set_num_threads(1)
    recipe = PolicyRecipe(
        n_layers=args.layers,
        n_heads=args.heads,
        demo_episodes=args.demo_episodes,
        encoder_steps=args.encoder_steps,
        steps=args.steps,
        pretrain_episodes=args.pretrain_episodes,
        pretrain_steps=args.pretrain_steps,
        seed=args.seed,
    )
    stem = Path("runs/ecovla_pilot") / f"{args.tag}_s{args.seed}"
    print(f"pilot {stem}: {asdict(recipe)}", flush=True)
    meta, train_cpu = train(recipe, stem)
    start = time.process_time()
    measured = gates(stem, args.episodes, args.eval_seed)
    record = {
        "tag": args.tag,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "recipe": asdict(recipe),
        "train_metrics": meta["metrics"],
        "train_cpu_s": meta.get("train_cpu_s", train_cpu),
        "gates": {k: v for k, v in measured.items() if k != "dense_failures"},
        "dense_failures": {str(k): int(v) for k, v in measured["dense_failures"].items()},
        "gate_cpu_s": time.process_time() - start,
    }
    print(json.dumps(record, indent=1), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
