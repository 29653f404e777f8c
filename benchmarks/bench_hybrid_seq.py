"""hybrid_seq benchmark: parameters vs accuracy, streaming cost, and scan speed, as ratios.

All measurements run in this one process on the same threads:

1. Parameter efficiency on MQAR at a fixed short training budget: hybrid ``SA`` vs ``AA``,
   ``AAAA``, ``SS``, ``SSSS`` across widths; reports each family's accuracy at its parameter
   count and the hybrid's parameter advantage (smallest non-hybrid reaching the hybrid's
   accuracy, in multiples of the hybrid's parameters).
2. Streaming: per-token ``step`` latency and working-memory bytes after T tokens, T in
   {256, 1024, 4096}, for ``SA``, ``AA``, ``SS`` at d = 64, as ratios to ``AA``.
3. Parallel (Hillis–Steele) and chunked vs sequential scan, forward + backward of one Mamba
   block, at a training batch (32 × 73) and at long single sequences (prefill).

Run: ``python benchmarks/bench_hybrid_seq.py [--steps 200] [--widths 16,32,64] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import time

import torch

from icml26.core import interleaved_median_seconds
from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    MambaBlock,
    TrainConfig,
    count_params,
    evaluate,
    train,
    working_memory,
)


def parameter_efficiency(steps: int, widths: list[int], hybrid_d: int) -> None:
    task = MQAR(L=32, n_kv=4, n_keys=32, n_values=32, n_fillers=16)
    rows = []
    for pattern, ds in [("SA", [hybrid_d])] + [(p, widths) for p in ("AA", "AAAA", "SS", "SSSS")]:
        for d in ds:
            model = HybridLM(
                task.vocab_size, d, pattern=pattern, n_heads=max(1, d // 16), scan="sequential"
            )
            start = time.perf_counter()
            train(model, task, TrainConfig(steps=steps, lr=3e-3, warmup=steps // 10, seed=1))
            seconds = time.perf_counter() - start
            acc = evaluate(model, task, n=1000, seed=2)[task.L][0]
            rows.append((pattern, d, count_params(model), acc, seconds / steps))
    hybrid = rows[0]
    print(f"\n1. MQAR(L=32, n_kv=4), {steps} steps, lr 3e-3, batch 64", flush=True)
    print(f"{'pattern':8} {'d':>4} {'params':>8} {'× hybrid':>9} {'token acc':>10} {'s/step':>8}")
    for pattern, d, params, acc, per_step in rows:
        ratio = params / hybrid[2]
        print(f"{pattern:8} {d:4d} {params:8d} {ratio:9.2f} {acc:10.3f} {per_step:8.3f}")
    reaching = [r[2] / hybrid[2] for r in rows[1:] if r[3] >= hybrid[3]]
    advantage = (
        f"{min(reaching):.2f}×" if reaching else f"> {max(r[2] for r in rows) / hybrid[2]:.1f}×"
    )
    print(f"smallest non-hybrid reaching the hybrid's accuracy: {advantage} its parameters")


def streaming(lengths: list[int], d: int) -> None:
    print(f"\n2. Streaming at d = {d}: per-token step latency and working memory, ratios to AA")
    print(
        f"{'T':>6} {'pattern':8} {'ms/token':>9} {'latency/AA':>11} {'bytes':>10} {'bytes/AA':>9}"
    )
    for T in lengths:
        steps, memory = {}, {}
        for pattern in ("AA", "SA", "SS"):
            model = HybridLM(64, d, pattern=pattern, n_heads=d // 16).eval()
            tokens = torch.randint(1, 64, (1, T + 16), generator=torch.Generator().manual_seed(0))
            with torch.no_grad():
                cache = None
                for t in range(T):
                    _, cache = model.step(tokens[:, t], cache)

            @torch.no_grad()
            def one_token(model=model, cache=cache, tokens=tokens, T=T) -> None:
                model.step(tokens[:, T], cache)

            steps[pattern] = one_token
            memory[pattern] = working_memory(model, T, bits=32).bits // 8
        latency = interleaved_median_seconds(steps, repeats=15)  # round-robin over the patterns
        for pattern, seconds in latency.items():
            nbytes = memory[pattern]
            print(
                f"{T:6d} {pattern:8} {1e3 * seconds:9.3f} {seconds / latency['AA']:11.2f} "
                f"{nbytes:10d} {nbytes / memory['AA']:9.3f}"
            )


def scans(shapes: list[tuple[int, int]]) -> None:
    print("\n3. Mamba block (d = 32, N = 16), forward + backward: each scan vs sequential")
    print(f"{'batch':>6} {'T':>6} {'sequential ms':>14} {'parallel ×':>11} {'chunked ×':>10}")
    for batch, T in shapes:
        u = torch.randn(batch, T, 32, generator=torch.Generator().manual_seed(0))
        runs = {}
        for scan in ("sequential", "parallel", "chunked"):
            block = MambaBlock(32, scan=scan, seed=0)

            def run(block=block, u=u) -> None:
                block(u).sum().backward()

            runs[scan] = run
        times = interleaved_median_seconds(runs, repeats=5)
        seq = times["sequential"]
        print(
            f"{batch:6d} {T:6d} {1e3 * seq:14.1f} {seq / times['parallel']:11.2f} "
            f"{seq / times['chunked']:10.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)  # the smoke budget: SA reaches 0.99
    parser.add_argument("--widths", default="16,32,64")
    parser.add_argument("--hybrid-d", type=int, default=32)
    parser.add_argument("--lengths", default="256,1024,4096")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--only-scans", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.only_scans:
        scans([(32, 73), (1, 1024), (1, 4096), (4, 1024)])
        return
    if not args.skip_training:
        parameter_efficiency(args.steps, [int(w) for w in args.widths.split(",")], args.hybrid_d)
    streaming([int(t) for t in args.lengths.split(",")], d=64)
    scans([(32, 73), (1, 1024), (1, 4096), (4, 1024)])


if __name__ == "__main__":
    main()
