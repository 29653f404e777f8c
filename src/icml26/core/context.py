"""What a task is handed: its seed and generators, device, thread budget, artifact folder, progress.

An experiment's ``run(config, ctx)`` draws every random number from ``ctx`` and never touches
global RNGs or thread counts; the runner builds the context, applies ``ctx.threads`` to torch
before the task and restores the previous count after it.
"""

from __future__ import annotations

import hashlib
import itertools
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core.timing import interleaved_median_seconds
from icml26.core.validation import check_one_of, check_positive_int

if TYPE_CHECKING:
    import torch

__all__ = ["ProgressBar", "Resources", "RunContext"]

# A progress event: ("start", key, total, description), ("advance", key, n) or ("stop", key).
ProgressSink = Callable[[tuple[Any, ...]], None]
_keys = itertools.count()


@dataclass(frozen=True)
class Resources:
    """What one task of an experiment needs: CPU cores, GPUs, memory.

    Parameters
    ----------
    cpus
        Cores one task uses; the runner gives torch this many intra-op threads (fewer when jobs
        share the machine) and Ray reserves this many CPUs.
    gpus
        GPUs one task needs; a task with ``gpus > 0`` is refused where none is available.
    memory_gb
        Memory one task may use, reserved on Ray (``None``: no reservation).

    Examples
    --------
    >>> Resources(cpus=2)
    Resources(cpus=2, gpus=0, memory_gb=None)
    """

    cpus: int = 1
    gpus: int = 0
    memory_gb: float | None = None

    def __post_init__(self) -> None:
        check_positive_int("cpus", self.cpus, owner="Resources")
        check_positive_int("gpus", self.gpus, owner="Resources", minimum=0)
        if self.memory_gb is not None and not self.memory_gb > 0:
            raise ValueError(f"Resources: memory_gb must be > 0 or None; got {self.memory_gb!r}.")


