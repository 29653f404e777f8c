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
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.core.claims import Status, Verdict, judge_claims
from icml26.core.experiment import Registry
from icml26.core.results import (
    TaskRecord,
    atomic_write_text,
    code_fingerprint,
    load_records,
    to_jsonable,
)

__all__ = [
    "README_BEGIN",
    "README_END",
    "ExperimentResult",
    "Table",
    "github_anchor",
    "summarize",
    "write_docs_results",
    "write_readme_table",
    "write_report",
]

README_BEGIN, README_END = "<!-- results:begin -->", "<!-- results:end -->"

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
        """The id of this result's section (GitHub's anchor of its heading)."""
        return github_anchor(_heading(self))


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
        deterministic = {c.metric: experiment.is_deterministic(c.metric) for c in experiment.claims}
        result.verdicts = judge_claims(
            experiment.claims, result.ok_metrics, deterministic=deterministic
        )
        results.append(result)
    return results


# ---------------------------------------------------------------------------------------------
# The model's derived views: per-system counts, machine-readable rows, environment.


def github_anchor(heading: str) -> str:
    """The id GitHub (and our HTML) gives a Markdown heading: lower case, punctuation dropped,
    spaces to hyphens.

    Examples
    --------
    >>> github_anchor("rex.roundtrip (quick): Round trip [3fa2]")
    'rexroundtrip-quick-round-trip-3fa2'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _counts(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    by_kind: dict[str, Counter[str]] = {"claim": Counter(), "sanity": Counter(), "gate": Counter()}
    for result in results:
        for v in result.verdicts:
            by_kind[v.claim.kind][v.status.value] += 1
    claims, sanity, gates = by_kind["claim"], by_kind["sanity"], by_kind["gate"]
    return {
        "claims": sum(claims.values()),
        **{s.value: claims[s.value] for s in CLAIM_STATUSES},
        "sanity": sum(sanity.values()),
        "sanity_held": sanity[Status.HOLDS.value],
        "gates": sum(gates.values()),
        "gates_held": gates[Status.HOLDS.value],
        "failed_tasks": sum(len(r.failed) for r in results),
        "seeds": sorted({len(r.ok_metrics) for r in results}),
        "presets": sorted({r.preset for r in results}),
    }


CLAIM_STATUSES = (
    Status.REPRODUCED,
    Status.NOT_REPRODUCED,
    Status.INCONCLUSIVE,
    Status.TESTBED_INVALID,
    Status.NOT_MEASURED,
)
HELD = (Status.REPRODUCED, Status.HOLDS)


def _headline(results: Sequence[ExperimentResult]) -> dict[str, Any] | None:
    """The system's headline claim row (the first found), or ``None``."""
    for row in _claim_rows(results):
        if row["headline"]:
            return row
    return None


def _not_held(results: Sequence[ExperimentResult]) -> list[dict[str, Any]]:
    """Every claim, gate and sanity check that did not hold, for the list at the top."""
    return [
        {
            "system": result.system,
            "experiment": result.experiment,
            "anchor": result.anchor,
            "id": v.claim.id,
            "kind": v.claim.kind,
            "headline": v.claim.headline,
            "statement": v.claim.statement,
            "verdict": v.status.value,
            "reason": v.reason,
        }
        for result in results
        for v in result.verdicts
        if v.status not in HELD
    ]


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
                    "headline": v.claim.headline,
                    "control": v.claim.control,
                    "statement": v.claim.statement,
                    "metric": v.claim.metric,
                    "criterion": v.claim.criterion,
                    "reference": v.claim.paper,
                    "reference_source": v.claim.source,
                    "where": v.claim.where,
                    "mean": None if m is None else m.mean,
                    "ci_low": None if m is None else m.ci_low,
                    "ci_high": None if m is None else m.ci_high,
                    "n_values": 0 if m is None else m.n,
                    "n_seeds": len(result.ok_metrics),
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


_MARKUP = re.compile(r"([\\`*_\[\]<|])")


def _cell(value: Any) -> str:
    """One table cell / inline text, shown as text: numbers to 3 significant digits, Markdown
    punctuation escaped (a value can be no image, link or HTML), no line breaks."""
    text = f"{value:.3g}" if isinstance(value, float) else str(value)
    return _MARKUP.sub(r"\\\1", text).replace("\n", " ")


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text`` (so it cannot be closed early)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


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
    """The section heading (unique in a report): a config that differs from its preset carries
    its hash."""
    suffix = f" [{result.config_hash}]" if result.overrides else ""
    return f"{result.experiment} ({result.preset}): {result.title}{suffix}"


