"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import numpy as np
import pytest

from icml26.core import REGISTRY, Resources, RunContext, discover
from icml26.cvar_rl import (
    BudgetGrid,
    cvar_from_values,
    cvar_q_learning,
    risky_chain,
)
from icml26.cvar_rl import experiments as cvar_experiments

EXTRA = ("gymnasium",)
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", *EXTRA}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.cvar_rl", "icml26.cvar_rl.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_public_name_loads_its_module_on_first_use():
    code = (
        "import sys, icml26.cvar_rl as m\n"
        "assert 'icml26.cvar_rl.budget' not in sys.modules\n"
        "from icml26.cvar_rl import BudgetGrid\n"
        "assert 'icml26.cvar_rl.budget' in sys.modules\n"
        "assert 'icml26.cvar_rl.value_iteration' not in sys.modules\n"
        "assert 'scipy' not in sys.modules\n"
        "assert 'augmented_value_iteration' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_one_cpu():
    experiments = discover().of_system("cvar_rl")
    assert len(experiments) == 4
    for experiment in experiments:
        assert experiment.requires == EXTRA
        assert experiment.resources == Resources(cpus=1)  # numpy/scipy loops only
        assert REGISTRY.get(experiment.name) is experiment


def test_risky_chain_draws_q_learning_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed), which is what cvar_q_learning
    # made of the integer seed the old run(config, seed) passed on: the same Q-learning run.
    config = cvar_experiments.RISKY_PRESETS["smoke"]
    events = []
    ctx = RunContext(seed=5, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = cvar_experiments.risky_chain_experiment(config, ctx)
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
    config = cvar_experiments.CLIFF_PRESETS["smoke"]
    a = cvar_experiments.cliff_experiment(config, RunContext(seed=0, artifact_dir=tmp_path))
    b = cvar_experiments.cliff_experiment(config, RunContext(seed=1, artifact_dir=tmp_path))
    assert a["predicted"] == b["predicted"]  # value iteration does not draw
    assert a["rn_mean"] != b["rn_mean"]  # the rollouts do
    assert not any(tmp_path.iterdir())  # metrics only: no artifacts


@pytest.mark.parametrize("n_steps", [1, 999, 1000, 2500])
def test_q_learning_progress_callback_counts_every_step_and_changes_nothing(n_steps):
    mdp = risky_chain()
    grid = BudgetGrid(-60.0, 40.0, 21)
    calls = []
    with_cb = cvar_q_learning(mdp, grid, mdp.gamma, n_steps, seed=3, on_progress=calls.append)
    without = cvar_q_learning(mdp, grid, mdp.gamma, n_steps, seed=3)
    assert sum(calls) == n_steps and len(calls) == -(-n_steps // 1000)
    np.testing.assert_array_equal(with_cb.Q, without.Q)
