import csv
import json
from html.parser import HTMLParser

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
    row = (
        "| C1 | claim | the estimate is near the true bias | within 0.3 ± 0.1 | — | "
        "0.3 (Eq. 1) | 0.3 ±"
    )
    assert row in text
    assert (
        "| C3 | claim | a threshold inside the noise | >= 0.3 | — | spec target: >= 0.3 |" in text
    )
    assert "**3 claims: 1 reproduced, 1 not reproduced, 1 inconclusive" not in text  # 2 configs
    assert (
        "6 claims: 1 reproduced, 1 not reproduced, 1 inconclusive, 0 testbed invalid, "
        "3 not measured" in text
    )
    assert "| [toy](#toy) | 1 | 6 | 1 | 1 | 1 | 0 | 3 | 0/0 | 0/0 | 1 |" in text  # per system
    assert "## Did not hold" in text and "**C2**: not reproduced" in text
    assert "#### Estimates per seed" in text and "true p = 0.3" in text
    assert "RuntimeError: asked to fail" in text
    # two configs of one experiment: two sections, the changed one headed by its hash + diff
    assert text.count("### toy.coin (smoke): Estimate a coin's bias") == 2
    assert "changed from it: fail=True" in text
    figures = list((run_dir / "figures").glob("toy.coin-*-estimates.png"))
    assert len(figures) == 1 and figures[0].stat().st_size > 1000
    assert f"![toy.coin: estimates](figures/{figures[0].name})" in text
    assert "## Environment" in text and "numpy" in text
    page = html.read_text()
    assert "data:image/png;base64," in page  # self-contained
    assert '<td class="not-reproduced">not reproduced</td>' in page
    assert (md.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask():
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.images, self.text = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a":
            self.links.append(attrs.get("href", ""))
        if tag == "img":
            self.images.append(attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_report_html_as_a_browser_reads_it(run_dir):
    _, html = write_report(run_dir, TOY)
    page = _Page()
    page.feed(html.read_text())
    assert page.links and all(link.startswith("#") for link in page.links)  # no external URL
    assert {link[1:] for link in page.links} <= page.ids  # every contents link resolves
    assert page.images and all(img.get("alt") for img in page.images)
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.images)
    text = "".join(page.text)
    assert "|---" not in text and "](#" not in text and "**" not in text  # no raw Markdown


def test_hostile_config_text_is_escaped(tmp_path):
    tasks = plan(TOY.get("toy.counter"), "smoke", 1, {"folder": str(tmp_path / "<script>alert(1)")})
    (tmp_path / "<script>alert(1)").mkdir()
    run_tasks(tasks, tmp_path / "run", progress=False)
    _, html = write_report(tmp_path / "run", TOY)
    assert "<script>" not in html.read_text()


def test_summary_json_and_claims_csv(run_dir):
    write_report(run_dir, TOY)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["claims"] == 6 and summary["totals"]["failed_tasks"] == 1
    rows = list(csv.DictReader((run_dir / "claims.csv").open()))
    assert len(rows) == 6 and {r["config_hash"] for r in rows} == {
        r.config_hash for r in summarize(run_dir, TOY)
    }
    c3 = next(r for r in rows if r["claim"] == "C3" and r["n_seeds"] == "3")
    assert c3["reference_source"] == "spec" and c3["verdict"] == "inconclusive"
    assert float(c3["ci_low"]) < 0.3 < float(c3["ci_high"])


def test_readme_table_and_docs_sections_are_generated_from_the_summary(run_dir, tmp_path):
    from icml26.core.report import README_BEGIN, README_END, write_docs_results, write_readme_table

    write_report(run_dir, TOY)
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{README_BEGIN}\nold\n{README_END}\n\nafter\n")
    write_readme_table(run_dir, readme)
    text = readme.read_text()
    assert "old" not in text and text.endswith(f"{README_END}\n\nafter\n")
    assert "| `toy` |" in text and "smoke" in text
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "toy.md"
    page.write_text("# toy\n\nHand-written method notes.\n")
    assert write_docs_results(run_dir, docs) == [page]
    first = page.read_text()
    assert first.startswith("# toy\n\nHand-written method notes.\n\n" + README_BEGIN)
    assert "## Latest recorded run" in first and "smoke preset" in first
    c2 = next(line for line in first.splitlines() if "| C2 |" in line)
    assert "not reproduced" in c2 and c2.count("|") == 9
    assert write_docs_results(run_dir, docs) == [page] and page.read_text() == first  # in place
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="no '<!-- results:begin -->'"):
        write_readme_table(run_dir, readme)
    with pytest.raises(ValueError, match="write the report first"):
        write_docs_results(tmp_path / "docs", docs)


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


def test_cli_report_rewrites_the_docs_sections(invoke, run_dir, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "toy.md").write_text("# toy\n")
    result = invoke("report", str(run_dir), "--docs", str(docs))
    assert result.exit_code == 0, result.output
    assert "results sections of 1 docs page(s)" in result.output
    assert "## Latest recorded run" in (docs / "toy.md").read_text()
    assert invoke("report", str(run_dir), "--docs", str(tmp_path / "nope")).exit_code == 2


