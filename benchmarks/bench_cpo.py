"""Benchmark: loss + backward cost of constrained_po_loss against dpo_loss (ratios, same tensors).

Run: ``python benchmarks/bench_cpo.py`` (``--small`` for seconds). Medians of ``--repeats``
round-robin rounds after a warm-up (``interleaved_median_seconds``); the paper makes no speed
claim, this only shows CPO's extra softplus is negligible.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from icml26.core import interleaved_median_seconds
from icml26.cpo import constrained_po_loss, dpo_loss

VARIANTS = ("smooth", "clip", "easy")


def step(scores: tuple[torch.Tensor, ...], fn: Callable[..., Any], **kw: Any) -> Callable[[], None]:
    def run() -> None:
        scores[0].grad = None
        fn(*scores, beta=0.1, **kw).losses.mean().backward()

    return run


def loss_table(sizes: list[int], repeats: int) -> Table:
    table = Table(title="loss + backward, float32 CPU (time relative to dpo_loss)")
    for column in ("batch", "dpo µs", "smooth", "clip", "easy"):
        table.add_column(column, justify="right")
    g = torch.Generator().manual_seed(0)
    for n in sizes:
        pc, pr = (torch.randn(n, generator=g) - 2).requires_grad_(), torch.randn(n, generator=g) - 2
        # reference scores are log-probs, hence negative (the easy variant divides by them)
        rc, rr = -torch.rand(n, generator=g) - 0.5, -torch.rand(n, generator=g) - 0.5

        scores = (pc, pr, rc, rr)
        fns = {"dpo": step(scores, dpo_loss)}
        fns |= {v: step(scores, constrained_po_loss, variant=v) for v in VARIANTS}
        seconds = interleaved_median_seconds(fns, repeats)
        ratios = [seconds[v] / seconds["dpo"] for v in VARIANTS]
        table.add_row(str(n), f"{seconds['dpo'] * 1e6:.0f}", *(f"{r:.2f}x" for r in ratios))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    sizes = [256, 4096] if args.small else [256, 4096, 65536, 1048576]
    console = Console()
    console.print(loss_table(sizes, args.repeats))


if __name__ == "__main__":
    main()
