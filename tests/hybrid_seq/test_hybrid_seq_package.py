"""The core v2 contract: a lazy package, a light experiments module, declared needs."""

import subprocess
import sys

import pytest

from icml26.core import REGISTRY, Resources, discover

HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn", "mambapy", "safetensors"}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.hybrid_seq", "icml26.hybrid_seq.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {HEAVY!r}))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_public_name_loads_its_module_on_first_use():
    code = (
        "import sys, icml26.hybrid_seq as m\n"
        "assert 'icml26.hybrid_seq.constructions' not in sys.modules\n"
        "from icml26.hybrid_seq import build_sc_hybrid\n"
        "assert 'icml26.hybrid_seq.constructions' in sys.modules\n"
        "assert 'HybridLM' in dir(m)\n"
        "print('ok')"
    )
    result = _python(code)
    assert result.stdout.strip() == "ok", result.stderr


def test_experiments_declare_requires_and_resources():
    discover()
    experiments = {e.name: e for e in REGISTRY.of_system("hybrid_seq")}
    assert set(experiments) == {
        f"hybrid_seq.{n}"
        for n in ("constructions", "mqar_smoke", "param_efficiency", "length_gen", "ood")
    }
    for experiment in experiments.values():
        assert experiment.requires == ()  # torch is a core dependency
        assert experiment.unavailable_reason is None
        assert experiment.resources == Resources(cpus=1)  # small tensors: one thread
        for claim in experiment.claims:
            assert claim.source in ("paper", "spec")
            assert claim.source != "paper" or "abstract" in claim.where
