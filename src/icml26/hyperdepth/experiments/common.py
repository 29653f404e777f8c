"""What the HyperDepth experiments share: the method names, their trainers and the evaluation loop.

Each experiment composes the public API only: data from the generators and loaders,
``HyperDepth`` / ``HyperGRACE`` / ``TriCLLite`` / ``raw_features``, and the metrics of
``evaluate_embedding``. Training is small dense/sparse algebra on a few hundred nodes, so each
task asks for one CPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Resources, RunContext

if TYPE_CHECKING:
    from icml26.hyperdepth import AbstractContrastiveTrainer, HypergraphData

PAPER = "HyperDepth: hypergraph contrastive learning with a prototype tree, ICML 2026"
RESOURCES = Resources(cpus=1)  # a few hundred nodes: one thread is fastest
BASELINES = ("hypergrace", "tricl")
METHOD_LABELS = {
    "raw": "raw X",
    "p2x": "P²X",
    "hypergrace": "HyperGRACE",
    "tricl": "TriCL-lite",
    "hyperdepth": "HyperDepth",
    "hd_nogate": "HyperDepth − gate",
    "hd_noenergy": "HyperDepth − energy (λ=0)",
    "hd_coupled": "HyperDepth coupled (1 branch)",
}


def make_method(name: str, config: Any, tree: tuple[int, ...]) -> AbstractContrastiveTrainer | None:
    """The trainer behind a method name (``None`` for the untrained feature baselines).

    ``config`` supplies the budget shared by every trained method (``epochs``, ``dim``,
    ``proj_dim``, ``d_h``); ``tree`` is HyperDepth's prototype-tree level sizes.
    """
    from icml26.hyperdepth import HyperDepth, HyperGRACE, TriCLLite

    common = {"dim": config.dim, "proj_dim": config.proj_dim, "epochs": config.epochs}
    hd = {**common, "d_h": config.d_h, "tree": tree}
    factories = {
        "hypergrace": lambda: HyperGRACE(**common),
        "tricl": lambda: TriCLLite(**common),
        "hyperdepth": lambda: HyperDepth(**hd),
        "hd_nogate": lambda: HyperDepth(**hd, gate=False),
        "hd_noenergy": lambda: HyperDepth(**hd, lam=0.0),
        "hd_coupled": lambda: HyperDepth(**hd, decouple=False),
    }
    if name in ("raw", "p2x"):
        return None
    return factories[name]()


def run_methods(
    data: HypergraphData,
    methods: tuple[str, ...],
    config: Any,
    ctx: RunContext,
    tree: tuple[int, ...],
) -> dict[str, Any]:
    """Train each method on ``data`` and return ``{method}_{metric}`` plus loss curves.

    A trained method's ``loss_drop`` is the mean loss of its first tenth of epochs minus that of
    its last tenth.
    """
    from icml26.hyperdepth import evaluate_embedding, raw_features

    out: dict[str, Any] = {}
    with ctx.progress(len(methods), f"methods on {data.name}") as bar:
        for name in methods:
            model = make_method(name, config, tree)
            if model is None:
                z = data.x if name == "raw" else raw_features(data.x, data.hypergraph, 2)
            else:
                with ctx.progress(model.epochs, f"{name} epochs") as epochs:
                    model.fit(data, seed=ctx.numpy_generator(f"fit-{name}"), progress=epochs)
                z = model.embed(data)
                losses = [h["loss"] for h in model.history_]
                out[f"{name}_loss_curve"] = losses
                window = max(1, len(losses) // 10)
                out[f"{name}_loss_drop"] = float(
                    np.mean(losses[:window]) - np.mean(losses[-window:])
                )
            metrics = evaluate_embedding(
                z,
                data.y,
                data.y_coarse,
                n_splits=config.probe_splits,
                seed=ctx.numpy_generator(f"eval-{name}"),
            )
            out.update({f"{name}_{key}": value for key, value in metrics.items()})
            bar.advance()
    return out


def best_baseline(out: dict[str, Any], metric: str, methods: tuple[str, ...], fn: Any) -> float:
    """``fn`` (max or min) of ``metric`` over the trained baselines that were run."""
    values = [out[f"{m}_{metric}"] for m in BASELINES if m in methods]
    return float(fn(values)) if values else float("nan")


def method_rows(metrics: list[dict], methods: tuple[str, ...], keys: tuple[str, ...]) -> list:
    """One row per method: the mean over seeds of each metric in ``keys``."""
    rows = []
    for m in methods:
        row = [METHOD_LABELS.get(m, m)]
        for key in keys:
            values = [s[f"{m}_{key}"] for s in metrics if f"{m}_{key}" in s]
            row.append(f"{np.mean(values):.3f}" if values else "—")
        rows.append(row)
    return rows
