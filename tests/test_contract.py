"""Contracts every registered system obeys (STYLE rule 10); no per-system exceptions."""

import doctest
import fnmatch
import functools
import importlib
import inspect
import json
import math
import pickle
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


def global_state():
    """Global RNG states and thread counts an experiment must leave as it found them."""
    import random

    import numpy as np
    import torch

    return (
        torch.random.get_rng_state(),
        pickle.dumps(np.random.get_state()),
        random.getstate(),
        torch.get_num_threads(),
        torch.get_num_interop_threads(),
    )


def without_timings(experiment, metrics):
    return {k: v for k, v in metrics.items() if not experiment.is_timing(k)}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_smoke_preset_runs_deterministically_and_every_claim_gets_a_verdict(name, tmp_path):
    import torch

    experiment = REGISTRY.get(name)
    task = plan(experiment, "smoke", 1)[0]
    before = global_state()
    first = run_tasks([task], tmp_path / "a", progress=False)[0]
    after = global_state()
    assert first.ok, first.error
    assert torch.equal(before[0], after[0]) and before[1:] == after[1:], (
        "the run changed a global RNG or thread count (draw from ctx instead)"
    )
    second = run_tasks([task], tmp_path / "b", progress=False)[0]
    assert same(
        without_timings(experiment, first.metrics), without_timings(experiment, second.metrics)
    ), (
        "smoke preset is not deterministic under a seed (declare clock-based metrics in "
        "timing_metrics)"
    )
    if experiment.deterministic_metrics:
        other = run_tasks(plan(experiment, "smoke", 2)[1:], tmp_path / "c", progress=False)[0]
        assert other.ok, other.error
        for metric in filter(experiment.is_deterministic, first.metrics):
            assert same(first.metrics[metric], other.metrics[metric]), (
                f"{metric} is declared deterministic but differs between two seeds"
            )
    for pattern in experiment.timing_metrics:
        assert any(fnmatch.fnmatchcase(m, pattern) for m in first.metrics), (
            f"timing_metrics pattern {pattern!r} matches no metric run returns"
        )
    saved = TaskRecord.load(tmp_path / "a" / first.relpath())
    assert saved.experiment == name and saved.seed == task.seed
    for claim in experiment.claims:
        assert claim.metric in first.metrics, f"claim {claim.id} names a metric run never returns"
        assert claim.judge([first.metrics[claim.metric]]).reason
    if experiment.plot is not None:
        check_figures_show_every_seed(experiment, task.config, first.metrics)


def other_seed(metrics, k):
    """A made-up k-th seed's metrics: floats scaled and shifted, integers in lists shifted by k.

    Scalar integers (sizes, counts of a config) and everything else are kept.
    """
    if isinstance(metrics, float):
        return metrics * (1 + 0.25 * k) + 0.05 * k
    if isinstance(metrics, dict):
        return {key: other_seed(value, k) for key, value in metrics.items()}
    if isinstance(metrics, list):
        return [
            v + k if isinstance(v, int) and not isinstance(v, bool) else other_seed(v, k)
            for v in metrics
        ]
    return metrics


def figure_data(figure):
    """Every number the figure's axes draw: lines, markers, bars, bands and images."""
    import numpy as np

    data = []
    for ax in figure.axes:
        data += [np.asarray(line.get_xydata(), dtype=float) for line in ax.get_lines()]
        for collection in ax.collections:
            data.append(np.asarray(collection.get_offsets(), dtype=float).ravel())
            data += [np.asarray(p.vertices, dtype=float).ravel() for p in collection.get_paths()]
        data += [np.asarray(patch.get_path().vertices, dtype=float).ravel() for patch in ax.patches]
        data += [np.asarray(image.get_array(), dtype=float).ravel() for image in ax.images]
    return data


def same_data(a, b):
    import numpy as np

    if len(a) != len(b):
        return False
    pairs = zip(a, b, strict=True)
    return all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True) for x, y in pairs)


def legend_covers_axes(figure):
    renderer = figure.canvas.get_renderer()
    return any(
        ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
        for ax in figure.axes
        if ax.get_legend() is not None
    )


