import pytest
from rich.console import Console
from toy_experiments import TOY
from typer.testing import CliRunner

from icml26 import cli
from icml26.core import Status, plan, run_tasks, write_report
from icml26.core.report import summarize


@pytest.fixture
def run_dir(tmp_path):
    exp = TOY.get("toy.coin")
    tasks = plan(exp, "smoke", 3) + plan(exp, "smoke", 1, {"fail": "true"})
    run_tasks(tasks, tmp_path, progress=False)
    return tmp_path


def test_summary_judges_each_config_group(run_dir):
    results = {r.config["fail"]: r for r in summarize(run_dir, TOY)}
    good, bad = results[False], results[True]
    statuses = [v.status for v in good.verdicts]
    assert statuses[:2] == [Status.REPRODUCED, Status.NOT_REPRODUCED]  # 0.3 ± 0.1; not >= 0.5
    assert len(good.ok_metrics) == 3
    assert [v.status for v in bad.verdicts] == [Status.NOT_MEASURED] * 3
    assert len(bad.failed) == 1


def test_report_contents(run_dir):
    md, html = write_report(run_dir, TOY)
    text = md.read_text()
    assert (
        "| toy.coin | C1 | claim | the estimate is near the true bias | within 0.3 ± 0.1 | 0.3 |"
        in text
    )
    assert "reproduced" in text and "not reproduced" in text
    assert "| spec target: >= 0.3 |" in text  # not the paper's figure, and labelled so
    assert "### Estimates per seed" in text and "true p = 0.3" in text
    assert "![toy.coin: estimates](figures/toy.coin-estimates.png)" in text
    assert "RuntimeError: asked to fail" in text
    assert (run_dir / "figures" / "toy.coin-estimates.png").stat().st_size > 1000
    page = html.read_text()
    assert "data:image/png;base64," in page  # self-contained
    assert "<td class='not-reproduced'>not reproduced</td>" in page


@pytest.fixture
def invoke(monkeypatch):
    monkeypatch.setattr(cli, "_registry", lambda: TOY)
    monkeypatch.setattr(cli, "console", Console(width=250))
    runner = CliRunner()
    return lambda *args: runner.invoke(cli.app, list(args))


def test_cli_run_prints_verdicts_and_resumes(invoke, tmp_path):
    out = str(tmp_path / "run")
    result = invoke("run", "toy.coin", "--preset", "smoke", "--out", out)
    assert result.exit_code == 0, result.output
    assert "C1" in result.output and "reproduced" in result.output
    again = invoke("run", "toy.coin", "--preset", "smoke", "--out", out)
    assert again.exit_code == 0
    result = invoke("report", out)
    assert result.exit_code == 0 and (tmp_path / "run" / "report.html").exists()


def test_cli_reproduce_writes_the_report(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("reproduce", "toy", "--preset", "smoke", "--out", str(out), "--seeds", "1")
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "sanity checks (hold by construction; not counted): 1 reproduced" in report
    listed = invoke("list", "--runs", str(out))
    assert "toy.coin" in listed.output and "reproduced" in listed.output
    assert "toy.needs_missing" in listed.output and "unavailable — pip install" in listed.output
    shown = invoke("show", "toy")
    assert shown.exit_code == 0 and "the estimate exceeds one half" in shown.output
    assert "skipped toy.needs_missing: unavailable" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "toy.nope"), "unknown experiment 'toy.nope'; choose from: toy.coin, toy.context"),
        (
            ("run", "toy.needs_missing"),
            "toy.needs_missing is unavailable — pip install 'icml26[toyextra]'",
        ),
        (("run", "toy.coin", "--set", "flips=[1,2]"), "--set flips: expected int; got '[1,2]'"),
        (("run", "toy.coin", "--preset", "huge"), "unknown preset 'huge'; choose from: smoke"),
        (("run", "toy.coin", "--set", "zzz=1"), "unknown config key(s) zzz; valid keys: p,"),
        (("run", "toy.coin", "--set", "p"), "--set expects key=value; got 'p'"),
        (("run", "toy.coin", "--backend", "mpi"), "unknown backend 'mpi'; choose from: local"),
        (("reproduce", "nope"), "unknown system 'nope'; choose from: toy"),
        (("show", "nope"), "unknown system 'nope'; choose from: toy"),
        (("report", "/nonexistent/run"), "no run folder at /nonexistent/run"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(invoke, args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_broken_plot_or_table_hook_does_not_cost_the_report(run_dir):
    from dataclasses import replace as dc_replace

    from icml26.core import Registry

    def broken(metrics, config):
        raise ValueError("hook bug")

    registry = Registry()
    for exp in TOY:
        registry.add(dc_replace(exp, plot=broken, tables=broken))
    md, _ = write_report(run_dir, registry)
    text = md.read_text()
    assert "Tables failed: ValueError('hook bug')" in text
    assert "Plotting failed: ValueError('hook bug')" in text
    assert "| toy.coin | C1 |" in text
