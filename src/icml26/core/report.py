"""The report of a run folder: ``report.md``, a self-contained ``report.html``, and the
machine-readable ``summary.json`` and ``claims.csv``.

One model (:func:`summarize`) feeds everything. The Markdown comes from a Jinja2 template; the
HTML is that Markdown rendered by markdown-it (raw HTML in any text is escaped, never passed
through), with figures embedded as data URIs so the page works offline. The report opens with a
per-system summary and a table of contents; each (experiment, config) gets its own section with
its claims (criterion, reference figure and its source, ours ± 95 % CI half-width, seeds,
verdict), tables and figures; sanity checks and unmeasured metrics are counted apart from claims;
an environment block lists revisions, versions, code fingerprints, machine and wall times.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.core.claims import Status, Verdict
from icml26.core.experiment import Registry
from icml26.core.results import (
    TaskRecord,
    atomic_write_text,
    code_fingerprint,
    load_records,
    to_jsonable,
)

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
    config_hash: str
    records: list[TaskRecord]
    verdicts: list[Verdict] = field(default_factory=list)
    fingerprint: str | None = None  # of the current code
    overrides: dict[str, Any] = field(default_factory=dict)  # fields that differ from the preset
    title: str = ""
    paper: str = ""

    @property
    def system(self) -> str:
        """The system slug."""
        return self.experiment.partition(".")[0]

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

    @property
    def wall_time_s(self) -> float:
        """Total wall time of the finished tasks."""
        return sum(r.wall_time_s for r in self.records if r.ok)

    @property
    def anchor(self) -> str:
        """The id of this result's section in the HTML report."""
        return _slug(f"{self.experiment} {self.config_hash}")


def summarize(run_dir: Path, registry: Registry) -> list[ExperimentResult]:
    """Group the records of ``run_dir`` by (experiment, config) and judge every claim."""
    groups: dict[tuple[str, str], list[TaskRecord]] = defaultdict(list)
    for record in load_records(run_dir):
        groups[(record.experiment, record.config_hash)].append(record)
    results = []
    for (name, config_hash), records in sorted(groups.items()):
        try:
            experiment = registry.get(name)
        except KeyError:
            log.warning("records of unregistered experiment %s are left out of the report", name)
            continue
        first = records[0]
        preset = to_jsonable(experiment.presets.get(first.preset, {}))
        overrides = {k: v for k, v in first.config.items() if preset.get(k, v) != v}
        result = ExperimentResult(
            name,
            first.preset,
            first.config,
            config_hash,
            records,
            fingerprint=code_fingerprint(experiment.run),
            overrides=overrides,
            title=experiment.title,
            paper=experiment.paper,
        )
        for claim in experiment.claims:
            values = [m[claim.metric] for m in result.ok_metrics if claim.metric in m]
            result.verdicts.append(claim.judge([float(v) for v in values]))
        results.append(result)
    return results


