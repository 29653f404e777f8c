"""Run experiments as independent (config, seed) tasks on local processes or on Ray.

Each task's seed is derived from (experiment, config, seed index), so any single result can be
recomputed alone. Finished records are written atomically by the driver process; running the same
command again skips every task whose record says it finished and retries the failed ones. An
exception inside a task is recorded with its traceback and the other tasks go on.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from icml26.core.experiment import Experiment, RunFn
from icml26.core.results import (
    TaskRecord,
    config_hash,
    git_revision,
    record_path,
    to_jsonable,
    versions,
)
from icml26.core.validation import check_one_of, check_positive_int

__all__ = ["BACKENDS", "Task", "derive_seed", "execute", "plan", "run_tasks"]

BACKENDS = ("local", "ray")
log = logging.getLogger(__name__)


def derive_seed(experiment: str, config: Any, seed_index: int) -> int:
    """A 63-bit seed that depends only on the experiment name, the config and the seed index.

    Example
    -------
    >>> derive_seed("a.b", {"n": 1}, 0) == derive_seed("a.b", {"n": 1}, 0)
    True
    """
    text = f"{experiment}|{config_hash(config)}|{seed_index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class Task:
    """One run of an experiment's ``run`` function on one config and one seed index."""

    experiment: str
    preset: str
    config: Any
    seed_index: int
    run: RunFn

    @property
    def seed(self) -> int:
        """The derived seed handed to ``run``."""
        return derive_seed(self.experiment, self.config, self.seed_index)

    @property
    def config_hash(self) -> str:
        """Hash of the config, part of the record's file name."""
        return config_hash(self.config)

    @property
    def label(self) -> str:
        """Short human-readable name."""
        return f"{self.experiment} [{self.preset}] seed {self.seed_index}"


def plan(
    experiment: Experiment,
    preset: str,
    n_seeds: int,
    overrides: Mapping[str, str] | None = None,
) -> list[Task]:
    """The tasks for ``n_seeds`` seeds of ``experiment`` at ``preset`` with overrides."""
    n_seeds = check_positive_int("seeds", n_seeds, owner="plan")
    config = experiment.config(preset, overrides)
    return [Task(experiment.name, preset, config, i, experiment.run) for i in range(n_seeds)]


def execute(task: Task, threads: int | None = None) -> TaskRecord:
    """Run one task and return its record; an exception becomes a ``failed`` record."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    start = time.perf_counter()
    metrics: dict[str, Any] = {}
    error = None
    try:
        metrics = to_jsonable(task.run(task.config, task.seed))
        if not isinstance(metrics, dict):
            raise TypeError(f"{task.experiment}: run must return a dict of metrics.")
    except Exception:
        error = traceback.format_exc()
    return TaskRecord(
        experiment=task.experiment,
        preset=task.preset,
        config=to_jsonable(task.config),
        config_hash=task.config_hash,
        seed_index=task.seed_index,
        seed=task.seed,
        status="failed" if error else "ok",
        metrics={} if error else metrics,
        error=error,
        wall_time_s=time.perf_counter() - start,
        versions=versions(),
        git_revision=git_revision(),
    )


def _finished(task: Task, run_dir: Path) -> TaskRecord | None:
    path = run_dir / record_path(task.experiment, task.config_hash, task.seed_index)
    if not path.exists():
        return None
    record = TaskRecord.load(path)
    return record if record.ok else None


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not enabled,
    )


def run_tasks(
    tasks: Sequence[Task],
    run_dir: Path,
    *,
    backend: str = "local",
    jobs: int = 1,
    progress: bool = True,
) -> list[TaskRecord]:
    """Run the unfinished ``tasks`` and write their records under ``run_dir``.

    Parameters
    ----------
    backend
        ``"local"`` (in this process for ``jobs=1``, else a pool of ``jobs`` processes) or
        ``"ray"`` (``ray.init(address=$RAY_ADDRESS)``, or a local Ray with ``jobs`` CPUs).
    jobs
        Number of tasks run at once.

    Returns
    -------
    list of TaskRecord
        One record per task, in the order of ``tasks``; finished ones are read back from disk.
    """
    check_one_of("backend", backend, BACKENDS, owner="run_tasks")
    jobs = check_positive_int("jobs", jobs, owner="run_tasks")
    run_dir = Path(run_dir)
    records: dict[int, TaskRecord] = {}
    pending: list[int] = []
    for i, task in enumerate(tasks):
        done = _finished(task, run_dir)
        if done is None:
            pending.append(i)
        else:
            records[i] = done
    if records:
        log.info("resuming: %d of %d tasks already finished", len(records), len(tasks))

    def finish(i: int, record: TaskRecord) -> None:
        record.save(run_dir)
        records[i] = record
        if not record.ok:
            log.warning("%s failed:\n%s", tasks[i].label, record.error)

    with _progress(progress) as bar:
        bar_id = bar.add_task("tasks", total=len(tasks), completed=len(records))

        def advance(i: int, record: TaskRecord) -> None:
            finish(i, record)
            bar.update(bar_id, advance=1, description=tasks[i].label)

        if backend == "ray":
            _run_ray(tasks, pending, jobs, advance)
        elif jobs == 1:
            for i in pending:
                bar.update(bar_id, description=tasks[i].label)
                advance(i, execute(tasks[i]))
        else:
            _run_processes(tasks, pending, jobs, advance)
    return [records[i] for i in range(len(tasks))]


def _threads_per_job(jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // jobs)


def _run_processes(
    tasks: Sequence[Task],
    pending: Iterable[int],
    jobs: int,
    done: Callable[[int, TaskRecord], None],
) -> None:
    # "spawn" because forking a process that already runs torch's thread pools can deadlock.
    context = multiprocessing.get_context("spawn")
    threads = _threads_per_job(jobs)
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    try:
        futures: dict[Future[TaskRecord], int] = {
            executor.submit(execute, tasks[i], threads): i for i in pending
        }
        while futures:
            finished, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in finished:
                done(futures.pop(future), future.result())
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown()


def _run_ray(
    tasks: Sequence[Task],
    pending: Iterable[int],
    jobs: int,
    done: Callable[[int, TaskRecord], None],
) -> None:
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "the ray backend needs Ray: pip install 'icml26[ray]' (or pip install ray)"
        ) from err
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address)
        else:
            # A local cluster's workers import the experiment modules the driver can import.
            path = os.pathsep.join(p for p in sys.path if p)
            ray.init(
                num_cpus=jobs,
                include_dashboard=False,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
    remote = ray.remote(num_cpus=1)(execute)
    refs = {remote.remote(tasks[i], 1): i for i in pending}
    while refs:
        ready, _ = ray.wait(list(refs), num_returns=1)
        for ref in ready:
            done(refs.pop(ref), ray.get(ref))
