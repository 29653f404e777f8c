"""Typed result records, written atomically, one JSON file per finished task.

A run folder holds ``<experiment>/<config hash>-seed<index>.json`` for every task. A record is
written to a temporary file in the same folder and renamed into place, so an interrupted run
never leaves a half-written record and a resumed run can trust every file it finds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import logging
import math
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from icml26.core.annotations import check_fields
from icml26.core.imports import module_versions

__all__ = [
    "TaskRecord",
    "atomic_write_text",
    "code_fingerprint",
    "config_hash",
    "git_dirty",
    "git_revision",
    "load_records",
    "to_jsonable",
    "versions",
]

CORE_DIR = Path(__file__).resolve().parent
TASK_SECONDS = CORE_DIR / "task_seconds.json"
"""Measured seconds per task of each experiment and preset (written by
``benchmarks/bench_reproduce.py --write-task-seconds``), used only to order tasks."""
log = logging.getLogger(__name__)


def to_jsonable(value: Any) -> Any:
    """Convert metrics (numpy/torch scalars and arrays, tuples, dataclasses) to JSON types."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "tolist"):  # numpy arrays and torch tensors
        return to_jsonable(value.tolist())
    raise TypeError(f"cannot store a value of type {type(value).__name__} in a result record.")


def config_hash(config: Any) -> str:
    """A short stable hash of a config dataclass (its field values, as canonical JSON)."""
    text = json.dumps(to_jsonable(config), sort_keys=True, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def versions(requires: Iterable[str] = ()) -> dict[str, str]:
    """Versions of Python, the platform, the core packages and the declared ``requires``."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for package in ("icml26", "numpy", "scipy", "torch"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            out[package] = "not installed"
    out.update(module_versions(requires))
    return out


def _source_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def code_fingerprint(run: Callable[..., Any]) -> str:
    """Hash of the code a run function executes: its system's folder and ``icml26.core``.

    The system's folder is the package ``icml26.<slug>`` the function lives in (every file in
    it, shipped checkpoints included); a function defined elsewhere contributes its own module's
    file. A record whose fingerprint differs from the current code's was made by other code.

    Examples
    --------
    >>> from icml26.core.results import code_fingerprint, to_jsonable
    >>> len(code_fingerprint(to_jsonable))
    16
    """
    parts = run.__module__.split(".")
    if parts[0] == "icml26" and len(parts) > 2:
        root = Path(sys.modules[f"icml26.{parts[1]}"].__file__ or "").resolve().parent
    else:
        root = Path(sys.modules[run.__module__].__file__ or "").resolve()
    digest = hashlib.sha256()
    for base in (CORE_DIR, root):
        for file in _source_files(base):
            if file == TASK_SECONDS:  # only orders tasks: no result depends on it
                continue
            digest.update(str(file.relative_to(base.parent)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def git_revision() -> str | None:
    """The git commit of the source tree this package was imported from, if it is a checkout."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    revision = result.stdout.strip()
    return revision if result.returncode == 0 and revision else None


def git_dirty() -> bool | None:
    """Whether the source tree has uncommitted changes (``None`` outside a git checkout)."""
    try:
        result = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bool(result.stdout.strip()) if result.returncode == 0 else None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename.

    The file gets the mode a plain ``open(path, "w")`` would give (``0o666`` less the umask), so
    collaborators on a shared machine can read results.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class TaskRecord:
    """The outcome of one task: one experiment, one config, one seed."""

    experiment: str
    preset: str
    config: dict[str, Any]
    config_hash: str
    seed_index: int
    seed: int
    status: str  # "ok" or "failed"
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    wall_time_s: float = math.nan
    cpu_time_s: float = math.nan  # CPU seconds of the task: its process (all threads) + children
    versions: dict[str, str] = field(default_factory=dict)
    git_revision: str | None = None
    git_dirty: bool | None = None
    code_fingerprint: str | None = None
    replaced: str | None = None  # why an earlier record of this task was re-run: stale / failed

    @property
    def ok(self) -> bool:
        """Whether the task finished without an exception."""
        return self.status == "ok"

    def relpath(self) -> Path:
        """Where the record lives inside a run folder."""
        return record_path(self.experiment, self.config_hash, self.seed_index)

    def save(self, run_dir: Path) -> Path:
        """Write the record atomically under ``run_dir`` and return its path."""
        path = Path(run_dir) / self.relpath()
        text = json.dumps(to_jsonable(self), indent=2, sort_keys=True, allow_nan=True)
        atomic_write_text(path, text + "\n")
        return path

    @classmethod
    def load(cls, path: Path) -> TaskRecord:
        """Read a record written by :meth:`save`, checking its schema and its place.

        Raises
        ------
        InvalidRecordError
            Naming the file and what is wrong: not a JSON object, a field of the wrong type, a
            config that does not hash to ``config_hash``, or a record whose experiment, config
            hash or seed index does not match the file's name and folder (a copied or moved
            record).
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except RecursionError:
            raise InvalidRecordError(f"{path}: JSON nested too deeply") from None
        except json.JSONDecodeError as err:
            raise InvalidRecordError(f"{path}: not JSON ({err})") from None
        if not isinstance(data, dict):
            raise InvalidRecordError(
                f"{path}: a record is a JSON object; got {type(data).__name__}"
            )
        names = {f.name for f in dataclasses.fields(cls)}
        required = {"experiment", "preset", "config", "config_hash", "seed_index", "seed", "status"}
        missing = sorted(required - set(data))
        if missing:
            raise InvalidRecordError(f"{path}: missing fields {missing}")
        try:
            record = cls(**{k: v for k, v in data.items() if k in names})
            check_fields(record, nan_ok=("wall_time_s", "cpu_time_s"))
        except TypeError as err:
            raise InvalidRecordError(f"{path}: {err}") from None
        if record.status not in ("ok", "failed") or record.seed_index < 0:
            raise InvalidRecordError(
                f"{path}: status must be 'ok' or 'failed' and seed_index >= 0; got "
                f"{record.status!r}, {record.seed_index}"
            )
        if config_hash(record.config) != record.config_hash:
            raise InvalidRecordError(f"{path}: its config does not hash to {record.config_hash}")
        expected = record_path(record.experiment, record.config_hash, record.seed_index)
        if path.parts[-2:] != expected.parts:
            raise InvalidRecordError(
                f"{path}: it records {expected}, not this file (copied or moved?)"
            )
        return record


class InvalidRecordError(ValueError):
    """A record file that cannot be trusted; the message names the file and why."""


def record_path(experiment: str, config_hash: str, seed_index: int) -> Path:
    """Relative path of a task's record inside a run folder."""
    return Path(experiment) / f"{config_hash}-seed{seed_index}.json"


def load_records(run_dir: Path) -> Iterator[TaskRecord]:
    """Every readable record in ``run_dir``, in a stable order; an unreadable one is named in a
    warning and left out (the runner moves it aside and re-runs its task)."""
    for path in sorted(Path(run_dir).glob("*/*-seed*.json")):
        try:
            yield TaskRecord.load(path)
        except (OSError, ValueError) as err:
            log.warning("unreadable record %s left out: %s", path, err)
