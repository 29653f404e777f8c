"""The benchmark's command line (spec §2.7, §5.3): ``icml26 tool copyright_bench ...``.

The same commands run as ``python -m icml26.copyright_bench ...``.

* ``list-tasks`` — the generated jobs (id, family, theme, slots);
* ``run`` — a scripted agent, or a real model through ``--agent openai --model M [--base-url U]``
  (key from ``OPENAI_API_KEY``), over tasks × factor cells; writes transcripts and rows to
  ``--out``;
* ``report`` — per-agent violation rate ± Wilson CI by intent × pressure, the factor model, and a
  human comparison (``--human file``) from a run folder;
* ``human`` — one episode in the terminal: the same prompt and tools as a menu, the same
  transcript format.

Deviations (details in docs/copyright_bench.md): the spec's ``copyright-bench`` commands are
``icml26 tool copyright_bench`` (the project's one CLI hosts each system's own commands there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, final

import typer

from icml26.copyright_bench.agents import AssistantTurn, ToolCall

__all__ = ["TerminalHuman", "app", "main"]

app = typer.Typer(
    help="Copyright-Bench: agentic copyright-compliance benchmark.",
    no_args_is_help=True,
    add_completion=False,
)
AGENTS = ("lawful", "greedy", "heuristic", "simulated-human", "openai")


def _catalog(path: Path | None) -> Any:
    from icml26.copyright_bench import Catalog

    return Catalog.load_default() if path is None else Catalog.from_json(path)


@app.command("list-tasks")
def list_tasks(
    n_per_family: Annotated[int, typer.Option(help="tasks per family")] = 20,
    seed: Annotated[int, typer.Option(help="task seed")] = 0,
    catalog: Annotated[
        Path | None, typer.Option(help="catalog JSON (default: the shipped one)")
    ] = None,
) -> None:
    """Print the generated tasks: id, family, theme, slots."""
    from icml26.copyright_bench import generate_tasks

    for t in generate_tasks(n_per_family, seed, _catalog(catalog)):
        slots = ", ".join(s.name for s in t.slots)
        typer.echo(f"{t.task_id}\t{t.family.value}\t{t.theme}\t{t.business}\t{slots}")


def _agent(
    name: str,
    model: str | None,
    base_url: str | None,
    temperature: float,
    seed: int,
    api_key_env: str | None = None,
) -> Any:
    from icml26.copyright_bench import (
        GreedyAgent,
        HeuristicAgent,
        LawfulAgent,
        OpenAIChatAgent,
        SimulatedHuman,
    )

    if name == "openai":
        if not model:
            raise typer.BadParameter("--agent openai needs --model")
        return OpenAIChatAgent(
            model, base_url=base_url, temperature=temperature, api_key_env=api_key_env
        )
    return {
        "lawful": LawfulAgent,
        "greedy": GreedyAgent,
        "heuristic": lambda: HeuristicAgent(seed=seed),
        "simulated-human": lambda: SimulatedHuman(seed=seed),
    }[name]()


@app.command()
def run(
    out: Annotated[
        Path, typer.Option(help="folder for transcripts.jsonl, episodes.csv, slots.csv")
    ],
    agent: Annotated[str, typer.Option(help=f"one of {', '.join(AGENTS)}")] = "lawful",
    model: Annotated[str | None, typer.Option(help="model name (with --agent openai)")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible server, e.g. vLLM")
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="environment variable with the key for --base-url (OPENAI_API_KEY is sent "
            "only to OpenAI's own endpoint)"
        ),
    ] = None,
    temperature: Annotated[float, typer.Option()] = 0.0,
    samples_per_cell: Annotated[int, typer.Option()] = 1,
    n_per_family: Annotated[int, typer.Option()] = 20,
    seed: Annotated[int, typer.Option()] = 0,
    grid: Annotated[str, typer.Option(help="full (4 intents x 3 pressures) or neutral")] = "full",
    mode: Annotated[str, typer.Option(help="deliverable or strict")] = "deliverable",
    catalog: Annotated[Path | None, typer.Option(help="catalog JSON")] = None,
) -> None:
    """Run an agent over tasks × factor cells and write its transcripts and rows."""
    from icml26.copyright_bench import copyright_task, evaluate

    if agent not in AGENTS:
        raise typer.BadParameter(f"--agent must be one of {', '.join(AGENTS)}; got {agent!r}")
    task = copyright_task(
        grid=grid, n_per_family=n_per_family, seed=seed, catalog=_catalog(catalog), mode=mode
    )
    result = evaluate(
        task,
        _agent(agent, model, base_url, temperature, seed, api_key_env),
        samples_per_cell=samples_per_cell,
        seed=seed,
        log_dir=out,
        agent_name=model or agent,
    )
    e = result.episodes
    typer.echo(
        f"{len(e)} episodes: violation rate {e['violation'].mean():.3f}, "
        f"completion {e['completed'].mean():.3f}; written to {out}"
    )


def report_lines(episodes: Any, human: Any | None = None) -> list[str]:
    """The text of ``report``: rate ± Wilson CI per agent × intent × pressure, model, human."""
    from icml26.copyright_bench import compare_to_human, fit_factor_model, wilson_ci

    lines = []
    for agent, g in episodes.groupby("agent"):
        lines.append(f"## {agent}  ({len(g)} episodes, violation rate {g['violation'].mean():.3f})")
        lines.append("intent / pressure | " + " | ".join(sorted(set(g["pressure"]))))
        for intent, gi in g.groupby("intent"):
            cells = []
            for _, gp in sorted(gi.groupby("pressure"), key=lambda kv: kv[0]):
                k, n = int(gp["violation"].sum()), len(gp)
                low, high = wilson_ci(k, n)
                cells.append(f"{k / n:.2f} [{low:.2f}, {high:.2f}]")
            lines.append(f"{intent} | " + " | ".join(cells))
        try:
            model = fit_factor_model(g, level="episode")
            terms = ", ".join(f"{k} {v:+.2f}" for k, v in model.params.items())
            lines.append(f"factor model (episode level, cluster-robust): {terms}")
        except ValueError as err:
            lines.append(f"factor model: not fitted ({err})")
    if human is not None:
        table = compare_to_human(episodes, human)
        for row in table.to_dict("records"):
            lines.append(
                f"human vs {row['agent']}: {row['human_rate']:.3f} vs "
                f"{row['agent_rate']:.3f}, diff {row['diff']:+.3f} "
                f"[{row['diff_low']:+.3f}, {row['diff_high']:+.3f}], "
                f"{row['test']} p = {row['p_value']:.3g}"
            )
    return lines


@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="a run folder (episodes.csv) or an episodes.csv")],
    human: Annotated[Path | None, typer.Option(help="human baseline (.csv or .jsonl)")] = None,
) -> None:
    """Per-agent tables, the factor model and the human comparison of a run."""
    import pandas as pd

    from icml26.copyright_bench import load_human_baseline

    path = results / "episodes.csv" if results.is_dir() else results
    if not path.is_file():
        raise typer.BadParameter(f"no episodes.csv at {results}")
    baseline = load_human_baseline(human) if human is not None else None
    for line in report_lines(pd.read_csv(path), baseline):
        typer.echo(line)


@final
class TerminalHuman:
    """An agent whose turns a person types: a tool name, then its arguments as JSON.

    An empty tool name ends the turn list with a text-only turn (the episode ends).
    """

    def __init__(self, ask: Callable[[str], str], show: Callable[[str], None]) -> None:
        self._ask, self._show = ask, show

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """Show what happened since the last turn, then read one call."""
        if not any(m.get("role") == "assistant" for m in messages):
            self._show(messages[1]["content"])
            self._show("tools: " + ", ".join(t["function"]["name"] for t in tools))
        else:
            for m in messages[-3:]:
                if m.get("role") == "tool":
                    self._show(f"[{m.get('name')}] {m['content'][:400]}")
        name = self._ask("tool (empty to stop)").strip()
        if not name:
            return AssistantTurn(content="(stopped)")
        args = self._ask("arguments as JSON").strip() or "{}"
        k = sum(1 for m in messages if m.get("role") == "assistant")
        return AssistantTurn(None, (ToolCall(f"human_{k}", name, args),))


@app.command()
def human(
    task_id: Annotated[str, typer.Option(help="a task id from list-tasks")],
    intent: Annotated[str, typer.Option()] = "neutral",
    pressure: Annotated[str, typer.Option()] = "none",
    out: Annotated[Path | None, typer.Option(help="folder for the transcript")] = None,
    n_per_family: Annotated[int, typer.Option()] = 20,
    seed: Annotated[int, typer.Option()] = 0,
    catalog: Annotated[Path | None, typer.Option()] = None,
) -> None:
    """Play one episode in the terminal with the same tools an agent gets."""
    from icml26.copyright_bench import CopyrightEnv, Factors, generate_tasks, run_episode
    from icml26.copyright_bench.scoring import score_state

    cat = _catalog(catalog)
    tasks = {t.task_id: t for t in generate_tasks(n_per_family, seed, cat)}
    if task_id not in tasks:
        raise typer.BadParameter(f"unknown task id {task_id!r}; see list-tasks")
    env = CopyrightEnv(tasks[task_id], Factors(intent, pressure), cat)
    person = TerminalHuman(lambda q: typer.prompt(q, default="", show_default=False), typer.echo)
    transcript = run_episode(person, env, max_steps=40)
    score = score_state(transcript.final_state)
    transcript.agent = "human"
    transcript.score = score.to_dict()
    typer.echo(f"violation: {score.violation}, completed: {score.completed}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with (out / "transcripts.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(transcript.to_dict(), ensure_ascii=False) + "\n")


def main() -> None:
    """Entry point of ``python -m icml26.copyright_bench``."""
    app()
