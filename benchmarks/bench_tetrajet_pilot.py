"""Pilot of issue 47: where does the baseline FP4 gap exist? R0 (FP32) vs R2+ (NVIDIA as published).

Trains the d = 32, 2-layer tiny GPT on the Shakespeare train plays for ``tokens_per_param`` x
(parameter count) tokens under FP32 and under ``nvidia_nvfp4_published`` (same initial model and
batch order per seed), then prints the paired test gap (R2+ - FP32, mean over the fixed test
windows) per seed and the paired seed SD. Chosen on the baseline only, never on R5. Prints the
CPU seconds of each run.

With ``--out FILE`` every finished run (its per-window test losses and CPU seconds) is appended
to FILE as one JSON line, and runs already there are read back instead of trained: a stopped
pilot resumes at the run it was in.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_tetrajet_pilot.py --tokens-per-param 100
--seeds 0 1 --out pilot.jsonl``; ``--summary-only`` prints what the file holds and trains nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.tetrajet import (
    GPTConfig,
    TinyGPT,
    TrainConfig,
    fixed_windows,
    load_text_data,
    train_lm,
    window_losses,
)


def _done(out: Path | None) -> dict[tuple, dict]:
    if out is None or not out.exists():
        return {}
    runs = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return {(r["tpp"], r["steps"], r["seed"], r["recipe"], r["test_tokens"]): r for r in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens-per-param", type=float, nargs="+", default=[100.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--recipe", default="nvidia_nvfp4_published")
    parser.add_argument("--test-tokens", type=int, default=65_536)
    parser.add_argument("--out", type=Path, default=None, help="JSON lines: resume and record")
    parser.add_argument("--summary-only", action="store_true",
                        help="print what --out holds; train nothing")  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = load_text_data("char")
    context, batch = 128, 16
    gpt = GPTConfig(vocab_size=data.vocab_size, context=context, d_model=32, n_layers=2,
                    n_heads=2, d_mlp=128)  # fmt: skip
    n_params = sum(p.numel() for p in TinyGPT(gpt, seed=0).parameters())
    x, y = fixed_windows(data.test, context, args.test_tokens)
    print(f"corpus={data.corpus} params={n_params} test_windows={len(x)}", flush=True)
    done = _done(args.out)
    for tpp in args.tokens_per_param:
        steps = max(20, round(tpp * n_params / (batch * context)))
        cfg = TrainConfig(steps=steps, batch_size=batch, warmup=min(100, steps // 10),
                          eval_every=steps, eval_batches=4)  # fmt: skip
        gaps = []
        for seed in args.seeds:
            losses = {}
            for recipe in ("fp32", args.recipe):
                run = done.get((tpp, steps, seed, recipe, args.test_tokens))
                if run is None and args.summary_only:
                    print(f"tpp={tpp:g} steps={steps} seed={seed} {recipe}: not run", flush=True)
                    continue
                if run is None:
                    model = TinyGPT(gpt, seed=seed)
                    start = time.process_time()
                    train_lm(model, data, recipe, cfg, context=context, seed=seed)
                    test = window_losses(model, x, y).numpy()
                    run = {"tpp": tpp, "steps": steps, "seed": seed, "recipe": recipe,
                           "test_tokens": args.test_tokens, "corpus": data.corpus,
                           "cpu_s": time.process_time() - start,
                           "test_losses": test.tolist()}  # fmt: skip
                    if args.out is not None:
                        with args.out.open("a") as f:
                            f.write(json.dumps(run) + "\n")
                losses[recipe] = np.asarray(run["test_losses"])
                print(f"tpp={tpp:g} steps={steps} seed={seed} {recipe}: test "
                      f"{losses[recipe].mean():.4f} ({run['cpu_s']:.0f} CPU-s)",
                      flush=True)  # fmt: skip
            if len(losses) == 2:
                gaps.append(float((losses[args.recipe] - losses["fp32"]).mean()))
        if not gaps:
            continue
        gap = float(np.mean(gaps))
        sd = float(np.std(gaps, ddof=1)) if len(gaps) > 1 else float("nan")
        ok = gap >= 0.03 and sd <= gap / 5  # issue 47's rule (NaN SD: not shown)
        print(f"tpp={tpp:g}: gap per seed {np.round(gaps, 4).tolist()}, mean {gap:.4f}, seed "
              f"SD {sd:.4f} (needs gap >= 0.03, SD <= gap/5: {'met' if ok else 'not met'})",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
