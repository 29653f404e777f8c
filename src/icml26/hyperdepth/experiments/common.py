"""What the HyperDepth experiments share: the method names, the config check, their trainers, the
evaluation loop and the synthetic figure.

Each experiment composes the public API only: data from the generators and loaders,
``HyperDepth`` / ``HyperGRACE`` / ``TriCLLite`` / ``raw_features``, and the metrics of
``evaluate_embedding``. Training is small dense/sparse algebra on a few hundred nodes, so each
task asks for one CPU.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Resources, RunContext

if TYPE_CHECKING:
    from icml26.hyperdepth import AbstractContrastiveTrainer, HypergraphData

PAPER = "HyperDepth: hypergraph contrastive learning with a prototype tree, ICML 2026"
RESOURCES = Resources(cpus=1)  # a few hundred nodes: one thread is fastest
# Trained baselines; the *_tuned ones (issue 45) pick tau from TAUS by validation fine accuracy,
# hg_proto is the hierarchy-aware baseline (HyperGRACE + a one-level prototype energy).
BASELINES = ("hypergrace", "tricl", "hypergrace_tuned", "tricl_tuned", "hg_proto")
TAUS = (0.1, 0.2, 0.5)
TUNED = {"hypergrace_tuned": "hypergrace", "tricl_tuned": "tricl", "hg_proto": "hg_proto"}
METHOD_LABELS = {
    "raw": "raw X",
    "p2x": "P²X",
    "hypergrace": "HyperGRACE",
    "tricl": "TriCL-lite",
    "hyperdepth": "HyperDepth",
    "hd_band": "HyperDepth, band high branch (P − P⁸)",
    "hd_nogate": "HyperDepth − gate",
    "hd_noenergy": "HyperDepth − energy (λ=0)",
    "hd_coupled": "HyperDepth coupled (1 branch)",
    "hypergrace_tuned": "HyperGRACE, τ by validation",
    "tricl_tuned": "TriCL-lite, τ by validation",
    "hg_proto": "HyperGRACE + 1-level prototypes, τ by validation",
}
METHODS = tuple(METHOD_LABELS)  # the names make_method builds ("raw", "p2x": untrained features)
# The library's bounds, mirrored so that a config is checked without importing torch (a test
# holds them equal to encoder.MAX_DIM, prototypes.MAX_PROTOTYPES and the generator's max_size).
MAX_DIM = 2**14  # dim, proj_dim, d_h and an encoder's input width
MAX_PROTOTYPES = 2**26  # sum(tree) x d_h
MIN_PER_FINE = 8  # make_hierarchical_hypergraph needs n_per_fine >= max_size (8)


def check_config(
    config: Any,
    ints: dict[str, tuple[int, int | None]],
    *,
    tree: bool = False,
    choices: dict[str, tuple[str, ...]] | None = None,
    needs: tuple[str, ...] = (),
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; ``ints`` maps fields to ``(low, high)`` (``None``:
    no upper bound). ``tree``: the config's ``tree`` is HyperDepth's prototype tree, checked as
    ``check_tree_sizes`` and ``PrototypeTree`` do (non-empty, strictly decreasing, each level
    divisible by the next, ``sum(tree)·d_h <= MAX_PROTOTYPES``). ``choices`` maps tuple fields
    to the names their entries may take (non-empty, distinct; ``methods`` defaults to
    :data:`METHODS`); ``methods`` must hold ``needs``, the methods whose metrics ``run`` reads.
    """
    from icml26.core import check_fields, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        check_positive_int(name, getattr(config, name), owner=owner, minimum=low, maximum=high)
    if tree:
        _check_tree(config.tree, config.d_h, owner)
    if hasattr(config, "methods"):
        choices = {"methods": METHODS, **(choices or {})}
    for name, allowed in (choices or {}).items():
        values = getattr(config, name)
        if not values or len(set(values)) != len(values) or not set(values) <= set(allowed):
            raise ValueError(
                f"{owner}: {name} must be distinct values of {allowed}, at least one; got {values}."
            )
    if not set(needs) <= set(getattr(config, "methods", ())):
        raise ValueError(
            f"{owner}: methods must include {needs} (the experiment compares them); got "
            f"{config.methods}."
        )


