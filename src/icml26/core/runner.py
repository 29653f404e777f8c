"""Run experiments as independent (config, seed) tasks on local processes or on Ray.

Each task's seed is derived from (experiment, config, seed index), so any single result can be
recomputed alone. Each task gets a :class:`~icml26.core.context.RunContext` (seed, generators,
device, thread budget, artifact folder, nested progress); the runner applies the thread budget
and restores it after. Finished records are written atomically by the driver process. Running
the same command again reuses a finished record only if the code that made it is the current
code (same fingerprint); failed, stale and unreadable records are re-run. An exception inside a
task is recorded with its traceback and the other tasks go on.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import multiprocessing
import os
import queue
import sys
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from dataclasses import replace as replace_field
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from icml26.core.context import ProgressSink, Resources, RunContext
from icml26.core.experiment import Experiment, RunFn
from icml26.core.results import (
    TASK_SECONDS,
    TaskRecord,
    code_fingerprint,
    config_hash,
    git_dirty,
    git_revision,
    record_path,
    to_jsonable,
    versions,
)
from icml26.core.validation import check_one_of, check_positive_int

__all__ = [
    "BACKENDS",
    "RecordWriteError",
    "RunFolderBusyError",
    "Task",
    "available_cores",
    "derive_seed",
    "execute",
    "plan",
    "run_tasks",
]

BACKENDS = ("local", "ray")
log = logging.getLogger(__name__)


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def derive_seed(experiment: str, config: Any, seed_index: int) -> int:
    """A 63-bit seed that depends only on the experiment name, the config and the seed index.

    Examples
    --------
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
    fingerprint: str = ""
    requires: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)

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
    fingerprint = code_fingerprint(experiment.run)
    return [
        Task(
            experiment.name,
            preset,
            config,
            i,
            experiment.run,
            fingerprint,
            experiment.requires,
            experiment.resources,
        )
        for i in range(n_seeds)
    ]


def _artifact_dir(run_dir: Path, task: Task) -> Path:
    path = run_dir / record_path(task.experiment, task.config_hash, task.seed_index)
    return path.with_suffix(".artifacts")


def execute(
    task: Task,
    run_dir: Path,
    *,
    threads: int = 1,
    device: str = "cpu",
    progress_sink: ProgressSink | None = None,
) -> TaskRecord:
    """Run one task with its context and return its record; an exception becomes ``failed``.

    torch's intra-op thread count and the BLAS/OpenMP pools numpy and scipy use are set to
    ``threads`` for the task and restored after it.
    """
    import torch  # the thread budget is torch's; importing it here makes it apply from the start
    from threadpoolctl import threadpool_limits

    ctx = RunContext(
        seed=task.seed,
        artifact_dir=_artifact_dir(Path(run_dir), task),
        device=device,
        threads=threads,
        progress_sink=progress_sink,
    )
    threads_before = torch.get_num_threads()
    torch.set_num_threads(threads)
    start, cpu_clock = time.perf_counter(), _CpuClock.start()
    metrics: dict[str, Any] = {}
    error = None
    caught: list[warnings.WarningMessage] = []
    logged: list[logging.LogRecord] = []
    try:
        with (
            threadpool_limits(limits=threads),
            warnings.catch_warnings(record=True) as caught,
            _collect_log_records(logged),
        ):
            warnings.simplefilter("default")
            metrics = to_jsonable(task.run(task.config, ctx))
        if not isinstance(metrics, dict):
            raise TypeError(f"{task.experiment}: run must return a dict of metrics.")
    except Exception:
        error = _relative_paths(traceback.format_exc())
    finally:
        torch.set_num_threads(threads_before)
    _log_warnings(Path(run_dir), task, caught, logged)
    if ctx.artifact_dir.is_dir() and not any(ctx.artifact_dir.iterdir()):
        ctx.artifact_dir.rmdir()
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
        cpu_time_s=cpu_clock.elapsed(),
        versions=versions(task.requires),
        git_revision=git_revision(),
        git_dirty=git_dirty(),
        code_fingerprint=task.fingerprint,
    )


