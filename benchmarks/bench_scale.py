"""Decoding cost of SCALE vs greedy vs Best-of-N, and tempered-attention overheads (SCALE).

One process, TinyARVLA at the spec's size (ViT d=64 x3, decoder d=96 x3; random weights: cost does
not depend on them). Per control step: forward passes (``count_forward_passes``) and wall-clock
(``interleaved_median_seconds``: medians over round-robin repeats after a warm-up) as ratios to
greedy; the paper's claim is that SCALE
costs one pass like greedy while Best-of-N costs N. Second table: the hand-written tempered
attention (``scaled_dot_attention``) and the query-hook patch (``AttentionTemperature``) vs
torch's SDPA / the unpatched ViT.

    python benchmarks/bench_scale.py [--batch 16] [--steps 8] [--repeats 7] [--threads 1]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812

from icml26.core import interleaved_median_seconds
from icml26.scale import (
    AttentionTemperature,
    BestOfN,
    GreedyDecoder,
    ScaleDecoder,
    TinyARVLA,
    TinyVLAAdapter,
    UncertaintyState,
    count_forward_passes,
    scaled_dot_attention,
)


def decoding_table(batch: int, steps: int, repeats: int) -> None:
    model = TinyARVLA(seed=0)
    adapter = TinyVLAAdapter(model)
    rng = np.random.default_rng(0)
    images = torch.as_tensor(rng.integers(0, 256, (steps, batch, 48, 48, 3), dtype=np.uint8))
    instr = torch.as_tensor(rng.integers(0, 8, batch))
    decoders = {
        "greedy": GreedyDecoder(),
        "SCALE": ScaleDecoder(seed=0),
        "Best-of-4": BestOfN(lambda o, i, c: -c.double().std(-1), n=4, seed=0),
        "Best-of-8": BestOfN(lambda o, i, c: -c.double().std(-1), n=8, seed=0),
    }

    def episode(decoder):
        state = UncertaintyState(model.n_action_tokens, batch_size=batch)
        for t in range(steps):
            decoder.decode(adapter, images[t], instr, state)

    counts = {}
    with count_forward_passes(model) as passes:
        for name, decoder in decoders.items():
            before = passes["decoder"]
            episode(decoder)
            counts[name] = (passes["decoder"] - before) / steps
    # interleaved, so load changes hit every decoder alike
    seconds = interleaved_median_seconds(
        {name: lambda d=decoder: episode(d) for name, decoder in decoders.items()}, repeats
    )
    times = {name: s / steps for name, s in seconds.items()}
    base = times["greedy"]
    print(
        f"decoder      passes/step  x greedy   ms/step   x greedy   (batch {batch}, {steps} steps)"
    )
    for name in decoders:
        ms = 1e3 * times[name]
        print(f"{name:<12} {counts[name]:<12.0f} {counts[name] / counts['greedy']:<10.2f} "
              f"{ms:<9.2f} {times[name] / base:.3f}")  # fmt: skip


def attention_table(repeats: int) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(16, 4, 36, 16, generator=g) for _ in range(3))
    attention = interleaved_median_seconds(
        {
            "sdpa": lambda: F.scaled_dot_product_attention(q, k, v),
            "manual": lambda: scaled_dot_attention(q, k, v, gamma=1.3),
        },
        repeats * 20,
    )
    sdpa, manual = attention["sdpa"], attention["manual"]
    model = TinyARVLA(seed=0).eval()
    pixels = model._pixels(torch.zeros(16, 48, 48, 3, dtype=torch.uint8))
    with torch.no_grad():
        plain = interleaved_median_seconds({"vit": lambda: model.vision(pixels)}, repeats * 5)[
            "vit"
        ]
        with AttentionTemperature(model.vision_attention_modules(), gamma=1.3):
            hooked = interleaved_median_seconds({"vit": lambda: model.vision(pixels)}, repeats * 5)
    hooked = hooked["vit"]
    print("\nattention (batch 16, 4 heads, 36 tokens)        ms       ratio")
    print(f"SDPA                                            {1e3 * sdpa:<8.3f} 1.000")
    print(
        f"scaled_dot_attention (manual, gamma=1.3)        {1e3 * manual:<8.3f} {manual / sdpa:.3f}"
    )
    print(f"ViT encoder, unpatched                          {1e3 * plain:<8.3f} 1.000")
    print(
        f"ViT encoder, AttentionTemperature(gamma=1.3)    {1e3 * hooked:<8.3f} {hooked / plain:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # this script is the process: nothing to restore
    with torch.no_grad():
        decoding_table(args.batch, args.steps, args.repeats)
    attention_table(args.repeats)


if __name__ == "__main__":
    main()