def _check_tree(tree: tuple[int, ...], d_h: int, owner: str) -> None:
    """``prototypes.check_tree_sizes`` and ``PrototypeTree``'s size bound, on the ``tree`` field."""
    from icml26.core import check_positive_int

    if not tree:
        raise ValueError(f"{owner}: tree must not be empty.")
    for size in tree:
        check_positive_int("tree", size, owner=owner, maximum=MAX_PROTOTYPES)
    if any(not child > parent or child % parent for child, parent in itertools.pairwise(tree)):
        raise ValueError(
            f"{owner}: tree must be strictly decreasing with each level divisible by the next "
            f"(e.g. (16, 4)); got {tree}."
        )
    if sum(tree) * d_h > MAX_PROTOTYPES:
        raise ValueError(f"{owner}: tree {tree} x d_h {d_h} exceed {MAX_PROTOTYPES} numbers.")


def thread_budget(ctx: RunContext) -> AbstractContextManager[Any]:
    """``ctx.threads`` for every BLAS/OpenMP pool, the ones loaded inside ``run`` included.

    The runner limits the pools that are loaded when a task starts; scipy's and scikit-learn's
    own OpenBLAS/OpenMP are loaded later (the experiments import them inside ``run``) and would
    otherwise run one thread per core — on a shared machine mostly spinning (measured: 24 vs
    4 CPU-s for the orthogonality task). Restores the previous limits on exit.
    """
    import scipy.linalg  # noqa: F401  (load the pools before limiting them)
    import sklearn.linear_model  # noqa: F401
    import torch  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=ctx.threads)


def within_thread_budget(run: Callable[[Any, RunContext], Any]) -> Callable[[Any, RunContext], Any]:
    """Decorate an experiment's ``run`` to execute under :func:`thread_budget`."""

    @functools.wraps(run)
    def wrapped(config: Any, ctx: RunContext) -> Any:
        with thread_budget(ctx):
            return run(config, ctx)

    return wrapped


def make_method(
    name: str, config: Any, tree: tuple[int, ...], tau: float | None = None
) -> AbstractContrastiveTrainer | None:
    """The trainer behind a method name (``None`` for the untrained feature baselines).

    ``config`` supplies the budget shared by every trained method (``epochs``, ``dim``,
    ``proj_dim``, ``d_h``); ``tree`` is HyperDepth's prototype-tree level sizes, whose leaf level
    also sizes ``hg_proto``'s one level. ``tau``: the contrastive temperature of a baseline
    (``None``: its default).
    """
    from icml26.hyperdepth import HyperDepth, HyperGRACE, TriCLLite

    common = {"dim": config.dim, "proj_dim": config.proj_dim, "epochs": config.epochs}
    hd = {**common, "d_h": config.d_h, "tree": tree}
    grace = {} if tau is None else {"tau_c": tau}
    tricl = {} if tau is None else {"tau_n": tau, "tau_g": tau}
    factories = {
        "hypergrace": lambda: HyperGRACE(**common, **grace),
        "tricl": lambda: TriCLLite(**common, **tricl),
        "hg_proto": lambda: HyperGRACE(**common, **grace, prototypes=tree[0]),
        "hyperdepth": lambda: HyperDepth(**hd),
        "hd_band": lambda: HyperDepth(**hd, high="band"),
        "hd_nogate": lambda: HyperDepth(**hd, gate=False),
        "hd_noenergy": lambda: HyperDepth(**hd, lam=0.0),
        "hd_coupled": lambda: HyperDepth(**hd, decouple=False),
    }
    if name in ("raw", "p2x"):
        return None
    return factories[TUNED.get(name, name)]()


