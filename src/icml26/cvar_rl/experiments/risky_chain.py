"""``cvar_rl.risky_chain``: history dependence, exactness and Q-learning on RiskyChain (Q1, Q2).

The three-step RiskyChain needs a history-dependent policy: the off-grid augmented DP is checked
against brute force over history-dependent policies, grid VI against the exact optimum, the
executed greedy policy against both, and all-budget Q-learning against grid VI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.cvar_rl.budget import MAX_NODES
from icml26.cvar_rl.experiments.common import (
    ALPHA,
    GAMMA,
    PAPER,
    RESOURCES,
    check_config,
    over_seeds,
    seed_mean,
)
from icml26.cvar_rl.q_learning import _LR_SCHEDULES as LR_SCHEDULES
from icml26.cvar_rl.q_learning import MAX_STEPS

if TYPE_CHECKING:
    from icml26.cvar_rl import AugmentedGreedyPolicy

_RISKY_S1, _RISKY_BRANCHES = 3, ((1, 4.0), (2, 0.0))  # s1; (branch state, reward into it)


@dataclass(frozen=True)
class RiskyChainConfig:
    gamma: float = 0.9
    alphas: tuple[float, ...] = (0.1, 0.3, 0.5, 1.0)
    K: int = 2001  # grid on [Z_min, Z_max] = [-60, 40]: delta = 0.05
    q_steps: int = 20_000
    q_eps: float = 0.3
    q_lr_schedule: str = "harmonic"  # sample averages: best on a 3-step acyclic task (spec §5)

    def __post_init__(self) -> None:
        check_config(
            self,
            {"K": (2, MAX_NODES), "q_steps": (1, MAX_STEPS)},
            {"gamma": GAMMA, "alphas": ALPHA, "q_eps": (0.0, 1.0, "both")},
            {"q_lr_schedule": LR_SCHEDULES},
        )


RISKY_DEFAULT = RiskyChainConfig()
RISKY_PRESETS = {
    "smoke": replace(RISKY_DEFAULT, K=401, q_steps=2_000),  # seconds; claims may not hold
    "quick": RISKY_DEFAULT,
    "full": replace(RISKY_DEFAULT, q_steps=100_000),  # more samples: a tighter Q-learning gap
}
RISKY_CLAIMS = (
    Claim(
        "Q1a",
        "Off-grid augmented DP = brute force over history-dependent policies (all alphas)",
        "exact_vs_brute_gap",
        "<=",
        1e-9,
        "exact (spec: 1e-13)",
        "spec §5 Q1",
        source="spec",
        kind="sanity",  # two exact computations of the same optimum
    ),
    Claim(
        "Q1b",
        "Grid VI (K=2001) within 0.02 of the exact optimum (max over alphas)",
        "grid_vs_exact_gap",
        "<=",
        0.02,
        "discretisation bound",
        "spec §5 Q1",
        source="spec",
        gates=(),
        control="the best Markov policy (no budget augmentation) in place of grid VI",
        control_value=0.162,  # 0.972 - 0.81 at alpha = 0.5, by brute force
    ),
    Claim(
        "Q1c",
        "The executed augmented greedy policy's exact CVaR equals the brute-force optimum",
        "executed_vs_brute_gap",
        "<=",
        1e-9,
        "equal",
        "spec §5 Q1",
        source="spec",
        control="the best Markov policy (the same s1 action after both branches)",
        control_value=0.162,
    ),
    Claim(
        "Q1d",
        "Premise: at alpha=0.5 the history-dependent optimum beats the best Markov policy by "
        ">= 0.1 (brute force)",
        "markov_gap_alpha05",
        ">=",
        0.1,
        "0.972 vs 0.81 (spec)",
        "spec §5 Q1",
        source="spec",
        kind="gate",
    ),
    Claim(
        "Q2a",
        "All-budget Q-learning's CVaR* within 0.1 of grid VI (max over alphas)",
        "q_vs_vi_gap",
        "<=",
        0.1,
        "0.03 (spec)",
        "spec §5 Q2",
        source="spec",
        gates=(),
        control="the Q-table before learning (all zeros: every CVaR reads 0)",
        control_value=2.972,  # |0 - CVaR*_1|
    ),
    Claim(
        "Q2b",
        "Q-learning picks VI's s1 actions after both branches (mismatches over alphas)",
        "q_action_mismatches",
        "<=",
        0.0,
        "0",
        "spec §5 Q2",
        source="spec",
        control="the best Markov policy (one s1 action for both branches)",
        control_value=1.0,  # it must mismatch VI after one branch at alpha = 0.5
    ),
)


def s1_actions(policy: AugmentedGreedyPolicy) -> list[int]:
    """Greedy s1 action after each branch when starting from the policy's budget b."""
    gamma = policy.gamma
    budgets = np.array([((policy.b - r) / gamma) / gamma for _, r in _RISKY_BRANCHES])
    return policy.act_batch(np.full(2, _RISKY_S1), budgets).tolist()


