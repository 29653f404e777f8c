"""The comparison grid's config and what one run of it needs (light: no torch at import)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icml26.core import check_in_interval, check_one_of, check_positive_int
from icml26.spinefl.names import METHODS, TASKS

__all__ = ["CompareConfig", "make_grid_task", "run_kwargs"]


@dataclass(frozen=True)
class CompareConfig:
    """One comparison grid: tasks x alphas x seeds x methods (spec §5.3).

    ``mode="train"`` trains every run; ``"standins"`` evaluates the shipped global models of
    :mod:`icml26.spinefl.standins` instead (inner seeds 0, 1, ...; the other fields must be
    the stand-ins' recipe).
    """

    mode: str = "train"
    tasks: tuple[str, ...] = ("synthetic",)
    alphas: tuple[float, ...] = (0.1,)
    methods: tuple[str, ...] = ("SpineFL", "HeteroFL", "FedRolex", "FedDropout")
    n_seeds: int = 2
    rounds: int = 40
    n_clients: int = 20
    participation: float = 0.5
    local_epochs: int = 1
    lr: float = 0.05
    batch_size: int = 32
    momentum: float = 0.9
    hidden: tuple[int, ...] = (256, 256)
    n_samples: int = 12_000  # synthetic task: generated samples (train + 2 000 test)
    n_train: int | None = None  # keep a random subset of the training set (None: all)
    min_size: int = 10
    eval_every: int = 1
    beta: float = 0.5
    temperature: float = 1.0
    gamma: float = 0.5

    def __post_init__(self) -> None:
        owner = "CompareConfig"
        check_one_of("mode", self.mode, ("train", "standins"), owner=owner)
        for field_name, allowed in (("tasks", TASKS), ("methods", METHODS)):
            names = getattr(self, field_name)
            if isinstance(names, str) or not isinstance(names, tuple | list) or not names:
                raise ValueError(f"{owner}: {field_name} must be a non-empty list; got {names!r}.")
            for name in names:
                check_one_of(f"{field_name}[i]", name, allowed, owner=owner)
        if (
            isinstance(self.alphas, str)
            or not isinstance(self.alphas, tuple | list)
            or not self.alphas
        ):
            raise ValueError(f"{owner}: alphas must be a non-empty list; got {self.alphas!r}.")
        for a in self.alphas:
            check_in_interval("alphas[i]", a, low=0.0, high=1e4, closed="right", owner=owner)
        for name, low, high in _INT_FIELDS:
            check_positive_int(name, getattr(self, name), owner=owner, minimum=low, maximum=high)
        if self.n_train is not None:
            check_positive_int("n_train", self.n_train, owner=owner, maximum=10**7)
        if isinstance(self.hidden, str) or not isinstance(self.hidden, tuple | list):
            raise ValueError(f"{owner}: hidden must be a list of widths; got {self.hidden!r}.")
        for h in self.hidden:
            check_positive_int("hidden[i]", h, owner=owner, maximum=65_536)
        for name, low, high, closed in _FLOAT_FIELDS:
            check_in_interval(
                name, getattr(self, name), low=low, high=high, closed=closed, owner=owner
            )


# (field, minimum, maximum) of CompareConfig's integers and (field, low, high, closed) of floats
_INT_FIELDS = (
    ("n_seeds", 1, 1000),
    ("rounds", 1, 100_000),
    ("n_clients", 2, 10_000),
    ("local_epochs", 1, 1000),
    ("batch_size", 1, 100_000),
    ("n_samples", 100, 10**7),
    ("min_size", 1, 100_000),
    ("eval_every", 1, 100_000),
)
_FLOAT_FIELDS = (
    ("participation", 0.0, 1.0, "right"),
    ("lr", 0.0, 10.0, "right"),
    ("momentum", 0.0, 1.0, "left"),
    ("beta", 0.0, 1.0, "both"),
    ("temperature", 0.0, float("inf"), "neither"),
    ("gamma", 0.0, 1.0, "left"),
)


def make_grid_task(config: CompareConfig, task_name: str, alpha: float, seed: int) -> Any:
    """The :class:`~icml26.spinefl.FederatedTask` of one (task, alpha, seed) cell of the grid."""
    from icml26.spinefl import make_task

    return make_task(
        task_name,
        alpha,
        seed,
        n_clients=config.n_clients,
        min_size=config.min_size,
        hidden=config.hidden,
        n_samples=config.n_samples,
        n_train=config.n_train,
    )


def run_kwargs(config: CompareConfig) -> dict[str, Any]:
    """The keywords of :func:`~icml26.spinefl.run_method` that ``config`` sets."""
    return {
        "rounds": config.rounds,
        "participation": config.participation,
        "local_epochs": config.local_epochs,
        "lr": config.lr,
        "batch_size": config.batch_size,
        "momentum": config.momentum,
        "eval_every": config.eval_every,
        "spine_kwargs": {
            "beta": config.beta,
            "temperature": config.temperature,
            "gamma": config.gamma,
        },
    }
