"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from icml26.core import REGISTRY, Resources, RunContext
from icml26.sgg_dp import SGGMechanism, best_member, sgg_noise_like
from icml26.sgg_dp import experiments as sgg_experiments

EXTRA = ("dp_accounting", "prv_accountant")
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", *EXTRA}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.sgg_dp", "icml26.sgg_dp.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {HEAVY!r}))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_public_name_loads_its_module_on_first_use():
    code = (
        "import sys, icml26.sgg_dp as m\n"
        "assert 'icml26.sgg_dp.search' not in sys.modules\n"
        "from icml26.sgg_dp import best_member\n"
        "assert 'icml26.sgg_dp.search' in sys.modules and 'torch' not in sys.modules\n"
        "assert 'sgg_noise_like' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_one_cpu():
    experiments = REGISTRY.of_system("sgg_dp")
    assert len(experiments) == 5
    for experiment in experiments:
        assert experiment.requires == EXTRA
        assert experiment.resources == Resources(cpus=1)  # numpy / scipy only


def test_sampler_draws_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed): the old seeding, same numbers.
    config = sgg_experiments.SAMPLER_PRESETS["smoke"]
    metrics = sgg_experiments.sampler(config, RunContext(seed=3, artifact_dir=tmp_path))
    mech = SGGMechanism(config.T, config.k, config.p).calibrate(
        config.calibrate_eps, config.calibrate_delta
    )
    x = mech.sample(config.n_samples, np.random.default_rng(3))
    assert metrics["mse_rel_err"] == abs(np.mean(np.sum(x**2, axis=1)) / mech.mse() - 1)


def test_low_dim_win_reports_one_progress_step_per_member(tmp_path):
    events = []
    config = sgg_experiments.LOW_DIM_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = sgg_experiments.low_dim_win(config, ctx)
    assert metrics["ratio_best_over_min"] < 1.0
    n_members = len(config.k_grid) * len(config.p_grid)
    assert [e[0] for e in events] == ["start"] + ["advance"] * n_members + ["stop"]
    assert events[0][2] == n_members


def test_best_member_callback_sees_every_row():
    seen = []
    _, table = best_member(0.5, 1e-2, 3, k_grid=[3.0], p_grid=[1.35, 2.0], callback=seen.append)
    assert seen == table


def test_inputs_are_checked_in_one_voice():
    m = SGGMechanism(3, 3.0, 1.35, 1.0)
    with pytest.raises(TypeError, match=r"SGGMechanism: value must be an array of float64"):
        m.release(["a", "b", "c"])
    with pytest.raises(ValueError, match=r"SGGMechanism: value must be finite"):
        m.release(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(TypeError, match=r"sgg_noise_like: grad must be a torch.Tensor"):
        sgg_noise_like(np.zeros(3), m)
    with pytest.raises(TypeError, match=r"sgg_noise_like: grad must be a floating-point tensor"):
        sgg_noise_like(torch.zeros(3, dtype=torch.int64), m)


def test_claims_carry_the_documented_source_and_kind_labels():
    # issue 15: no paper figure was seen, so every reference is the spec's; the sanity checks are
    # exactly those the module docstring names (each also a unit test)
    claims = {c.id: c for exp in REGISTRY.of_system("sgg_dp") for c in exp.claims}
    assert {c.source for c in claims.values()} == {"spec"}
    sanity = {i for i, c in claims.items() if c.kind == "sanity"}
    assert sanity == {"Q1a", "Q1b", "Q1c", "Q3a", "Q4a", "Q4b", "T3b"}
    assert set(claims) - sanity == {"Q2", "Q3b", "T1", "T2a", "T2b", "T2c", "T3a"}
