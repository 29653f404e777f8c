"""Shared machinery: experiments and their registry, claims, runner, results, report.

Nothing here knows about any paper; systems import from here, never from each other. Importing
core imports neither torch nor scipy: the pieces that need them import them when called.
"""

from icml26.core.annotations import check_fields
from icml26.core.claims import Claim, Status, Verdict, judge_claims
from icml26.core.context import ProgressBar, Resources, RunContext
from icml26.core.experiment import PRESETS, REGISTRY, Experiment, Registry, discover, register
from icml26.core.imports import MissingExtraError, install_hint, lazy_api, require
from icml26.core.progress import Progress, ProgressCallback, progress_reporter
from icml26.core.report import Table, write_report
from icml26.core.results import TaskRecord, code_fingerprint
from icml26.core.runner import Task, derive_seed, plan, run_tasks
from icml26.core.schedules import warmup_cosine_lr
from icml26.core.standins import (
    Standin,
    TrainedStandin,
    checkpoint_dir,
    load_checkpoint,
    save_checkpoint,
)
from icml26.core.stats import Aggregate, aggregate, bootstrap_mean, paired_bootstrap
from icml26.core.threads import torch_threads
from icml26.core.timing import interleaved_median_seconds
from icml26.core.training import (
    NonFiniteLossError,
    TrainingCheckpoint,
    adamw,
    decay_groups,
    optimizer_step,
    set_lr,
)
from icml26.core.validation import (
    Seed,
    check_array,
    check_device,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_seed,
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
    "NonFiniteLossError",
    "Progress",
    "ProgressBar",
    "ProgressCallback",
    "Registry",
    "Resources",
    "RunContext",
    "Seed",
    "Standin",
    "StateDictMismatchError",
    "Status",
    "Table",
    "Task",
    "TaskRecord",
    "TrainedStandin",
    "TrainingCheckpoint",
    "Verdict",
    "adamw",
    "aggregate",
    "bootstrap_mean",
    "check_array",
    "check_device",
    "check_fields",
    "check_in_interval",
    "check_one_of",
    "check_positive_int",
    "check_seed",
    "check_tensor",
    "checkpoint_dir",
    "code_fingerprint",
    "decay_groups",
    "derive_seed",
    "discover",
    "install_hint",
    "interleaved_median_seconds",
    "judge_claims",
    "lazy_api",
    "load_checkpoint",
    "load_state_dict_strict",
    "normal_init_",
    "numpy_generator",
    "optimizer_step",
    "paired_bootstrap",
    "plan",
    "progress_reporter",
    "register",
    "require",
    "run_tasks",
    "save_checkpoint",
    "seeded_default_init",
    "set_lr",
    "torch_generator",
    "torch_threads",
    "warmup_cosine_lr",
    "write_report",
]
