"""The shipped encoders of hyperdepth's quick presets, and the recipe that retrains them.

Issue 51: training the contrastive encoders was ~2/3 of the quick presets' CPU time. Each
stand-in ``<experiment>_quick`` holds, for the default 3 seeds of that experiment's quick preset,
every encoder the task trains (one per data set, method and tuned ``tau``) and its loss curve —
exactly what the task trains: ``train-standin`` runs the quick tasks through core's runner with
one thread and records each fit. A task looks a run up by the task seed (which core derives from
the experiment, the config and the seed index), the run's random stream, a hash of the data and
the trainer's hyper-parameters; any other seed, preset, ``--set`` or data trains as before. The
encoder is the only module ``embed`` reads, so the records of a quick run are the same with and
without the stand-ins (a test compares them value by value).

``icml26 tool hyperdepth train-standin {digits,synthetic,highschool,depth}_quick`` retrains one
(an interrupted run starts again: the quick tasks take 10-40 CPU-s each).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import tempfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

if TYPE_CHECKING:
    import torch

    from icml26.hyperdepth import AbstractContrastiveTrainer, HypergraphData

__all__ = ["STANDINS", "record_run", "recording", "run_key", "shipped_run", "train_quick"]

QUICK_SEEDS = 3  # the experiments' default seed count: the verdicts need >= 3 values
EXPERIMENTS = ("digits", "synthetic", "highschool", "depth")

_RECORDING: list[dict[str, Any]] = []  # the open recordings (innermost last)
_LOADED: dict[str, Any] = {}  # one read of each shipped file per process


def run_key(seed: int, stream: str, model: AbstractContrastiveTrainer, data: HypergraphData) -> str:
    """The lookup key of one fit: task seed, random stream, data hash, hyper-parameters."""
    digest = hashlib.sha256()
    for array in (data.x, *data.hypergraph.incidence_pairs):
        digest.update(array.tobytes())
    params = repr(sorted(model.get_params().items()))
    return hashlib.sha256(
        f"{seed}|{stream}|{digest.hexdigest()}|{type(model).__name__}|{params}".encode()
    ).hexdigest()[:24]


@contextlib.contextmanager
def recording(into: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Within the block every fit trains (no shipped run is used) and is stored in ``into``.

    ``into[key] = {"stream": ..., "loss": [...], "encoder": a copy of the trained encoder}``.
    """
    _RECORDING.append(into)
    try:
        yield into
    finally:
        _RECORDING.remove(into)


def record_run(key: str, stream: str, model: AbstractContrastiveTrainer, loss: list[float]) -> None:
    """Store a fitted model's encoder and loss curve in the open recording (if any)."""
    if _RECORDING:
        encoder = copy.deepcopy(model.encoder_)
        _RECORDING[-1][key] = {"stream": stream, "loss": list(loss), "encoder": encoder}


def _index() -> dict[str, tuple[str, str, list[float]]]:
    """``key -> (stand-in name, module prefix, loss curve)`` over the shipped metadata."""
    if "index" not in _LOADED:
        import json

        index = {}
        for name in STANDINS:
            meta_file = checkpoint_dir("hyperdepth") / f"{name}.json"
            if meta_file.is_file():
                runs = json.loads(meta_file.read_text())["config"]["runs"]
                index.update({k: (name, r["module"], r["loss"]) for k, r in runs.items()})
        _LOADED["index"] = index
    return _LOADED["index"]


def shipped_run(key: str) -> tuple[dict[str, torch.Tensor], list[float]] | None:
    """The shipped encoder state and loss curve of the fit ``key``, or ``None`` (train it).

    Always ``None`` inside :func:`recording`.
    """
    from icml26.core import load_checkpoint

    found = None if _RECORDING else _index().get(key)
    if found is None:
        return None
    name, module, loss = found
    if name not in _LOADED:
        _LOADED[name] = load_checkpoint(checkpoint_dir("hyperdepth") / name)[0]
    prefix = module + "."
    state = {k[len(prefix) :]: v for k, v in _LOADED[name].items() if k.startswith(prefix)}
    return state, list(loss)


def train_quick(
    experiment: str, resume: TrainingCheckpoint | None = None, progress: Progress = None
) -> TrainedStandin:
    """Run ``hyperdepth.<experiment>``'s quick tasks (3 seeds, one thread) and keep every fit.

    ``resume`` and ``progress`` are unused (a run starts again). The metrics are the tasks'
    float metrics, ``s{seed index}/{name}``.
    """
    import torch

    from icml26.core import discover, plan
    from icml26.core.runner import execute

    spec = discover().get(f"hyperdepth.{experiment}")
    tasks = plan(spec, "quick", QUICK_SEEDS)
    runs: dict[str, Any] = {}
    metrics: dict[str, float] = {}
    with recording(runs), tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            record = execute(task, tmp, threads=1)
            if record.status != "ok":
                raise RuntimeError(f"{task.label}: {record.error}")
            metrics |= {
                f"s{task.seed_index}/{k}": float(v)
                for k, v in record.metrics.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
    modules = torch.nn.ModuleDict()
    config: dict[str, Any] = {"runs": {}}
    for i, (key, run) in enumerate(sorted(runs.items())):
        modules[f"r{i}"] = run["encoder"]
        config["runs"][key] = {"module": f"r{i}", "stream": run["stream"], "loss": run["loss"]}
    return TrainedStandin(
        model=modules,
        config=config,
        recipe={
            "experiment": f"hyperdepth.{experiment}",
            "preset": "quick",
            "seeds": QUICK_SEEDS,
            "task_seeds": [t.seed for t in tasks],
            "threads": 1,
            "runner": "icml26.core.runner.execute (the quick tasks as reproduce runs them)",
        },
        data=f"the data sets of hyperdepth.{experiment}'s quick preset, drawn by each task",
        metrics=metrics,
    )


def _trainer(experiment: str) -> Any:
    def train(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
        return train_quick(experiment, resume, progress)

    return train


STANDINS: Mapping[str, Standin] = {
    f"{name}_quick": Standin(
        name=f"{name}_quick",
        system="hyperdepth",
        description=f"every encoder hyperdepth.{name}'s quick tasks train (3 seeds) and its loss",
        train=_trainer(name),
    )
    for name in EXPERIMENTS
}
