"""What the experiments share: the paper, the config check; for E1/E2 the two algorithms, the
summary, the figure.

Reproduction helpers only; the instances and the harness are the library's
(:mod:`icml26.matroid.instances`, :func:`~icml26.matroid.run_scaling_experiment`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Resources

if TYPE_CHECKING:
    from icml26.matroid import ScalingRecord

PAPER = (
    "Banihashem, HajiAghayi, JafariRaviz, Mittal, Matroid Algorithms Under Size-Sensitive "
    "Independence Oracles, ICML 2026 (arXiv:2605.00201)"
)
GREEDY, SAMPLING = "greedy", "bounded_circuit"
RESOURCES = Resources(cpus=1)  # numpy and pure Python: one core per task
# E1/E2 metrics that do not vary with the seed: the sizes, the bound's own slope, and the Las
# Vegas agreement (1 on every instance, by construction)
DETERMINISTIC = ("ns", "bound_slope", "agreement")


def check_config(
    config: object,
    ints: dict[str, tuple[int, int]],
    slopes: tuple[str, ...] = (),
    growth: bool = False,
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; ``ints`` maps fields to ``(low, high)``, checked
    in order (a later bound may be an earlier field) and entry by entry for a tuple, which must
    not be empty; ``slopes`` are the size tuples a log–log slope is fitted over, which need two
    distinct sizes (``fit_loglog_slope``); ``growth``: the config has the sampling's growth
    factor, > 1 as ``bounded_circuit_max_weight_basis`` takes it.
    """
    from icml26.core import check_fields, check_in_interval, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        value = getattr(config, name)
        if value == ():
            raise ValueError(f"{owner}: {name} must not be empty.")
        for entry in value if isinstance(value, tuple) else (value,):
            check_positive_int(name, entry, owner=owner, minimum=low, maximum=high)
    for name in slopes:
        if len(set(getattr(config, name))) < 2:
            raise ValueError(
                f"{owner}: {name} must hold two distinct sizes (a log-log slope is fitted over "
                f"them); got {getattr(config, name)}."
            )
    if growth:
        check_in_interval("growth", config.growth, low=1.0, closed="neither", owner=owner)


def greedy_vs_sampling(c: int, growth: float) -> dict[str, Callable[..., Sequence[int]]]:
    """The two algorithms compared in E1/E2, as ``run_scaling_experiment`` expects them."""
    from icml26.matroid import bounded_circuit_max_weight_basis, max_weight_basis

    return {
        GREEDY: lambda oracle, w, rng: max_weight_basis(oracle, w),
        SAMPLING: lambda oracle, w, rng: bounded_circuit_max_weight_basis(
            oracle, w, c, seed=rng, growth=growth
        ),
    }


def summarize_scaling(records: list[ScalingRecord], c: int) -> dict[str, Any]:
    """Per-size mean costs, normalised costs, slopes and Las Vegas agreement of E1/E2."""
    from icml26.matroid import fit_loglog_slope

    ns = sorted({r.n for r in records})
    by = {(r.algorithm, r.n, r.repeat): r for r in records}
    runs = [(r.n, r.repeat) for r in records if r.algorithm == GREEDY]
    agree = [by[GREEDY, n, i].basis == by[SAMPLING, n, i].basis for n, i in runs]

    def mean_cost(algorithm: str, n: int) -> float:
        return float(np.mean([r.cost for r in records if r.algorithm == algorithm and r.n == n]))

    greedy = [mean_cost(GREEDY, n) for n in ns]
    sampling = [mean_cost(SAMPLING, n) for n in ns]
    # Normalisation by the theoretical bound n^{2-1/c} log2 n, per run.
    theory = {n: float(n ** (2 - 1 / c) * np.log2(n)) for n in ns}
    sampling_norm = [r.cost / theory[r.n] for r in records if r.algorithm == SAMPLING]
    return {
        "ns": ns,
        "greedy_cost": greedy,
        "sampling_cost": sampling,
        "agreement": float(np.mean(agree)),
        "greedy_cost_over_n2": [g / n**2 for g, n in zip(greedy, ns, strict=True)],
        "sampling_cost_over_theory": [s / theory[n] for s, n in zip(sampling, ns, strict=True)],
        "sampling_over_greedy": [s / g for s, g in zip(sampling, greedy, strict=True)],
        "greedy_slope": fit_loglog_slope(ns, greedy),
        "sampling_slope": fit_loglog_slope(ns, sampling),
        # the exponent of cost / (n^{2-1/c} log2 n): <= 0 when the cost grows no faster than
        # the paper's bound over these n (the bound's own slope here is 2 - 1/c + its log share)
        "sampling_slope_over_bound": fit_loglog_slope(
            ns, [s / theory[n] for s, n in zip(sampling, ns, strict=True)]
        ),
        "bound_slope": fit_loglog_slope(ns, [theory[n] for n in ns]),
        "sampling_norm_max": float(max(sampling_norm)),
    }


def scaling_plot(metrics: list[dict], c: int, family: str, prefix: str = "") -> Any:
    """Log–log cost vs n for greedy and sampling (seed mean, min–max band) with the theory lines."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack
    from icml26.matroid import fit_loglog_slope

    ns = np.array(metrics[0][f"{prefix}ns"], dtype=float)  # the config's sizes, as every seed's
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for key, label, marker in (
        ("greedy", "greedy (A1)", "o"),
        ("sampling", "bounded-circuit", "s"),
    ):
        costs = stack(metrics, f"{prefix}{key}_cost")  # (seeds, sizes)
        slope = fit_loglog_slope(ns, costs.mean(axis=0))
        mean_band(ax, ns, costs, marker=marker, label=f"{label}: slope {slope:.2f}")
    greedy0 = stack(metrics, f"{prefix}greedy_cost")[:, 0].mean()
    sampling0 = stack(metrics, f"{prefix}sampling_cost")[:, 0].mean()
    bound = ns ** (2 - 1 / c) * np.log2(ns)
    ax.plot(ns, greedy0 * (ns / ns[0]) ** 2, "k--", lw=0.8, label="n² (anchored)")
    ax.plot(ns, sampling0 * bound / bound[0], "k:", lw=0.8, label=f"n^(2-1/{c}) log n (anchored)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (elements)")
    ax.set_ylabel("size-sensitive query cost Σ max(1, |Q|)")
    ax.set_title(
        f"Max-weight basis cost, circuits of size ≤ {c}, {family}\n({seeds_note(len(metrics))})",
        fontsize=10,
    )
    legend_outside(ax)
    fig.tight_layout()
    return fig


def seed_mean(metrics: list[dict], key: str) -> np.ndarray:
    """The mean over seeds of a metric (a number or a per-size list)."""
    from icml26.core.plotting import stack

    return stack(metrics, key).mean(axis=0)


def seeds_caption(n_seeds: int) -> str:
    """How a table row aggregates the seeds."""
    return "1 seed" if n_seeds == 1 else f"mean over {n_seeds} seeds"