# ---------------------------------------------------------------------------------------------
# The model's derived views: per-system counts, machine-readable rows, environment.


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _counts(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    claims: Counter[str] = Counter()
    sanity: Counter[str] = Counter()
    for result in results:
        for v in result.verdicts:
            (sanity if v.claim.kind == "sanity" else claims)[v.status.value] += 1
    return {
        "claims": sum(claims.values()),
        **{s.value: claims[s.value] for s in Status},
        "sanity": sum(sanity.values()),
        "sanity_held": sanity[Status.REPRODUCED.value],
        "failed_tasks": sum(len(r.failed) for r in results),
    }


def _claim_rows(results: Sequence[ExperimentResult]) -> list[dict[str, Any]]:
    rows = []
    for result in results:
        for v in result.verdicts:
            m = v.measured
            rows.append(
                {
                    "experiment": result.experiment,
                    "config_hash": result.config_hash,
                    "preset": result.preset,
                    "claim": v.claim.id,
                    "kind": v.claim.kind,
                    "statement": v.claim.statement,
                    "metric": v.claim.metric,
                    "criterion": v.claim.criterion,
                    "reference": v.claim.paper,
                    "reference_source": v.claim.source,
                    "where": v.claim.where,
                    "mean": None if m is None else m.mean,
                    "ci_low": None if m is None else m.ci_low,
                    "ci_high": None if m is None else m.ci_high,
                    "n_seeds": 0 if m is None else m.n,
                    "verdict": v.status.value,
                    "reason": v.reason,
                }
            )
    return rows


def _environment(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    records = [r for result in results for r in result.records]
    versions: dict[str, set[str]] = defaultdict(set)
    for record in records:
        for package, version in record.versions.items():
            versions[package].add(version)
    return {
        "git_revisions": sorted({r.git_revision or "not a git checkout" for r in records}),
        "git_dirty": any(r.git_dirty for r in records),
        "versions": {k: sorted(v) for k, v in sorted(versions.items())},
        "code_fingerprints": {r.experiment: r.fingerprint for r in results},
        "stale_rerun": sum(r.rerun_stale for r in results),
        "stale_kept": sum(len(r.stale) for r in results),
        "wall_time_s": {f"{r.experiment} {r.config_hash}": r.wall_time_s for r in results},
    }


def _ours(v: Verdict) -> str:
    if v.measured is None:
        return "n/a"
    return v.ours


def _reference(v: Verdict) -> str:
    """The reference figure, labelled unless it is the paper's."""
    if v.claim.source == "paper":
        where = f" ({v.claim.where})" if v.claim.where and v.claim.where != "-" else ""
        return f"{v.claim.paper}{where}"
    if v.claim.source == "spec":
        return f"spec target: {v.claim.paper}"
    return "—"


# ---------------------------------------------------------------------------------------------
# Markdown (Jinja2) and HTML (markdown-it).

_TEMPLATE = Path(__file__).with_name("report.md.j2")  # the Markdown report, as Jinja2


def _cell(value: Any) -> str:
    """One table cell / inline text: numbers to 3 significant digits, no pipes or line breaks."""
    text = f"{value:.3g}" if isinstance(value, float) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _figures(result: ExperimentResult, registry: Registry, run_dir: Path) -> list[dict[str, str]]:
    experiment = registry.get(result.experiment)
    if experiment.plot is None or not result.ok_metrics:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = experiment.config_from_record(result.config)
    figures = experiment.plot(result.ok_metrics, config)
    out = []
    for name, figure in figures.items():
        path = Path("figures") / f"{result.experiment}-{result.config_hash}-{name}.png"
        (run_dir / path).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(run_dir / path, dpi=110, bbox_inches="tight")
        plt.close(figure)
        out.append({"path": path.as_posix(), "alt": f"{result.experiment}: {name}"})
    return out


def _hook(result: ExperimentResult, registry: Registry, run_dir: Path) -> dict[str, Any]:
    """The figures and tables of one result; a raising hook costs only its own part."""
    experiment = registry.get(result.experiment)
    notes: list[str] = []
    try:
        figures = _figures(result, registry, run_dir)
    except Exception as err:  # a broken plot must not cost the whole report
        log.exception("plot of %s failed", result.experiment)
        figures, notes = [], [f"Plotting failed: {err!r}"]
    tables: list[Table] = []
    if experiment.tables is not None and result.ok_metrics:
        try:
            config = experiment.config_from_record(result.config)
            tables = list(experiment.tables(result.ok_metrics, config))
        except Exception as err:  # a broken table must not cost the whole report
            log.exception("tables of %s failed", result.experiment)
            notes.append(f"Tables failed: {err!r}")
    return {"figures": figures, "tables": tables, "notes": notes}


def _heading(result: ExperimentResult) -> str:
    """The section heading: a config that differs from its preset carries its hash."""
    suffix = f" [{result.config_hash}]" if result.overrides else ""
    return f"{result.experiment}: {result.title}{suffix}"


def _view(result: ExperimentResult, registry: Registry, run_dir: Path) -> dict[str, Any]:
    claims = [
        {
            "id": v.claim.id,
            "kind": v.claim.kind,
            "statement": v.claim.statement,
            "criterion": v.claim.criterion,
            "reference": _reference(v),
            "ours": _ours(v),
            "n": 0 if v.measured is None else v.measured.n,
            "verdict": v.status.value,
            "reason": v.reason,
        }
        for v in result.verdicts
    ]
    return {
        "heading": _heading(result),
        "anchor": result.anchor,
        "paper": result.paper,
        "preset": result.preset,
        "overrides": result.overrides,
        "overrides_text": ", ".join(f"{k}={v!r}" for k, v in result.overrides.items()),
        "n_ok": len(result.ok_metrics),
        "wall": f"{result.wall_time_s:.1f}",
        "config_text": "\n".join(f"{k} = {v!r}" for k, v in result.config.items()),
        "claims": claims,
        "failed": result.failed,
        "fingerprint": result.fingerprint,
        **_hook(result, registry, run_dir),
    }


def _markdown(results: list[ExperimentResult], registry: Registry, run_dir: Path) -> str:
    import jinja2

    env = jinja2.Environment(
        autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined
    )
    env.filters["cell"] = _cell
    views = {id(r): _view(r, registry, run_dir) for r in results}
    systems = []
    for slug in sorted({r.system for r in results}):
        mine = [r for r in results if r.system == slug]
        systems.append(
            {
                "slug": slug,
                "anchor": _slug(slug),
                "experiments": len({r.experiment for r in mine}),
                "results": [views[id(r)] for r in mine],
                **_counts(mine),
            }
        )
    return env.from_string(_TEMPLATE.read_text()).render(
        run_dir=run_dir,
        written=f"{dt.datetime.now():%Y-%m-%d %H:%M}",
        total=_counts(results),
        systems=systems,
        all_results=[views[id(r)] for r in results],
        env=_environment(results),
    )


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; }
td.reproduced { color: #11772d; font-weight: bold; }
td.not-reproduced { color: #b3261e; font-weight: bold; }
td.inconclusive { color: #8a6d00; font-weight: bold; }
td.not-measured { color: #666; font-style: italic; }
"""


def _html(markdown: str, run_dir: Path, anchors: dict[str, str]) -> str:
    """Render the Markdown with markdown-it: heading ids for the contents, embedded figures.

    ``anchors`` maps an experiment section's heading text to its id.
    """
    import html

    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    statuses = {s.value: s.value.replace(" ", "-") for s in Status}
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            text = tokens[i + 1].content
            if token.tag == "h2":
                token.attrSet("id", "environment" if text == "Environment" else _slug(text))
            elif token.tag == "h3":
                token.attrSet("id", anchors.get(text, _slug(text)))
        elif token.type == "td_open" and tokens[i + 1].content in statuses:
            token.attrSet("class", statuses[tokens[i + 1].content])
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "image":
                    src = child.attrGet("src") or ""
                    data = base64.b64encode((run_dir / str(src)).read_bytes()).decode()
                    child.attrSet("src", f"data:image/png;base64,{data}")
    body = md.renderer.render(tokens, md.options, {})
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape('icml26 reproduction report')}</title>"
        f"<style>{_CSS}</style></head><body>\n{body}</body></html>\n"
    )


def write_report(run_dir: Path, registry: Registry) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html``, ``summary.json`` and ``claims.csv`` into ``run_dir``.

    Returns the paths of the Markdown and HTML reports.

    Raises
    ------
    ValueError
        If ``run_dir`` holds no record of a registered experiment.
    """
    run_dir = Path(run_dir)
    results = summarize(run_dir, registry)
    if not results:
        raise ValueError(f"no records of registered experiments in {run_dir}")
    markdown = _markdown(results, registry, run_dir)
    anchors = {_heading(r): r.anchor for r in results}
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    atomic_write_text(md_path, markdown)
    atomic_write_text(html_path, _html(markdown, run_dir, anchors))
    summary = {
        "run_dir": str(run_dir),
        "totals": _counts(results),
        "systems": {
            s: _counts([r for r in results if r.system == s]) for s in {r.system for r in results}
        },
        "claims": _claim_rows(results),
        "environment": _environment(results),
    }
    atomic_write_text(
        run_dir / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n"
    )
    rows = _claim_rows(results)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["experiment"])
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(run_dir / "claims.csv", buffer.getvalue())
    return md_path, html_path
