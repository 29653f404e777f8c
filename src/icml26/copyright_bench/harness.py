"""An inspect_ai-like harness: ``Task(dataset, solver, scorer)`` built from the generator.

Mirrors inspect_ai's shape (a dataset of :class:`Sample` s, a solver that runs the agent loop, a
scorer) without depending on it; :func:`~icml26.copyright_bench.runner.evaluate` runs a
:class:`Task` with an agent. The optional adapter to real inspect-ai is described in the docs.

The loop (spec §2.5): ``messages = [system, user]``; for up to ``max_steps`` turns the agent acts;
each tool call runs in order and its observation is appended as a tool message carrying the
call's ``tool_call_id``; a ``submit`` call ends the episode; a turn with text only ends it as an
*implicit submit*; running out of turns ends it as *truncated*.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, final

from icml26.copyright_bench.agents import Agent, EpisodeSeeded
from icml26.copyright_bench.catalog import Catalog
from icml26.copyright_bench.env import MODES, CopyrightEnv
from icml26.copyright_bench.families import Family, parse_family
from icml26.copyright_bench.scoring import EpisodeScore, score_state
from icml26.copyright_bench.tasks import (
    Factors,
    TaskInstance,
    factor_grid,
    generate_tasks,
    render_prompt,
)
from icml26.core import check_fields
from icml26.core.validation import check_one_of, check_positive_int

__all__ = [
    "AgentLoop",
    "Sample",
    "Scorer",
    "Task",
    "Transcript",
    "agent_loop",
    "compliance_scorer",
    "copyright_task",
    "run_episode",
]


_DEEP = ("messages", "events", "final_state")  # Transcript fields checked one level deep


@dataclass
class Transcript:
    """Everything about one episode: prompts, every call and observation, timings, final state.

    ``turn_format_errors[k]`` is the number of unparseable calls the client saw in turn ``k``;
    ``events`` has one entry per executed tool call.
    """

    task_id: str
    factors: dict[str, str]
    mode: str
    agent: str
    episode_seed: int
    sample: int
    messages: list[dict[str, Any]]
    events: list[dict[str, Any]]
    turn_format_errors: list[int]
    final_state: dict[str, Any]
    usage: dict[str, int]
    seconds: float
    score: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # The conversation, events and final state are checked one level deep: they are built by
        # the loop, and walking every nested value of every episode was half of a benchmark's
        # run time.
        check_fields(self, skip=_DEEP)
        for name in _DEEP:
            value = getattr(self, name)
            kind = dict if name == "final_state" else list
            if not isinstance(value, kind) or (
                kind is list and not all(isinstance(v, dict) for v in value)
            ):
                what = "a dict" if kind is dict else "a list of dicts"
                raise TypeError(f"Transcript: {name} must be {what}; got {type(value).__name__}.")
        if self.seconds < 0:
            raise ValueError(f"Transcript: seconds must be >= 0; got {self.seconds}.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict (one JSONL line)."""
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transcript:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, dict):
            raise TypeError(
                f"Transcript.from_dict: data must be a dict; got {type(data).__name__}."
            )
        names = {f.name for f in dataclasses.fields(cls)}
        if not names >= set(data) >= names - {"score"}:
            keys = sorted(names)
            raise ValueError(
                f"Transcript.from_dict: data must hold the keys {keys}; got {sorted(data)}."
            )
        return cls(**data)


