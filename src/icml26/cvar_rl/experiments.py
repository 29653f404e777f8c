"""Registered reproductions (spec §5): RiskyChain (Q1, Q2), slippery CliffWalking (Q3–Q6),
FrozenLake (L1–L3: exhausted budgets, the error bound, Q-learning through gymnasium) and the
performance–safety frontier (F1–F4).

The paper's own numbers could not be retrieved: every reference figure is the spec's own target
or its prototype's measurement (``source="spec"``), except F1 (the abstract's qualitative
performance–safety trade-off, ``source="paper"``) and L1–L3 (targets set in issue 17, no paper or
spec figure: ``source="none"``). Q3, Q6a and Q6b hold by construction of the operators
(``kind="sanity"``).

Importing this module stays light (``icml26 list``): the method (scipy, gymnasium) is imported
inside the run functions and the helpers they call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

if TYPE_CHECKING:
    from icml26.cvar_rl import (
        AugmentedGreedyPolicy,
        AugmentedSolution,
        BudgetGrid,
        CVaREstimate,
        TabularMDP,
    )

REQUIRES = ("gymnasium",)
# NumPy/SciPy only, single-threaded loops and small sparse products: one core per task.
RESOURCES = Resources(cpus=1)
PAPER = (
    "Muni, Taboga, Derman, Bacon & Delage, Reward Redistribution for CVaR MDPs using a Bellman "
    "Operator on L-infinity, ICML 2026 (arXiv:2602.03778)"
)
_RISKY_S1, _RISKY_BRANCHES = 3, ((1, 4.0), (2, 0.0))  # s1; (branch state, reward into it)


def _cvar_se(returns: np.ndarray, alpha: float) -> float:
    """Standard error of the empirical CVaR from its influence function (b - Z)^+ / alpha."""
    var = np.quantile(returns, alpha)
    return float(np.std(np.maximum(var - returns, 0.0)) / (alpha * math.sqrt(returns.size)))


# --- RiskyChain -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RiskyChainConfig:
    gamma: float = 0.9
    alphas: tuple[float, ...] = (0.1, 0.3, 0.5, 1.0)
    K: int = 2001  # grid on [Z_min, Z_max] = [-60, 40]: delta = 0.05
    q_steps: int = 20_000
    q_eps: float = 0.3
    q_lr_schedule: str = "harmonic"  # sample averages: best on a 3-step acyclic task (spec §5)


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
    ),
    Claim(
        "Q1b",
        "Grid VI (K=2001) within 0.02 of the exact optimum",
        "grid_vs_exact_gap",
        "<=",
        0.02,
        "discretisation bound",
        "spec §5 Q1",
        source="spec",
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
    ),
    Claim(
        "Q1d",
        "At alpha=0.5 the augmented optimum beats the best Markov policy by >= 0.1",
        "markov_gap_alpha05",
        ">=",
        0.1,
        "0.972 vs 0.81 (spec)",
        "spec §5 Q1",
        source="spec",
    ),
    Claim(
        "Q2a",
        "All-budget Q-learning's CVaR* within 0.1 of grid VI (all alphas)",
        "q_vs_vi_gap",
        "<=",
        0.1,
        "0.03 (spec)",
        "spec §5 Q2",
        source="spec",
    ),
    Claim(
        "Q2b",
        "Q-learning picks VI's s1 actions after both branches (mismatches)",
        "q_action_mismatches",
        "<=",
        0.0,
        "0",
        "spec §5 Q2",
        source="spec",
    ),
)


def _mean(metrics: list[dict[str, Any]], key: str) -> np.ndarray:
    """The seed mean of a metric (a number or a list per alpha)."""
    from icml26.core.plotting import stack

    return stack(metrics, key).mean(axis=0)


def _over(metrics: list[dict[str, Any]]) -> str:
    return "1 seed" if len(metrics) == 1 else f"mean over {len(metrics)} seeds"


def _s1_actions(policy: AugmentedGreedyPolicy) -> list[int]:
    """Greedy s1 action after each branch when starting from the policy's budget b."""
    gamma = policy.gamma
    budgets = np.array([((policy.b - r) / gamma) / gamma for _, r in _RISKY_BRANCHES])
    return policy.act_batch(np.full(2, _RISKY_S1), budgets).tolist()


