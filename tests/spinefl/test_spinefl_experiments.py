"""The registered reproductions: every seed comes from the context, one CPU per task."""

from icml26.core import Resources, RunContext, discover
from icml26.spinefl.experiments.synthetic import SYNTHETIC_PRESETS, synthetic


def test_experiments_are_registered_with_one_cpu():
    experiments = discover().of_system("spinefl")
    assert {e.name for e in experiments} >= {
        "spinefl.synthetic",
        "spinefl.main",
        "spinefl.fashion_mnist",
    }
    assert all(e.resources == Resources(cpus=1) for e in experiments)


def test_every_seed_comes_from_the_context(tmp_path):
    config = SYNTHETIC_PRESETS["smoke"]
    a = synthetic(config, RunContext(seed=3, artifact_dir=tmp_path))
    b = synthetic(config, RunContext(seed=3, artifact_dir=tmp_path))
    c = synthetic(config, RunContext(seed=4, artifact_dir=tmp_path))
    assert a == b
    assert a["curves"] != c["curves"]


def test_long_calls_report_progress_in_the_core_convention():
    from icml26.spinefl import compare_methods, make_task

    task = make_task("digits", alpha=0.5, seed=0, n_clients=4, hidden=(8, 8))
    calls = []
    compare_methods(
        task, ["SpineFL", "HeteroFL"], seed=0, rounds=1, progress=lambda *a: calls.append(a)
    )
    assert [c[:2] for c in calls] == [(1, 2), (2, 2)]
