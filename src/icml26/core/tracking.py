"""Experiment tracking: send a run folder's records to MLflow (``--track mlflow``).

Each task's record becomes one MLflow run (params = config, metrics = its numbers, tags =
experiment, preset, seed, code fingerprint, git revision, status), nested under one parent run
per call that carries the report and figures as artifacts. The store is ``MLFLOW_TRACKING_URI``
when set (a team's server), else an embedded SQLite store in the run folder
(``<run>/mlflow.db``, artifacts in ``<run>/mlartifacts``). A record already sent (same record
file, same content) is not sent twice. Needs ``pip install 'icml26[mlflow]'``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from icml26.core.imports import require
from icml26.core.results import TaskRecord, to_jsonable

__all__ = ["TRACKERS", "default_tracking_uri", "track_mlflow"]

TRACKERS = ("mlflow",)
_EXPERIMENT = "icml26"


def default_tracking_uri(run_dir: Path) -> str:
    """``MLFLOW_TRACKING_URI`` if set, else a SQLite store inside ``run_dir``."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path(run_dir).resolve()}/mlflow.db"


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            _flat(f"{prefix}.{key}" if prefix else str(key), item, out)
    else:
        out[prefix] = value


def _metric_series(metrics: Mapping[str, Any]) -> dict[str, list[float]]:
    """Numeric metrics as series: a scalar is a one-point series, a list of numbers its points."""
    flat: dict[str, Any] = {}
    _flat("", metrics, flat)
    series = {}
    for key, value in flat.items():
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, int | float):
            series[key] = [float(value)]
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            series[key] = [float(v) for v in value]
    return series


def _record_id(record: TaskRecord) -> str:
    text = json.dumps(to_jsonable(record), sort_keys=True, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def track_mlflow(
    run_dir: Path, records: Iterable[TaskRecord], *, artifacts: Iterable[Path] = ()
) -> str:
    """Log ``records`` (and the report ``artifacts``) to MLflow; returns the parent run's id.

    Raises
    ------
    MissingExtraError
        If MLflow is not installed.
    """
    require("mlflow", "mlflow", owner="--track mlflow")
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    run_dir = Path(run_dir).resolve()
    client = MlflowClient(tracking_uri=default_tracking_uri(run_dir))
    experiment = client.get_experiment_by_name(_EXPERIMENT)
    experiment_id = (
        experiment.experiment_id
        if experiment is not None
        else client.create_experiment(_EXPERIMENT, artifact_location=str(run_dir / "mlartifacts"))
    )
    sent = {
        run.data.tags.get("icml26.record_id")
        for run in client.search_runs([experiment_id], max_results=50_000)
    }
    parent = client.create_run(
        experiment_id, tags={"icml26.run_dir": str(run_dir)}, run_name=run_dir.name
    )
    parent_id = parent.info.run_id
    for record in records:
        record_id = _record_id(record)
        if record_id in sent:
            continue
        config: dict[str, Any] = {}
        _flat("", record.config, config)
        tags = {
            "mlflow.parentRunId": parent_id,
            "icml26.record_id": record_id,
            "icml26.record": str(record.relpath()),
            "experiment": record.experiment,
            "preset": record.preset,
            "seed": str(record.seed),
            "seed_index": str(record.seed_index),
            "status": record.status,
            "code_fingerprint": record.code_fingerprint or "",
            "git_revision": record.git_revision or "",
        }
        run = client.create_run(
            experiment_id, tags=tags, run_name=f"{record.experiment} seed {record.seed_index}"
        )
        params = [Param(k, str(v)[:6000]) for k, v in sorted(config.items())]
        metrics = [
            Metric(key, value, 0, step)
            for key, values in _metric_series(record.metrics).items()
            for step, value in enumerate(values)
            if math.isfinite(value)
        ]
        if math.isfinite(record.wall_time_s):
            metrics.append(Metric("wall_time_s", record.wall_time_s, 0, 0))
        for start in range(0, max(len(metrics), 1), 1000):  # MLflow's batch limit
            client.log_batch(
                run.info.run_id,
                metrics=metrics[start : start + 1000],
                params=params if start == 0 else [],
            )
        client.set_terminated(run.info.run_id, "FINISHED" if record.ok else "FAILED")
    for path in artifacts:
        if path.is_dir():
            client.log_artifacts(parent_id, str(path), artifact_path=path.name)
        elif path.exists():
            client.log_artifact(parent_id, str(path))
    client.set_terminated(parent_id, "FINISHED")
    return parent_id