def risky_tables(metrics: list[dict[str, Any]], config: RiskyChainConfig) -> list[Table]:
    keys = ("brute", "exact", "grid", "grid_bound", "qlearn", "markov")
    rows = [
        [a, f"{bf:.6f}", f"{ex:.6f}", f"{gv:.4f} ± {gb:.3f}", f"{ql:.4f}", f"{mk:.4f}"]
        for a, bf, ex, gv, gb, ql, mk in zip(
            config.alphas, *(_mean(metrics, k) for k in keys), strict=True
        )
    ]
    return [
        Table(
            "RiskyChain: optimal static CVaR by method (grid VI ± its discretisation bound; "
            f"{_over(metrics)}, only Q-learning varies)",
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
    requires=REQUIRES,
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
            on_progress=bar.advance,
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
            x != y for x, y in zip(_s1_actions(policy), _s1_actions(q.policy(q_b)), strict=True)
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


# --- Slippery CliffWalking ----------------------------------------------------------------------


@dataclass(frozen=True)
class CliffConfig:
    slip: float = 0.1
    gamma: float = 0.95
    c_lo: float = -300.0  # narrower than Z_min = -2000: clamping below is approximate (docs)
    c_hi: float = 0.0
    K: int = 601
    alphas: tuple[float, ...] = (0.05, 0.1, 0.25)
    # The spec used 20k episodes; CVaR_0.05 then has an MC SE of ~2.3 here (heavy -100 tail),
    # too coarse for the 3.0 and 1.0 thresholds, so we simulate 10x more (rollouts are cheap).
    n_episodes: int = 200_000
    horizon: int = 300


CLIFF_DEFAULT = CliffConfig()
CLIFF_PRESETS = {
    "smoke": replace(CLIFF_DEFAULT, K=61, n_episodes=500, horizon=60),  # seconds; claims may fail
    "quick": CLIFF_DEFAULT,
    "full": replace(CLIFF_DEFAULT, K=1201, n_episodes=1_000_000),  # finer grid, less MC noise
}
CLIFF_CLAIMS = (
    Claim(
        "Q3",
        "alpha=1: CVaR* equals the risk-neutral value V_rn(start) within 1e-6",
        "alpha1_gap",
        "<=",
        1e-6,
        "1e-6 (spec: -12.141081 both)",
        "spec §5 Q3",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "Q4a",
        "MC CVaR_0.05 of the CVaR policy exceeds the risk-neutral policy's by >= 3",
        "cvar_gain_005",
        ">=",
        3.0,
        "+6.5 (spec prototype)",
        "spec §5 Q4",
        source="spec",
    ),
    Claim(
        "Q4b",
        "... while its MC mean drops by at most 2",
        "mean_drop_005",
        "<=",
        2.0,
        "0.6 (spec prototype)",
        "spec §5 Q4",
        source="spec",
    ),
    Claim(
        "Q5",
        "|predicted CVaR - MC CVaR| <= 1 for alpha in {0.05, 0.1, 0.25}",
        "pred_mc_gap",
        "<=",
        1.0,
        "<= 0.5 (spec prototype)",
        "spec §5 Q5",
        source="spec",
    ),
    Claim(
        "Q6a",
        "Sparse Bäuerle–Ott VI from W0 = 0 stays exactly 0",
        "bo_zero_max_abs",
        "<=",
        0.0,
        "degenerate fixed point",
        "spec §2.2",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "Q6b",
        "... while the redistributed VI is non-zero",
        "redistributed_max_abs",
        ">",
        0.0,
        "dense rewards",
        "spec §2.2",
        source="spec",
        kind="sanity",
    ),
)


def cliff_tables(metrics: list[dict[str, Any]], config: CliffConfig) -> list[Table]:
    keys = ("b_star", "predicted", "predicted_bound", "mc_cvar", "mc_mean", "rn_cvar")
    b_star, predicted, bound, *mc = (_mean(metrics, k) for k in keys)
    rows = [
        [alpha, f"{b_star[i]:g}", f"{predicted[i]:.2f} ± {bound[i]:.2f}",
         *(f"{c[i]:.2f}" for c in mc)]
        for i, alpha in enumerate(config.alphas)
    ]  # fmt: skip
    return [
        Table(
            f"Slippery CliffWalking (slip={config.slip}, K={config.K}), {_over(metrics)}; "
            "the bound assumes exact clamping, which [c_lo, c_hi] does not give here",
            ["alpha", "b*", "predicted CVaR ± bound", "MC CVaR", "MC mean", "risk-neutral MC CVaR"],
            rows,
            note=(
                "spec prototype (alpha 0.05/0.1/0.25): predicted -16.56/-15.15/-13.96, MC "
                "-16.07/-14.88/-13.73; its model charged -1 for falling off the cliff from "
                "the start state (see docs, Deviations)"
            ),
        )
    ]


def cliff_plot(metrics: list[dict[str, Any]], config: CliffConfig) -> dict[str, Any]:
    """Predicted CVaR* and the MC CVaR of both policies per alpha: seed mean and min–max band."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for key, style, label in (
        ("predicted", "o-", "predicted CVaR* (VI)"),
        ("mc_cvar", "s--", "MC CVaR, CVaR policy"),
        ("rn_cvar", "^:", "MC CVaR, risk-neutral policy"),
    ):
        marker, line = style[0], style[1:]
        mean_band(ax, config.alphas, stack(metrics, key), marker=marker, ls=line, label=label)
    ax.set_xlabel("alpha")
    ax.set_ylabel("CVaR_alpha of the return")
    ax.set_title(f"Slippery CliffWalking: CVaR by alpha ({seeds_note(len(metrics))})", fontsize=10)
    legend_outside(ax)
    fig.tight_layout()
    return {"cliff_cvar": fig}


def _optimal_cvar_returns(
    mdp: TabularMDP,
    sol: AugmentedSolution,
    alpha: float,
    config: CliffConfig | FrontierConfig | LakeConfig,
    rng: np.random.Generator,
) -> tuple[CVaREstimate, np.ndarray]:
    """CVaR*_alpha predicted by VI (value, b*, bound) and MC returns of its greedy policy."""
    from icml26.cvar_rl import rollout_returns

    estimate = sol.cvar(alpha)
    policy = sol.policy(estimate.b_star)
    return estimate, rollout_returns(mdp, policy, config.n_episodes, config.horizon, rng)


@register(
    name="cvar_rl.cliff",
    title="Slippery CliffWalking: CVaR policies vs risk-neutral, sparse-operator pathology",
    paper=PAPER,
    claims=CLIFF_CLAIMS,
    presets=CLIFF_PRESETS,
    tables=cliff_tables,
    plot=cliff_plot,
    seeds=3,  # the VI is deterministic; seeds vary the Monte-Carlo evaluation
    requires=REQUIRES,
    resources=RESOURCES,
)
def cliff_experiment(config: CliffConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.cvar_rl import (
        BudgetGrid,
        MarkovPolicy,
        TabularMDP,
        augmented_value_iteration,
        bauerle_ott_vi,
        empirical_cvar,
        risk_neutral_vi,
        rollout_returns,
    )

    rng = ctx.numpy_generator()
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=config.gamma, slip=config.slip)
    grid = BudgetGrid(config.c_lo, config.c_hi, config.K)
    sol = augmented_value_iteration(mdp, grid)
    V_rn, Q_rn = risk_neutral_vi(mdp)
    z_rn = rollout_returns(
        mdp, MarkovPolicy(Q_rn.argmax(axis=1)), config.n_episodes, config.horizon, rng
    )
    keys = ("predicted", "predicted_bound", "b_star", "mc_cvar", "mc_mean", "mc_se", "rn_cvar")
    out: dict[str, list[float]] = {k: [] for k in keys}
    with ctx.progress(len(config.alphas), "CVaR policies: Monte-Carlo rollouts") as bar:
        for alpha in config.alphas:
            estimate, z = _optimal_cvar_returns(mdp, sol, alpha, config, rng)
            for key, value in zip(
                out,
                (
                    estimate.value,
                    estimate.error_bound,
                    estimate.b_star,
                    empirical_cvar(z, alpha),
                    z.mean(),
                    _cvar_se(z, alpha),
                    empirical_cvar(z_rn, alpha),
                ),
                strict=True,
            ):
                out[key].append(float(value))
            bar.advance()
    cvar_1 = sol.cvar(1.0).value
    i = config.alphas.index(min(config.alphas))
    W_zero = bauerle_ott_vi(mdp, grid, init="zero")
    return {
        "alpha1_gap": abs(cvar_1 - float(V_rn[mdp.s0])),
        "cvar_gain_005": out["mc_cvar"][i] - out["rn_cvar"][i],
        "mean_drop_005": float(z_rn.mean()) - out["mc_mean"][i],
        "pred_mc_gap": float(np.max(np.abs(np.array(out["predicted"]) - np.array(out["mc_cvar"])))),
        "bo_zero_max_abs": float(np.max(np.abs(W_zero))),
        "redistributed_max_abs": float(np.max(np.abs(sol.V))),
        "rn_value": float(V_rn[mdp.s0]),
        "rn_mean": float(z_rn.mean()),
        "vi_iterations": float(sol.iterations),
        **out,
    }


# --- FrozenLake: exhausted budgets, the error bound, Q-learning through gymnasium -------------


@dataclass(frozen=True)
class LakeConfig:
    gamma: float = 0.95
    K: int = 801  # on [0, 1 / (1 - gamma)] = [0, 20]: clamping is exact, delta = 0.025
    # 0.2: P(Z = 0) > 0.2 for every policy, so b* = 0 and the budget is exhausted from the start;
    # 0.3: CVaR* is positive but far below delta (the grid reads 0); 1: the mean.
    alphas: tuple[float, ...] = (0.2, 0.3, 1.0)
    n_episodes: int = 20_000
    horizon: int = 200
    q_steps: int = 50_000
    q_grid_size: int = 11  # alpha = 1 only reads the top node; a coarse grid keeps steps cheap


LAKE_DEFAULT = LakeConfig()
LAKE_PRESETS = {
    "smoke": replace(LAKE_DEFAULT, K=41, n_episodes=500, horizon=50, q_steps=1_000),  # seconds
    "quick": LAKE_DEFAULT,
    "full": replace(LAKE_DEFAULT, K=3201, n_episodes=200_000, q_steps=200_000),  # finer, longer
}
LAKE_CLAIMS = (
    Claim(
        "L1",
        "alpha=0.2 (b* = 0, budget exhausted): the CVaR policy keeps the risk-neutral mean "
        "(risk-neutral MC mean - CVaR policy's, same draws)",
        "exhausted_mean_drop",
        "<=",
        0.01,
        "0.181 vs 0.000 before ties were broken by the mean (issue 17)",
        "issue 17",
        source="none",
    ),
    Claim(
        "L2",
        "|predicted CVaR - MC CVaR of the policies run| <= the §2.4 bound (max excess, all alphas)",
        "bound_excess",
        "<=",
        0.0,
        "gamma delta / (2 alpha (1 - gamma)) + (1 + 2 / alpha) delta / 2",
        "spec §2.4",
        source="spec",
    ),
    Claim(
        "L3",
        "Q-learning on gymnasium FrozenLake-v1 (default schedule): |alpha=1 value - VI's| <= 0.02",
        "q_alpha1_gap",
        "<=",
        0.02,
        "VI 0.1805",
        "issue 17",
        source="none",
    ),
)


def lake_tables(metrics: list[dict[str, Any]], config: LakeConfig) -> list[Table]:
    keys = ("b_star", "predicted", "predicted_bound", "mc_cvar", "mc_mean", "rn_cvar", "rn_mean")
    rows = [
        [a, f"{b:g}", f"{p:.4f} ± {e:.3f}", f"{c:.4f}", f"{x:.4f}", f"{rc:.4f}", f"{rx:.4f}"]
        for a, b, p, e, c, x, rc, rx in zip(
            config.alphas, *(_mean(metrics, k) for k in keys), strict=True
        )
    ]
    q, vi = _mean(metrics, "q_alpha1"), _mean(metrics, "vi_alpha1")
    return [
        Table(
            f"FrozenLake-v1 (slippery, gamma={config.gamma}, K={config.K} on [0, 20]), "
            f"{_over(metrics)}",
            ["alpha", "b*", "predicted ± bound", "MC CVaR", "MC mean", "rn MC CVaR", "rn MC mean"],
            rows,
            note=f"Q-learning alpha=1 value {q:.4f} vs VI {vi:.4f}",
        )
    ]


@register(
    name="cvar_rl.frozen_lake",
    title="FrozenLake: exhausted budgets (ties), discretisation bound, Q-learning via gymnasium",
    paper=PAPER,
    claims=LAKE_CLAIMS,
    presets=LAKE_PRESETS,
    tables=lake_tables,
    seeds=3,  # the VI is deterministic; seeds vary the rollouts and the Q-learning run
    requires=REQUIRES,
    resources=RESOURCES,
)
def frozen_lake_experiment(config: LakeConfig, ctx: RunContext) -> dict[str, Any]:
    import gymnasium as gym

    from icml26.cvar_rl import (
        BudgetGrid,
        MarkovPolicy,
        TabularMDP,
        augmented_value_iteration,
        cvar_from_values,
        cvar_q_learning,
        empirical_cvar,
        risk_neutral_vi,
        rollout_returns,
    )

    mdp = TabularMDP.from_gymnasium("FrozenLake-v1", gamma=config.gamma)
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, config.K)
    sol = augmented_value_iteration(mdp, grid)
    _, Q_rn = risk_neutral_vi(mdp)
    rn_policy = MarkovPolicy(Q_rn.argmax(axis=1))
    keys = ("predicted", "predicted_bound", "b_star", "mc_cvar", "mc_mean", "rn_cvar", "rn_mean")
    out: dict[str, list[float]] = {k: [] for k in keys}
    excess = -math.inf
    with ctx.progress(len(config.alphas), "CVaR policies: Monte-Carlo rollouts") as bar:
        for alpha in config.alphas:
            # The same stream for both policies: identical actions give identical returns.
            estimate, z = _optimal_cvar_returns(
                mdp, sol, alpha, config, ctx.numpy_generator(f"rollouts {alpha}")
            )
            z_rn = rollout_returns(
                mdp,
                rn_policy,
                config.n_episodes,
                config.horizon,
                ctx.numpy_generator(f"rollouts {alpha}"),
            )
            values = (
                estimate.value,
                estimate.error_bound,
                estimate.b_star,
                empirical_cvar(z, alpha),
                z.mean(),
                empirical_cvar(z_rn, alpha),
                z_rn.mean(),
            )
            for key, value in zip(out, values, strict=True):
                out[key].append(float(value))
            best_run = max(out["mc_cvar"][-1], out["rn_cvar"][-1])
            excess = max(excess, abs(best_run - estimate.value) - estimate.error_bound)
            bar.advance()
    q_grid = replace(grid, K=config.q_grid_size)
    with ctx.progress(config.q_steps, "Q-learning steps (gymnasium env)") as bar:
        q = cvar_q_learning(
            gym.make("FrozenLake-v1"),
            q_grid,
            mdp.gamma,
            config.q_steps,
            seed=ctx.numpy_generator("q-learning"),
            on_progress=bar.advance,
        )
    q_alpha1, _ = cvar_from_values(q.Q[int(mdp.obs_index[mdp.s0])].max(axis=1), q_grid, 1.0)
    vi_alpha1 = sol.cvar(1.0).value
    i = config.alphas.index(min(config.alphas))
    return {
        "exhausted_mean_drop": out["rn_mean"][i] - out["mc_mean"][i],
        "bound_excess": float(excess),
        "q_alpha1_gap": abs(q_alpha1 - vi_alpha1),
        "q_alpha1": float(q_alpha1),
        "vi_alpha1": float(vi_alpha1),
        "vi_iterations": float(sol.iterations),
        **out,
    }


# --- Performance–safety frontier ----------------------------------------------------------------


@dataclass(frozen=True)
class FrontierConfig:
    slips: tuple[float, ...] = (0.05, 0.1, 0.2)
    gamma: float = 0.95
    alphas: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0)
    Ks: tuple[int, ...] = (151, 301, 601)  # on [-300, 0]; each doubles the resolution
    n_episodes: int = 20_000
    horizon: int = 300
    q_steps: int = 1_000_000
    q_grid_size: int = 301
    q_seeds: int = 3
    other_envs: tuple[str, ...] = ("CliffWalking-native", "FrozenLake-v1", "FrozenLake8x8-v1")


FRONTIER_DEFAULT = FrontierConfig()
FRONTIER_PRESETS = {
    "smoke": replace(
        FRONTIER_DEFAULT,
        slips=(0.1,),
        alphas=(0.05, 1.0),
        Ks=(31, 61),
        n_episodes=300,
        horizon=60,
        q_steps=300,
        q_grid_size=31,
        q_seeds=1,
        other_envs=(),
    ),  # seconds; claims are not expected to hold
    "quick": replace(
        FRONTIER_DEFAULT, slips=(0.1,), Ks=(151, 301), q_steps=100_000, q_seeds=1, other_envs=()
    ),  # ~2 min: one slip, a short Q-learning run (F2 is not expected to hold at 100k steps)
    "full": FRONTIER_DEFAULT,
}
FRONTIER_CLAIMS = (
    Claim(
        "F1",
        "As alpha decreases, mean return does not rise and MC CVaR_0.05 does not fall (2 SE)",
        "frontier_violations",
        "<=",
        0.0,
        "performance–safety trade-off",
        "abstract",
        source="paper",
    ),
    Claim(
        "F2",
        "Q-learning's MC CVaR_0.05 >= risk-neutral + 3 on CliffWalking p=0.1 (worst seed)",
        "q_cvar_gain_min",
        ">=",
        3.0,
        "-16.24 vs -23 (spec prototype, 1M steps)",
        "spec §5 F2",
        source="spec",
    ),
    Claim(
        "F3",
        "Doubling K changes CVaR* by less than the §2.4 bound (max excess over the bound)",
        "k_doubling_excess",
        "<=",
        0.0,
        "discretisation bounds exist",
        "abstract",
        source="spec",
    ),
    Claim(
        "F4",
        "Redistributed VI's MC CVaR >= Chow-VI policy's MC CVaR - 2 SE (max shortfall)",
        "chow_shortfall",
        "<=",
        0.0,
        "Chow VI is approximate",
        "spec §5 F4",
        source="spec",
    ),
)


def _frontier_model(name: str, slip: float, gamma: float) -> tuple[TabularMDP, BudgetGrid | None]:
    """A model, and for FrozenLake (rewards in [0, 1]) its exact grid range [0, 1 / (1 - gamma)]."""
    from icml26.cvar_rl import BudgetGrid, TabularMDP

    if name == "CliffWalking-native":
        return TabularMDP.from_gymnasium("CliffWalking-v1", gamma=gamma, is_slippery=True), None
    if name.startswith("CliffWalking"):
        return TabularMDP.from_gymnasium("CliffWalking-v1", gamma=gamma, slip=slip), None
    return TabularMDP.from_gymnasium(name, gamma=gamma), BudgetGrid(0.0, 1.0 / (1 - gamma), 2)


def _frontier_curve(
    mdp: TabularMDP, grid: BudgetGrid, config: FrontierConfig, rng: np.random.Generator
) -> dict[str, list[float]]:
    """Per alpha: predicted CVaR*, MC mean and CVaR_alpha_min (with SEs), MC CVaR_alpha."""
    from icml26.cvar_rl import augmented_value_iteration, empirical_cvar

    sol = augmented_value_iteration(mdp, grid)
    a_min = min(config.alphas)
    curve: dict[str, list[float]] = {
        k: [] for k in ("pred", "mean", "mean_se", "tail", "tail_se", "own")
    }
    for alpha in config.alphas:
        estimate, z = _optimal_cvar_returns(mdp, sol, alpha, config, rng)
        values = (
            estimate.value,
            z.mean(),
            z.std() / math.sqrt(z.size),
            empirical_cvar(z, a_min),
            _cvar_se(z, a_min),
            empirical_cvar(z, alpha),
        )
        for key, value in zip(curve, values, strict=True):
            curve[key].append(float(value))
    return curve


def _violations(curve: dict[str, list[float]]) -> int:
    """Adjacent alphas (decreasing) where the mean rises or CVaR_alpha_min falls beyond 2 SE."""
    count = 0
    mean, mean_se, tail, tail_se = (curve[k] for k in ("mean", "mean_se", "tail", "tail_se"))
    for i in range(len(mean) - 1):  # alphas are increasing: i has the smaller alpha
        count += mean[i] > mean[i + 1] + 2 * math.hypot(mean_se[i], mean_se[i + 1])
        count += tail[i] < tail[i + 1] - 2 * math.hypot(tail_se[i], tail_se[i + 1])
    return count


def frontier_plot(metrics: list[dict[str, Any]], config: FrontierConfig) -> dict[str, Any]:
    """MC mean against MC CVaR_alpha_min per model: the seed-mean curve, every seed's thin."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for label in metrics[0]["curves"]:
        tails = np.array([m["curves"][label]["tail"] for m in metrics], dtype=float)
        means = np.array([m["curves"][label]["mean"] for m in metrics], dtype=float)
        (line,) = ax.plot(tails.mean(axis=0), means.mean(axis=0), "o-", label=label)
        if len(metrics) > 1:
            for tail, mean in zip(tails, means, strict=True):
                ax.plot(tail, mean, ".-", color=line.get_color(), alpha=0.3, lw=0.8)
    ax.set_xlabel(f"MC CVaR_{min(config.alphas)} of the return (safety)")
    ax.set_ylabel("MC mean return (performance)")
    n = len(metrics)
    ax.set_title(
        "Policies for alpha = "
        + ", ".join(f"{a:g}" for a in config.alphas)
        + (f" (mean of {n} seeds bold, each seed thin)" if n > 1 else " (1 seed)"),
        fontsize=9,
    )
    legend_outside(ax)
    fig.tight_layout()
    return {"frontier": fig}


def frontier_tables(metrics: list[dict[str, Any]], config: FrontierConfig) -> list[Table]:
    curves = {
        label: {
            k: _mean([m["curves"][label] for m in metrics], k) for k in ("pred", "mean", "tail")
        }
        for label in metrics[0]["curves"]
    }
    rows = [
        [
            label,
            *(
                f"{p:.2f} / {x:.2f} / {t:.2f}"
                for p, x, t in zip(c["pred"], c["mean"], c["tail"], strict=True)
            ),
        ]
        for label, c in curves.items()
    ]
    cvar_by_K, ours_mc, chow_mc = (_mean(metrics, k) for k in ("cvar_by_K", "ours_mc", "chow_mc"))
    return [
        Table(
            f"Frontier: predicted CVaR*_alpha / MC mean / MC CVaR_alpha_min per alpha "
            f"({_over(metrics)})",
            ["model", *(f"alpha={a:g}" for a in config.alphas)],
            rows,
        ),
        Table(
            "CVaR* by grid size K (CliffWalking, slip 0.1) and Chow-VI policy's MC CVaR_alpha "
            f"({_over(metrics)})",
            ["alpha", *(f"K={k}" for k in config.Ks), "ours MC", "Chow MC"],
            [
                [a, *(f"{v:.3f}" for v in by_k), f"{o:.2f}", f"{ch:.2f}"]
                for a, by_k, o, ch in zip(config.alphas, cvar_by_K.T, ours_mc, chow_mc, strict=True)
            ],
        ),
    ]


@register(
    name="cvar_rl.frontier",
    title="Performance–safety frontier, discretisation, Q-learning seeds, Chow VI, FrozenLake",
    paper=PAPER,
    claims=FRONTIER_CLAIMS,
    presets=FRONTIER_PRESETS,
    plot=frontier_plot,
    tables=frontier_tables,
    seeds=1,  # Q-learning seeds are run inside the task (F2 is about the worst seed)
    requires=REQUIRES,
    resources=RESOURCES,
)
def frontier_experiment(config: FrontierConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.cvar_rl import (
        BudgetGrid,
        ChowPolicy,
        MarkovPolicy,
        TabularMDP,
        augmented_value_iteration,
        chow_cvar_vi,
        cvar_error_bound,
        cvar_from_values,
        cvar_q_learning,
        empirical_cvar,
        risk_neutral_vi,
        rollout_returns,
    )

    rng = ctx.numpy_generator()
    cliff_grid = BudgetGrid(-300.0, 0.0, max(config.Ks))
    curves: dict[str, dict[str, list[float]]] = {}
    violations = 0
    models = [(f"CliffWalking slip={p:g}", p) for p in config.slips] + [
        (n, 0.0) for n in config.other_envs
    ]
    with ctx.progress(len(models), "F1: frontier models") as bar:
        for label, slip in models:
            mdp, lake_grid = _frontier_model(
                label if slip == 0.0 else "CliffWalking", slip, config.gamma
            )
            grid = cliff_grid if lake_grid is None else replace(lake_grid, K=max(config.Ks))
            curves[label] = _frontier_curve(mdp, grid, config, rng)
            violations += _violations(curves[label])
            bar.advance()
    # F3: discretisation on CliffWalking slip 0.1.
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=config.gamma, slip=0.1)
    cvar_by_K, excess = [], -math.inf
    with ctx.progress(len(config.Ks), "F3: grid sizes") as bar:
        for K in config.Ks:
            grid = BudgetGrid(-300.0, 0.0, K)
            sol = augmented_value_iteration(mdp, grid)
            cvar_by_K.append([sol.cvar(a).value for a in config.alphas])
            bar.advance()
    for i in range(len(config.Ks) - 1):
        grid, finer = (BudgetGrid(-300.0, 0.0, K) for K in config.Ks[i : i + 2])
        for a, x, y in zip(config.alphas, cvar_by_K[i], cvar_by_K[i + 1], strict=True):
            bound = cvar_error_bound(grid, config.gamma, a) + cvar_error_bound(
                finer, config.gamma, a
            )
            excess = max(excess, abs(x - y) - bound)
    # F4: Chow et al.'s VI policy vs ours, by Monte Carlo.
    chow = chow_cvar_vi(mdp)
    grid = BudgetGrid(-300.0, 0.0, max(config.Ks))
    sol = augmented_value_iteration(mdp, grid)
    ours_mc, chow_mc, shortfall = [], [], -math.inf
    with ctx.progress(len(config.alphas), "F4: ours vs Chow-VI rollouts") as bar:
        for alpha in config.alphas:
            policy = sol.policy(sol.cvar(alpha).b_star)
            z = rollout_returns(mdp, policy, config.n_episodes, config.horizon, rng)
            z_chow = rollout_returns(
                mdp, ChowPolicy(chow, alpha), config.n_episodes, config.horizon, rng
            )
            ours_mc.append(empirical_cvar(z, alpha))
            chow_mc.append(empirical_cvar(z_chow, alpha))
            se = math.hypot(_cvar_se(z, alpha), _cvar_se(z_chow, alpha))
            shortfall = max(shortfall, chow_mc[-1] - ours_mc[-1] - 2 * se)
            bar.advance()
    # F2: Q-learning on CliffWalking slip 0.1, worst of q_seeds seeds.
    a_min = min(config.alphas)
    q_grid = BudgetGrid(-300.0, 0.0, config.q_grid_size)
    _, Q_rn = risk_neutral_vi(mdp)
    rn_tail = empirical_cvar(
        rollout_returns(
            mdp, MarkovPolicy(Q_rn.argmax(axis=1)), config.n_episodes, config.horizon, rng
        ),
        a_min,
    )
    q_gains = []
    with ctx.progress(config.q_seeds * config.q_steps, "F2: Q-learning steps") as bar:
        for _ in range(config.q_seeds):
            q = cvar_q_learning(
                mdp, q_grid, mdp.gamma, config.q_steps, seed=rng, on_progress=bar.advance
            )
            _, b = cvar_from_values(q.Q[mdp.s0].max(axis=1), q_grid, a_min)
            z = rollout_returns(mdp, q.policy(b), config.n_episodes, config.horizon, rng)
            q_gains.append(empirical_cvar(z, a_min) - rn_tail)
    return {
        "frontier_violations": float(violations),
        "q_cvar_gain_min": float(min(q_gains)),
        "k_doubling_excess": float(excess),
        "chow_shortfall": float(shortfall),
        "q_cvar_gains": [float(g) for g in q_gains],
        "cvar_by_K": cvar_by_K,
        "ours_mc": ours_mc,
        "chow_mc": chow_mc,
        "curves": curves,
    }
