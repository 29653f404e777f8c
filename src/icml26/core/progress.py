"""One progress convention for long library calls.

A long call (training, a sweep, an evaluation over many items) takes ``progress=``:

- ``None`` or ``False``: silent;
- ``True``: a rich progress bar on the console;
- a callable ``progress(done, total, metrics)``: called after each step with the steps finished,
  the steps in all and a dict of the latest scalar metrics (e.g. ``{"loss": 0.41}``).

Inside a task, ``ctx.progress(total, description)`` is such a callable, so an experiment passes
its bar straight through: ``train(..., progress=bar)``. A library loop reports with
:func:`progress_reporter`::

    with progress_reporter(progress, total=steps, description="training") as report:
        for step in range(steps):
            ...
            report(step + 1, loss=float(loss))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeAlias

from icml26.core.validation import check_positive_int

__all__ = ["Progress", "ProgressCallback", "progress_reporter"]

ProgressCallback: TypeAlias = Callable[[int, int, Mapping[str, float]], object]
Progress: TypeAlias = "bool | ProgressCallback | None"

Report: TypeAlias = Callable[..., None]


@contextmanager
def progress_reporter(progress: Progress, total: int, description: str) -> Iterator[Report]:
    """Yield ``report(done, **metrics)`` that forwards to ``progress`` (see the module docstring).

    Raises
    ------
    TypeError
        When ``progress`` is neither a bool, ``None`` nor callable.

    Examples
    --------
    >>> seen = []
    >>> with progress_reporter(lambda d, t, m: seen.append((d, t, m)), 2, "demo") as report:
    ...     report(1, loss=0.5)
    ...     report(2, loss=0.25)
    >>> seen
    [(1, 2, {'loss': 0.5}), (2, 2, {'loss': 0.25})]
    """
    total = check_positive_int("total", total, minimum=0, owner="progress_reporter")
    if progress is None or progress is False:
        yield lambda done, **metrics: None
        return
    if progress is True:
        from rich.progress import Progress as RichProgress

        with RichProgress(transient=True) as bar:
            key = bar.add_task(description, total=total)

            def advance(done: int, **metrics: float) -> None:
                shown = " ".join(f"{k}={v:.4g}" for k, v in metrics.items())
                bar.update(key, completed=done, description=f"{description} {shown}".strip())

            yield advance
        return
    if isinstance(progress, bool) or not callable(progress):
        raise TypeError(
            "progress must be True, False, None or a callable progress(done, total, metrics); "
            f"got {type(progress).__name__}."
        )
    yield lambda done, **metrics: progress(done, total, metrics)
