"""The core v2 contract: a lazy package, a light experiments module, run(config, ctx)."""

import subprocess
import sys

import pytest

from icml26.core import Resources, discover

EXTRA = ("pydantic", "pandas", "statsmodels", "scipy")
HEAVY = {
    "torch",
    "transformers",
    "scipy",
    "matplotlib",
    "sklearn",
    "openai",
    "httpx",
    "inspect_ai",
    *EXTRA,
}


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", ["icml26.copyright_bench", "icml26.copyright_bench.experiments"])
def test_package_and_experiments_import_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_experiments_declare_the_extra_and_their_cpus():
    experiments = {e.name: e for e in discover().of_system("copyright_bench")}
    assert "copyright_bench.scripted" in experiments
    for e in experiments.values():
        assert set(EXTRA) <= set(e.requires)
        assert isinstance(e.resources, Resources)


def test_scripted_report_hooks_show_the_measured_cells(tmp_path):
    from icml26.copyright_bench import experiments as ex
    from icml26.core import RunContext

    config = ex.SCRIPTED_PRESETS["smoke"]
    metrics = ex.scripted(config, RunContext(seed=0, artifact_dir=tmp_path))
    cells, human, claims = ex.scripted_tables([metrics], config)
    assert len(cells.rows) == 12 and cells.rows[0][:2] == ["neutral", "none"]
    assert cells.rows[0][2] == "0.00 [0.00, 0.39]"  # LawfulAgent: 0 of 6 episodes in the cell
    assert [r[0] for r in human.rows] == ["GreedyAgent", "HeuristicAgent", "LawfulAgent"]
    assert all(r[2] == "not measurable offline (needs real models)" for r in claims.rows)
    figure = ex.scripted_plot([metrics], config)["violation_heatmaps"]
    greedy = figure.axes[1].images[0].get_array()
    assert greedy.shape == (4, 3) and float(greedy.min()) == 1.0


def test_factor_recovery_does_not_depend_on_the_number_of_workers(tmp_path):
    from dataclasses import replace

    from icml26.copyright_bench import experiments as ex
    from icml26.core import RunContext

    config = replace(ex.FACTOR_PRESETS["smoke"], n_per_family=1, replicates=2)
    serial = ex.factor_recovery(config, RunContext(seed=4, artifact_dir=tmp_path))
    pooled = ex.factor_recovery(
        replace(config, workers=2), RunContext(seed=4, artifact_dir=tmp_path)
    )
    assert serial == pooled