def _stream_seed(seed: int, stream: str) -> int:
    if not stream:
        return seed
    digest = hashlib.sha256(f"{seed}|{stream}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class ProgressBar:
    """A nested progress bar for steps inside one task; ``advance()`` once per step.

    Use it as a context manager (or call :meth:`close`) so the bar goes away when the work ends.
    The bar is also a progress callback (:data:`icml26.core.progress.ProgressCallback`): pass it
    as ``progress=bar`` to a library call and the call moves it.
    """

    def __init__(self, sink: ProgressSink | None, total: int, description: str) -> None:
        self._sink = sink
        self._key = next(_keys)
        self.total = total
        self.completed = 0
        if sink is not None:
            sink(("start", self._key, total, description))

    def advance(self, n: int = 1) -> None:
        """Mark ``n`` more steps done."""
        self.completed += n
        if self._sink is not None:
            self._sink(("advance", self._key, n))

    def __call__(self, done: int, total: int, metrics: Mapping[str, float] | None = None) -> None:
        """Progress-callback form: ``done`` of ``total`` steps are finished."""
        if done > self.completed:
            self.advance(done - self.completed)

    def part(self) -> Callable[[int, int, Mapping[str, float] | None], None]:
        """A progress callback for one library call inside this bar, counted from where the bar
        stands now (so several calls can share one bar).

        Examples
        --------
        >>> bar = ProgressBar(None, 4, "two calls")
        >>> first = bar.part(); first(2, 2, {})
        >>> second = bar.part(); second(2, 2, {})
        >>> bar.completed
        4
        """
        start = self.completed

        def report(done: int, total: int, metrics: Mapping[str, float] | None = None) -> None:
            if start + done > self.completed:
                self.advance(start + done - self.completed)

        return report

    def close(self) -> None:
        """Remove the bar."""
        if self._sink is not None:
            self._sink(("stop", self._key))
            self._sink = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class RunContext:
    """Everything a task may draw on besides its config.

    Parameters
    ----------
    seed
        The task's seed, derived from (experiment, config, seed index).
    artifact_dir
        A folder of the task's own for files that are not JSON metrics (checkpoints, arrays,
        transcripts); a fresh temporary folder when not given.
    device
        ``"cpu"`` or ``"cuda"``; ``"cuda"`` only when the experiment asks for a GPU and has one.
    threads
        The task's torch intra-op thread budget (the runner applies it).
    progress_sink
        Where :meth:`progress` bars report; ``None`` shows nothing.
    clock
        The clock timings read (seconds, monotonic); :meth:`median_seconds` uses it. Tests hand
        in a fake clock; experiments never call ``time`` themselves.

    Examples
    --------
    >>> ctx = RunContext(seed=7)
    >>> a, b = ctx.numpy_generator().random(), ctx.numpy_generator().random()
    >>> a == b, a == ctx.numpy_generator("init").random()
    (True, False)
    """

    seed: int
    artifact_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="icml26-")))
    device: str = "cpu"
    threads: int = 1
    progress_sink: ProgressSink | None = field(default=None, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_positive_int("seed", self.seed, owner="RunContext", minimum=0)
        check_one_of("device", self.device, ("cpu", "cuda"), owner="RunContext")
        check_positive_int("threads", self.threads, owner="RunContext")
        object.__setattr__(self, "artifact_dir", Path(self.artifact_dir))

    def numpy_generator(self, stream: str = "") -> np.random.Generator:
        """A fresh ``numpy`` generator seeded by the task's seed.

        Each call restarts the same stream; give ``stream`` a name to get an independent one
        (``ctx.numpy_generator("data")``, ``ctx.numpy_generator("init")``).
        """
        return np.random.default_rng(_stream_seed(self.seed, stream))

    def torch_generator(self, stream: str = "", device: str | None = None) -> torch.Generator:
        """A fresh ``torch.Generator`` seeded by the task's seed, on ``device`` (default: cpu).

        ``stream`` names an independent stream, as for :meth:`numpy_generator`.
        """
        import torch

        generator = torch.Generator(device=device or "cpu")
        generator.manual_seed(_stream_seed(self.seed, stream))
        return generator

    def seed_for(self, stream: str) -> int:
        """An int seed in ``[0, 2**31 - 1)`` for a library's ``seed=`` argument, from ``stream``.

        The first draw of :meth:`numpy_generator` ``(stream)``: the same stream gives the same
        seed, different streams independent ones.

        Examples
        --------
        >>> ctx = RunContext(seed=7)
        >>> ctx.seed_for("init") == ctx.seed_for("init") != ctx.seed_for("data")
        True
        """
        return int(self.numpy_generator(stream).integers(0, 2**31 - 1))

    def seeds_for(self, stream: str, n: int) -> list[int]:
        """``n`` independent int seeds in ``[0, 2**31 - 1)`` drawn from ``stream``.

        Examples
        --------
        >>> len(set(RunContext(seed=7).seeds_for("clients", 4)))
        4
        """
        n = check_positive_int("n", n, owner="RunContext.seeds_for", minimum=0, maximum=10**6)
        return [int(s) for s in self.numpy_generator(stream).integers(0, 2**31 - 1, size=n)]

    def median_seconds(
        self, fns: Mapping[str, Callable[[], Any]], repeats: int, warmup: int = 1
    ) -> dict[str, float]:
        """Median seconds of each callable on the task's :attr:`clock`, timed round-robin.

        See :func:`icml26.core.timing.interleaved_median_seconds`. Metrics computed from these
        times are timings: declare them in the experiment's ``timing_metrics``.

        Examples
        --------
        >>> ticks = iter(range(100))
        >>> ctx = RunContext(seed=0, clock=lambda: float(next(ticks)))
        >>> ctx.median_seconds({"a": lambda: None}, repeats=3)
        {'a': 1.0}
        """
        return interleaved_median_seconds(fns, repeats, warmup, clock=self.clock)

    def artifact(self, name: str) -> Path:
        """The path of file ``name`` in the task's artifact folder (the folder is created)."""
        self.artifact_dir.mkdir(parents=True, exist_ok=True)
        return self.artifact_dir / name

    def progress(self, total: int, description: str) -> ProgressBar:
        """A nested progress bar (with ETA) for ``total`` steps inside this task.

        Examples
        --------
        >>> with RunContext(seed=0).progress(3, "training") as bar:
        ...     for _ in range(3):
        ...         bar.advance()
        >>> bar.completed
        3
        """
        total = check_positive_int("total", total, owner="RunContext.progress", minimum=0)
        return ProgressBar(self.progress_sink, total, description)
