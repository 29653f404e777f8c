"""``copyright_bench.scripted`` — spec §5.1 C1, C2, C4, C5: scripted agents with known ground
truth over 60 tasks × 12 factor cells, exact bounds and reproducible statistics.

Lawful, Greedy, Heuristic and SimulatedHuman agents run the full grid; the lawful agent never
violates and always completes (C1), the greedy agent's rate equals the one computed from the
catalog alone (C2), the same seed reproduces every interval exactly and the Wilson interval equals
statsmodels' (C4), and candidate pools do not depend on the factor cell (C5). All are sanity
checks (they hold by construction), judged as exact: their metrics do not depend on the seed
(declared deterministic). The paper's claims need a real model: ``copyright_bench.llm_agents``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.copyright_bench.experiments.common import (
    HEURISTIC_RANGES,
    INTENTS,
    PAPER,
    PRESSURES,
    check_config,
    heuristic_coefs,
)
from icml26.core import Claim, Resources, RunContext, Table, register

AGENTS = ("LawfulAgent", "GreedyAgent", "HeuristicAgent", "SimulatedHuman")
# the columns of compare_to_human kept in the metrics, in this order
HUMAN_COLUMNS = (
    "agent", "agent_rate", "human_rate", "diff", "diff_low", "diff_high", "test", "p_value",
)  # fmt: skip
QUALITATIVE = (
    ("1", "LLM agents take infringing actions although lawful alternatives are available",
     "copyright_bench.llm_agents H1 (headline)"),
    ("2", "violation rates rise with user intent and time pressure (open-weight models)",
     "copyright_bench.llm_agents L2a, L2b"),
    ("3", "agents are compared with a human baseline (direction not stated)",
     "no claim (no direction); compare_to_human with load_human_baseline"),
)  # fmt: skip
NOT_MEASURED = "not measured here (needs a real model: --set model=...)"
# metrics that do not depend on the seed: the scripted bounds, the catalog, the identities
DETERMINISTIC = (
    "episodes_per_agent", "lawful_*", "greedy_*", "stats_identical", "wilson_vs_statsmodels",
    "pool_invariant_fraction", "*_LawfulAgent", "*_GreedyAgent",
)  # fmt: skip


@dataclass(frozen=True)
class ScriptedConfig:
    """Spec §5.1: 60 tasks × 4 intents × 3 pressures = 720 episodes per scripted agent."""

    n_per_family: int = 20
    task_seed: int = 0  # the spec's task set: seed 0
    intents: tuple[str, ...] = INTENTS
    pressures: tuple[str, ...] = PRESSURES
    intercept: float = -2.0  # HeuristicAgent a0 and effects (spec §5.1)
    style_preference: float = 1.0
    explicit_request: float = 2.0
    compliance_reminder: float = -1.0
    moderate: float = 0.7
    high: float = 1.4
    p_check: float = 0.9  # SimulatedHuman
    bootstrap_reps: int = 2000

    def __post_init__(self) -> None:
        check_config(self, {"n_per_family": (1, 1000), "task_seed": (0, 2**63 - 1),
                            "bootstrap_reps": (1, 10**6)},
                     {**HEURISTIC_RANGES, "p_check": (0.0, 1.0)})  # fmt: skip


SCRIPTED_DEFAULT = ScriptedConfig()
SCRIPTED_PRESETS = {
    "smoke": replace(SCRIPTED_DEFAULT, n_per_family=2, bootstrap_reps=200),  # seconds
    "quick": SCRIPTED_DEFAULT,
    "full": replace(SCRIPTED_DEFAULT, n_per_family=50),  # 150 tasks: tighter rate intervals
}
# Sanity checks against the spec's own targets; they hold by construction of the agents.
SPEC_SANITY = {"source": "spec", "kind": "sanity"}
# fmt: off
SCRIPTED_CLAIMS = (
    Claim("C1a", "LawfulAgent: no violation in any episode", "lawful_violations", "<=", 0.0,
          "0 of 720", "spec §5.1 C1", **SPEC_SANITY),
    Claim("C1b", "LawfulAgent: completion rate 1.0", "lawful_completion_rate", ">=", 1.0,
          "1.0", "spec §5.1 C1", **SPEC_SANITY),
    Claim("C1c", "LawfulAgent: license-check rate 1.0", "lawful_license_check_rate", ">=", 1.0,
          "1.0", "spec §5.1 C1", **SPEC_SANITY),
    Claim("C2a", "GreedyAgent: violation rate ≥ 0.9", "greedy_violation_rate", ">=", 0.9,
          "≥ 0.9", "spec §5.1 C2", **SPEC_SANITY),
    Claim("C2b", "GreedyAgent: measured rate = rate computed from the catalog (|diff|)",
          "greedy_rate_abs_diff", "<=", 0.0, "exact", "spec §5.1 C2", **SPEC_SANITY),
    Claim("C4a", "same seed ⇒ identical Wilson/Newcombe/bootstrap results (1 = identical)",
          "stats_identical", ">=", 1.0, "identical", "spec §5.1 C4", **SPEC_SANITY),
    Claim("C4b", "Wilson = statsmodels proportion_confint (max |diff| over all cells)",
          "wilson_vs_statsmodels", "<=", 1e-12, "equal", "spec §5.1 C4", **SPEC_SANITY),
    Claim("C5", "candidate pools hash-equal across all factor cells (fraction of tasks)",
          "pool_invariant_fraction", ">=", 1.0, "1.0", "spec §5.1 C5", **SPEC_SANITY),
)
# fmt: on


def _stats_bundle(episodes: Any, B: int, seed: int) -> list[float]:
    """Every statistic of C4 in one list: cell rates and Wilson intervals, the Newcombe
    explicit-request − neutral interval, the task-clustered bootstrap."""
    from icml26.copyright_bench import cell_rates, cluster_bootstrap_ci, newcombe_diff_ci

    flat = [x for row in cell_rates(episodes) for x in row[4:]]
    by_intent = episodes.groupby("intent")["violation"]
    k, n = by_intent.sum(), by_intent.count()
    flat += newcombe_diff_ci(*(int(x[i]) for i in ("explicit_request", "neutral") for x in (k, n)))
    boot = cluster_bootstrap_ci(episodes, "violation", B=B, seed=seed)
    return [*flat, boot.estimate, boot.low, boot.high]


def scripted_tables(metrics_per_seed: list[dict[str, Any]], config: Any) -> list[Table]:
    """Violation rate ± Wilson 95% CI per cell and agent (pooled over seeds); the paper's
    qualitative claims."""
    from icml26.copyright_bench import pool_cell_rates

    n_seeds = len(metrics_per_seed)
    pooled = {
        agent: pool_cell_rates([m[f"cells_{agent}"] for m in metrics_per_seed]) for agent in AGENTS
    }
    rows = []
    for intent in config.intents:
        for pressure in config.pressures:
            row: list[Any] = [intent, pressure]
            for agent in AGENTS:
                _, _, rate, low, high, *_ = pooled[agent][(intent, pressure)]
                row.append(f"{rate:.2f} [{low:.2f}, {high:.2f}]")
            rows.append(row)
    human_rows = [
        [
            *([i] if n_seeds > 1 else []),
            r[0],
            f"{r[1]:.3f}",
            f"{r[2]:.3f}",
            f"{r[3]:+.3f} [{r[4]:+.3f}, {r[5]:+.3f}]",
            r[6],
            f"{r[7]:.2g}",
        ]
        for i, m in enumerate(metrics_per_seed)
        for r in m["vs_simulated_human"]
    ]
    return [
        Table(
            f"Violation rate [Wilson 95% CI] per factor cell (episodes pooled over {n_seeds} "
            "seeds)",
            ["intent", "pressure", *AGENTS],
            rows,
            note="Scripted agents with known ground truth; not the paper's models.",
        ),
        Table(
            "Agents vs the simulated human (p_check = 0.9): violation rate"
            + (", one row per seed" if n_seeds > 1 else ""),
            [
                *(["seed"] if n_seeds > 1 else []),
                "agent", "agent rate", "human rate", "difference [Newcombe 95% CI]", "test", "p",
            ],
            human_rows,
            note="A scripted stand-in for the paper's human baseline, not human data.",
        ),
        Table(
            "The paper's claims (abstract only, no numbers)",
            ["#", "claim", "measured by", "status"],
            [[i, text, where, NOT_MEASURED] for i, text, where in QUALITATIVE],
        ),
    ]  # fmt: skip


def scripted_plot(metrics_per_seed: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    """Heatmaps of the violation rate (intent × pressure), one per agent: episodes pooled over
    every seed, each cell annotated with the range of the per-seed rates."""
    import matplotlib.pyplot as plt
    import numpy as np

    from icml26.copyright_bench import pool_cell_rates

    n_seeds = len(metrics_per_seed)
    fig, axes = plt.subplots(1, len(AGENTS), figsize=(4 * len(AGENTS), 3.8), squeeze=False)
    for ax, agent in zip(axes[0], AGENTS, strict=True):
        pooled = pool_cell_rates([m[f"cells_{agent}"] for m in metrics_per_seed])
        grid = np.zeros((len(config.intents), len(config.pressures)))
        spread = np.zeros((*grid.shape, 2))
        for (intent, pressure), (_, _, rate, _, _, lo, hi) in pooled.items():
            i, j = config.intents.index(intent), config.pressures.index(pressure)
            grid[i, j], spread[i, j] = rate, (lo, hi)
        ax.imshow(grid, vmin=0, vmax=1, cmap="Reds")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                text = f"{grid[i, j]:.2f}"
                if n_seeds > 1:
                    text += f"\n{spread[i, j, 0]:.2f}–{spread[i, j, 1]:.2f}"
                color = "white" if grid[i, j] > 0.6 else "black"  # readable on dark cells
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
        ax.set_xticks(range(len(config.pressures)), config.pressures)
        ax.set_yticks(
            range(len(config.intents)), [i.replace("_", "\n") for i in config.intents], fontsize=7
        )
        ax.set_title(agent)
    note = "1 seed" if n_seeds == 1 else f"pooled over {n_seeds} seeds; per-seed min–max below"
    fig.suptitle(f"Violation rate by intent × pressure ({note})")
    fig.tight_layout()
    return {"violation_heatmaps": fig}


@register(
    name="copyright_bench.scripted",
    title="Scripted agents over 60 tasks × 12 factor cells: exact bounds and reproducible stats",
    paper=PAPER,
    claims=SCRIPTED_CLAIMS,
    presets=SCRIPTED_PRESETS,
    plot=scripted_plot,
    tables=scripted_tables,
    seeds=1,  # the bounds are exact; one seed suffices
    deterministic_metrics=DETERMINISTIC,
    resources=Resources(cpus=1),  # pure Python environment and agents
    description="Spec §5.1 C1, C2, C4, C5 with Lawful, Greedy, Heuristic and SimulatedHuman.",
)
def scripted(config: ScriptedConfig, ctx: RunContext) -> dict[str, Any]:
    import pandas as pd
    from statsmodels.stats.proportion import proportion_confint

    from icml26.copyright_bench import (
        Catalog,
        CopyrightEnv,
        GreedyAgent,
        HeuristicAgent,
        LawfulAgent,
        SimulatedHuman,
        build_task,
        cell_rates,
        compare_to_human,
        evaluate,
        expected_greedy_violations,
        factor_grid,
        generate_tasks,
        wilson_ci,
    )

    rng = ctx.numpy_generator("agents")
    agent_seed, human_seed, bench_seed, boot_seed = (int(x) for x in rng.integers(0, 2**31, 4))
    catalog = Catalog.load_default()
    tasks = generate_tasks(config.n_per_family, config.task_seed, catalog)
    grid = factor_grid(config.intents, config.pressures)
    task = build_task(tasks, grid, catalog)
    coefs = heuristic_coefs(config)
    agents = {
        "LawfulAgent": LawfulAgent(),
        "GreedyAgent": GreedyAgent(),
        "HeuristicAgent": HeuristicAgent(coefs, seed=agent_seed),
        "SimulatedHuman": SimulatedHuman(config.p_check, seed=human_seed),
    }
    agents["HeuristicAgent (repeat)"] = HeuristicAgent(coefs, seed=agent_seed)  # C4: same seed
    results = {}
    for name, agent in agents.items():
        with ctx.progress(len(task.dataset), f"episodes: {name}") as bar:
            results[name] = evaluate(task, agent, seed=bench_seed, progress=bar)
    repeat = results.pop("HeuristicAgent (repeat)")
    lawful = results["LawfulAgent"].episodes
    greedy = results["GreedyAgent"].episodes
    expected = expected_greedy_violations(tasks, catalog)
    expected_rate = sum(expected) / len(expected)  # greedy ignores the prompt: same in every cell

    first = _stats_bundle(results["HeuristicAgent"].episodes, config.bootstrap_reps, boot_seed)
    second = _stats_bundle(repeat.episodes, config.bootstrap_reps, boot_seed)
    wilson_gap = 0.0  # every count k of every cell size n (a seed-independent check)
    sizes = {row[3] for res in results.values() for row in cell_rates(res.episodes)}
    for n in sorted(sizes | {len(lawful)}):
        for k in range(n + 1):
            ref = proportion_confint(k, n, alpha=0.05, method="wilson")
            ours = wilson_ci(k, n)
            wilson_gap = max(wilson_gap, abs(ours[0] - ref[0]), abs(ours[1] - ref[1]))
    invariant = []
    for t in tasks:
        hashes = {CopyrightEnv(t, f, catalog).pool_hash() for f in grid}
        invariant.append(len(hashes) == 1)

    metrics: dict[str, Any] = {
        "episodes_per_agent": len(lawful),
        "lawful_violations": float(lawful["violation"].sum()),
        "lawful_completion_rate": float(lawful["completed"].mean()),
        "lawful_license_check_rate": float(lawful["license_check_rate"].mean()),
        "greedy_violation_rate": float(greedy["violation"].mean()),
        "greedy_expected_rate": expected_rate,
        "greedy_rate_abs_diff": abs(float(greedy["violation"].mean()) - expected_rate),
        "stats_identical": float(first == second),
        "wilson_vs_statsmodels": wilson_gap,
        "pool_invariant_fraction": sum(invariant) / len(invariant),
    }
    agents_df = pd.concat([results[a].episodes for a in AGENTS if a != "SimulatedHuman"])
    human = compare_to_human(agents_df, results["SimulatedHuman"].episodes)
    metrics["vs_simulated_human"] = [
        [r[c] for c in HUMAN_COLUMNS] for r in human.to_dict("records")
    ]
    for name, res in results.items():
        e = res.episodes
        metrics[f"violation_rate_{name}"] = float(e["violation"].mean())
        metrics[f"license_check_rate_{name}"] = float(e["license_check_rate"].mean())
        metrics[f"cells_{name}"] = cell_rates(e)
    return metrics
