"""``cvar_rl.frontier``: performance–safety frontier, discretisation, Q-learning seeds, Chow VI.

F1: as alpha decreases the optimal policies trade mean return for tail safety; F2: Q-learning's
tail gain over the risk-neutral policy (per Q-learning seed); F3: doubling the grid moves CVaR* by
less than the §2.4 bound; F4: the redistributed VI's policy against Chow et al.'s interpolated VI.

Value iteration does not draw: one task solves each model once and repeats the Monte-Carlo
evaluations on ``replicates`` independent streams (F1, F4) and runs ``q_seeds`` Q-learning seeds
(F2), which give the claims their independent values. Comparisons are paired: the policies
compared within a replicate are rolled out from the same stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.cvar_rl.budget import MAX_NODES
from icml26.cvar_rl.experiments.common import ALPHA, GAMMA, PAPER, RESOURCES, check_config
from icml26.cvar_rl.experiments.frontier_report import frontier_plot, frontier_tables
from icml26.cvar_rl.mdp import MAX_HORIZON
from icml26.cvar_rl.policies import MAX_EPISODES
from icml26.cvar_rl.q_learning import MAX_STEPS

if TYPE_CHECKING:
    from collections.abc import Callable

    from icml26.cvar_rl import AugmentedSolution, BudgetGrid, TabularMDP


# the models _frontier_model builds besides CliffWalking with a slip
OTHER_ENVS = ("CliffWalking-native", "FrozenLake-v1", "FrozenLake8x8-v1")


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
    replicates: int = 3  # independent Monte-Carlo evaluations (F1, F4)
    other_envs: tuple[str, ...] = OTHER_ENVS

    def __post_init__(self) -> None:
        check_config(
            self,
            {"Ks": (2, MAX_NODES), "n_episodes": (1, MAX_EPISODES), "horizon": (1, MAX_HORIZON),
             "q_steps": (1, MAX_STEPS), "q_grid_size": (2, MAX_NODES), "q_seeds": (1, 10**4),
             "replicates": (1, 10**4)},
            # slip 0 would read as an other_envs model (_frontier_model)
            {"slips": (0.0, 1.0, "right"), "gamma": GAMMA, "alphas": ALPHA},
            {"other_envs": OTHER_ENVS},
            may_be_empty=("other_envs",),
        )  # fmt: skip
        if len(self.Ks) < 2:  # F3 compares adjacent grid sizes
            raise ValueError(f"FrontierConfig: Ks must hold at least two sizes; got {self.Ks}.")


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
        replicates=2,
        other_envs=(),
    ),  # seconds; claims are not expected to hold
    "quick": replace(
        FRONTIER_DEFAULT, slips=(0.1,), Ks=(151, 301), q_steps=50_000, other_envs=()
    ),  # one slip, three short Q-learning runs (F2 is not expected to hold at 50k steps)
    "full": FRONTIER_DEFAULT,
}
FRONTIER_CLAIMS = (
    Claim("F1", "As alpha decreases the policies trade mean for tail: no adjacent pair where the "
          "mean rises or MC CVaR_0.05 falls (2 SE), and the alpha_min policy has a higher "
          "CVaR_0.05 and a lower mean than the alpha=1 one (defects per replicate)",
          "frontier_defects", "<=", 0.0, "performance–safety trade-off", "spec §5 F1 (abstract)",
          source="spec", control="one policy for every alpha (the risk-neutral one)",
          control_value=1.0),
    Claim("F2", "Q-learning's MC CVaR_0.05 >= risk-neutral + 3 on CliffWalking p=0.1 (per "
          "Q-learning seed)", "q_cvar_gains", ">=", 3.0, "-16.24 vs -23 (spec prototype, 1M "
          "steps)", "spec §5 F2", source="spec",
          control="the risk-neutral policy in place of Q-learning's", control_value=0.0),
    Claim("F3", "Doubling K changes CVaR* by less than the §2.4 bound (max excess over the "
          "bound)", "k_doubling_excess", "<=", 0.0, "discretisation bounds exist", "spec §2.4",
          source="spec", kind="sanity"),
    Claim("F4", "Redistributed VI's policy beats Chow-VI's policy on MC CVaR_0.05 (paired, per "
          "replicate)", "chow_gain", ">", 0.0, "Chow VI is approximate", "spec §5 F4",
          source="spec", control="Chow-VI's own policy in place of ours", control_value=0.0),
)  # fmt: skip


def _frontier_model(name: str, slip: float, gamma: float) -> tuple[TabularMDP, BudgetGrid | None]:
    """A model, and for FrozenLake (rewards in [0, 1]) its exact grid range [0, 1 / (1 - gamma)]."""
    from icml26.cvar_rl import BudgetGrid, TabularMDP

    if name == "CliffWalking-native":
        return TabularMDP.from_gymnasium("CliffWalking-v1", gamma=gamma, is_slippery=True), None
    if name.startswith("CliffWalking"):
        return TabularMDP.from_gymnasium("CliffWalking-v1", gamma=gamma, slip=slip), None
    return TabularMDP.from_gymnasium(name, gamma=gamma), BudgetGrid(0.0, 1.0 / (1 - gamma), 2)


def _frontier_curve(
    mdp: TabularMDP,
    sol: AugmentedSolution,
    config: FrontierConfig,
    stream: Callable[[], np.random.Generator],
) -> dict[str, list[float]]:
    """Per alpha: predicted CVaR*, MC mean and CVaR_alpha_min (with SEs), MC CVaR_alpha.

    Every alpha's policy is rolled out from a fresh ``stream()`` (the same draws), so identical
    policies give identical returns.
    """
    from icml26.cvar_rl import cvar_standard_error, empirical_cvar, optimal_cvar_rollouts

    a_min = min(config.alphas)
    curve: dict[str, list[float]] = {
        k: [] for k in ("pred", "mean", "mean_se", "tail", "tail_se", "own")
    }
    for alpha in config.alphas:
        estimate, z = optimal_cvar_rollouts(
            mdp, sol, alpha, config.n_episodes, config.horizon, stream()
        )
        values = (
            estimate.value,
            z.mean(),
            z.std() / math.sqrt(z.size),
            empirical_cvar(z, a_min),
            cvar_standard_error(z, a_min),
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


def frontier_defects(curve: dict[str, list[float]]) -> int:
    """:func:`_violations`, plus one if the extreme alphas' policies do not trade at all.

    The smallest alpha's policy must have a higher CVaR_alpha_min and a lower mean than the
    largest alpha's (alphas increasing). One policy played at every alpha, rolled out on the same
    draws, gives equal values: one defect, however monotone its flat curve is.
    """
    trades = curve["tail"][0] > curve["tail"][-1] and curve["mean"][0] < curve["mean"][-1]
    return _violations(curve) + (not trades)


@register(
    name="cvar_rl.frontier",
    title="Performance–safety frontier, discretisation, Q-learning seeds, Chow VI, FrozenLake",
    paper=PAPER,
    claims=FRONTIER_CLAIMS,
    presets=FRONTIER_PRESETS,
    plot=frontier_plot,
    tables=frontier_tables,
    # One task: the VI is deterministic; replicates (F1, F4) and Q-learning seeds (F2) inside it
    # give the claims their independent values.
    seeds=1,
    deterministic_metrics=("k_doubling_excess", "cvar_by_K"),
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
        cvar_standard_error,
        empirical_cvar,
        optimal_cvar_rollouts,
        risk_neutral_vi,
        rollout_returns,
    )

    a_min = min(config.alphas)
    curves: dict[str, dict[str, list[float]]] = {}
    defects = [0] * config.replicates
    models = [(f"CliffWalking slip={p:g}", p) for p in config.slips] + [
        (n, 0.0) for n in config.other_envs
    ]
    cliff_sols: dict[int, AugmentedSolution] = {}  # CliffWalking slip 0.1 by K, for F3 and F4
    with ctx.progress(len(models) * config.replicates, "F1: frontier models x replicates") as bar:
        for label, slip in models:
            mdp, lake_grid = _frontier_model(
                label if slip == 0.0 else "CliffWalking", slip, config.gamma
            )
            K = max(config.Ks)
            grid = BudgetGrid(-300.0, 0.0, K) if lake_grid is None else replace(lake_grid, K=K)
            sol = augmented_value_iteration(mdp, grid)
            if lake_grid is None and slip == 0.1:
                cliff_sols[K] = sol
            runs = []
            for r in range(config.replicates):
                stream = partial(ctx.numpy_generator, f"F1 {label} replicate {r}")
                runs.append(_frontier_curve(mdp, sol, config, stream))
                defects[r] += frontier_defects(runs[-1])
                bar.advance()
            curves[label] = {k: np.mean([c[k] for c in runs], axis=0).tolist() for k in runs[0]}
    # F3: discretisation on CliffWalking slip 0.1 (value iteration only: deterministic).
    mdp = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=config.gamma, slip=0.1)
    cvar_by_K, excess = [], -math.inf
    with ctx.progress(len(config.Ks), "F3: grid sizes") as bar:
        for K in config.Ks:
            if K not in cliff_sols:
                cliff_sols[K] = augmented_value_iteration(mdp, BudgetGrid(-300.0, 0.0, K))
            cvar_by_K.append([cliff_sols[K].cvar(a).value for a in config.alphas])
            bar.advance()
    for i in range(len(config.Ks) - 1):
        grid, finer = (BudgetGrid(-300.0, 0.0, K) for K in config.Ks[i : i + 2])
        for a, x, y in zip(config.alphas, cvar_by_K[i], cvar_by_K[i + 1], strict=True):
            bound = cvar_error_bound(grid, config.gamma, a) + cvar_error_bound(
                finer, config.gamma, a
            )
            excess = max(excess, abs(x - y) - bound)
    # F4: Chow et al.'s VI policy vs ours, by Monte Carlo on shared streams. Replicate 0 covers
    # every alpha (the table); the others only alpha_min (the claim).
    chow = chow_cvar_vi(mdp)
    sol = cliff_sols[max(config.Ks)]
    ours_mc, chow_mc, shortfall, chow_gains = [], [], -math.inf, []
    plan = [(0, a) for a in config.alphas] + [(r, a_min) for r in range(1, config.replicates)]
    with ctx.progress(len(plan), "F4: ours vs Chow-VI rollouts") as bar:
        for r, alpha in plan:
            name = f"F4 replicate {r} alpha {alpha}"
            _, z = optimal_cvar_rollouts(
                mdp, sol, alpha, config.n_episodes, config.horizon, ctx.numpy_generator(name)
            )
            z_chow = rollout_returns(
                mdp,
                ChowPolicy(chow, alpha),
                config.n_episodes,
                config.horizon,
                ctx.numpy_generator(name),
            )
            ours, theirs = empirical_cvar(z, alpha), empirical_cvar(z_chow, alpha)
            if alpha == a_min:
                chow_gains.append(ours - theirs)
            if r == 0:
                ours_mc.append(ours)
                chow_mc.append(theirs)
                se = math.hypot(cvar_standard_error(z, alpha), cvar_standard_error(z_chow, alpha))
                shortfall = max(shortfall, theirs - ours - 2 * se)
            bar.advance()
    # F2: Q-learning on CliffWalking slip 0.1, one value per Q-learning seed; its policy and the
    # risk-neutral one are rolled out on the same stream.
    q_grid = BudgetGrid(-300.0, 0.0, config.q_grid_size)
    _, Q_rn = risk_neutral_vi(mdp)
    rn_policy = MarkovPolicy(Q_rn.argmax(axis=1))
    q_gains = []
    for i in range(config.q_seeds):
        with ctx.progress(config.q_steps, f"F2: Q-learning, seed {i + 1}/{config.q_seeds}") as bar:
            q = cvar_q_learning(
                mdp,
                q_grid,
                mdp.gamma,
                config.q_steps,
                seed=ctx.numpy_generator(f"F2 Q-learning {i}"),
                progress=bar,
            )
        _, b = cvar_from_values(q.Q[mdp.s0].max(axis=1), q_grid, a_min)
        name = f"F2 rollouts {i}"
        z = rollout_returns(
            mdp, q.policy(b), config.n_episodes, config.horizon, ctx.numpy_generator(name)
        )
        z_rn = rollout_returns(
            mdp, rn_policy, config.n_episodes, config.horizon, ctx.numpy_generator(name)
        )
        q_gains.append(empirical_cvar(z, a_min) - empirical_cvar(z_rn, a_min))
    return {
        "frontier_defects": [float(d) for d in defects],
        "q_cvar_gains": [float(g) for g in q_gains],
        "q_cvar_gain_min": float(min(q_gains)),
        "k_doubling_excess": float(excess),
        "chow_gain": [float(g) for g in chow_gains],
        "chow_shortfall": float(shortfall),
        "cvar_by_K": cvar_by_K,
        "ours_mc": ours_mc,
        "chow_mc": chow_mc,
        "curves": curves,
    }
