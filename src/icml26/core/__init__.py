"""Shared machinery: experiments and their registry, claims, runner, results, report.

Nothing here knows about any paper; systems import from here, never from each other.
"""

from icml26.core.claims import Claim, Status, Verdict
from icml26.core.experiment import PRESETS, REGISTRY, Experiment, Registry, discover, register
from icml26.core.report import Table, write_report
from icml26.core.results import TaskRecord
from icml26.core.runner import Task, derive_seed, plan, run_tasks
from icml26.core.stats import Aggregate, aggregate
from icml26.core.threads import torch_threads
from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
    torch_generator,
)

__all__ = [
    "PRESETS",
    "REGISTRY",
    "Aggregate",
    "Claim",
    "Experiment",
    "Registry",
    "Seed",
    "Status",
    "Table",
    "Task",
    "TaskRecord",
    "Verdict",
    "aggregate",
    "check_in_interval",
    "check_one_of",
    "check_positive_int",
    "derive_seed",
    "discover",
    "numpy_generator",
    "plan",
    "register",
    "run_tasks",
    "torch_generator",
    "torch_threads",
    "write_report",
]
