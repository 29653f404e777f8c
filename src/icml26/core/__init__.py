"""Shared machinery: experiments and their registry, claims, runner, results, report.

Nothing here knows about any paper; systems import from here, never from each other. Importing
core imports neither torch nor scipy: the pieces that need them import them when called.
"""

from icml26.core.claims import Claim, Status, Verdict
from icml26.core.context import ProgressBar, Resources, RunContext
from icml26.core.experiment import PRESETS, REGISTRY, Experiment, Registry, discover, register
from icml26.core.imports import MissingExtraError, install_hint, lazy_api, require
from icml26.core.report import Table, write_report
from icml26.core.results import TaskRecord, code_fingerprint
from icml26.core.runner import Task, derive_seed, plan, run_tasks
from icml26.core.schedules import warmup_cosine_lr
from icml26.core.stats import Aggregate, aggregate
from icml26.core.threads import torch_threads
from icml26.core.timing import interleaved_median_seconds
from icml26.core.validation import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    torch_generator,
)
from icml26.core.weights import (
    StateDictMismatchError,
    load_state_dict_strict,
    normal_init_,
    seeded_default_init,
)

__all__ = [
    "PRESETS",
    "REGISTRY",
    "Aggregate",
    "Claim",
    "Experiment",
    "MissingExtraError",
    "ProgressBar",
    "Registry",
    "Resources",
    "RunContext",
    "Seed",
    "StateDictMismatchError",
    "Status",
    "Table",
    "Task",
    "TaskRecord",
    "Verdict",
    "aggregate",
    "check_array",
    "check_in_interval",
    "check_one_of",
    "check_positive_int",
    "check_tensor",
    "code_fingerprint",
    "derive_seed",
    "discover",
    "install_hint",
    "interleaved_median_seconds",
    "lazy_api",
    "load_state_dict_strict",
    "normal_init_",
    "numpy_generator",
    "plan",
    "register",
    "require",
    "run_tasks",
    "seeded_default_init",
    "torch_generator",
    "torch_threads",
    "warmup_cosine_lr",
    "write_report",
]
