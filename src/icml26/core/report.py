"""The report of a run folder: ``report.md`` and a self-contained ``report.html``.

One table lists every claim with the paper's figure, ours (mean ± 95% CI half-width over seeds)
and the verdict; then one section per experiment with its config, the verdicts' reasons, its
tables and figures (PNG files in ``figures/``, embedded in the HTML), and any failed task.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.core.claims import Status, Verdict
from icml26.core.experiment import Registry
from icml26.core.results import TaskRecord, atomic_write_text, code_fingerprint, load_records

__all__ = ["ExperimentResult", "Table", "summarize", "write_report"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Table:
    """A table an experiment adds to the report (e.g. the paper's numbers beside ours)."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    note: str = ""


@dataclass
class ExperimentResult:
    """The records of one experiment at one config, and the verdicts of its claims."""

    experiment: str
    preset: str
    config: dict[str, Any]
    records: list[TaskRecord]
    verdicts: list[Verdict] = field(default_factory=list)
    fingerprint: str | None = None  # of the current code

    @property
    def stale(self) -> list[TaskRecord]:
        """Finished records made by other code than the current one (kept with --reuse-stale)."""
        return [r for r in self.records if r.ok and r.code_fingerprint != self.fingerprint]

    @property
    def rerun_stale(self) -> int:
        """How many records were re-run because the code that made them had changed."""
        return sum(r.replaced == "stale" for r in self.records)

    @property
    def ok_metrics(self) -> list[dict[str, Any]]:
        """Metrics of the finished tasks, in seed order."""
        return [r.metrics for r in sorted(self.records, key=lambda r: r.seed_index) if r.ok]

    @property
    def failed(self) -> list[TaskRecord]:
        """The records of tasks that raised."""
        return [r for r in self.records if not r.ok]


def summarize(run_dir: Path, registry: Registry) -> list[ExperimentResult]:
    """Group the records of ``run_dir`` by (experiment, config) and judge every claim."""
    groups: dict[tuple[str, str], list[TaskRecord]] = defaultdict(list)
    for record in load_records(run_dir):
        groups[(record.experiment, record.config_hash)].append(record)
    results = []
    for (name, _), records in sorted(groups.items()):
        first = records[0]
        result = ExperimentResult(name, first.preset, first.config, records)
        try:
            experiment = registry.get(name)
        except KeyError:
            log.warning("records of unregistered experiment %s are left out of the report", name)
            continue
        result.fingerprint = code_fingerprint(experiment.run)
        for claim in experiment.claims:
            values = [m[claim.metric] for m in result.ok_metrics if claim.metric in m]
            result.verdicts.append(claim.judge([float(v) for v in values]))
        results.append(result)
    return results


# A report is a list of blocks rendered to both Markdown and HTML.
Block = tuple[str, Any]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _markdown(blocks: list[Block]) -> str:
    out = []
    for kind, body in blocks:
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + body)
        elif kind == "p":
            out.append(body)
        elif kind == "pre":
            out.append("```\n" + body.rstrip() + "\n```")
        elif kind == "img":
            path, alt = body
            out.append(f"![{alt}]({path})")
        elif kind == "table":
            columns, rows = body
            lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            for row in rows:
                cells = [_cell(c).replace("|", "\\|").replace("\n", " ") for c in row]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; }