def _view(result: ExperimentResult, registry: Registry, run_dir: Path) -> dict[str, Any]:
    config_text = "\n".join(f"{k} = {v!r}" for k, v in result.config.items())
    claims = [
        {
            "id": v.claim.id + (" (headline)" if v.claim.headline else ""),
            "kind": v.claim.kind,
            "statement": v.claim.statement,
            "criterion": v.claim.criterion,
            "control": v.claim.control or "—",
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
        "config_text": config_text,
        "config_fence": _fence(config_text),
        "error_fence": _fence("".join(r.error or "" for r in result.failed)),
        "claims": claims,
        "failed": result.failed,
        "fingerprint": result.fingerprint,
        **_hook(result, registry, run_dir),
    }


def _headline_view(v: Verdict) -> dict[str, str]:
    return {
        "statement": v.claim.statement,
        "criterion": v.claim.criterion,
        "reference": _reference(v),
        "ours": _ours(v),
        "verdict": v.status.value,
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
        headline = next((v for r in mine for v in r.verdicts if v.claim.headline), None)
        systems.append(
            {
                "slug": slug,
                "anchor": github_anchor(slug),
                "headline": None if headline is None else _headline_view(headline),
                "experiments": len({r.experiment for r in mine}),
                "results": [views[id(r)] for r in mine],
                **_counts(mine),
            }
        )
    return env.from_string(_TEMPLATE.read_text()).render(
        run_dir=run_dir,
        written=f"{dt.datetime.now():%Y-%m-%d %H:%M}",
        total=_counts(results),
        not_held=_not_held(results),
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
td.testbed-invalid { color: #6b3fa0; font-weight: bold; }
td.holds { color: #11772d; }
td.broken, td.fails { color: #b3261e; font-weight: bold; }
"""


def _embed(image: Any, run_dir: Path) -> None:
    """Embed one of the report's own figures as a data URI; any other image source is dropped
    (the report never reads a file outside its run folder's ``figures/``)."""
    figures = (run_dir / "figures").resolve()
    path = (run_dir / str(image.attrGet("src") or "")).resolve()
    if path.parent == figures and path.suffix == ".png" and path.is_file():
        data = base64.b64encode(path.read_bytes()).decode()
        image.attrSet("src", f"data:image/png;base64,{data}")
    else:
        image.attrSet("src", "")


def _html(markdown: str, run_dir: Path) -> str:
    """Render the Markdown with markdown-it: GitHub's heading ids, embedded figures."""
    import html

    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    statuses = {s.value: s.value.replace(" ", "-") for s in Status}
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            token.attrSet("id", github_anchor(tokens[i + 1].content))
        elif token.type == "td_open" and tokens[i + 1].content in statuses:
            token.attrSet("class", statuses[tokens[i + 1].content])
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "image":
                    _embed(child, run_dir)
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
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    atomic_write_text(md_path, markdown)
    atomic_write_text(html_path, _html(markdown, run_dir))
    summary = {
        "run_dir": str(run_dir),
        "totals": _counts(results),
        "systems": {
            s: {
                **_counts([r for r in results if r.system == s]),
                "headline": _headline([r for r in results if r.system == s]),
            }
            for s in sorted({r.system for r in results})
        },
        "written": f"{dt.datetime.now():%Y-%m-%d}",
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


def _summary_value(claim: dict[str, Any]) -> str:
    """A summary row's value and interval as text; "n/a" where nothing finite was measured."""
    mean, low, high = claim["mean"], claim["ci_low"], claim["ci_high"]
    if mean is None or not math.isfinite(mean):
        return "n/a"
    text = f"{mean:.3g}"
    if low is not None and high is not None and math.isfinite(low) and low != high:
        text += f" [{low:.3g}, {high:.3g}]"
    return text


def _readme_rows(summary: dict[str, Any], run_name: str) -> list[str]:
    rows = [
        "| system | headline claim | paper | ours | verdict | claims: reproduced / not / "
        "inconclusive / testbed invalid / not measured | gates held | sanity held | run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for slug, s in summary["systems"].items():
        h = s.get("headline")
        if h is None:
            head = ["(none in this run)", "", "", ""]
        else:
            ours = _summary_value(h)
            statement = f"{h['statement']} ({h['criterion']})"
            head = [statement, f"{h['reference']} ({h['where']})", ours, h["verdict"]]
        counts = " / ".join(str(s[k]) for k in [*(status.value for status in CLAIM_STATUSES)])
        run = f"`{_cell(run_name)}`, {'/'.join(s['presets'])}, {summary['written']}"
        cells = [
            _cell(c)
            for c in (
                *head,
                f"{counts} of {s['claims']}",
                f"{s['gates_held']}/{s['gates']}",
                f"{s['sanity_held']}/{s['sanity']}",
            )
        ]
        rows.append("| " + " | ".join([f"`{slug}`", *cells, run]) + " |")
    return rows


def _load_summary(run_dir: Path) -> dict[str, Any]:
    summary_file = Path(run_dir) / "summary.json"
    if not summary_file.is_file():
        raise ValueError(f"no summary.json in {run_dir}: write the report first")
    return json.loads(summary_file.read_text())


def _docs_block(slug: str, summary: dict[str, Any], run_name: str) -> str:
    system = summary["systems"][slug]
    revisions = summary["environment"].get("git_revisions") or ["unknown"]
    code = ", ".join(r[:7] for r in revisions)
    if summary["environment"].get("git_dirty"):
        code += " with uncommitted changes"
    lines = [
        "## Latest recorded run",
        "",
        f"Every claim of `{_cell(slug)}` as judged in the run `{_cell(run_name)}` "
        f"({'/'.join(system['presets'])} preset, {summary['written']}, code {code}), written by "
        f"`icml26 report {_cell(run_name)} --docs DOCS` from its `summary.json`; nothing in this "
        "section is written by hand. The headline is in bold; why each verdict is what it is "
        "stands in the run's `report.md`.",
        "",
        "| experiment | claim | kind | statement | criterion | ours [interval] | n | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in summary["claims"]:
        if c["experiment"].split(".", 1)[0] != slug:
            continue
        ours = _summary_value(c)
        claim = f"**{_cell(c['claim'])}**" if c["headline"] else _cell(c["claim"])
        cells = [
            _cell(f"{c['experiment']} ({c['preset']})"),
            claim,
            *(_cell(c[k]) for k in ("kind", "statement", "criterion")),
            _cell(ours),
            str(c["n_values"]),
            _cell(c["verdict"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_docs_results(run_dir: Path, docs_dir: Path) -> list[Path]:
    """Rewrite the "Latest recorded run" section of each system's docs page from ``run_dir``.

    For every system in the run's ``summary.json``, ``<docs_dir>/<slug>.md`` gets, between
    :data:`README_BEGIN` and :data:`README_END` (appended at the end on the first write), a
    table of every claim of that run with its value, interval, number of values and verdict,
    headed by the run's name, preset, date and code revision.

    Returns
    -------
    list of Path
        The pages rewritten (a system without a page is skipped).

    Raises
    ------
    ValueError
        When the run has no summary (write the report first).
    """
    summary = _load_summary(run_dir)
    written = []
    for slug in summary["systems"]:
        page = Path(docs_dir) / f"{slug}.md"
        if not page.is_file():
            continue
        text = page.read_text()
        block = _docs_block(slug, summary, Path(run_dir).as_posix())
        if README_BEGIN in text and README_END in text:
            before, rest = text.split(README_BEGIN, 1)
            after = rest.split(README_END, 1)[1]
        else:
            before, after = text.rstrip("\n") + "\n\n", "\n"
        atomic_write_text(page, f"{before}{README_BEGIN}\n{block}\n{README_END}{after}")
        written.append(page)
    return written


def write_readme_table(run_dir: Path, readme: Path) -> None:
    """Rewrite the results table of ``readme`` from ``run_dir``'s ``summary.json``.

    The table replaces the lines between :data:`README_BEGIN` and :data:`README_END`; one row
    per system: the headline claim, its verdict, the claim counts, and the run, preset and date.

    Raises
    ------
    ValueError
        When the run has no summary (write the report first) or the README lacks the markers.
    """
    summary = _load_summary(run_dir)
    text = Path(readme).read_text()
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no '{README_BEGIN}' ... '{README_END}' block")
    before, rest = text.split(README_BEGIN, 1)
    _, after = rest.split(README_END, 1)
    table = "\n".join(_readme_rows(summary, Path(run_dir).as_posix()))
    atomic_write_text(Path(readme), f"{before}{README_BEGIN}\n{table}\n{README_END}{after}")