def _cpu_seconds() -> float:
    """CPU seconds of this process and of the child processes it has waited for (a task's own
    worker pools included once they end)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _descendant_cpu_seconds() -> dict[int, float]:
    """CPU seconds of every live descendant of this process, each with the children it reaped.

    A pool that outlives the task (joblib's reusable loky workers) is never waited for, so
    :func:`_cpu_seconds` misses it. Read from Linux's ``/proc``; empty where there is none.
    """
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # the command name (field 2) may hold spaces: split after its closing parenthesis
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the process ended while we read
            continue
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        cpu[pid] = sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    family, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - family
        family |= frontier
    return {pid: cpu[pid] for pid in family}


@dataclass(frozen=True)
class _CpuClock:
    """CPU seconds a task used: this process, the children it waited for and live descendants."""

    own: float
    descendants: dict[int, float]

    @classmethod
    def start(cls) -> _CpuClock:
        return cls(_cpu_seconds(), _descendant_cpu_seconds())

    def elapsed(self) -> float:
        # A descendant alive at the start counts from its start value, whether it is still
        # alive (its /proc value) or was reaped since (its whole time is in _cpu_seconds).
        now = _descendant_cpu_seconds()
        return _cpu_seconds() - self.own + sum(now.values()) - sum(self.descendants.values())


class _RecordList(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.WARNING)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _collect_log_records(records: list[logging.LogRecord]) -> Iterator[None]:
    """Collect the log records of WARNING and above that a task's libraries emit into ``records``.

    torch logs through a handler of its own on the ``torch`` logger (which does not propagate), and
    libraries imported inside a task (torchao, via transformers) log on import: without this they
    reach the console in the middle of the run's progress.
    """
    loggers = [logging.getLogger(), logging.getLogger("torch")]
    saved = [list(logger.handlers) for logger in loggers]
    handler = _RecordList(records)
    for logger in loggers:
        logger.handlers = [handler]
    try:
        yield
    finally:
        for logger, handlers in zip(loggers, saved, strict=True):
            logger.handlers = handlers


def _log_warnings(
    run_dir: Path,
    task: Task,
    caught: Sequence[warnings.WarningMessage],
    logged: Sequence[logging.LogRecord],
) -> None:
    """Append a task's warnings and library log records to ``<run_dir>/warnings.log`` instead of
    the console."""
    lines = {
        f"{task.label}: {w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})"
        for w in caught
    } | {f"{task.label}: {r.levelname} {r.name}: {r.getMessage()}" for r in logged}
    if not lines:
        return
    try:
        with open(run_dir / "warnings.log", "a") as log_file:
            log_file.write("".join(f"{line}\n" for line in sorted(lines)))
    except OSError:  # a log line is not worth failing a finished task
        pass


def _relative_paths(text: str) -> str:
    """``text`` with the package's install folder, the working folder and home made relative."""
    install = str(Path(__file__).resolve().parents[2]) + os.sep  # the folder holding icml26/
    for prefix, short in ((install, ""), (os.getcwd() + os.sep, ""), (str(Path.home()), "~")):
        text = text.replace(prefix, short)
    return text


class RunFolderBusyError(RuntimeError):
    """Another run holds the run folder's lock."""


class RecordWriteError(RuntimeError):
    """A finished task's record could not be written (a full disk, a file-size limit, ...).

    The run stops; every record written before stays, so the same command resumes the run.
    """


def _longest_first(tasks: Sequence[Task], pending: Sequence[int]) -> list[int]:
    """``pending`` ordered by expected duration, longest first, so no core idles at the end of a
    run while one long task finishes; tasks without a measurement keep their order, last."""
    try:
        seconds = json.loads(TASK_SECONDS.read_text())
    except (OSError, ValueError):
        return list(pending)

    def expected(i: int) -> float:
        return seconds.get(tasks[i].experiment, {}).get(tasks[i].preset, 0.0)

    return sorted(pending, key=expected, reverse=True)


@contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``run_dir`` for the block; refuse if another run holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".icml26.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderBusyError(
                f"another icml26 run is using {run_dir}; wait for it or pick another --out"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _previous(task: Task, run_dir: Path, reuse_stale: bool) -> tuple[TaskRecord | None, str | None]:
    """The record to reuse for ``task`` (or ``None``) and why an existing one is not reused."""
    path = run_dir / record_path(task.experiment, task.config_hash, task.seed_index)
    if not path.exists():
        return None, None
    try:
        record = TaskRecord.load(path)
    except (OSError, ValueError) as err:
        aside = path.with_suffix(".json.corrupt")
        os.replace(path, aside)
        log.warning("unreadable record %s (%s): moved to %s, re-running its task", path, err, aside)
        return None, "corrupt"
    if not record.ok:
        return None, "failed"
    if record.code_fingerprint != task.fingerprint and not reuse_stale:
        return None, "stale"
    return record, None


def _gpus_available() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        disable=not enabled,
    )


