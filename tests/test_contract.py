"""Contracts every registered system obeys (STYLE rule 10); no per-system exceptions."""

import doctest
import importlib
import inspect
import json
import math
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.core import discover, plan, run_tasks
from icml26.core.results import TaskRecord

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = discover()
EXPERIMENTS = [e.name for e in REGISTRY]
SYSTEMS = REGISTRY.systems()


def same(a, b):
    """Equality that treats NaN as equal to NaN (in nested metrics too)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_smoke_preset_runs_deterministically_and_every_claim_gets_a_verdict(name, tmp_path):
    experiment = REGISTRY.get(name)
    task = plan(experiment, "smoke", 1)[0]
    first = run_tasks([task], tmp_path / "a", progress=False)[0]
    assert first.ok, first.error
    second = run_tasks([task], tmp_path / "b", progress=False)[0]
    assert same(first.metrics, second.metrics), "smoke preset is not deterministic under a seed"
    saved = TaskRecord.load(tmp_path / "a" / first.relpath())
    assert saved.experiment == name and saved.seed == task.seed
    for claim in experiment.claims:
        assert claim.metric in first.metrics, f"claim {claim.id} names a metric run never returns"
        assert claim.judge([float(first.metrics[claim.metric])]).reason


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_run_takes_the_context_and_declares_its_needs(name):
    experiment = REGISTRY.get(name)
    params = list(inspect.signature(experiment.run).parameters)
    assert params[1] == "ctx", "run must be run(config, ctx: RunContext)"
    assert experiment.unavailable_reason is None  # the dev extra installs every requirement


@pytest.mark.parametrize("slug", SYSTEMS)
def test_docstring_examples_run(slug):
    package = importlib.import_module(f"icml26.{slug}")
    failures = []
    names = [f"icml26.{slug}"] + [
        m.name for m in pkgutil.walk_packages(package.__path__, f"icml26.{slug}.")
    ]
    for name in names:
        module = importlib.import_module(name)
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        result = doctest.testmod(module, optionflags=flags, report=False)
        if result.failed:
            failures.append(f"{name}: {result.failed} of {result.attempted}")
    assert not failures, f"docstring examples fail (run python -m doctest): {failures}"


HEAVY = {"torch", "transformers", "scipy", "matplotlib", "sklearn"}


@pytest.mark.parametrize("command", [["--help"], ["list"], ["show", SYSTEMS[0]]])
def test_listing_imports_no_heavy_module(command):
    extras = {m.split(".")[0] for e in REGISTRY for m in e.requires}
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from icml26.cli import app\n"
        f"result = CliRunner().invoke(app, {command!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not loaded & (HEAVY | extras), f"`icml26 {' '.join(command)}` imported them"


@pytest.mark.parametrize("slug", SYSTEMS)
def test_system_has_docs_tests_readme_row_and_documented_api(slug):
    assert (ROOT / "docs" / f"{slug}.md").is_file()
    assert (ROOT / "tests" / slug).is_dir()
    readme = (ROOT / "README.md").read_text()
    assert f"| `{slug}` |" in readme, "README systems table lacks a row for this system"
    module = importlib.import_module(f"icml26.{slug}")
    assert module.__all__, "the system's __init__ must declare its public API in __all__"
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"icml26.{slug}.{name} has no docstring"


def test_code_is_ruff_clean():
    paths = [str(ROOT / p) for p in ("src", "tests", "benchmarks") if (ROOT / p).exists()]
    check = subprocess.run(["ruff", "check", *paths], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    fmt = subprocess.run(["ruff", "format", "--check", *paths], capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout
