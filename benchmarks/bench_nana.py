"""Benchmark: NaNA's training-free decomposition against training-based proxies, in one process.

1. Decomposition (both sides) of the tiny GPT-2's 4 layers and of the real MiniLM's first and
   last layers vs training one transcoder per layer to a plateau on the same layers: the
   abstract's "orders of magnitude" as a ratio.
2. SCA (one forward pass scores every unit of a layer) vs ablating every unit one at a time.
3. float64 vs float32 SVD of the same matrices.

Run: ``python benchmarks/bench_nana.py`` (long: 3,000 transcoder steps per layer unless a
plateau comes first; ``--small``: 50 steps, a few minutes). Wall times are the best of
``--repeats`` after one warm-up, on one torch thread.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from rich.console import Console
from rich.table import Table
from transformers import GPT2LMHeadModel

from icml26.core import interleaved_median_seconds, seeded_default_init, torch_threads
from icml26.nana import (
    ablate,
    decompose_mlp,
    decompose_model,
    from_hf_bert,
    from_hf_gpt2,
    load_minilm,
    subspace_contributions,
    tiny_gpt2_config,
    train_transcoder,
    transcoder_data,
)


def median_time(fn: Callable[[], object], repeats: int) -> float:
    return interleaved_median_seconds({"fn": fn}, repeats)["fn"]


def decomposition_vs_transcoders(adapters, tokens, layers, steps: int, repeats: int) -> Table:
    table = Table(title="Decomposition (both sides) vs one transcoder per layer (to a plateau)")
    for column in ("model", "layers", "decompose s", "transcoders s", "steps/layer", "ratio"):
        table.add_column(column, justify="right")
    for name, adapter in adapters.items():

        def decompose(a=adapter, name=name):
            for layer in layers[name]:
                decompose_mlp(a, layer, "in")
                decompose_mlp(a, layer, "out")

        t_svd = median_time(decompose, repeats)
        t_tc, n_steps = 0.0, []
        for layer in layers[name]:
            x, y = transcoder_data(adapter, tokens[name], layer)
            fit = train_transcoder(x, y, layer=layer, steps=steps, plateau_rtol=1e-3, seed=layer)
            t_tc += fit.wall_time
            n_steps.append(fit.steps)
        table.add_row(
            name,
            ",".join(map(str, layers[name])),
            f"{t_svd:.3f}",
            f"{t_tc:.1f}",
            f"{sum(n_steps) / len(n_steps):.0f}",
            f"{t_tc / t_svd:.0f}×",
        )
    return table


def sca_vs_ablation(adapter, tokens, repeats: int) -> Table:
    layer = adapter.n_layers - 1
    units = decompose_model(adapter, ("out",))[(layer, "out")]
    targets = torch.roll(tokens, -1, dims=1)
    t_sca = median_time(
        lambda: subspace_contributions(adapter, tokens, layer, targets, units), repeats
    )

    def every_unit():
        for k in range(units.rank):
            ablate(adapter, tokens, [(layer, "out", [k], "zero")], deus={(layer, "out"): units})

    t_abl = median_time(every_unit, 1)
    table = Table(title=f"Scoring all {units.rank} units of layer {layer} (tiny GPT-2)")
    for column in ("SCA s", "ablate each unit s", "ratio"):
        table.add_column(column, justify="right")
    table.add_row(f"{t_sca:.4f}", f"{t_abl:.2f}", f"{t_abl / t_sca:.0f}×")
    return table


def svd_precision(adapters, repeats: int) -> Table:
    table = Table(title="float64 vs float32 SVD (both sides, all layers)")
    for column in ("model", "float64 s", "float32 s", "f64 / f32"):
        table.add_column(column, justify="right")
    for name, adapter in adapters.items():
        times = interleaved_median_seconds(
            {
                "float64": lambda a=adapter: decompose_model(a, ("in", "out")),
                "float32": lambda a=adapter: decompose_model(a, ("in", "out"), dtype=torch.float32),
            },
            repeats,
        )
        t64, t32 = times["float64"], times["float32"]
        table.add_row(name, f"{t64:.3f}", f"{t32:.3f}", f"{t64 / t32:.2f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer transcoder steps and tokens")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    steps = 50 if args.small else 3000
    g = torch.Generator().manual_seed(0)
    with torch_threads(1):
        with seeded_default_init(0):
            tiny = GPT2LMHeadModel(tiny_gpt2_config()).eval()
        bert, _ = load_minilm()
        adapters = {"tiny GPT-2": from_hf_gpt2(tiny), "MiniLM": from_hf_bert(bert)}
        windows = 16 if args.small else 64
        tokens = {
            "tiny GPT-2": torch.randint(0, 2048, (windows, 128), generator=g),
            "MiniLM": torch.randint(1000, 30000, (windows, 128), generator=g),
        }
        console = Console()
        # MiniLM's transcoders (m = 3,072) are slow on CPU: its first and last layers only
        layers = {"tiny GPT-2": [0, 1, 2, 3], "MiniLM": [0, 5]}
        console.print(decomposition_vs_transcoders(adapters, tokens, layers, steps, args.repeats))
        console.print(
            sca_vs_ablation(adapters["tiny GPT-2"], tokens["tiny GPT-2"][:4], args.repeats)
        )
        console.print(svd_precision(adapters, args.repeats))


if __name__ == "__main__":
    main()
