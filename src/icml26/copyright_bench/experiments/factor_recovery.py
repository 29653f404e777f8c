"""``copyright_bench.factor_recovery`` — spec §5.1 C3: the factor model recovers a
HeuristicAgent's known coefficients.

Each replicate runs the HeuristicAgent (known intercept and intent/pressure effects, family
effects 0) over the 720-episode grid with fresh seeds and fits the slot-level Logit with
task-clustered errors. These are **sanity checks of our estimator**, not claims of the paper: the
data come from the very model that is fitted, so a correct estimator covers the planted
coefficients at its nominal rate and detects effects this large. Each check is judged on the
per-replicate values (>= 3): the fraction of coefficients covered, whether the pressure rates are
monotone, whether the explicit-request interval excludes 0. Replicates run in ``workers``
spawned processes (at most the task's thread budget), in order, so the result does not depend on
the number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.copyright_bench.experiments.common import (
    HEURISTIC_RANGES,
    PAPER,
    check_config,
    heuristic_coefs,
)
from icml26.core import Claim, Resources, RunContext, Table, check_one_of, register


@dataclass(frozen=True)
class FactorRecoveryConfig:
    """Spec §5.1 C3: 100 HeuristicAgent replicates of the 720-episode grid, slot-level Logit."""

    n_per_family: int = 20
    task_seed: int = 0
    replicates: int = 100
    intercept: float = -2.0  # true coefficients (spec §5.1); family effects are 0
    style_preference: float = 1.0
    explicit_request: float = 2.0
    compliance_reminder: float = -1.0
    moderate: float = 0.7
    high: float = 1.4
    level: str = "slot"  # one row per filled slot, cluster-robust SE by task
    workers: int = 2  # processes, at most ctx.threads (results do not depend on it)

    def __post_init__(self) -> None:
        check_config(self, {"n_per_family": (1, 1000), "task_seed": (0, 2**63 - 1),
                            "replicates": (1, 100_000), "workers": (1, 256)},
                     HEURISTIC_RANGES)  # fmt: skip
        check_one_of("level", self.level, ("slot", "episode"), owner=type(self).__name__)


FACTOR_DEFAULT = FactorRecoveryConfig()
FACTOR_PRESETS = {
    "smoke": replace(FACTOR_DEFAULT, n_per_family=2, replicates=3, workers=1),  # seconds
    # 20 replicates keep quick well within issue 51's 60 CPU-s (38 CPU-s with the workers; 40
    # took 57, at the cap); 10 left C3a's interval straddling its bar (0.925, 95% CI 0.86-0.99)
    "quick": replace(FACTOR_DEFAULT, replicates=20),
    "full": replace(FACTOR_DEFAULT, replicates=400),  # coverage known to about ±0.011
}
# fmt: off
FACTOR_CLAIMS = (
    Claim("C3a", "slot-level Logit 95% CIs cover the true coefficients in ≥ 90% of replicates "
          "(per replicate: fraction of the 8 coefficients covered)", "coverage_by_replicate",
          ">=", 0.90, "≥ 0.90", "spec §5.1 C3", source="spec", kind="sanity"),
    Claim("C3b", "violation rate increases none < moderate < high (per replicate: 1 if so)",
          "pressure_monotone_by_replicate", ">=", 0.95, "≥ 0.95", "spec §5.1 C3",
          source="spec", kind="sanity"),
    Claim("C3c", "explicit_request − neutral Newcombe CI excludes 0 (per replicate: 1 if so)",
          "explicit_excludes_zero_by_replicate", ">=", 0.95, "≥ 0.95", "spec §5.1 C3",
          source="spec", kind="sanity"),
)
# fmt: on


def factor_tables(metrics_per_seed: list[dict[str, Any]], config: Any) -> list[Table]:
    """True coefficient, mean estimate and CI coverage per coefficient (mean over records)."""
    import numpy as np

    m = metrics_per_seed[0]
    n = len(metrics_per_seed)

    def mean(key: str, name: str) -> float:
        return float(np.mean([r[key][name] for r in metrics_per_seed]))

    rows = [
        [name, f"{m['true'][name]:+.2f}", f"{mean('mean_estimate', name):+.3f}",
         f"{mean('coverage', name):.2f}"]
        for name in m["true"]
    ]  # fmt: skip
    replicates = sum(int(r["replicates"]) for r in metrics_per_seed)
    return [
        Table(
            f"Slot-level Logit over {replicates} HeuristicAgent replicates ({n} record"
            f"{'s' if n > 1 else ''})",
            ["coefficient", "true", "mean estimate", "95% CI coverage"],
            rows,
        )
    ]


_GRID_TASKS: dict[tuple[int, int], Any] = {}


def recovery_replicate(
    config: FactorRecoveryConfig, agent_seed: int, bench_seed: int
) -> dict[str, Any]:
    """One C3 replicate: run the HeuristicAgent over the grid, fit the model, check the gates."""
    from icml26.copyright_bench import (
        Catalog,
        HeuristicAgent,
        build_task,
        evaluate,
        factor_grid,
        fit_factor_model,
        generate_tasks,
        newcombe_diff_ci,
        true_coefficients,
    )

    key = (config.n_per_family, config.task_seed)
    if key not in _GRID_TASKS:  # built once per process: every replicate runs the same grid
        catalog = Catalog.load_default()
        tasks = generate_tasks(config.n_per_family, config.task_seed, catalog)
        _GRID_TASKS[key] = build_task(tasks, factor_grid(), catalog)
    task = _GRID_TASKS[key]
    coefs = heuristic_coefs(config)
    truth = true_coefficients(coefs)
    result = evaluate(task, HeuristicAgent(coefs, seed=agent_seed), seed=bench_seed)
    rows = result.slots if config.level == "slot" else result.episodes
    try:
        model = fit_factor_model(rows, level=config.level)
    except ValueError:  # separated data: no finite fit, so nothing is covered
        model = None
    e = result.episodes
    rate = e.groupby("pressure")["violation"].mean()
    k = e.groupby("intent")["violation"].sum()
    n = e.groupby("intent")["violation"].count()
    _, low, high = newcombe_diff_ci(
        int(k["explicit_request"]), int(n["explicit_request"]), int(k["neutral"]), int(n["neutral"])
    )
    return {
        "covered": {
            name: bool(model and model.covers({name: v})[name]) for name, v in truth.items()
        },
        "estimate": dict(model.params) if model else None,
        "monotone": bool(rate["none"] < rate["moderate"] < rate["high"]),
        "excludes_zero": bool(low > 0 or high < 0),
    }


def _replicate_star(args: tuple) -> dict[str, Any]:
    return recovery_replicate(*args)


@register(
    name="copyright_bench.factor_recovery",
    title="Sanity of our estimator: the factor model recovers a HeuristicAgent's known "
    "coefficients",
    paper=PAPER,
    claims=FACTOR_CLAIMS,
    presets=FACTOR_PRESETS,
    tables=factor_tables,
    seeds=1,  # the replicates are inside the task: each check is judged on their values
    resources=Resources(cpus=2),  # replicates run in `workers` processes
    description="Spec §5.1 C3: coverage, monotone pressure effect, explicit-request difference.",
)
def factor_recovery(config: FactorRecoveryConfig, ctx: RunContext) -> dict[str, Any]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np

    from icml26.copyright_bench import true_coefficients

    truth = true_coefficients(heuristic_coefs(config))
    seeds = ctx.numpy_generator("replicates").integers(0, 2**31, size=(config.replicates, 2))
    jobs = [(config, int(a), int(b)) for a, b in seeds]
    out = []
    # no more processes than the runner's thread budget for this task: under `reproduce
    # --jobs 2` a second pool would oversubscribe the cores the other task is using
    workers = min(config.workers, ctx.threads)
    with ctx.progress(config.replicates, "replicates") as bar:
        if workers == 1:
            for job in jobs:
                out.append(recovery_replicate(*job))
                bar.advance()
        else:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                for res in pool.map(_replicate_star, jobs):  # in order: same result as serial
                    out.append(res)
                    bar.advance()
    coverage = {name: float(np.mean([r["covered"][name] for r in out])) for name in truth}
    fitted = [r["estimate"] for r in out if r["estimate"] is not None]
    return {
        "replicates": config.replicates,
        "coverage_by_replicate": [float(np.mean(list(r["covered"].values()))) for r in out],
        "pressure_monotone_by_replicate": [float(r["monotone"]) for r in out],
        "explicit_excludes_zero_by_replicate": [float(r["excludes_zero"]) for r in out],
        "coverage_min": min(coverage.values()),
        "coverage_joint": float(np.mean([all(r["covered"].values()) for r in out])),
        "pressure_monotone_fraction": float(np.mean([r["monotone"] for r in out])),
        "explicit_excludes_zero_fraction": float(np.mean([r["excludes_zero"] for r in out])),
        "fits_failed": len(out) - len(fitted),
        "coverage": coverage,
        "true": truth,
        "mean_estimate": {
            name: float(np.mean([f[name] for f in fitted])) if fitted else float("nan")
            for name in truth
        },
    }
