"""omnifit benchmark: prefill latency, memory and KV cache of compressed prefills, as ratios.

All measurements run in this one process on the same threads, on a random-init TinyOmni
(L = 8, d = 96; latency does not depend on the weights) with its LAHP profile calibrated on
AV-Sync streams of the same length:

1. For W in {8, 32, 64} windows (198 / 774 / 1542 tokens) and mu in {0.4, 0.2, 0.1}: median
   prefill time, peak activation memory and KV-cache bytes of OmniFit (merge, prune), FastV-like
   (K = 2) and RandomDrop, each as a ratio to the full prefill (speed-up = t_full / t_method;
   memory and KV reductions = full / method). Peak memory is the analytic peak of one layer's
   live tensors (hidden states, q/k/v, the SwiGLU pair and the attention scores of the
   largest layer) plus the whole KV cache, in float32: torch does not report CPU peaks.
2. Selection overhead: ARTS (anchors + scores + plan, from H0) vs attention-map scoring (one
   eager attention pass of layer 2, what FastV-style methods need), and ARTS as a fraction of
   the full prefill. The paper reports ARTS 27.8x-42x cheaper than attention-based selection.
3. Decoding (TPOT): time per generated token of greedy ``generate`` after an OmniFit (merge)
   prefill vs after the full prefill, ``(t(1 + D tokens) - t(1 token)) / D`` so that the
   prefill cancels; each layer's cache holds only its alive tokens. The paper reports TPOT
   1.20x (7B) / 1.39x (30B) at batch 32, 10 % tokens.

Run: ``python benchmarks/bench_omnifit.py [--windows 8,32,64] [--mus 0.4,0.2,0.1] [--batch 4]
[--repeats 5] [--threads 2] [--decode 16]``.
"""

from __future__ import annotations

import argparse

import torch

from icml26.omnifit import (
    FastVLike,
    OmniFitCompressor,
    RandomDrop,
    TinyOmni,
    TinyOmniConfig,
    generate,
    kv_bytes,
    lahp_calibrate,
    make_dataset,
    run_compressed,
    time_prefill,
)

CONFIG = TinyOmniConfig(n_layers=8, d=96, n_heads=4, d_ff=256)


def peak_bytes(alive: list[int], batch: int) -> int:
    """Analytic peak: the largest layer's live tensors plus the whole KV cache (float32)."""
    d, f, heads = CONFIG.d, CONFIG.d_ff, CONFIG.n_heads
    layer = max(batch * n * (4 * d + 2 * f) + batch * heads * n * n for n in alive)
    return 4 * layer + kv_bytes(alive, d, batch=batch)


def methods(profile, mu: float):
    return {
        "OmniFit (merge)": lambda: OmniFitCompressor(profile, mu),
        "OmniFit (prune)": lambda: OmniFitCompressor(profile, mu, mode="prune"),
        "FastV-like K=2": lambda: FastVLike(mu, K=2),
        "RandomDrop": lambda: RandomDrop(mu, seed=0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", default="8,32,64")
    parser.add_argument("--mus", default="0.4,0.2,0.1")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--decode", type=int, default=16, help="tokens per TPOT run (0: skip)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = TinyOmni(CONFIG, seed=0).eval()
    print(f"TinyOmni L={CONFIG.n_layers} d={CONFIG.d}, batch {args.batch}, {args.threads} threads")
    print("\n1. prefill vs full (speed-up, peak-memory and KV reductions; higher is better)")
    print(
        f"{'W':>3} {'tokens':>6} {'mu':>4} {'method':<16} {'speed-up':>9} {'memory':>7} {'KV':>6}"
    )
    selection_rows, decode_rows = [], []
    for W in [int(w) for w in args.windows.split(",")]:
        calib = make_dataset(16, W, seed=1)
        with torch.no_grad():
            profile = lahp_calibrate(model, [calib.batch(slice(None))], mu=0.2)
        batch = make_dataset(args.batch, W, seed=2, split="test").batch(slice(None))
        with torch.no_grad():
            full_alive = run_compressed(model, batch).alive
            t_full = time_prefill(lambda b=batch: model(b), args.repeats, 1)
            for mu in [float(m) for m in args.mus.split(",")]:
                for name, make in methods(profile, mu).items():
                    alive = run_compressed(model, batch, make()).alive
                    t = time_prefill(lambda b=batch, m=make: run_compressed(model, b, m()),
                                     args.repeats, 1)  # fmt: skip
                    memory = peak_bytes(full_alive, args.batch) / peak_bytes(alive, args.batch)
                    kv = kv_bytes(full_alive, CONFIG.d) / kv_bytes(alive, CONFIG.d)
                    print(f"{W:>3} {full_alive[0]:>6} {mu:>4g} {name:<16} {t_full / t:>8.2f}x "
                          f"{memory:>6.2f}x {kv:>5.2f}x", flush=True)  # fmt: skip
            h, ids, pos = model.embed(batch)

            def arts(p=profile, h=h, ids=ids):
                OmniFitCompressor(p, 0.2).prepare(h, ids)

            def attention(h=h, pos=pos):
                model.attention_map(2, h, pos, None)

            t_arts = time_prefill(arts, args.repeats, 1)
            t_attn = time_prefill(attention, args.repeats, 1)
            if args.decode > 0:
                decode_rows.append((W, full_alive[0], tpot(model, batch, profile, args)))
        selection_rows.append((W, full_alive[0], t_arts, t_attn, t_full))
    print("\n2. selection overhead (ARTS from H0 vs one eager attention-map pass)")
    header = ("W", "tokens", "ARTS ms", "attn ms", "attn/ARTS", "ARTS/prefill")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (3, 6, 8, 8, 9, 12), strict=True)))
    for W, n, t_arts, t_attn, t_full in selection_rows:
        print(f"{W:>3} {n:>6} {1e3 * t_arts:>8.2f} {1e3 * t_attn:>8.2f} {t_attn / t_arts:>8.2f}x "
              f"{t_arts / t_full:>11.1%}")  # fmt: skip
    if decode_rows:
        print(f"\n3. decoding, ms per generated token ({args.decode} tokens after the prefill)")
        print(f"{'W':>3} {'tokens':>6} {'mu':>4} {'full':>8} {'OmniFit':>8} {'TPOT ratio':>10}")
        for W, n, rows in decode_rows:
            for mu, t_full, t_fit in rows:
                print(f"{W:>3} {n:>6} {mu:>4g} {1e3 * t_full:>8.3f} {1e3 * t_fit:>8.3f} "
                      f"{t_full / t_fit:>9.2f}x")  # fmt: skip


def tpot(model, batch, profile, args) -> list[tuple[float, float, float]]:
    """Per-token decode time after the full and after OmniFit prefills, for each mu."""

    def per_token(make):
        def run(tokens):
            return lambda: generate(model, batch, make(), max_new_tokens=tokens)

        t_long = time_prefill(run(1 + args.decode), args.repeats, 1)
        return (t_long - time_prefill(run(1), args.repeats, 1)) / args.decode

    t_full = per_token(lambda: None)
    rows = []
    for mu in [float(m) for m in args.mus.split(",")]:
        rows.append((mu, t_full, per_token(lambda mu=mu: OmniFitCompressor(profile, mu))))
    return rows


if __name__ == "__main__":
    main()