def check_figures_show_every_seed(experiment, config, metrics):
    """Figures change when seeds are added, have distinct titles and keep legends off the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    one = experiment.plot([metrics], config)
    three = experiment.plot([metrics, other_seed(metrics, 1), other_seed(metrics, 2)], config)
    try:
        assert one.keys() == three.keys(), "the set of figures depends on the number of seeds"
        titles = []
        for key, figure in three.items():
            assert not same_data(figure_data(one[key]), figure_data(figure)), (
                f"figure {key!r} draws the same data for 1 and 3 seeds: it shows seed 0 only"
            )
            titles.append(
                " / ".join(
                    [figure._suptitle.get_text() if figure._suptitle else ""]
                    + [ax.get_title() for ax in figure.axes]
                )
            )
            assert not legend_covers_axes(figure), (
                f"figure {key!r}: a legend covers the axes (use core.plotting.legend_outside)"
            )
        assert len(set(titles)) == len(titles), f"figures share a title: {titles}"
    finally:
        for figure in [*one.values(), *three.values()]:
            plt.close(figure)


def test_every_system_imports():
    broken = {s: why for s, why in REGISTRY.unavailable.items() if why.startswith("broken")}
    assert not broken, f"systems left out of the registry: {broken}"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_run_takes_the_context_and_declares_its_needs(name):
    experiment = REGISTRY.get(name)
    params = list(inspect.signature(experiment.run).parameters)
    assert params[1] == "ctx", "run must be run(config, ctx: RunContext)"
    assert experiment.unavailable_reason is None  # the dev extra installs every requirement


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_config_checks_itself_so_a_bad_set_exits_before_any_task(name):
    config_type = type(REGISTRY.get(name).config("quick"))
    assert any("__post_init__" in vars(k) for k in config_type.__mro__[:-1]), (
        f"{config_type.__name__} must check its fields in __post_init__ (issue 40): then a bad "
        "--set exits 2 before any task runs instead of failing in every task"
    )


@pytest.mark.parametrize("slug", ["core", *SYSTEMS])
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


def python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@functools.cache
def installed_modules():
    """``packages_distributions()`` once per process: it scans every installed distribution."""
    from importlib.metadata import packages_distributions

    return packages_distributions()


@functools.cache
def extra_modules(slug):
    """Top-level import names of the distributions the system's extra installs."""
    from packaging.requirements import Requirement

    from icml26.core.imports import extra_requirements

    names = {Requirement(r).name.lower().replace("_", "-") for r in extra_requirements(slug)}
    return frozenset(
        module
        for module, dists in installed_modules().items()
        if any(d.lower().replace("_", "-") in names for d in dists)
    )


@pytest.mark.parametrize("slug", SYSTEMS)
def test_package_and_its_experiments_import_nothing_heavy(slug):
    heavy = HEAVY | extra_modules(slug)
    code = (
        f"import sys, icml26.{slug}, icml26.{slug}.experiments\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    out = python(code)
    assert out.returncode == 0, out.stderr
    loaded = set(eval(out.stdout.strip().splitlines()[-1]))
    assert not loaded & heavy, f"importing icml26.{slug} loaded {sorted(loaded & heavy)}"


@pytest.mark.parametrize("slug", SYSTEMS)
def test_a_missing_requirement_names_the_install_line(slug):
    from packaging.requirements import Requirement

    from icml26.core.imports import extra_requirements

    hidden = Requirement(extra_requirements(slug)[0]).name
    code = (
        "import importlib.metadata as md\n"
        "real = md.version\n"
        "def version(name):\n"
        f"    if name == {hidden!r}:\n"
        "        raise md.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "md.version = version\n"
        f"import icml26.{slug}\n"
    )
    out = python(code)
    assert out.returncode != 0
    assert "MissingExtraError" in out.stderr and hidden in out.stderr
    assert f"pip install 'icml26[{slug}]'" in out.stderr


@pytest.mark.parametrize("slug", SYSTEMS)
def test_public_names_load_lazily_and_unknown_names_raise(slug):
    module = importlib.import_module(f"icml26.{slug}")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("command", [["--help"], ["list"], ["show", SYSTEMS[0]]])
def test_listing_imports_no_heavy_module(command, tmp_path):
    extras = set().union(*(extra_modules(s) for s in SYSTEMS)) - {"threadpoolctl", "packaging"}
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from icml26.cli import app\n"
        f"result = CliRunner().invoke(app, {command!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    # in an empty folder: `list` reads the verdicts of a ./runs folder it finds (scipy)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
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
