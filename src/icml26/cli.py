"""The ``icml26`` command: list systems, run reproductions, write the report."""

from __future__ import annotations

import difflib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table as RichTable

from icml26.core.claims import Status
from icml26.core.experiment import PRESETS, Experiment, Registry, discover
from icml26.core.imports import extra_requirements
from icml26.core.report import summarize, write_docs_results, write_readme_table, write_report
from icml26.core.results import TaskRecord
from icml26.core.runner import (
    BACKENDS,
    RecordWriteError,
    RunFolderBusyError,
    Task,
    available_cores,
    plan,
    run_tasks,
)
from icml26.core.tracking import TRACKERS

app = typer.Typer(
    help="Working implementations and small-scale reproductions of ICML 2026 systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
# The docs pages: in a source checkout, or where a wheel installs its data files.
DOCS_DIRS = (Path(__file__).resolve().parents[2] / "docs", Path(sys.prefix) / "share/icml26/docs")
STATUS_STYLE = {
    Status.REPRODUCED: "green",
    Status.NOT_REPRODUCED: "red",
    Status.INCONCLUSIVE: "yellow",
    Status.NOT_MEASURED: "dim",
    Status.TESTBED_INVALID: "magenta",
    Status.HOLDS: "green",
    Status.BROKEN: "bold red",
    Status.FAILS: "magenta",
}

PresetOpt = Annotated[str, typer.Option("--preset", "-p", help=f"One of {', '.join(PRESETS)}.")]
SeedsOpt = Annotated[
    int | None, typer.Option("--seeds", "-n", help="Seeds per experiment (default: its own).")
]
BackendOpt = Annotated[str, typer.Option(help=f"Task backend: {' | '.join(BACKENDS)}.")]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs", "-j", help="Tasks run at once (default: the cores this process may use)."
    ),
]
OutOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Run folder (default: runs/<preset>).")
]
TrackOpt = Annotated[
    str | None,
    typer.Option(
        "--track",
        help="Log every record to a tracker: mlflow (MLFLOW_TRACKING_URI, else <out>/mlflow.db).",
    ),
]
ReuseStaleOpt = Annotated[
    bool,
    typer.Option(
        "--reuse-stale", help="Keep finished records made by older code instead of re-running."
    ),
]


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _registry() -> Registry:
    return discover()


def _experiment(registry: Registry, name: str) -> Experiment:
    if "." not in name and registry.of_system(name):
        names = ", ".join(e.name for e in registry.of_system(name))
        _fail(
            f"{name} is a system; run all of it with `icml26 reproduce {name}`, or one of: {names}"
        )
    try:
        experiment = registry.get(name)
    except KeyError as err:
        close = difflib.get_close_matches(name, [e.name for e in registry], n=1, cutoff=0.8)
        if close:
            _fail(f"unknown experiment {name!r}; did you mean {close[0]!r}? (icml26 list)")
        _fail(str(err.args[0]))
    reason = experiment.unavailable_reason
    if reason:
        _fail(f"{experiment.name} is {reason}")
    return experiment


