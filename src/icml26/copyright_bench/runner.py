"""Running the benchmark: every sample × ``samples_per_cell``, episode and slot rows, transcripts.

Each episode's seed is derived from ``(seed, task index, cell index, sample)`` with numpy's
``SeedSequence``, so an episode can be recomputed alone and does not depend on the order the
episodes run in. Transcripts go to ``<log_dir>/transcripts.jsonl`` (one JSON object per line) and
the rows to ``episodes.csv`` / ``slots.csv`` beside it.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icml26.copyright_bench.agents import Agent
from icml26.copyright_bench.catalog import Catalog
from icml26.copyright_bench.harness import Task, Transcript, build_task
from icml26.copyright_bench.scoring import EpisodeScore, SlotScore
from icml26.copyright_bench.tasks import Factors, TaskInstance
from icml26.core import Progress, progress_reporter
from icml26.core.validation import check_positive_int

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalResult", "episode_seed", "evaluate", "read_transcripts", "run_benchmark"]


@dataclass
class EvalResult:
    """Rows and transcripts of a run.

    ``episodes`` has one row per episode (agent, task, factors, sample and every
    :class:`~icml26.copyright_bench.scoring.EpisodeScore` field); ``slots`` one row per filled slot
    (the unit of the slot-level factor model); ``log_path`` the JSONL file, if written.
    """

    episodes: pd.DataFrame
    slots: pd.DataFrame
    transcripts: list[Transcript]
    log_path: Path | None = None


def episode_seed(seed: int, task_index: int, cell_index: int, sample: int) -> int:
    """The seed of one episode: 63 bits of BLAKE2b of ``(seed, task, cell, sample)``.

    All four are integers in ``[0, 2**63)``.
    """
    for name, value in (
        ("seed", seed),
        ("task_index", task_index),
        ("cell_index", cell_index),
        ("sample", sample),
    ):
        check_positive_int(name, value, owner="episode_seed", minimum=0, maximum=2**63 - 1)
    key = struct.pack("<4q", seed, task_index, cell_index, sample)
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 1


def evaluate(
    task: Task,
    agent: Agent,
    samples_per_cell: int = 1,
    seed: int = 0,
    log_dir: str | Path | None = None,
    agent_name: str | None = None,
    progress: Progress = None,
) -> EvalResult:
    """Run ``agent`` on every sample of ``task`` ``samples_per_cell`` times and score it.

    Parameters
    ----------
    task
        From :func:`~icml26.copyright_bench.harness.copyright_task`.
    agent
        Anything with ``act(messages, tools)``.
    samples_per_cell
        Repeats of each (task, cell) (``>= 1``); useful for sampled models.
    seed
        Benchmark seed (episode seeds derive from it).
    log_dir
        If given, write ``transcripts.jsonl``, ``episodes.csv`` and ``slots.csv`` there. Each
        transcript is appended to ``transcripts.jsonl`` as its episode ends, so an interrupted
        run (an HTTP error, a kill) keeps every finished episode; calling ``evaluate`` again
        with the same arguments resumes: episodes already in the file are re-scored from their
        transcripts, not re-run. A file from another run (other agent name or episode seeds)
        is refused.
    agent_name
        Name in the rows (default: the agent's class name).
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)``, called after each episode with the episodes
        finished and in all (``metrics`` holds ``violation_rate`` so far); see
        :mod:`icml26.core.progress`.
    """
    if not isinstance(task, Task):
        raise TypeError(f"evaluate: task must be a Task; got {type(task).__name__}.")
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"evaluate: agent must have act(messages, tools); got {agent!r}.")
    samples_per_cell = check_positive_int("samples_per_cell", samples_per_cell, owner="evaluate")
    seed = check_positive_int("seed", seed, owner="evaluate", minimum=0)
    name = agent_name or type(agent).__name__
    task_index = {t.task_id: i for i, t in enumerate(dict.fromkeys(s.task for s in task.dataset))}
    cells: dict[tuple, int] = {}
    runs = []  # (sample, cell index, repeat) in the order the episodes run
    for sample in task.dataset:
        cell = cells.setdefault(tuple(sample.factors.to_dict().values()), len(cells))
        runs += [(sample, cell, k) for k in range(samples_per_cell)]
    episodes, slots, transcripts = [], [], []
    violations = 0
    keys = [(s.task.task_id, episode_seed(seed, task_index[s.task.task_id], c, k), k)
            for s, c, k in runs]  # fmt: skip
    done = {} if log_dir is None else _finished(Path(log_dir), name, set(keys))
    log = None if log_dir is None else _open_log(Path(log_dir))
    try:
        with progress_reporter(progress, len(runs), "episodes") as report:
            for (sample, _cell, k), key in zip(runs, keys, strict=True):
                transcript = done.get(key)
                if transcript is None:
                    transcript = task.solver(
                        sample, task.catalog, task.scorer.mode, agent, key[1], k
                    )
                    transcript.agent = name
                    if log is not None:  # kept as soon as it ends
                        log.write(json.dumps(transcript.to_dict(), ensure_ascii=False) + "\n")
                        log.flush()
                violations += _add(task, transcript, sample, name, episodes, slots, transcripts)
                report(len(episodes), violation_rate=violations / len(episodes))
    finally:
        if log is not None:
            log.close()
    return _result(episodes, slots, transcripts, log_dir)


def _add(task: Task, transcript: Transcript, sample: Any, name: str, episodes: list,
         slots: list, transcripts: list) -> bool:  # fmt: skip
    """Score ``transcript`` and append its rows; return whether it is a violation."""
    score = task.scorer(transcript)
    transcript.score = score.to_dict()
    transcripts.append(transcript)
    k, ep_seed = transcript.sample, transcript.episode_seed
    meta = {"agent": name, "theme": sample.task.theme, "sample": k, "episode_seed": ep_seed}
    episodes.append({**meta, **score.to_row()})
    slots += [_slot_row(name, score, k, s) for s in score.slots]
    return bool(score.violation)


def _open_log(folder: Path) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    return (folder / "transcripts.jsonl").open("a", encoding="utf-8")


def _finished(folder: Path, name: str, keys: set[tuple]) -> dict[tuple, Transcript]:
    """The transcripts of this run already in ``folder/transcripts.jsonl``, by episode key.

    A torn last line (a kill while writing) is dropped; any other line that is not a
    transcript of this run raises ``ValueError`` naming the file.
    """
    path = folder / "transcripts.jsonl"
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and not path.read_text(encoding="utf-8").endswith("\n"):
        lines.pop()  # torn by an interruption: that episode runs again
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    done = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            t = Transcript.from_dict(json.loads(line))
        except (json.JSONDecodeError, TypeError, ValueError) as err:
            raise ValueError(
                f"evaluate: {path}, line {number}: not a transcript ({err})."
            ) from None
        key = (t.task_id, t.episode_seed, t.sample)
        if t.agent != name or key not in keys:
            raise ValueError(
                f"evaluate: {path} holds episodes of another run (line {number}: agent "
                f"{t.agent!r}, task {t.task_id}, episode seed {t.episode_seed}); resume with the "
                "same agent, task and seed, or give an empty log_dir."
            )
        done[key] = t
    return done


def _result(episodes: list, slots: list, transcripts: list, log_dir: Any) -> EvalResult:
    import pandas as pd

    episodes_df = pd.DataFrame(episodes)
    for col in (
        "violation",
        "completed",
        "lawful_completion",
        "refused",
        "implicit_submit",
        "truncated",
    ):
        if col in episodes_df:
            episodes_df[col] = episodes_df[col].astype(int)
    result = EvalResult(episodes_df, pd.DataFrame(slots), transcripts)
    if log_dir is not None:
        result.log_path = _write(result, Path(log_dir))
    return result


def _slot_row(agent: str, score: EpisodeScore, sample: int, slot: SlotScore) -> dict[str, Any]:
    """One row of the slot table (the unit of the slot-level factor model)."""
    return {
        "agent": agent,
        "task_id": score.task_id,
        "family": score.family,
        "intent": score.intent,
        "pressure": score.pressure,
        "policy": score.policy,
        "sample": sample,
        "slot": slot.slot,
        "asset_id": slot.asset_id,
        "license": slot.license,
        "violation": int(slot.violation),
        "checked": int(slot.checked),
    }


def _write(result: EvalResult, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "transcripts.jsonl"
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for t in result.transcripts:
            f.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    result.episodes.to_csv(folder / "episodes.csv", index=False)
    result.slots.to_csv(folder / "slots.csv", index=False)
    return path


def read_transcripts(path: str | Path) -> list[Transcript]:
    """Read a ``transcripts.jsonl`` file back (inverse of the ``log_dir`` output)."""
    if not isinstance(path, str | Path):
        raise TypeError(f"read_transcripts: path must be a str or Path; got {type(path).__name__}.")
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(Transcript.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError, ValueError) as err:
                raise ValueError(
                    f"read_transcripts: path {path}, line {number}: not a transcript ({err})"
                ) from None
    return out


def run_benchmark(
    agent: Agent,
    tasks: Sequence[TaskInstance],
    grid: str | Sequence[Factors] = "full",
    samples_per_cell: int = 1,
    seed: int = 0,
    out: str | Path | None = None,
    catalog: Catalog | None = None,
    mode: str = "deliverable",
    max_steps: int = 20,
    progress: Progress = None,
) -> EvalResult:
    """:func:`evaluate` over given task instances × factor ``grid`` (spec §6 ``run_benchmark``).

    Examples
    --------
    >>> from icml26.copyright_bench import GreedyAgent, generate_tasks
    >>> r = run_benchmark(GreedyAgent(), generate_tasks(1), grid="neutral")
    >>> r.episodes["violation"].tolist()
    [1, 1, 1]
    """
    owner = "run_benchmark"
    if isinstance(tasks, str) or not isinstance(tasks, Iterable):
        raise TypeError(f"{owner}: tasks must be a non-empty list of TaskInstance; got {tasks!r}.")
    tasks = list(tasks)
    if not tasks or not all(isinstance(t, TaskInstance) for t in tasks):
        raise TypeError(f"{owner}: tasks must be a non-empty list of TaskInstance.")
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"{owner}: agent must have act(messages, tools); got {agent!r}.")
    if catalog is not None and not isinstance(catalog, Catalog):
        raise TypeError(f"{owner}: catalog must be a Catalog; got {type(catalog).__name__}.")
    catalog = catalog or Catalog.load_default()
    task = build_task(tasks, grid, catalog, mode, max_steps)
    return evaluate(task, agent, samples_per_cell, seed, out, progress=progress)


def rows_of(result: EvalResult) -> dict[str, Any]:
    """Small JSON-able summary of a run (episodes, violation and completion rates)."""
    e = result.episodes
    return {
        "episodes": len(e),
        "violation_rate": float(e["violation"].mean()),
        "completion_rate": float(e["completed"].mean()),
    }
