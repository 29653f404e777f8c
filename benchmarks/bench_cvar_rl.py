"""Speed of the redistributed value iteration and of CVaR Q-learning (spec: issue 5 benchmark).

VI sweep time is measured against S*K*A on CliffWalking (varying K) and on random MDPs (varying S),
and reported with a log-log scaling exponent; a sweep of ``augmented_value_iteration`` is one
application of the redistributed operator plus one of the tie-break (Q_mean) pass, which costs the
same. Converged VI on CliffWalking reports both passes' iteration counts. Q-learning is reported in
steps per second for each step-size schedule (they cost the same). Rollouts of the CVaR policy on
FrozenLake: ``rollout`` on the gymnasium env (one episode at a time) against ``rollout_returns``
on the model (all episodes at once), in environment steps per second. The paper makes no speed
claim; the anchor is risk-neutral VI on the same model, measured in this process.

Run: python benchmarks/bench_cvar_rl.py
"""

from __future__ import annotations

import time

import numpy as np

from icml26.core import interleaved_median_seconds
from icml26.cvar_rl import (
    BudgetGrid,
    TabularMDP,
    augmented_value_iteration,
    cvar_q_learning,
    risk_neutral_vi,
    rollout,
    rollout_returns,
)


def median_of(fn, repeats: int = 3) -> float:
    """Median seconds of ``fn`` over ``repeats`` runs after one warm-up run."""
    return interleaved_median_seconds({"fn": fn}, repeats)["fn"]


def per_sweep(mdp: TabularMDP, grid: BudgetGrid) -> float:
    """Seconds per sweep: max_iter sweeps of the value pass, then as many of the tie-break pass."""
    sweeps = 50
    return (
        median_of(lambda: augmented_value_iteration(mdp, grid, tol=1e-300, max_iter=sweeps))
        / sweeps
        / 2
    )


def random_mdp(n_states: int, n_actions: int = 4, branching: int = 4, seed: int = 0) -> TabularMDP:
    rng = np.random.default_rng(seed)
    P = np.zeros((n_states, n_actions, n_states))
    for s in range(n_states):
        for a in range(n_actions):
            P[s, a, rng.choice(n_states, branching, replace=False)] = rng.dirichlet(
                np.ones(branching)
            )
    return TabularMDP(P, rng.uniform(-1, 1, P.shape), 0.95)


def main() -> None:
    cliff = TabularMDP.from_gymnasium("CliffWalking-v1", gamma=0.95, slip=0.1)
    rn = median_of(lambda: risk_neutral_vi(cliff, tol=1e-300, max_iter=50)) / 50
    print(f"risk-neutral VI sweep (anchor): {rn * 1e3:.3f} ms")
    print(f"{'model':>22} {'S*K*A':>10} {'ms/sweep':>10} {'x anchor':>9}")
    sizes, times = [], []
    for K in (151, 301, 601, 1201):
        t = per_sweep(cliff, BudgetGrid(-300.0, 0.0, K))
        sizes.append(cliff.n_states * K * cliff.n_actions)
        times.append(t)
        print(f"{'cliff K=' + str(K):>22} {sizes[-1]:>10} {t * 1e3:>10.2f} {t / rn:>9.0f}")
    slope_k = np.polyfit(np.log(sizes), np.log(times), 1)[0]
    sizes_s, times_s = [], []
    for S in (50, 100, 200, 400):
        mdp = random_mdp(S)
        t = per_sweep(mdp, BudgetGrid(-20.0, 20.0, 301))
        sizes_s.append(S * 301 * 4)
        times_s.append(t)
        print(f"{'random S=' + str(S):>22} {sizes_s[-1]:>10} {t * 1e3:>10.2f}")
    slope_s = np.polyfit(np.log(sizes_s), np.log(times_s), 1)[0]
    print(f"scaling exponent of sweep time in S*K*A: {slope_k:.2f} (K), {slope_s:.2f} (S)")
    grid = BudgetGrid(-300.0, 0.0, 601)
    start = time.perf_counter()
    sol = augmented_value_iteration(cliff, grid)
    elapsed = time.perf_counter() - start
    print(f"converged VI, cliff K=601: {elapsed:.2f} s, {sol.iterations} value sweeps + tie-break")
    steps = 20_000
    for K in (101, 601):
        grid = BudgetGrid(-300.0, 0.0, K)
        for schedule in ("rescaled_linear", "poly", "harmonic"):
            t = median_of(
                lambda grid=grid, schedule=schedule: cvar_q_learning(
                    cliff, grid, 0.95, steps, lr_schedule=schedule, seed=0
                ),
                repeats=1,
            )
            print(f"Q-learning (all budgets, K={K}, {schedule}): {steps / t:,.0f} steps/s")
    rollouts()


def rollouts(episodes: int = 2000) -> None:
    """Seconds for the FrozenLake CVaR policy's episodes: gymnasium env loop vs vectorised model."""
    import gymnasium as gym

    env = gym.make("FrozenLake-v1")
    lake = TabularMDP.from_gymnasium(env, gamma=0.95)
    sol = augmented_value_iteration(lake, BudgetGrid(0.0, 20.0, 801))
    policy = sol.policy(sol.cvar(0.2).b_star)
    t_env = median_of(
        lambda: rollout(env, policy, episodes, seed=0, gamma=1.0, max_steps=100), repeats=1
    )
    t_model = median_of(lambda: rollout_returns(lake, policy, episodes, 100, seed=0), repeats=3)
    print(
        f"rollouts, FrozenLake CVaR policy, {episodes} episodes: gymnasium env {t_env:.2f} s, "
        f"model (vectorised) {t_model:.3f} s, ratio {t_env / t_model:.0f}x"
    )


if __name__ == "__main__":
    main()