def _check_systems(registry: Registry, slugs: list[str]) -> None:
    for slug in slugs:
        if slug in registry.unavailable:
            _fail(f"{slug} is {registry.unavailable[slug]}")
        if not registry.of_system(slug):
            known = sorted({*registry.systems(), *registry.unavailable})
            close = difflib.get_close_matches(slug, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            _fail(f"unknown system {slug!r}; {hint}choose from: {', '.join(known)}")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        _fail(f"unknown {name} {value!r}; choose from: {', '.join(choices)}")


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _parse_sets(items: list[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not (key and eq):
            _fail(f"--set expects key=value; got {item!r}")
        overrides[key.strip()] = value.strip()
    return overrides


def _run(
    tasks: list[Task], out: Path, backend: str, jobs: int | None, reuse_stale: bool
) -> list[TaskRecord]:
    jobs = available_cores() if jobs is None else jobs
    if jobs < 1:
        _fail(f"--jobs must be >= 1; got {jobs}")
    if not str(out).strip() or out == Path():
        _fail("--out needs a folder name (the run folder is not the current folder)")
    if out.exists() and not out.is_dir():
        _fail(f"--out {out} is a file, not a run folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".icml26-write-check"
        probe.touch()
        probe.unlink()
    except OSError as err:
        _fail(f"--out {out} is not writable: {err.strerror}")
    try:
        return run_tasks(tasks, out, backend=backend, jobs=jobs, reuse_stale=reuse_stale)
    except (ValueError, RunFolderBusyError) as err:  # e.g. a GPU task here, or a busy folder
        _fail(str(err))
    except RecordWriteError as err:  # e.g. a full disk: finished records stay, the run resumes
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


def _track(tracker: str | None, out: Path, records: list[TaskRecord]) -> None:
    if tracker is None:
        return
    from icml26.core.imports import MissingExtraError
    from icml26.core.tracking import default_tracking_uri, track_mlflow

    artifacts = [out / name for name in ("report.md", "report.html", "summary.json", "figures")]
    try:
        run_id = track_mlflow(out, records, artifacts=artifacts)
    except MissingExtraError as err:
        _fail(str(err))
    console.print(
        f"mlflow: {len(records)} record(s) under run {run_id} at {default_tracking_uri(out)}"
    )


def _exit_if_failed(records: list[TaskRecord], out: Path) -> None:
    failed = [r for r in records if not r.ok]
    if failed:
        typer.echo(f"{len(failed)} task(s) failed; their tracebacks are in {out}", err=True)
        raise typer.Exit(1)


MAX_SEEDS = 1000


def _plan(experiment: Experiment, preset: str, seeds: int | None, overrides=None) -> list[Task]:
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        _fail(f"--seeds must be in [1, {MAX_SEEDS}]; got {seeds}")
    try:
        return plan(experiment, preset, experiment.seeds if seeds is None else seeds, overrides)
    except (ValueError, TypeError) as err:
        _fail(str(err))


def _print_verdicts(out: Path, registry: Registry, names: set[str]) -> None:
    table = RichTable("experiment", "check", "kind", "paper", "ours", "verdict", "why")
    for result in summarize(out, registry):
        if result.experiment not in names:
            continue
        for v in result.verdicts:
            style = STATUS_STYLE[v.status]
            check = v.claim.id + (" (headline)" if v.claim.headline else "")
            table.add_row(
                result.experiment, check, v.claim.kind, v.claim.paper, v.ours,
                f"[{style}]{v.status.value}[/{style}]", v.reason,
            )  # fmt: skip
        for record in result.failed:
            last = (record.error or "").strip().splitlines()[-1:]
            table.add_row(result.experiment, "-", "-", "-", "-", "[red]task failed[/red]", *last)
    console.print(table)


@app.command("list")
def list_(
    slugs: Annotated[
        list[str] | None, typer.Argument(help="Only these systems (default: all).")
    ] = None,
    runs: Annotated[Path, typer.Option(help="Run folder whose verdicts are shown.")] = Path(
        "runs/quick"
    ),
    long: Annotated[bool, typer.Option("--long", "-l", help="Also show each title.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the experiments (ids you can run), their claims and latest verdicts."""
    registry = _registry()
    _check_systems(registry, slugs or [])
    verdicts = (
        {r.experiment: r.verdicts for r in summarize(runs, registry)} if runs.exists() else {}
    )
    rows = []
    for experiment in registry:
        if slugs and experiment.system not in slugs:
            continue
        found = verdicts.get(experiment.name)
        if experiment.unavailable_reason:
            status = experiment.unavailable_reason
        elif found is None:
            status = "not run"
        else:
            claims = [v for v in found if v.claim.kind == "claim"]
            n_ok = sum(v.status is Status.REPRODUCED for v in claims)
            status = f"{n_ok}/{len(claims)} claims reproduced"
        rows.append(
            {
                "experiment": experiment.name,
                "title": experiment.title,
                "claims": sum(c.kind == "claim" for c in experiment.claims),
                "checks": len(experiment.claims),
                "status": status,
            }
        )
    unavailable = {s: why for s, why in registry.unavailable.items() if not slugs or s in slugs}
    if as_json:
        typer.echo(json.dumps({"experiments": rows, "unavailable": unavailable}, indent=2))
        return
    if not rows and not unavailable:
        console.print("No system is registered yet.")
        return
    width = max([len(r["experiment"]) for r in rows] + [10])
    table = RichTable(box=None, pad_edge=False)
    table.add_column("experiment", no_wrap=True, min_width=width)  # ids stay whole
    if long:
        table.add_column("title")
    table.add_column("claims", justify="right", no_wrap=True)
    table.add_column(f"status ({runs})")
    for slug, reason in sorted(unavailable.items()):
        table.add_row(f"{slug}.*", *([""] if long else []), "", reason)
    for r in rows:
        title = [r["title"]] if long else []
        table.add_row(r["experiment"], *title, str(r["claims"]), r["status"])
    console.print(table)


@app.command()
def show(slug: Annotated[str, typer.Argument(help="System slug, e.g. rex.")]) -> None:
    """Show a system's paper, experiments, claims, presets and docs page."""
    registry = _registry()
    _check_systems(registry, [slug])
    experiments = registry.of_system(slug)
    console.print(f"[bold]{slug}[/bold]: {experiments[0].paper}")
    docs = next((d / f"{slug}.md" for d in DOCS_DIRS if (d / f"{slug}.md").is_file()), None)
    console.print(f"docs: {docs or f'docs/{slug}.md in the icml26 source tree'}")
    for experiment in experiments:
        console.rule(f"{experiment.name}: {experiment.title}")
        if experiment.description:
            console.print(experiment.description)
        claims = RichTable("claim", "statement", "metric", "criterion", "paper", "where")
        for c in experiment.claims:
            claims.add_row(c.id, c.statement, c.metric, c.criterion, c.paper, c.where)
        console.print(claims)
        for preset in PRESETS:
            console.print(f"[bold]{preset}[/bold]: {experiment.presets[preset]}")
        needs = ", ".join([*extra_requirements(experiment.install_extra), *experiment.requires])
        needs = f"icml26[{experiment.install_extra}]: {needs}" if needs else "core only"
        console.print(f"requires: {needs}; resources: {experiment.resources}")
        if experiment.unavailable_reason:
            console.print(f"[red]{experiment.unavailable_reason}[/red]")


@app.command()
def run(
    experiment: Annotated[str, typer.Argument(help="Experiment name, e.g. rex.roundtrip.")],
    preset: PresetOpt = "quick",
    seeds: SeedsOpt = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field: key=value.")
    ] = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = None,
    out: OutOpt = None,
    reuse_stale: ReuseStaleOpt = False,
    track: TrackOpt = None,
) -> None:
    """Run one experiment (all its seeds) and print the verdicts of its claims."""
    registry = _registry()
    exp = _experiment(registry, experiment)
    _check_choice("preset", preset, PRESETS)
    _check_choice("backend", backend, BACKENDS)
    if track is not None:
        _check_choice("tracker", track, TRACKERS)
    overrides = _parse_sets(set_ or [])
    tasks = _plan(exp, preset, seeds, overrides)
    out = out or Path("runs") / preset
    records = _run(tasks, out, backend, jobs, reuse_stale)
    _print_verdicts(out, registry, {exp.name})
    console.print(f"records in {out}; `icml26 report {out}` writes the report.")
    _track(track, out, records)
    _exit_if_failed(records, out)


@app.command()
def reproduce(
    slugs: Annotated[list[str] | None, typer.Argument(help="Systems (default: all).")] = None,
    preset: PresetOpt = "quick",
    seeds: SeedsOpt = None,
    backend: BackendOpt = "local",
    jobs: JobsOpt = None,
    out: OutOpt = None,
    reuse_stale: ReuseStaleOpt = False,
    track: TrackOpt = None,
) -> None:
    """Run every experiment of the given systems (default: all), then write the report."""
    registry = _registry()
    _check_choice("preset", preset, PRESETS)
    _check_choice("backend", backend, BACKENDS)
    if track is not None:
        _check_choice("tracker", track, TRACKERS)
    _check_systems(registry, slugs or [])
    experiments = [e for e in registry if not slugs or e.system in slugs]
    if not slugs:
        for slug, reason in sorted(registry.unavailable.items()):
            console.print(f"[yellow]skipped {slug}: {reason}[/yellow]")
    skipped = {e.name: why for e in experiments if (why := e.unavailable_for(preset))}
    for name, why in skipped.items():
        console.print(f"[yellow]skipped {name}: {why}[/yellow]")
    experiments = [e for e in experiments if e.name not in skipped]
    if any(e.resources.gpus for e in experiments) and not _has_cuda():
        for e in [e for e in experiments if e.resources.gpus]:
            console.print(
                f"[yellow]skipped {e.name}: needs a GPU and this machine has none[/yellow]"
            )
        experiments = [e for e in experiments if not e.resources.gpus]
    tasks = [t for e in experiments for t in _plan(e, preset, seeds)]
    out = out or Path("runs") / preset
    records = _run(tasks, out, backend, jobs, reuse_stale)
    _print_verdicts(out, registry, {e.name for e in experiments})
    md, html = write_report(out, registry)
    console.print(f"report: {md} and {html} (+ summary.json, claims.csv)")
    _track(track, out, records)
    _exit_if_failed(records, out)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    readme: Annotated[
        Path | None,
        typer.Option(
            "--readme",
            help="Also rewrite the results table of this README (between its "
            "'<!-- results:begin -->' and '<!-- results:end -->' lines) from the run.",
        ),
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(
            "--docs",
            help="Also rewrite the 'Latest recorded run' section of each system's page in this "
            "docs folder (<slug>.md) from the run.",
        ),
    ] = None,
) -> None:
    """Write report.md and report.html for a run folder (and, with --readme / --docs, the README
    table and the docs pages' results sections)."""
    if not run_dir.is_dir():
        _fail(f"no run folder at {run_dir}")
    if docs is not None and not docs.is_dir():
        _fail(f"no docs folder at {docs}")
    try:
        md, html = write_report(run_dir, _registry())
        if readme is not None:
            write_readme_table(run_dir, readme)
        pages = write_docs_results(run_dir, docs) if docs is not None else []
    except ValueError as err:  # an empty folder, a README without the markers
        _fail(str(err))
    console.print(f"report: {md} and {html} (+ summary.json, claims.csv)")
    if readme is not None:
        console.print(f"README results table rewritten from {run_dir}: {readme}")
    if docs is not None:
        console.print(f"results sections of {len(pages)} docs page(s) in {docs} rewritten")


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def tool(
    ctx: typer.Context,
    slug: Annotated[
        str | None, typer.Argument(help="System slug whose own commands to run.")
    ] = None,
) -> None:
    """Run a system's own commands, e.g. ``train-standin NAME`` or real-model runs.

    ``icml26 tool SLUG train-standin NAME [--out DIR]`` retrains a shipped stand-in reproducibly
    (and resumes an interrupted run); everything else after SLUG goes to that system's command
    line (``icml26.<slug>.cli``): ``icml26 tool SLUG --help``.
    """
    import importlib

    from icml26.core.standins import standins_of

    registry = _registry()
    if slug is None or slug in ("--help", "-h"):
        _list_tools(registry)
        return
    _check_systems(registry, [slug])
    args = list(ctx.args)
    standins = standins_of(slug)
    if args[:1] == ["train-standin"]:
        _train_standin(slug, standins, args[1:])
        return
    try:
        module = importlib.import_module(f"icml26.{slug}.cli")
    except ModuleNotFoundError as err:
        if err.name != f"icml26.{slug}.cli":
            raise
        module = None
    if module is None or args[:1] in (["--help"], ["-h"], []):
        console.print(f"icml26 tool {slug} commands:")
        if standins:
            names = ", ".join(sorted(standins))
            console.print(
                f"  train-standin NAME [--out DIR]   retrain a shipped stand-in ({names})"
            )
        if module is not None:
            console.print(f"  (and the commands of icml26.{slug}.cli below)")
            module.app(args=["--help"], prog_name=f"icml26 tool {slug}", standalone_mode=False)
        elif not standins:
            _fail(f"{slug} has no commands of its own")
        return
    module.app(args=args, prog_name=f"icml26 tool {slug}")


def _list_tools(registry: Registry) -> None:
    """``icml26 tool`` without a system: every system's own commands."""
    import importlib.util

    from icml26.core.standins import standins_of

    console.print("usage: icml26 tool SLUG COMMAND ...   (icml26 tool SLUG --help for details)")
    for slug in registry.systems():
        commands = []
        names = sorted(standins_of(slug))
        if names:
            commands.append(f"train-standin {{{','.join(names)}}}")
        try:
            has_cli = importlib.util.find_spec(f"icml26.{slug}.cli") is not None
        except ModuleNotFoundError:  # a registry of systems outside the package (tests)
            has_cli = False
        if has_cli:
            commands.append(f"its own commands (icml26.{slug}.cli)")
        if commands:
            console.print(f"  {slug}: " + "; ".join(commands))


def _train_standin(slug: str, standins: dict, args: list[str]) -> None:
    """``train-standin NAME [--out DIR]``: retrain one shipped stand-in and save it."""
    from icml26.core.standins import train_standin

    out = None
    if "--out" in args:
        at = args.index("--out")
        if at + 1 >= len(args):
            _fail("train-standin: --out needs a folder")
        out = Path(args[at + 1])
        args = args[:at] + args[at + 2 :]
    if len(args) != 1 or args[0] not in standins:
        choices = ", ".join(sorted(standins)) or "(none)"
        _fail(f"usage: icml26 tool {slug} train-standin NAME [--out DIR]; NAME is one of {choices}")
    stem = train_standin(standins[args[0]], out, progress=True)
    console.print(f"saved {stem}.safetensors and {stem}.json")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"icml26 {version('icml26')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = None,
) -> None:
    """Working implementations and small-scale reproductions of ICML 2026 systems."""


def main() -> None:
    """Console-script entry point."""
    # Weight-loading and download bars of third-party libraries would interleave with the run's
    # own progress; task warnings go to <run>/warnings.log (see core.runner.execute).
    for name, value in (("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TRANSFORMERS_VERBOSITY", "error"),
                        ("TQDM_DISABLE", "1")):  # fmt: skip
        os.environ.setdefault(name, value)
    logging.basicConfig(
        level=logging.WARNING, format="%(message)s", handlers=[RichHandler(show_path=False)]
    )
    logging.getLogger("icml26.core.runner").setLevel(logging.INFO)  # the resume summary
    app()