def run_episode(
    agent: Agent, env: CopyrightEnv, max_steps: int = 20, episode_seed: int = 0, sample: int = 0
) -> Transcript:
    """Run the agent loop on ``env`` and return the transcript (spec §2.5).

    Parameters
    ----------
    agent
        Anything with ``act(messages, tools)``; an :class:`EpisodeSeeded` agent is handed
        ``episode_seed`` first.
    env
        A fresh environment.
    max_steps
        Most assistant turns (``>= 1``).
    """
    max_steps = check_positive_int("max_steps", max_steps, owner="run_episode")
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"run_episode: agent must have act(messages, tools); got {agent!r}.")
    if not isinstance(env, CopyrightEnv):
        raise TypeError(f"run_episode: env must be a CopyrightEnv; got {type(env).__name__}.")
    if isinstance(agent, EpisodeSeeded):
        agent.begin_episode(episode_seed)
    start = time.perf_counter()
    system, user = render_prompt(env.task, env.factors, env.catalog)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    tools = env.tool_specs()
    events: list[dict[str, Any]] = []
    turn_errors: list[int] = []
    usage: dict[str, int] = {}
    for turn_index in range(max_steps):
        turn = agent.act(messages, tools)
        turn_errors.append(int(turn.format_errors))
        env.add_format_errors(int(turn.format_errors))
        for key, value in (turn.usage or {}).items():
            if isinstance(value, int):
                usage[key] = usage.get(key, 0) + value
        messages.append(turn.to_message())
        if not turn.tool_calls:
            env.finish(implicit=True)
            break
        for call in turn.tool_calls:
            t0 = time.perf_counter()
            obs = env.step(call.name, call.arguments)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.name,
                    "content": obs.to_content(),
                }
            )
            events.append(
                {
                    "turn": turn_index,
                    "tool_call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                    "ok": obs.ok,
                    "kind": obs.kind,
                    "seconds": time.perf_counter() - t0,
                }
            )
            if env.done:
                break
        if env.done:
            break
    env.finish(truncated=True)  # no-op when the episode already ended
    return Transcript(
        task_id=env.task.task_id,
        factors=env.factors.to_dict(),
        mode=env.mode,
        agent=type(agent).__name__,
        episode_seed=int(episode_seed),
        sample=int(sample),
        messages=messages,
        events=events,
        turn_format_errors=turn_errors,
        final_state=env.state,
        usage=usage,
        seconds=time.perf_counter() - start,
    )


@dataclass(frozen=True)
class Sample:
    """One dataset entry: an episode's task and prompt condition (inspect_ai's ``Sample``)."""

    id: str
    input: tuple[str, str]  # (system, user) prompts
    target: str
    metadata: dict[str, Any]
    task: TaskInstance
    factors: Factors


@final
class AgentLoop:
    """The solver: runs one sample's episode with an agent (see :func:`agent_loop`)."""

    def __init__(self, agent: Agent | None = None, max_steps: int = 20) -> None:
        self.agent = agent
        self.max_steps = check_positive_int("max_steps", max_steps, owner="agent_loop")

    def __call__(
        self,
        sample: Sample,
        catalog: Catalog,
        mode: str = "deliverable",
        agent: Agent | None = None,
        episode_seed: int = 0,
        sample_index: int = 0,
    ) -> Transcript:
        """Run ``sample`` with ``agent`` (or the agent bound at construction)."""
        agent = agent if agent is not None else self.agent
        if agent is None:
            raise ValueError("agent_loop: no agent given (bind one or pass agent=...).")
        env = CopyrightEnv(sample.task, sample.factors, catalog, mode=mode)
        return run_episode(agent, env, self.max_steps, episode_seed, sample_index)


def agent_loop(agent: Agent | None = None, max_steps: int = 20) -> AgentLoop:
    """The solver of a :class:`Task`: the spec §2.5 loop with at most ``max_steps`` turns."""
    return AgentLoop(agent, max_steps)


@final
class Scorer:
    """Scores a transcript from its final environment state (see :func:`compliance_scorer`)."""

    def __init__(self, mode: str = "deliverable") -> None:
        if mode not in MODES:
            raise ValueError(f"compliance_scorer: mode must be one of {MODES!r}; got {mode!r}.")
        self.mode = mode

    def __call__(self, transcript: Transcript) -> EpisodeScore:
        """The episode's :class:`EpisodeScore`."""
        return score_state(transcript.final_state, self.mode)


def compliance_scorer(mode: str = "deliverable") -> Scorer:
    """The scorer of a :class:`Task` (spec §2.6) in ``mode`` ``"deliverable"`` or ``"strict"``."""
    return Scorer(mode)


@dataclass(frozen=True)
class Task:
    """inspect_ai-like task: a dataset, a solver and a scorer, plus the catalog they share."""

    dataset: tuple[Sample, ...]
    solver: AgentLoop
    scorer: Scorer
    catalog: Catalog
    name: str = "copyright_bench"
    tasks: tuple[TaskInstance, ...] = field(default=())


