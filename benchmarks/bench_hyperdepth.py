"""Benchmark: epoch time and activation memory of HyperDepth (poly K = 2, exact) vs HyperGRACE and
TriCL-lite, and the cost of exact mode's eigendecomposition vs poly filtering as n grows.

Run: ``python benchmarks/bench_hyperdepth.py`` (a few minutes on 2 cores; ``--small`` for
seconds; ``--parts synthetic,filters,walmart`` picks the tables). Everything is measured in
this one process on one torch and one BLAS thread and reported as ratios to HyperGRACE (per
epoch: two views, forward, backward, AdamW step). Memory is the bytes of the tensors autograd
saves for backward during one training step (the activation peak of full-batch training), read
with ``torch.autograd.graph.saved_tensors_hooks``; parameters are counted apart.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_limits

from icml26.core import adamw, interleaved_median_seconds, optimizer_step, torch_threads
from icml26.hyperdepth import (
    HyperDepth,
    HyperGRACE,
    TriCLLite,
    load_hypergraphx,
    make_hierarchical_hypergraph,
    make_view,
    spectral_filters,
)


def methods(dim: int, batch_size: int | None, exact: bool) -> dict[str, object]:
    common = {"dim": dim, "proj_dim": dim, "epochs": 1, "batch_size": batch_size}
    out = {
        "HyperGRACE": HyperGRACE(**common),
        "TriCL-lite": TriCLLite(**common),
        "HyperDepth poly K=2": HyperDepth(**common, d_h=min(64, dim)),
    }
    if exact:
        out["HyperDepth exact"] = HyperDepth(**common, d_h=min(64, dim), mode="exact")
    return out


def epoch_fn(model, data) -> tuple[object, float, float]:
    """One training epoch of ``model`` as a callable, with the memory it holds.

    Returns (epoch callable, MiB saved for backward in one step, MiB of parameters); the memory
    count runs one epoch, which is also the warm-up.
    """
    model.initialize(data, seed=0)
    hg = data.hypergraph.with_self_loops()
    x = torch.from_numpy(data.x)
    rng = np.random.default_rng(0)
    generator = torch.Generator().manual_seed(0)
    params = [p for m in model._modules() for p in m.parameters()]
    optimizer = adamw(params, lr=1e-3, weight_decay=0.01)

    def epoch(track: list[int] | None = None) -> None:
        views = [make_view(x, hg, model.p_f, model.p_e, rng) for _ in "12"]

        def pack(t: torch.Tensor) -> torch.Tensor:
            if track is not None and t.layout == torch.strided:
                track.append(t.numel() * t.element_size())
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = model._loss(views, generator)["loss"]
        optimizer_step(loss, optimizer, step=0, owner="bench")

    saved: list[int] = []
    epoch(saved)
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    return epoch, sum(saved) / 2**20, param_bytes / 2**20


def compare(title: str, data, dim: int, batch_size: int | None, exact: bool, repeats: int):
    table = Table(title=title)
    for column in (
        "method",
        "s / epoch",
        "× HyperGRACE",
        "saved MiB",
        "× HyperGRACE",
        "params MiB",
    ):
        table.add_column(column, justify="right")
    prepared = {name: epoch_fn(m, data) for name, m in methods(dim, batch_size, exact).items()}
    # the methods' epochs timed round-robin (the memory count was the warm-up)
    seconds = interleaved_median_seconds(
        {name: fn for name, (fn, _, _) in prepared.items()}, repeats, warmup=0
    )
    t0, m0 = seconds["HyperGRACE"], prepared["HyperGRACE"][1]
    for name, (_, mem, par) in prepared.items():
        t = seconds[name]
        table.add_row(
            name, f"{t:.4f}", f"{t / t0:.2f}×", f"{mem:.1f}", f"{mem / m0:.2f}×", f"{par:.2f}"
        )
    return table


def build_low_filter(hg, mode: str, out: dict[str, object]) -> None:
    out[mode] = spectral_filters(hg, mode)[0]


def exact_vs_poly(ns: list[int], dim: int, repeats: int) -> Table:
    table = Table(title=f"Exact projectors vs poly K=2 filtering (signal dim {dim})")
    for column in (
        "n",
        "eigh + projector s",
        "poly build s",
        "apply exact s",
        "apply poly s",
        "setup ratio",
    ):
        table.add_column(column, justify="right")
    warm = make_hierarchical_hypergraph(n_per_fine=10, n_edges=20, dim=2, seed=0).hypergraph
    spectral_filters(warm, "exact")  # first-call import and allocation costs out of the timings
    for n in ns:
        data = make_hierarchical_hypergraph(n_per_fine=n // 12, n_edges=2 * n // 3, dim=8, seed=0)
        hg = data.hypergraph.with_self_loops()
        z = torch.randn(hg.num_nodes, dim, generator=torch.Generator().manual_seed(0))
        built: dict[str, object] = {}
        modes = ("exact", "poly")
        # one build each (the eigendecomposition is measured once), then the filters applied
        setup = interleaved_median_seconds(
            {mode: partial(build_low_filter, hg, mode, built) for mode in modes},
            repeats=1,
            warmup=0,
        )
        apply = interleaved_median_seconds(
            {mode: partial(built[mode], z) for mode in modes}, repeats, warmup=1
        )
        table.add_row(
            str(hg.num_nodes),
            f"{setup['exact']:.3f}",
            f"{setup['poly']:.4f}",
            f"{apply['exact']:.5f}",
            f"{apply['poly']:.5f}",
            f"{setup['exact'] / setup['poly']:.0f}×",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="tiny sizes (seconds)")
    parser.add_argument(
        "--parts",
        default="synthetic,filters,walmart",
        help="comma-separated subset of synthetic, filters, walmart",
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    console = Console()
    sizes = (120, 240) if args.small else (600, 1200)
    dim = 16 if args.small else 64
    with torch_threads(1), threadpool_limits(1):  # BLAS too: eigh oversubscribes otherwise
        for n in sizes if "synthetic" in parts else ():
            data = make_hierarchical_hypergraph(
                n_per_fine=n // 12, n_edges=2 * n // 3, dim=64, seed=0
            )
            console.print(
                compare(f"Synthetic n = {n}, d = {dim}", data, dim, None, True, args.repeats)
            )
        if "filters" in parts:
            ns = [120, 240, 480] if args.small else [300, 600, 1200, 2400]
            console.print(exact_vs_poly(ns, dim, args.repeats))
        if "walmart" in parts and not args.small:
            walmart = load_hypergraphx("walmart", dim=32)
            title = "Walmart trips (57,910 nodes), poly only, contrast batch 2,048"
            console.print(compare(title, walmart, dim, 2048, False, 2))


if __name__ == "__main__":
    main()