def risky_tables(metrics: list[dict[str, Any]], config: RiskyChainConfig) -> list[Table]:
    keys = ("brute", "exact", "grid", "grid_bound", "qlearn", "markov")
    rows = [
        [a, f"{bf:.6f}", f"{ex:.6f}", f"{gv:.4f} ± {gb:.3f}", f"{ql:.4f}", f"{mk:.4f}"]
        for a, bf, ex, gv, gb, ql, mk in zip(
            config.alphas, *(seed_mean(metrics, k) for k in keys), strict=True
        )
    ]
    return [
        Table(
            "RiskyChain: optimal static CVaR by method (grid VI ± its discretisation bound; "
            f"{over_seeds(metrics)}, only Q-learning varies)",
            ["alpha", "brute force", "off-grid DP", "grid VI ± bound", "Q-learning", "best Markov"],
            rows,
            note="spec (prototype): 0.81, 0.81, 0.972, 2.972; best Markov 0.81 at alpha=0.5",
        )
    ]


@register(
    name="cvar_rl.risky_chain",
    title="RiskyChain: history dependence, exactness and Q-learning",
    paper=PAPER,
    claims=RISKY_CLAIMS,
    presets=RISKY_PRESETS,
    tables=risky_tables,
    # Q-learning is the only random part: its gap to VI at 20k steps spans 0.03-0.21 over seeds
    # (Monte-Carlo noise of the risky action, SD 3.6 per draw), so one seed's verdict is luck.
    seeds=3,
    deterministic_metrics=(
        "exact_vs_brute_gap",
        "grid_vs_exact_gap",
        "executed_vs_brute_gap",
        "markov_gap_alpha05",
    ),
    resources=RESOURCES,
)
def risky_chain_experiment(config: RiskyChainConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.cvar_rl import (
        BudgetGrid,
        augmented_value_iteration,
        brute_force_static_cvar,
        cvar_from_values,
        cvar_q_learning,
        exact_augmented_cvar,
        exact_cvar,
        exact_return_distribution,
        risky_chain,
    )

    mdp = risky_chain(config.gamma)
    horizon = 3
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, config.K)
    sol = augmented_value_iteration(mdp, grid)
    with ctx.progress(config.q_steps, "Q-learning steps") as bar:
        q = cvar_q_learning(
            mdp,
            grid,
            mdp.gamma,
            config.q_steps,
            lr_schedule=config.q_lr_schedule,
            eps=config.q_eps,
            seed=ctx.numpy_generator(),
            progress=bar,
        )
    q_values = q.Q[mdp.s0].max(axis=1)
    out: dict[str, list[float]] = {
        k: [] for k in ("brute", "exact", "grid", "grid_bound", "executed", "qlearn", "markov")
    }
    mismatches = 0
    for alpha in config.alphas:
        brute, _ = brute_force_static_cvar(mdp, alpha, horizon)
        markov, _ = brute_force_static_cvar(mdp, alpha, horizon, markov=True)
        exact, _ = exact_augmented_cvar(mdp, alpha, horizon)
        estimate = sol.cvar(alpha)
        policy = sol.policy(estimate.b_star)
        atoms, probs = exact_return_distribution(mdp, policy, horizon)
        q_cvar, q_b = cvar_from_values(q_values, grid, alpha)
        mismatches += sum(
            x != y for x, y in zip(s1_actions(policy), s1_actions(q.policy(q_b)), strict=True)
        )
        values = (
            brute,
            exact,
            estimate.value,
            estimate.error_bound,
            exact_cvar(atoms, probs, alpha),
            q_cvar,
            markov,
        )
        for key, value in zip(out, values, strict=True):
            out[key].append(value)
    brute, grid_cvar = np.array(out["brute"]), np.array(out["grid"])
    i05 = config.alphas.index(0.5) if 0.5 in config.alphas else 0
    return {
        "exact_vs_brute_gap": float(np.max(np.abs(np.array(out["exact"]) - brute))),
        "grid_vs_exact_gap": float(np.max(np.abs(grid_cvar - np.array(out["exact"])))),
        "executed_vs_brute_gap": float(np.max(np.abs(np.array(out["executed"]) - brute))),
        "markov_gap_alpha05": float(brute[i05] - out["markov"][i05]),
        "q_vs_vi_gap": float(np.max(np.abs(np.array(out["qlearn"]) - grid_cvar))),
        "q_action_mismatches": float(mismatches),
        "vi_iterations": float(sol.iterations),
        **{k: [float(x) for x in v] for k, v in out.items()},
    }
