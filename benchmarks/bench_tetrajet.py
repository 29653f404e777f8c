"""Benchmark: cost of fake-quantized NVFP4 training per step vs FP32, and quantizer throughput.

The paper's 1.67x speed-up over FP8 comes from Blackwell FP4 tensor cores; this CPU emulation can
only add cost, so the table reports the emulation overhead (step time / FP32 step time) per
recipe, and the elements/s of ``nvfp4_quantize`` next to torchao's NVFP4 emulation when torchao
imports. Run: ``python benchmarks/bench_tetrajet.py [--steps 5] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from icml26.tetrajet import RECIPES, GPTConfig, TinyGPT, nvfp4_quantize, quantize_model_


def step_time(recipe: str, steps: int, batch: int, context: int) -> float:
    """Median seconds of one training step (forward, backward, AdamW) of the spec's tiny GPT."""
    model = quantize_model_(TinyGPT(GPTConfig(vocab_size=96), seed=0), recipe, seed=0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    times = []
    for i in range(steps + 1):  # the first step warms up
        x = torch.randint(0, 96, (batch, context), generator=g)
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i:
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def quantize_throughput(repeats: int = 5, size: int = 2048) -> dict[str, float]:
    """Elements per second of NVFP4 quantization of a (size, size) fp32 tensor."""
    x = torch.randn(size, size, generator=torch.Generator().manual_seed(0))
    rates = {}

    def timed(fn) -> float:
        fn()
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        return x.numel() * repeats / (time.perf_counter() - start)

    rates["icml26 nvfp4_quantize (1x16 + 1x128, RTN)"] = timed(lambda: nvfp4_quantize(x))
    rates["icml26 nvfp4_quantize (per-tensor, RTN)"] = timed(lambda: nvfp4_quantize(x, outer=None))
    try:
        from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor

        rates["torchao NVFP4Tensor.to_nvfp4"] = timed(lambda: NVFP4Tensor.to_nvfp4(x))
    except Exception as err:  # torchao missing or without a CPU path
        rates[f"torchao unavailable ({type(err).__name__})"] = float("nan")
    return rates


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    base = step_time("fp32", args.steps, args.batch, args.context)
    print(f"| recipe | s/step | overhead vs FP32 |  ({args.batch}x{args.context} tokens)")
    print("|---|---|---|")
    for recipe in RECIPES:
        seconds = (
            base if recipe == "fp32" else step_time(recipe, args.steps, args.batch, args.context)
        )
        print(f"| {recipe} | {seconds:.3f} | {seconds / base:.2f}x |")
    print("\n| quantizer | elements/s |\n|---|---|")
    for name, rate in quantize_throughput().items():
        print(f"| {name} | {rate:.3g} |")


if __name__ == "__main__":
    main()