def _grid(grid: str | Sequence[Factors]) -> list[Factors]:
    if isinstance(grid, str):
        if grid == "full":
            return factor_grid()
        if grid == "neutral":
            return [Factors("neutral", "none")]
        raise ValueError(f"grid must be 'full', 'neutral' or a list of Factors; got {grid!r}.")
    if not isinstance(grid, Iterable):
        raise TypeError(f"grid must be 'full', 'neutral' or a list of Factors; got {grid!r}.")
    grid = list(grid)
    if not grid or not all(isinstance(f, Factors) for f in grid):
        raise TypeError("grid must be 'full', 'neutral' or a non-empty list of Factors.")
    return grid


def build_task(
    tasks: Sequence[TaskInstance],
    grid: str | Sequence[Factors],
    catalog: Catalog,
    mode: str = "deliverable",
    max_steps: int = 20,
) -> Task:
    """A :class:`Task` over given task instances × factor cells."""
    owner = "build_task"
    if isinstance(tasks, str) or not isinstance(tasks, Iterable):
        raise TypeError(f"{owner}: tasks must be a list of TaskInstance; got {tasks!r}.")
    tasks = list(tasks)
    if not all(isinstance(t, TaskInstance) for t in tasks):
        raise TypeError(f"{owner}: tasks must hold TaskInstance objects.")
    if not isinstance(catalog, Catalog):
        raise TypeError(f"{owner}: catalog must be a Catalog; got {type(catalog).__name__}.")
    check_one_of("mode", mode, MODES, owner=owner)
    max_steps = check_positive_int("max_steps", max_steps, owner=owner)
    cells = _grid(grid)
    dataset = []
    for task in tasks:
        for factors in cells:
            dataset.append(
                Sample(
                    id=f"{task.task_id}|{factors.cell}|{factors.policy}|{factors.license_visibility}",
                    input=render_prompt(task, factors, catalog),
                    target="lawful_completion",
                    metadata={
                        "task_id": task.task_id,
                        "family": task.family.value,
                        "theme": task.theme,
                        **factors.to_dict(),
                    },
                    task=task,
                    factors=factors,
                )
            )
    return Task(
        tuple(dataset),
        agent_loop(None, max_steps),
        compliance_scorer(mode),
        catalog,
        tasks=tuple(tasks),
    )


def copyright_task(
    families: Iterable[Family | str] = tuple(Family),
    grid: str | Sequence[Factors] = "full",
    n_per_family: int = 20,
    seed: int = 0,
    catalog: Catalog | None = None,
    mode: str = "deliverable",
    max_steps: int = 20,
) -> Task:
    """The benchmark as a :class:`Task`: generated tasks of ``families`` × the factor ``grid``.

    Parameters
    ----------
    families
        Task families to include (default: all three).
    grid
        ``"full"`` (4 intents × 3 pressures), ``"neutral"`` (one cell) or a list of
        :class:`Factors`.
    n_per_family, seed, catalog
        Passed to :func:`generate_tasks`.
    mode
        Scoring mode, ``"deliverable"`` or ``"strict"``.
    max_steps
        Turn limit of the solver.

    Examples
    --------
    >>> len(copyright_task(n_per_family=2).dataset)   # 6 tasks x 12 cells
    72
    """
    if not isinstance(families, str | Iterable):
        raise TypeError(f"copyright_task: families must be a list of families; got {families!r}.")
    try:
        wanted = [parse_family(f) for f in ([families] if isinstance(families, str) else families)]
    except ValueError as err:
        raise ValueError(f"copyright_task: families: {err}") from None
    if catalog is not None and not isinstance(catalog, Catalog):
        raise TypeError(f"copyright_task: catalog must be a Catalog; got {type(catalog).__name__}.")
    if not wanted:
        raise ValueError("copyright_task: families must name at least one family.")
    catalog = catalog or Catalog.load_default()
    tasks = [t for t in generate_tasks(n_per_family, seed, catalog) if t.family in wanted]
    return build_task(tasks, grid, catalog, mode, max_steps)
