"""Tune SpineFL's options (and HeteroFL's learning rate) on the conv testbed by validation only.

Issue 50: SpineFL's knobs are chosen on seeds the claims never use (100, 101, ...), by the
validation accuracy of the final global model (the shipped subset's 2 000-image validation set,
drawn from the training split); the test set is not read. Baselines tune only their learning
rate (HeteroFL's validation picks it for every method). Prints one JSON line per run.

    OMP_NUM_THREADS=1 python benchmarks/bench_spinefl_tune.py --rounds 10 --seeds 100
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from icml26.spinefl.conv_testbed import ConvRecipe, make_conv_task, run_conv_method

VARIANTS = {
    "history-T1 (spec)": (),
    "history-T0.1": (("temperature", 0.1),),
    "model-rank-T1": (("score_source", "model"), ("rank_normalise", True)),
    "model-rank-T0.1": (("score_source", "model"), ("rank_normalise", True), ("temperature", 0.1)),
    "model-rank-T0.1-nested": (
        ("score_source", "model"),
        ("rank_normalise", True),
        ("temperature", 0.1),
        ("backbone_rule", "nested"),
    ),
}
LRS = (0.05, 0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[100])
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--only", nargs="*", default=None, help="variant names to run")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for seed in args.seeds:
        task = make_conv_task(args.alpha, seed)
        runs = [("HeteroFL", f"lr={lr}", ConvRecipe(rounds=args.rounds, lr=lr)) for lr in LRS]
        runs += [
            ("SpineFL", name, ConvRecipe(rounds=args.rounds, lr=0.05, spine=knobs))
            for name, knobs in VARIANTS.items()
        ]
        for method, name, recipe in runs:
            if args.only is not None and name not in args.only:
                continue
            start = time.process_time()
            history, _ = run_conv_method(task, method, recipe, seed, evaluate_on="val")
            row = {
                "seed": seed,
                "method": method,
                "variant": name,
                "val_acc": history.global_acc[-1],
                "cpu_s": round(time.process_time() - start, 1),
                **history.mechanism,
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
