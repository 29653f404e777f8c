"""Recipe probes for the v1 policies of ``scale`` (issue 41): train one policy, judge it.

A probe is judged only on decoder-agnostic numbers, never on SCALE or a sampler: held-out
cross-entropy and move error on fresh DART episodes, and greedy success on ID episodes that no
experiment runs (evaluation seed 77; the experiments use seeds 0-2), with a Clopper-Pearson 95 %
interval against gate G1's 35-80 % band, and where the failed episodes went wrong: whether the
first object lifted is the target (against chance), success by the target's hue gap, and how much
the actions change when the instruction is swapped. ``--film`` trains TinyOpenVLA with its
instruction-FiLM conv stem (``instruction_film=True``, recorded in the checkpoint's config).

    OMP_NUM_THREADS=1 python benchmarks/bench_scale_probe.py train --out DIR --view egocentric \\
        --demos 8000 --steps 12000 --seed 0 [--film]  # resumable: rerun the same command
    OMP_NUM_THREADS=1 python benchmarks/bench_scale_probe.py eval DIR/NAME [--episodes 90]
    OMP_NUM_THREADS=1 python benchmarks/bench_scale_probe.py eval DIR/NAME.resume.pt  # mid-run

``train`` writes ``DIR/NAME.safetensors`` + ``.json`` (recipe, metrics, the command, CPU
seconds); ``eval`` prints one JSON line and appends it to ``DIR/probe_evals.jsonl``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

EVAL_SEED = 77  # evaluation episodes no experiment runs (scale.reach_v1* use seeds 0, 1, 2)
HELDOUT_SEED = 4242  # the fresh DART episodes of the held-out loss (not a training seed)
FAR = 0.25  # a move coordinate this far from the expert's is an error (gate G3's label)


def _train(args: argparse.Namespace) -> None:
    from icml26.core.standins import save_checkpoint
    from icml26.core.training import TrainingCheckpoint
    from icml26.scale.standins import REACH_V1_MODEL, policy_v1_trainer

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    film = "_film" if args.film else ""
    name = args.name or f"probe_{args.view}{film}_d{args.demos}_s{args.steps}_seed{args.seed}"
    recipe = {"demos": args.demos, "steps": args.steps, "lr": args.lr, "view": args.view,
              "seed": args.seed}  # fmt: skip
    resume = TrainingCheckpoint(out / f"{name}.resume.pt", every=500)
    start = time.process_time()

    def progress(done: int, total: int, metrics: dict[str, float]) -> None:
        if done % 250 == 0 or done == total:
            print(f"step {done}/{total} loss {metrics['loss']:.4f} "
                  f"cpu {time.process_time() - start:.0f}s", flush=True)  # fmt: skip

    model_kwargs = {**REACH_V1_MODEL, "instruction_film": True} if args.film else REACH_V1_MODEL
    trained = policy_v1_trainer(model_kwargs, **recipe)(resume, progress)
    meta = {
        "name": name,
        "config": dict(trained.config),
        "recipe": dict(trained.recipe),
        "data": trained.data,
        "metrics": {k: float(v) for k, v in trained.metrics.items()},
        "command": "OMP_NUM_THREADS=1 python " + shlex.join(sys.argv),
        "cpu_seconds_last_process": time.process_time() - start,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    print(json.dumps(meta["metrics"]), flush=True)
    save_checkpoint(out / name, trained.model, meta)
    resume.remove()


def _load(path: Path) -> tuple[Any, str, str]:
    """The policy, its view and a label: a checkpoint stem or a training ``.resume.pt``."""
    from icml26.scale import TinyOpenVLA, load_policy
    from icml26.scale.standins import REACH_V1_MODEL

    if path.suffix == ".pt":  # mid-run: the resume state of a probe named probe_<view>_...
        state = torch.load(path, map_location="cpu", weights_only=True)
        film = any("film" in key for key in state["model"])
        model = TinyOpenVLA(**REACH_V1_MODEL, instruction_film=film, seed=0)
        model.load_state_dict(state["model"])
        model.eval()
        return model, path.name.split("_")[1], f"{path.name}@{int(state['step'])}"
    model, meta = load_policy(path)
    return model, meta.get("recipe", {}).get("view", "allocentric"), path.name


def _heldout(model: Any, view: str, episodes: int) -> dict[str, Any]:
    from icml26.scale import AmbiguousReach2DV1Env, collect_dart_demonstrations
    from icml26.scale.tokenizer import ActionTokenizer

    data = collect_dart_demonstrations(AmbiguousReach2DV1Env("id", view=view), episodes,
                                       seed=HELDOUT_SEED)  # fmt: skip
    tokenizer = ActionTokenizer(model.vocab_size, model.n_bins)
    tokens = torch.as_tensor(tokenizer.encode(data.actions))
    with torch.no_grad():
        logits = model(torch.as_tensor(data.images), torch.as_tensor(data.instructions), tokens)
        # the same frames with another colour asked for (a policy that reads the instruction
        # must move elsewhere when distractors are present)
        other = (torch.as_tensor(data.instructions) + 4) % model.n_instructions
        swapped = model(torch.as_tensor(data.images), other, tokens)
    ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens, reduction="none")
    log_p, log_q = logits[:, 0].log_softmax(-1), swapped[:, 0].log_softmax(-1)
    kl_dx = (log_p.exp() * (log_p - log_q)).sum(-1)
    greedy = tokenizer.decode(logits.argmax(-1).numpy())
    off = np.abs(greedy[:, :2] - data.actions[:, :2]) > FAR
    grip_wrong = (greedy[:, 2] > 0) != (data.actions[:, 2] > 0)
    return {
        "heldout_frames": len(data),
        "heldout_ce_dx_dy_grip": [round(float(v), 4) for v in ce.mean(0)],
        "heldout_off_dx_dy": [round(float(v), 4) for v in off.mean(0)],
        "heldout_grip_sign_wrong": round(float(grip_wrong.mean()), 4),
        "instruction_swap_dx_changes": round(
            float((logits[:, 0].argmax(-1) != swapped[:, 0].argmax(-1)).double().mean()), 4
        ),
        "instruction_swap_kl_dx": round(float(kl_dx.mean()), 4),
    }


def _greedy_rollouts(model: Any, view: str, episodes: int, **env_kwargs: Any) -> dict[str, Any]:
    """Greedy on the episodes ``evaluate`` runs for EVAL_SEED, with where each one went."""
    from icml26.scale import (
        AmbiguousReach2DV1Env,
        GreedyDecoder,
        TinyVLAAdapter,
        UncertaintyState,
    )
    from icml26.scale.env_v1 import REACH

    adapter, decoder = TinyVLAAdapter(model), GreedyDecoder()
    envs = [AmbiguousReach2DV1Env("id", view=view, **env_kwargs) for _ in range(episodes)]
    obs = [e.reset(seed=EVAL_SEED * 1_000_003 + i)[0] for i, e in enumerate(envs)]
    done = np.zeros(episodes, bool)
    success, held_wrong, held_target, reached = (np.zeros(episodes, bool) for _ in range(4))
    first_grab = np.full(episodes, -1)  # the first object greedy lifted (0: the target)
    objects = np.array([len(e._scene["objects"]) for e in envs])
    gap = np.array([_hue_gap(e._scene["hues"]) for e in envs])
    still = np.zeros(episodes)
    while not done.all():
        rows = np.flatnonzero(~done)
        images = torch.as_tensor(np.stack([obs[i]["image"] for i in rows]))
        instructions = torch.as_tensor([obs[i]["instruction"] for i in rows])
        with torch.no_grad():
            state = UncertaintyState(n_dims=3, batch_size=len(rows))  # greedy ignores it
            tokens, _ = decoder.decode(adapter, images, instructions, state)
        actions = adapter.detokenize(tokens)
        for row, action in zip(rows, actions, strict=True):
            before = envs[row]._scene["agent"].copy()
            obs[row], reward, terminated, truncated, info = envs[row].step(action)
            still[row] += float(np.allclose(before, envs[row]._scene["agent"]))
            held_wrong[row] |= info["held"] > 0
            held_target[row] |= info["held"] == 0
            if first_grab[row] < 0:
                first_grab[row] = info["held"]
            reached[row] |= info["distance"] <= REACH
            success[row] = reward > 0
            done[row] = terminated or truncated
    failed = ~success
    low, high = _clopper_pearson(int(success.sum()), episodes)
    return {
        "episodes": episodes,
        "greedy_success": round(float(success.mean()), 4),
        "greedy_ci95": [round(low, 4), round(high, 4)],
        "failed_held_wrong": round(float(held_wrong[failed].mean()), 4) if failed.any() else None,
        "failed_ever_held_target": (
            round(float(held_target[failed].mean()), 4) if failed.any() else None
        ),
        "failed_within_reach": round(float(reached[failed].mean()), 4) if failed.any() else None,
        "failed_mean_still_steps": round(float(still[failed].mean()), 2) if failed.any() else None,
        # does greedy pick the instructed object out of the look-alikes? (chance: 1 / objects)
        "grabbed_any": int((first_grab >= 0).sum()),
        "first_grab_is_target": _share(first_grab[first_grab >= 0] == 0),
        "first_grab_chance": _share(1.0 / objects[first_grab >= 0]),
        # success by the smallest hue gap between the target and a distractor (ID: 8-30 deg)
        "success_by_min_hue_gap": {
            f"{lo}-{hi}": [
                _share(success[(gap >= lo) & (gap < hi)]),
                int(((gap >= lo) & (gap < hi)).sum()),
            ]
            for lo, hi in ((0, 15), (15, 22), (22, 361))
        },
    }


def _share(values: np.ndarray) -> float | None:
    return round(float(np.mean(values)), 4) if len(values) else None


def _hue_gap(hues: list[float]) -> float:
    """Smallest circular hue difference (degrees) between the target (first) and a distractor."""
    gaps = [abs((h - hues[0] + 180) % 360 - 180) for h in hues[1:]]
    return min(gaps) if gaps else 360.0


def _clopper_pearson(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def _eval(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    path = Path(args.policy)
    model, view, label = _load(path)
    start = time.process_time()
    record: dict[str, Any] = {"policy": label, "view": view, "eval_seed": EVAL_SEED}
    record.update(_heldout(model, view, args.heldout))
    record["id"] = _greedy_rollouts(model, view, args.episodes)
    if args.diagnose:  # the docs' decomposition: no distractors/walls; distractors, no wall
        record["no_distractors_no_wall"] = _greedy_rollouts(
            model, view, args.diagnose, n_distractors=(0, 0), n_walls=(0, 0)
        )
        record["distractors_no_wall"] = _greedy_rollouts(model, view, args.diagnose, n_walls=(0, 0))
    record["eval_cpu_seconds"] = round(time.process_time() - start, 1)
    record["date"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    line = json.dumps(record)
    print(line, flush=True)
    with open(path.parent / "probe_evals.jsonl", "a") as log:
        log.write(line + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train one probe policy (resumable)")
    train.add_argument("--out", required=True)
    train.add_argument("--name", default=None)
    train.add_argument("--view", choices=("allocentric", "egocentric"), default="egocentric")
    train.add_argument("--demos", type=int, default=8000)
    train.add_argument("--steps", type=int, default=12000)
    train.add_argument("--lr", type=float, default=1e-3)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--film", action="store_true", help="instruction-FiLM conv stem")
    evaluate = sub.add_parser("eval", help="held-out loss and greedy success of a probe")
    evaluate.add_argument("policy", help="a checkpoint stem or a probe's .resume.pt")
    evaluate.add_argument("--episodes", type=int, default=90)
    evaluate.add_argument("--heldout", type=int, default=300, help="fresh DART episodes")
    evaluate.add_argument(
        "--diagnose", type=int, default=0, help="greedy on N episodes without distractors/walls"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    (_train if args.command == "train" else _eval)(args)


if __name__ == "__main__":
    main()