.reproduced { color: #11772d; font-weight: bold; }
.not-reproduced { color: #b3261e; font-weight: bold; }
.inconclusive { color: #8a6d00; font-weight: bold; }
"""


def _html(blocks: list[Block], run_dir: Path, title: str) -> str:
    statuses = {s.value: s.value.replace(" ", "-") for s in Status}
    out = [
        "<!DOCTYPE html>",
        f"<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    for kind, body in blocks:
        if kind in ("h1", "h2", "h3"):
            out.append(f"<{kind}>{html.escape(body)}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{html.escape(body)}</p>")
        elif kind == "pre":
            out.append(f"<pre>{html.escape(body)}</pre>")
        elif kind == "img":
            path, alt = body
            data = base64.b64encode((run_dir / path).read_bytes()).decode()
            out.append(f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>")
        elif kind == "table":
            columns, rows = body
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns))
            for row in rows:
                cells = []
                for c in row:
                    text = _cell(c)
                    css = statuses.get(text)
                    attr = f" class='{css}'" if css else ""
                    cells.append(f"<td{attr}>{html.escape(text)}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _figures(result: ExperimentResult, registry: Registry, run_dir: Path) -> list[Block]:
    experiment = registry.get(result.experiment)
    if experiment.plot is None or not result.ok_metrics:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = experiment.config_from_record(result.config)
    try:
        figures = experiment.plot(result.ok_metrics, config)
    except Exception as err:  # a broken plot must not cost the whole report
        log.exception("plot of %s failed", result.experiment)
        return [("p", f"Plotting failed: {err!r}")]
    blocks: list[Block] = []
    for name, figure in figures.items():
        path = Path("figures") / f"{result.experiment}-{name}.png"
        (run_dir / path).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(run_dir / path, dpi=110, bbox_inches="tight")
        plt.close(figure)
        blocks.append(("img", (path.as_posix(), f"{result.experiment}: {name}")))
    return blocks


def _tables(result: ExperimentResult, registry: Registry) -> list[Block]:
    experiment = registry.get(result.experiment)
    if experiment.tables is None or not result.ok_metrics:
        return []
    config = experiment.config_from_record(result.config)
    try:
        tables = experiment.tables(result.ok_metrics, config)
    except Exception as err:  # a broken table must not cost the whole report
        log.exception("tables of %s failed", result.experiment)
        return [("p", f"Tables failed: {err!r}")]
    blocks: list[Block] = []
    for table in tables:
        blocks += [("h3", table.title), ("table", (list(table.columns), table.rows))]
        if table.note:
            blocks.append(("p", table.note))
    return blocks


def _reference(verdict: Verdict) -> str:
    """The reference figure, labelled unless it is the paper's."""
    claim = verdict.claim
    if claim.source == "paper":
        return claim.paper
    if claim.source == "spec":
        return f"spec target: {claim.paper}"
    return "—"


def _blocks(results: list[ExperimentResult], registry: Registry, run_dir: Path) -> list[Block]:
    counts: dict[str, int] = defaultdict(int)
    sanity: dict[str, int] = defaultdict(int)
    rows = []
    for result in results:
        for v in result.verdicts:
            (sanity if v.claim.kind == "sanity" else counts)[v.status.value] += 1
            rows.append(
                [result.experiment, v.claim.id, v.claim.kind, v.claim.statement, v.claim.criterion,
                 _reference(v), v.ours, v.status.value]
            )  # fmt: skip
    total = sum(counts.values())
    summary = ", ".join(f"{counts[s.value]} {s.value}" for s in Status)
    n_sanity = sum(sanity.values())
    checks = f" {n_sanity} sanity checks (hold by construction; not counted): " + ", ".join(
        f"{sanity[s.value]} {s.value}" for s in Status if sanity[s.value]
    )
    rerun = sum(r.rerun_stale for r in results)
    stale = sum(len(r.stale) for r in results)
    freshness = f" {rerun} record(s) were re-run because their code had changed."
    if stale:
        freshness += f" {stale} record(s) were made by older code and kept (--reuse-stale)."
    columns = [
        "experiment",
        "claim",
        "kind",
        "statement",
        "criterion",
        "reference",
        "ours (mean ± 95% CI)",
        "verdict",
    ]
    blocks: list[Block] = [
        ("h1", "icml26 reproduction report"),
        ("p", f"Run folder {run_dir}, written {dt.datetime.now():%Y-%m-%d %H:%M}. "
              f"{total} claims: {summary}.{checks if n_sanity else ''}{freshness}"),
        ("h2", "Claims"),
        ("table", (columns, rows)),
    ]  # fmt: skip
    for result in results:
        experiment = registry.get(result.experiment)
        n_ok = len(result.ok_metrics)
        blocks += [
            ("h2", f"{experiment.name}: {experiment.title}"),
            ("p", f"{experiment.paper}. Preset `{result.preset}`, {n_ok} finished seed(s)."),
            ("pre", "\n".join(f"{k} = {v!r}" for k, v in result.config.items())),
        ]
        if result.verdicts:
            verdict_rows = [
                [v.claim.id, v.claim.where, v.claim.paper, v.status.value, v.reason]
                for v in result.verdicts
            ]
            blocks.append(("table", (["claim", "where", "paper", "verdict", "why"], verdict_rows)))
        blocks += _tables(result, registry)
        blocks += _figures(result, registry, run_dir)
        for record in result.failed:
            blocks += [("h3", f"Failed: seed {record.seed_index}"), ("pre", record.error or "")]
    return blocks


def write_report(run_dir: Path, registry: Registry) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``run_dir`` and return their paths."""
    run_dir = Path(run_dir)
    results = summarize(run_dir, registry)
    blocks = _blocks(results, registry, run_dir)
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    atomic_write_text(md_path, _markdown(blocks))
    atomic_write_text(html_path, _html(blocks, run_dir, "icml26 reproduction report"))
    return md_path, html_path