def test_cli_reproduce_writes_the_report(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("reproduce", "toy", "--preset", "smoke", "--out", str(out), "--seeds", "1")
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    # one seed of a seed-dependent value: the sanity check gets no firm verdict
    assert (
        "Sanity checks (hold by construction, never counted as reproductions): 0/1 hold" in report
    )
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
        (("run", "toy"), "toy is a system; run all of it with `icml26 reproduce toy`, or one of:"),
        (("run", "toy.coin", "--seeds", "0"), "--seeds must be in [1, 1000]; got 0"),
        (("run", "toy.coin", "--seeds", "100000000"), "--seeds must be in [1, 1000]"),
        (("run", "toy.coin", "--out", ""), "--out needs a folder name"),
        (("run", "toy.con"), "unknown experiment 'toy.con'; did you mean 'toy.coin'?"),
        (("show", "tyo"), "unknown system 'tyo'; did you mean 'toy'?"),
        (("run", "toy.coin", "--set", "sizes=x"), "e.g. --set sizes='[3, 3]'"),
        (("report", "/nonexistent/run"), "no run folder at /nonexistent/run"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(invoke, args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_cli_exit_codes_for_failed_tasks_empty_folders_and_version(invoke, tmp_path):
    out = str(tmp_path / "run")
    failed = invoke("run", "toy.coin", "--preset", "smoke", "--set", "fail=true", "--out", out)
    assert failed.exit_code == 1 and "3 task(s) failed" in failed.output
    (tmp_path / "empty").mkdir()
    empty = invoke("report", str(tmp_path / "empty"))
    assert empty.exit_code == 2 and "no records of registered experiments" in empty.output
    version = invoke("--version")
    assert version.exit_code == 0 and version.output.startswith("icml26 ")


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
    assert "| C1 | claim |" in text


def test_cli_track_mlflow(invoke, tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    out = tmp_path / "run"
    result = invoke("run", "toy.coin", "--preset", "smoke", "--out", str(out), "--track", "mlflow")
    assert result.exit_code == 0, result.output
    assert "mlflow: 3 record(s) under run" in result.output and (out / "mlflow.db").exists()
    bad = invoke("run", "toy.coin", "--preset", "smoke", "--out", str(out), "--track", "wandb")
    assert bad.exit_code == 2 and "unknown tracker 'wandb'; choose from: mlflow" in bad.output


def test_show_finds_the_docs_page_where_a_wheel_installs_it(tmp_path, monkeypatch):
    installed = tmp_path / "share" / "icml26" / "docs"
    installed.mkdir(parents=True)
    (installed / "toy.md").write_text("# toy\n")
    monkeypatch.setattr(cli, "_registry", lambda: TOY)
    monkeypatch.setattr(cli, "console", Console(width=250))
    monkeypatch.setattr(cli, "DOCS_DIRS", (tmp_path / "checkout-docs", installed))
    result = CliRunner().invoke(cli.app, ["show", "toy"])
    assert result.exit_code == 0, result.output
    assert f"docs: {installed / 'toy.md'}" in result.output
    monkeypatch.setattr(cli, "DOCS_DIRS", (tmp_path / "nowhere",))
    result = CliRunner().invoke(cli.app, ["show", "toy"])
    assert "docs: docs/toy.md in the icml26 source tree" in result.output


def test_values_render_as_text_and_the_report_reads_only_its_own_figures(run_dir, tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    record_file = next((run_dir / "toy.coin").glob("*-seed0.json"))
    data = json.loads(record_file.read_text())
    data["error"] = f"```\n![x]({secret})\n<script>alert(1)</script>"
    data["status"] = "failed"
    record_file.write_text(json.dumps(data))
    _, html = write_report(run_dir, TOY)
    page = html.read_text()
    assert "not yours" not in page and "<script>" not in page
    assert "base64" in page  # the report's own figure is still embedded


def test_damaged_records_are_named_and_rerun(tmp_path):
    from icml26.core.results import InvalidRecordError, TaskRecord

    exp = TOY.get("toy.coin")
    tasks = plan(exp, "smoke", 2)
    first = run_tasks(tasks, tmp_path, progress=False)
    files = sorted((tmp_path / "toy.coin").glob("*.json"))
    good = json.loads(files[0].read_text())
    damages = {
        "list": [],
        "null": None,
        "deep": "[" * 100_000 + "]" * 100_000,
        "string seed index": {**good, "seed_index": "0"},
        "metrics not a dict": {**good, "metrics": [1, 2]},
        "config edited": {**good, "config": {**good["config"], "flips": 7}},
        "copied to another seed": {**good, "seed_index": 0},
    }
    for why, content in damages.items():
        target = files[1] if why == "copied to another seed" else files[0]
        text = content if isinstance(content, str) else json.dumps(content)
        target.write_text(text)
        with pytest.raises(InvalidRecordError, match=target.name):
            TaskRecord.load(target)
        again = run_tasks(tasks, tmp_path, progress=False)  # moved aside and re-run
        assert [r.metrics for r in again] == [r.metrics for r in first], why
        assert list((tmp_path / "toy.coin").glob("*.corrupt"))


def test_list_keeps_ids_whole_filters_by_system_and_speaks_json(invoke, monkeypatch):
    monkeypatch.setattr(cli, "console", Console(width=40))
    narrow = invoke("list", "toy")
    assert narrow.exit_code == 0 and "toy.coin" in narrow.output and "toy.context" in narrow.output
    data = json.loads(invoke("list", "toy", "--json").output)
    assert {r["experiment"] for r in data["experiments"]} >= {"toy.coin", "toy.context"}
    assert invoke("list", "nope").exit_code == 2


def test_tool_without_a_system_lists_every_systems_commands(invoke):
    result = invoke("tool")
    assert result.exit_code == 0 and "usage: icml26 tool SLUG" in result.output
