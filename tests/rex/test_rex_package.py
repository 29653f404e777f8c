"""The core v2 contract for rex: a lazy package, a light experiments module, run(config, ctx),
randomness only through seeds, and the optional diffusers path behind its extra."""

import doctest
import importlib
import pkgutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import icml26.rex
from icml26.core import REGISTRY, MissingExtraError, Resources, RunContext, plan
from icml26.core.runner import execute
from icml26.rex import (
    MLPDenoiser,
    RexSolver,
    SeededBrownian,
    VPSchedule,
    make_moons_data,
    princeps_solve,
    roundtrip_error,
    train_denoiser,
)
from icml26.rex import experiments as rex_experiments
from icml26.rex.toy import GaussianMixtureData

EXTRA = ("torchsde", "torchdiffeq", "sklearn")
HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "diffusers", *EXTRA}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.rex", "icml26.rex.experiments"])
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
        "import sys, icml26.rex as r\n"
        "assert 'icml26.rex.solver' not in sys.modules and 'torch' not in sys.modules\n"
        "from icml26.rex import RexSolver\n"
        "assert 'icml26.rex.solver' in sys.modules and 'icml26.rex.learned' not in sys.modules\n"
        "assert 'train_denoiser' in dir(r)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_the_extra_and_their_threads():
    experiments = {e.name: e for e in REGISTRY.of_system("rex")}
    assert set(experiments) == {
        "rex.roundtrip",
        "rex.order",
        "rex.equivalence",
        "rex.sde_sampling",
        "rex.learned",
    }
    for name, experiment in experiments.items():
        assert experiment.requires == EXTRA
        # the learned MLP ran on one thread before core v2; the analytic ones on torch's default
        assert experiment.resources == Resources(cpus=1 if name == "rex.learned" else 2)


def test_learned_reports_training_progress(tmp_path):
    events = []
    experiment = REGISTRY.get("rex.learned")
    task = plan(experiment, "smoke", 1)[0]
    # through the runner, which applies the task's one thread (two threads crawl on a busy box)
    record = execute(task, tmp_path, threads=1, progress_sink=events.append)
    assert record.ok, record.error
    steps = experiment.presets["smoke"].train_steps
    starts = [e for e in events if e[0] == "start"]
    assert [(e[2], e[3]) for e in starts] == [(steps, "training the denoiser on moons")]
    assert sum(e[2] for e in events if e[0] == "advance") == steps
    assert events[-1][0] == "stop"


def test_equivalence_takes_its_noise_from_the_context(tmp_path):
    config = rex_experiments.EQUIVALENCE
    a = rex_experiments.equivalence(config, RunContext(seed=1, artifact_dir=tmp_path))
    assert a["princeps_euler_vs_ddim"] <= 1e-12  # the same identity as claim R5a
    assert a == rex_experiments.equivalence(config, RunContext(seed=1, artifact_dir=tmp_path))


def test_mlp_denoiser_is_seeded_and_leaves_the_global_rng_alone():
    before = torch.random.get_rng_state()
    a, b, c = MLPDenoiser(2, seed=0), MLPDenoiser(2, seed=0), MLPDenoiser(2, seed=1)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.net[0].weight, c.net[0].weight)
    # a generator seed is advanced by exactly one draw (seeded_default_init's), nothing more
    g, g_again = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    MLPDenoiser(2, seed=g)
    torch.randint(0, 2**62, (1,), generator=g_again)
    assert torch.equal(g.get_state(), g_again.get_state())


def test_train_denoiser_is_deterministic_calls_back_and_leaves_the_global_rng_alone():
    data = make_moons_data(200, seed=0)
    calls = []
    before = torch.random.get_rng_state()
    a = train_denoiser(data, VPSchedule(), steps=5, seed=2, callback=lambda *c: calls.append(c))
    assert torch.equal(torch.random.get_rng_state(), before)
    b = train_denoiser(data, VPSchedule(), steps=5, seed=2)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert [step for step, _ in calls] == list(range(5))
    assert all(isinstance(loss, float) and loss > 0 for _, loss in calls)


@pytest.mark.parametrize(
    "make", [lambda: np.random.default_rng(4), lambda: torch.Generator().manual_seed(4)]
)
def test_a_generator_seed_keys_one_brownian_path_for_every_sweep(make):
    schedule = VPSchedule(t_data=1e-3)
    model = GaussianMixtureData().denoiser(schedule)
    solver = RexSolver(model, schedule, sde="em", model_output="data", n_steps=8, seed=make())
    assert isinstance(solver.seed, int)
    assert solver.seed == RexSolver(model, schedule, sde="em", seed=make()).seed
    data = GaussianMixtureData().sample(16, seed=0)
    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    # decode inverts encode only if both sweeps drew the same path from the one key
    assert roundtrip_error(solver.decode(x_T, x_T_hat, ts)[0], data, "max") < 1e-6
    x = princeps_solve(model, schedule, x_T, ts, sde="em", model_output="data", seed=make())
    assert torch.equal(
        x, princeps_solve(model, schedule, x_T, ts, sde="em", model_output="data", seed=solver.seed)
    )
    W, _ = SeededBrownian(make(), (3,), 0.0, 1.0).increment(0.1, 0.4)
    assert torch.equal(W, SeededBrownian(solver.seed, (3,), 0.0, 1.0).increment(0.1, 0.4)[0])


def test_seed_of_the_wrong_type_is_refused():
    schedule = VPSchedule()
    with pytest.raises(TypeError, match="RexSolver: seed must be an int, a numpy or torch"):
        RexSolver(lambda x, t: x, schedule, seed=1.5)
    with pytest.raises(TypeError, match="SeededBrownian: seed must be an int"):
        SeededBrownian(True, (2,), 0.0, 1.0)


def test_diffusers_path_without_diffusers_names_its_extra(monkeypatch):
    from icml26.rex import load_diffusers_unet

    monkeypatch.setitem(sys.modules, "diffusers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'icml26\[rex-diffusers\]'") as err:
        load_diffusers_unet("anything")
    assert err.value.extra == "rex-diffusers"
    assert "load_diffusers_unet needs diffusers" in str(err.value)


@pytest.mark.parametrize("name", [m.name for m in pkgutil.iter_modules(icml26.rex.__path__)])
def test_docstring_examples(name):
    module = importlib.import_module(f"icml26.rex.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
