"""Where gate G2's open-loop loss comes from: static Wanda's 25 % pattern split into its MLP-channel
part and its head part, and the head part one layer at a time (issue 42, 2026-12-08).

    OMP_NUM_THREADS=1 python benchmarks/bench_ecovla_heads.py [--out FILE.json]

On quick's calibration frames (64 initial-phase frames) and quick's 120 open-loop expert frames
(``ecovla.indist``'s ``openloop_frames``), per shipped policy: the first-action error of each
partial pattern divided by dense's (G2's ratio of means), and the head each layer's static
pattern removes. No closed loop, no EAP.
"""

from __future__ import annotations

import argparse
import json
import time

import torch


def main() -> None:
    from icml26.ecovla import calibration_energy, first_action_errors
    from icml26.ecovla.experiments.common import PRESETS, calibration_sets, openloop_frames
    from icml26.ecovla.pattern import SparsityPattern
    from icml26.ecovla.standins import POLICIES, load_policy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio", type=float, default=0.25)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.process_time()
    config = PRESETS["quick"]
    initial, _ = calibration_sets(config)
    frames = openloop_frames(config, "train")
    results = {}
    for name in POLICIES:
        model = load_policy(name)
        pattern = model.pattern_from_energy(*calibration_energy(model, initial), args.ratio)
        layers = model.config.n_layers
        all_mlp = torch.arange(model.config.d_ff)
        all_heads = torch.arange(model.config.n_heads)
        dense = float(first_action_errors(model, frames).mean())

        def ratio(mlp, heads, model=model, dense=dense):
            errors = first_action_errors(model, frames, SparsityPattern(tuple(mlp), tuple(heads)))
            return round(float(errors.mean()) / dense, 4)

        results[name] = {
            "both": ratio(pattern.mlp, pattern.heads),
            "mlp_only": ratio(pattern.mlp, [all_heads] * layers),
            "heads_only": ratio([all_mlp] * layers, pattern.heads),
            "heads_one_layer": [
                ratio(
                    [all_mlp] * layers,
                    [pattern.heads[i] if i == j else all_heads for i in range(layers)],
                )
                for j in range(layers)
            ],
            "removed_heads": [
                sorted(set(range(model.config.n_heads)) - set(pattern.heads[i].tolist()))
                for i in range(layers)
            ],
        }
        print(name, json.dumps(results[name]), flush=True)
    record = {"ratio": args.ratio, "cpu_s": time.process_time() - start, "policies": results}
    print(f"{record['cpu_s']:.1f} CPU-s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
