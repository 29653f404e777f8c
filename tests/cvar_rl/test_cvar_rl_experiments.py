"""The reproductions draw from the task's seed as documented (public names of the experiments)."""

import numpy as np

from icml26.core import RunContext
from icml26.cvar_rl import (
    BudgetGrid,
    cvar_from_values,
    cvar_q_learning,
    risky_chain,
)
from icml26.cvar_rl.experiments.cliff import CLIFF_PRESETS, cliff_experiment
from icml26.cvar_rl.experiments.risky_chain import RISKY_PRESETS, risky_chain_experiment


def test_risky_chain_draws_q_learning_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed), which is what cvar_q_learning
    # made of the integer seed the old run(config, seed) passed on: the same Q-learning run.
    config = RISKY_PRESETS["smoke"]
    events = []
    ctx = RunContext(seed=5, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = risky_chain_experiment(config, ctx)
    mdp = risky_chain(config.gamma)
    grid = BudgetGrid.from_reward_bounds(*mdp.reward_bounds(), mdp.gamma, config.K)
    q = cvar_q_learning(
        mdp,
        grid,
        mdp.gamma,
        config.q_steps,
        lr_schedule=config.q_lr_schedule,
        eps=config.q_eps,
        seed=5,
    )
    expected = [cvar_from_values(q.Q[mdp.s0].max(axis=1), grid, a)[0] for a in config.alphas]
    assert metrics["qlearn"] == expected
    # One bar for the Q-learning steps, advanced in chunks that add up to q_steps.
    assert [e[0] for e in events[:1] + events[-1:]] == ["start", "stop"]
    assert events[0][2] == config.q_steps
    assert sum(e[2] for e in events if e[0] == "advance") == config.q_steps


def test_cliff_seeds_vary_the_monte_carlo_evaluation_only(tmp_path):
    config = CLIFF_PRESETS["smoke"]
    a = cliff_experiment(config, RunContext(seed=0, artifact_dir=tmp_path))
    b = cliff_experiment(config, RunContext(seed=1, artifact_dir=tmp_path))
    assert a["predicted"] == b["predicted"]  # value iteration does not draw
    assert a["rn_mean"] != b["rn_mean"]  # the rollouts do
    assert not any(tmp_path.iterdir())  # metrics only: no artifacts
    assert np.all(np.array(a["mc_se"]) > 0)