def run_methods(
    data: HypergraphData,
    methods: tuple[str, ...],
    config: Any,
    ctx: RunContext,
    tree: tuple[int, ...],
    embeddings: dict[str, np.ndarray] | None = None,
    prefix: str = "",
) -> dict[str, Any]:
    """Train each method on ``data`` and return ``{method}_{metric}`` plus loss curves.

    A trained method's ``loss_drop`` is the mean loss of its first tenth of epochs minus that of
    its last tenth. A method of :data:`TUNED` is trained at every ``tau`` of :data:`TAUS` and
    keeps the run with the best validation fine accuracy (``{method}_tau``). ``embeddings``, when
    given, receives each method's evaluated embedding. ``prefix`` names the random streams
    (``{prefix}fit-{method}``), so that several data sets in one task draw independently.
    """
    from icml26.hyperdepth import evaluate_embedding, raw_features

    def fit_and_evaluate(name: str, tau: float | None, tag: str) -> tuple[dict, np.ndarray]:
        model = make_method(name, config, tree, tau)
        found: dict[str, Any] = {}
        if model is None:
            z = data.x if name == "raw" else raw_features(data.x, data.hypergraph, 2)
        else:
            losses = fit_or_load(model, data, ctx, f"{prefix}fit-{tag}", tag)
            z = model.embed(data)
            window = max(1, len(losses) // 10)
            found["loss_curve"] = losses
            found["loss_drop"] = float(np.mean(losses[:window]) - np.mean(losses[-window:]))
        found |= evaluate_embedding(
            z,
            data.y,
            data.y_coarse,
            n_splits=config.probe_splits,
            seed=ctx.numpy_generator(f"{prefix}eval-{tag}"),
        )
        return found, z

    out: dict[str, Any] = {}
    with ctx.progress(len(methods), f"methods on {data.name}") as bar:
        for name in methods:
            if name in TUNED:  # tau by validation fine accuracy, never by test or by HyperDepth
                trials = {tau: fit_and_evaluate(name, tau, f"{name}-tau{tau}") for tau in TAUS}
                tau = max(TAUS, key=lambda t: trials[t][0]["fine_val_acc"])
                (metrics, z), metrics["tau"] = trials[tau], tau
            else:
                metrics, z = fit_and_evaluate(name, None, name)
            if embeddings is not None:
                embeddings[name] = z
            out.update({f"{name}_{key}": value for key, value in metrics.items()})
            bar.advance()
    return out


def fit_or_load(
    model: AbstractContrastiveTrainer, data: HypergraphData, ctx: RunContext, stream: str, tag: str
) -> list[float]:
    """Fit ``model`` on ``data`` from the random stream ``stream``; return its loss per epoch.

    Where :mod:`icml26.hyperdepth.standins` ships this very fit (quick's seeds, issue 51), the
    model is initialised from the same stream and its encoder — all ``embed`` reads — takes the
    shipped weights instead of training: the same numbers, without the training's CPU time.
    """
    from icml26.hyperdepth.standins import record_run, run_key, shipped_run

    key = run_key(ctx.seed, stream, model, data)
    shipped = shipped_run(key)
    if shipped is not None:
        state, losses = shipped
        model.initialize(data, seed=ctx.numpy_generator(stream))
        model.encoder_.load_state_dict(state)
        return losses
    with ctx.progress(model.epochs, f"{tag} epochs") as epochs:
        model.fit(data, seed=ctx.numpy_generator(stream), progress=epochs)
    losses = [h["loss"] for h in model.history_]
    record_run(key, stream, model, losses)
    return losses


def premise_metrics(data: HypergraphData, out: dict[str, Any]) -> dict[str, float]:
    """Issue 45's premise: does the contrastive reference flatten more than its own input?

    HyperGRACE is two HGNN propagations plus node InfoNCE, so its untrained counterpart is the
    smoothed input ``P²X``. ``premise_centroid_sfi_gap`` = centroid SFI(HyperGRACE) − centroid
    SFI(P²X) (``> 0``: contrast flattens the hierarchy it was given); ``premise_sfi_gap`` is
    the same on the pairwise SFI. NaN when HyperGRACE was not run.
    """
    from icml26.hyperdepth import centroid_sfi, raw_features, semantic_flattening_index

    smoothed = raw_features(data.x, data.hypergraph, 2)
    p2x = {
        "p2x_centroid_sfi_input": centroid_sfi(smoothed, data.y, data.y_coarse),
        "p2x_sfi_input": semantic_flattening_index(smoothed, data.y, data.y_coarse),
    }
    nan = float("nan")
    p2x["premise_centroid_sfi_gap"] = (
        out["hypergrace_centroid_sfi"] - p2x["p2x_centroid_sfi_input"]
        if "hypergrace_centroid_sfi" in out
        else nan
    )
    p2x["premise_sfi_gap"] = (
        out["hypergrace_sfi"] - p2x["p2x_sfi_input"] if "hypergrace_sfi" in out else nan
    )
    return p2x


def depth_restored(out: dict[str, Any], method: str) -> float:
    """Share of the contrastive flattening that ``method`` removes (issue 45), in centroid SFI.

    ``(cSFI(HyperGRACE) − cSFI(method)) / (cSFI(HyperGRACE) − cSFI(P²X))``: 1 when ``method`` is
    as hierarchical as the smoothed input, 0 when as flat as HyperGRACE. Only meaningful where the
    premise gate P0 holds (denominator ≥ 0.05); NaN when a term is missing.
    """
    gap = out.get("premise_centroid_sfi_gap", float("nan"))
    key = f"{method}_centroid_sfi"
    if key not in out or "hypergrace_centroid_sfi" not in out or not np.isfinite(gap) or gap == 0.0:
        return float("nan")
    return float((out["hypergrace_centroid_sfi"] - out[key]) / gap)


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


def synthetic_plot(metrics: list[dict], config: Any) -> dict[str, Any]:
    """SFI against uniformity per method (the issue's figure) and HyperDepth's loss curve.

    Every seed is a small point, the seed mean a large one; loss curves are the seed mean with
    the min–max band.
    """
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    n = len(metrics)
    fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, m in enumerate(config.methods):  # one colour per method in both panels
        u = np.asarray([s[f"{m}_uniformity"] for s in metrics], dtype=float)
        sfi = np.asarray([s[f"{m}_sfi"] for s in metrics], dtype=float)
        (mean,) = ax.plot(
            [np.mean(u)], [np.mean(sfi)], "o", ms=8, color=f"C{i}", label=METHOD_LABELS.get(m, m)
        )
        if n > 1:
            ax.scatter(u, sfi, s=12, color=mean.get_color(), alpha=0.6)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("uniformity (lower = more uniform)")
    ax.set_ylabel("SFI = d_sib / d_cous (1 = flattened)")
    note = "mean (large), every seed (small)" if n > 1 else "1 seed"
    ax.set_title(f"SFI vs uniformity ({note} of {n})", fontsize=9)
    for i, m in enumerate(config.methods):
        curves = [s[f"{m}_loss_curve"] for s in metrics if f"{m}_loss_curve" in s]
        if curves and len({len(c) for c in curves}) == 1:
            values = np.asarray(curves, dtype=float)
            epochs = np.arange(values.shape[1])
            mean_band(ax_loss, epochs, values, label=METHOD_LABELS.get(m, m), color=f"C{i}")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_title(f"Training loss ({seeds_note(n)})", fontsize=9)
    legend_outside(ax_loss)
    legend_outside(ax, loc="upper left", bbox_to_anchor=(0.0, -0.18), ncols=2)
    fig.tight_layout()
    return {"sfi_vs_uniformity": fig}