class _Bars:
    """Shows the progress events of tasks' nested bars under the main bar."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.ids: dict[Any, Any] = {}

    def __call__(self, event: tuple[Any, ...]) -> None:
        kind, key, *rest = event
        if kind == "start":
            total, description = rest
            self.ids[key] = self.progress.add_task(f"  {description}", total=total)
        elif kind == "advance" and key in self.ids:
            self.progress.update(self.ids[key], advance=rest[0])
        elif kind == "stop" and key in self.ids:
            self.progress.remove_task(self.ids.pop(key))


def run_tasks(
    tasks: Sequence[Task],
    run_dir: Path,
    *,
    backend: str = "local",
    jobs: int = 1,
    progress: bool = True,
    reuse_stale: bool = False,
) -> list[TaskRecord]:
    """Run the tasks that have no reusable record and write their records under ``run_dir``.

    Parameters
    ----------
    backend
        ``"local"`` (in this process for ``jobs=1``, else a pool of ``jobs`` processes) or
        ``"ray"`` (``ray.init(address=$RAY_ADDRESS)``, or a local Ray with ``jobs`` CPUs).
    jobs
        Number of tasks run at once.
    reuse_stale
        Reuse finished records made by different code (another code fingerprint) instead of
        re-running them.

    Returns
    -------
    list of TaskRecord
        One record per task, in the order of ``tasks``; reused ones are read back from disk.

    Raises
    ------
    ValueError
        If a task needs more GPUs than this machine (or the Ray cluster) has.
    RunFolderBusyError
        If another run is writing into ``run_dir`` (the folder is locked while a run lasts).
    """
    check_one_of("backend", backend, BACKENDS, owner="run_tasks")
    jobs = check_positive_int("jobs", jobs, owner="run_tasks")
    run_dir = Path(run_dir).resolve()  # workers (Ray's included) may start in another folder
    with _locked(run_dir):
        for leftover in run_dir.glob("*/.*.tmp"):  # from a run killed mid-write
            leftover.unlink(missing_ok=True)
        return _run_locked(tasks, run_dir, backend, jobs, progress, reuse_stale)


def _run_locked(
    tasks: Sequence[Task],
    run_dir: Path,
    backend: str,
    jobs: int,
    progress: bool,
    reuse_stale: bool,
) -> list[TaskRecord]:
    records: dict[int, TaskRecord] = {}
    pending: list[int] = []
    replaced: dict[int, str] = {}
    for i, task in enumerate(tasks):
        done, why = _previous(task, run_dir, reuse_stale)
        if done is None:
            pending.append(i)
            if why:
                replaced[i] = why
        else:
            records[i] = done
    n_stale = sum(why == "stale" for why in replaced.values())
    n_failed = sum(why == "failed" for why in replaced.values())
    if records or replaced:
        log.info(
            "resuming: %d of %d task(s) already finished and reused; re-running %d stale and "
            "%d failed; %d new",
            len(records),
            len(tasks),
            n_stale,
            n_failed,
            len(pending) - len(replaced),
        )
    if backend == "local" and pending:
        gpus = max(tasks[i].resources.gpus for i in pending)
        if gpus > _gpus_available():
            raise ValueError(
                f"a task needs {gpus} GPU(s) and this machine has {_gpus_available()}; "
                "run it where CUDA is available (or on a Ray cluster with GPUs)."
            )

    def finish(i: int, record: TaskRecord) -> None:
        if i in replaced:
            record = replace_field(record, replaced=replaced[i])
        try:
            record.save(run_dir)
        except OSError as err:
            raise RecordWriteError(
                f"cannot write the record of {tasks[i].label} under {run_dir}: "
                f"{err.strerror or err}; the {len(records)} record(s) already there are kept, "
                "and the same command resumes the run once the cause is fixed"
            ) from None
        records[i] = record
        if not record.ok:
            last = (record.error or "").strip().splitlines()[-1:] or ["(no message)"]
            where = run_dir / record.relpath()
            log.warning("%s failed: %s (traceback in %s)", tasks[i].label, last[0], where)

    with _progress(progress) as bar:
        bar_id = bar.add_task("tasks", total=len(tasks), completed=len(records))
        sink = _Bars(bar) if progress else None

        def advance(i: int, record: TaskRecord) -> None:
            finish(i, record)
            bar.update(bar_id, advance=1, description=tasks[i].label)

        if jobs > 1:
            pending = _longest_first(tasks, pending)
        if backend == "ray":
            _run_ray(tasks, pending, run_dir, jobs, advance)
        elif jobs == 1:
            for i in pending:
                bar.update(bar_id, description=tasks[i].label)
                record = execute(
                    tasks[i],
                    run_dir,
                    threads=_threads(tasks[i], 1),
                    device=_device(tasks[i]),
                    progress_sink=sink,
                )
                advance(i, record)
        else:
            _run_processes(tasks, pending, run_dir, jobs, advance, sink)
    return [records[i] for i in range(len(tasks))]


def _threads(task: Task, jobs: int) -> int:
    """The task's declared CPUs, but no more than its share of this machine's cores."""
    return max(1, min(task.resources.cpus, available_cores() // jobs))


_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@contextmanager
def _worker_thread_environment(threads: int) -> Iterator[None]:
    """Size the BLAS/OpenMP pools of processes started in the block to ``threads``.

    A pool reads these variables when its library loads, which in a worker may be after the task
    started (``threadpool_limits`` only reaches libraries already loaded).
    """
    before = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(_THREAD_VARIABLES, str(threads)))
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _QueueSink:
    """A worker's progress sink: puts events on the driver's queue; if the process holding the
    queue is gone, progress stops and the task goes on."""

    def __init__(self, events: Any) -> None:
        self._events = events

    def __call__(self, event: tuple[Any, ...]) -> None:
        if self._events is None:
            return
        try:
            self._events.put(event)
        except (OSError, EOFError):
            self._events = None


def _device(task: Task) -> str:
    return "cuda" if task.resources.gpus > 0 else "cpu"


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this process when the driver that started it is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _isolated_entry(parent: int, conn: Any, task: Task, run_dir: Path, kwargs: dict) -> None:
    _exit_with_parent(parent)
    conn.send(execute(task, run_dir, **kwargs))
    conn.close()


def _run_isolated(context: Any, task: Task, run_dir: Path, kwargs: dict) -> TaskRecord:
    """Run ``task`` alone in a fresh process; if that process dies, a failed record says how."""
    receive, send = context.Pipe(duplex=False)
    process = context.Process(
        target=_isolated_entry, args=(os.getpid(), send, task, run_dir, kwargs)
    )
    process.start()
    send.close()
    record = None
    while record is None and (process.is_alive() or receive.poll()):
        if receive.poll(0.2):
            try:
                record = receive.recv()
            except EOFError:
                break
    process.join()
    if record is not None:
        return record
    code = process.exitcode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return _failed(task, f"the worker process running this task died ({how})")


def _failed(task: Task, error: str) -> TaskRecord:
    return TaskRecord(
        experiment=task.experiment,
        preset=task.preset,
        config=to_jsonable(task.config),
        config_hash=task.config_hash,
        seed_index=task.seed_index,
        seed=task.seed,
        status="failed",
        error=error,
        versions=versions(task.requires),
        git_revision=git_revision(),
        git_dirty=git_dirty(),
        code_fingerprint=task.fingerprint,
    )


def _run_processes(
    tasks: Sequence[Task],
    pending: Iterable[int],
    run_dir: Path,
    jobs: int,
    done: Callable[[int, TaskRecord], None],
    sink: ProgressSink | None,
) -> None:
    """Run on a pool of ``jobs`` spawned processes, at most ``jobs`` tasks submitted at a time.

    A task that kills its worker (segfault, OOM kill, ``os._exit``) breaks the pool: the tasks
    that were in flight are re-run one by one in a process of their own, the one that dies again
    is recorded as failed with its exit code or signal, and a fresh pool finishes the rest.
    """
    # "spawn" because forking a process that already runs torch's thread pools can deadlock.
    context = multiprocessing.get_context("spawn")
    with _worker_thread_environment(max(1, available_cores() // jobs)):
        _run_pool(context, tasks, pending, run_dir, jobs, done, sink)


def _run_pool(
    context: Any,
    tasks: Sequence[Task],
    pending: Iterable[int],
    run_dir: Path,
    jobs: int,
    done: Callable[[int, TaskRecord], None],
    sink: ProgressSink | None,
) -> None:
    manager = None
    if sink is not None:
        manager = SyncManager(ctx=context)
        manager.start(_exit_with_parent, (os.getpid(),))
    events = manager.Queue() if manager is not None else None

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )

    def options(i: int) -> dict[str, Any]:
        return {
            "threads": _threads(tasks[i], jobs),
            "device": _device(tasks[i]),
            "progress_sink": _QueueSink(events) if events is not None else None,
        }

    def drain() -> None:
        nonlocal events
        while events is not None and sink is not None:
            try:
                sink(events.get_nowait())
            except queue.Empty:
                return
            except (OSError, EOFError):  # the progress process is gone; the tasks are not
                log.warning("the progress process ended; the run goes on without nested bars")
                events = None

    waiting = deque(pending)
    futures: dict[Future[TaskRecord], int] = {}
    executor = new_pool()
    try:
        while waiting or futures:
            broken = False
            while waiting and len(futures) < jobs:
                i = waiting.popleft()
                try:
                    futures[executor.submit(execute, tasks[i], run_dir, **options(i))] = i
                except BrokenProcessPool:  # broke since the last wait: resubmit after restart
                    waiting.appendleft(i)
                    broken = True
                    break
            finished, _ = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
            drain()
            for future in finished:
                try:
                    record = future.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                done(futures.pop(future), record)
            if broken:
                suspects = list(futures.values())
                futures.clear()
                executor.shutdown(wait=False, cancel_futures=True)
                log.warning("a worker process died; re-running its %d task(s) alone", len(suspects))
                for i in suspects:
                    done(i, _run_isolated(context, tasks[i], run_dir, options(i)))
                    drain()
                executor = new_pool()
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if manager is not None:
            with suppress(OSError, EOFError):
                manager.shutdown()
    executor.shutdown()


def _run_ray(
    tasks: Sequence[Task],
    pending: Sequence[int],
    run_dir: Path,
    jobs: int,
    done: Callable[[int, TaskRecord], None],
) -> None:
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "the ray backend needs Ray: pip install 'icml26[ray]' (or pip install ray)"
        ) from err
    if not pending:
        return
    cpus = max(tasks[i].resources.cpus for i in pending)
    gpus = max(tasks[i].resources.gpus for i in pending)
    started_here = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address)
        else:
            # A local cluster's workers import the experiment modules the driver can import. It
            # ends with the run. Its node address is 127.0.0.1, but Ray 2.55 (which flwr's
            # simulation extra pins) still listens on every interface (measured: raylet and GCS
            # on *:port); newer Ray binds its servers to the node address. So the default
            # backend stays "local" and the docs say to use "ray" on a trusted network only.
            path = os.pathsep.join(p for p in sys.path if p)
            ray.init(
                _node_ip_address="127.0.0.1",
                num_cpus=max(jobs, cpus),
                num_gpus=_gpus_available(),
                include_dashboard=False,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
            started_here = True
    try:
        _run_on_cluster(ray, tasks, pending, run_dir, cpus, gpus, done)
    finally:
        if started_here:
            ray.shutdown()


def _run_on_cluster(
    ray: Any,
    tasks: Sequence[Task],
    pending: Sequence[int],
    run_dir: Path,
    cpus: int,
    gpus: int,
    done: Callable[[int, TaskRecord], None],
) -> None:
    cluster = ray.cluster_resources()
    if gpus > cluster.get("GPU", 0) or cpus > cluster.get("CPU", 0):
        raise ValueError(
            f"a task needs {cpus} CPU(s) and {gpus} GPU(s); the Ray cluster has "
            f"{cluster.get('CPU', 0):g} CPU(s) and {cluster.get('GPU', 0):g} GPU(s)."
        )
    refs = {}
    for i in pending:
        res = tasks[i].resources
        options: dict[str, Any] = {"num_cpus": res.cpus, "num_gpus": res.gpus}
        if res.memory_gb is not None:
            options["memory"] = int(res.memory_gb * 2**30)
        remote = ray.remote(**options)(execute)
        ref = remote.remote(tasks[i], run_dir, threads=res.cpus, device=_device(tasks[i]))
        refs[ref] = i
    while refs:
        ready, _ = ray.wait(list(refs), num_returns=1)
        for ref in ready:
            done(refs.pop(ref), ray.get(ref))
