"""Experiments (registered reproductions), their presets, and the registry that discovers them.

A system registers its reproductions in ``icml26/<slug>/experiments.py``::

    @dataclass(frozen=True)
    class RoundtripConfig:
        n_steps: int = 50

    DEFAULT = RoundtripConfig()
    PRESETS = {
        "smoke": replace(DEFAULT, n_steps=5),  # seconds: run by the tests
        "quick": DEFAULT,
        "full": replace(DEFAULT, n_steps=500),
    }

    @register(name="rex.roundtrip", title="...", paper="...", claims=(...), presets=PRESETS)
    def roundtrip(config: RoundtripConfig, seed: int) -> dict[str, float]:
        ...

The decorator returns the function unchanged, so it stays picklable by reference for the
process and Ray backends.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from icml26.core.claims import Claim

__all__ = [
    "PRESETS",
    "REGISTRY",
    "Experiment",
    "Registry",
    "apply_overrides",
    "discover",
    "register",
]

PRESETS = ("smoke", "quick", "full")

Metrics = dict[str, Any]
RunFn = Callable[[Any, int], Metrics]


@dataclass(frozen=True)
class Experiment:
    """A registered reproduction of one paper experiment.

    Parameters
    ----------
    name
        ``"<slug>.<what>"``, e.g. ``"rex.roundtrip"``.
    title
        One line shown in listings and the report.
    paper
        The paper reference (title, venue, arXiv id).
    claims
        The claims this experiment checks; each names a metric ``run`` returns.
    presets
        ``{"smoke", "quick", "full"}`` mapped to frozen dataclass configs of one type.
    run
        ``run(config, seed) -> metrics``; scalar metrics are ``float``, series may be lists.
    plot
        Optional ``plot(metrics_per_seed, config) -> {name: matplotlib Figure}`` for the report.
    tables
        Optional ``tables(metrics_per_seed, config) -> [Table]`` for the report.
    seeds
        Default number of seeds per run (``--seeds`` overrides it).
    description
        Optional paragraph shown by ``icml26 show``.
    """

    name: str
    title: str
    paper: str
    claims: tuple[Claim, ...]
    presets: Mapping[str, Any]
    run: RunFn
    plot: Callable[..., Mapping[str, Any]] | None = None
    tables: Callable[..., Sequence[Any]] | None = None
    seeds: int = 1
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        slug, dot, what = self.name.partition(".")
        if not (slug and dot and what):
            raise ValueError(f"Experiment name must look like 'slug.what'; got {self.name!r}.")
        if set(self.presets) != set(PRESETS):
            raise ValueError(
                f"Experiment {self.name!r}: presets must be exactly {PRESETS}; "
                f"got {tuple(self.presets)}."
            )
        config_types = {type(c) for c in self.presets.values()}
        if len(config_types) != 1 or not dataclasses.is_dataclass(next(iter(config_types))):
            raise TypeError(
                f"Experiment {self.name!r}: presets must be instances of one dataclass; "
                f"got {sorted(t.__name__ for t in config_types)}."
            )
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Experiment {self.name!r}: claim ids must be unique; got {ids}.")

    @property
    def system(self) -> str:
        """The system slug (the part of the name before the dot)."""
        return self.name.partition(".")[0]

    def config(self, preset: str, overrides: Mapping[str, str] | None = None) -> Any:
        """The config of ``preset`` with ``--set key=value`` style string overrides applied."""
        if preset not in self.presets:
            raise ValueError(
                f"unknown preset {preset!r} for {self.name}; choose from: {', '.join(PRESETS)}"
            )
        return apply_overrides(self.presets[preset], overrides or {})

    def config_from_record(self, values: Mapping[str, Any]) -> Any:
        """Rebuild the config dataclass from a record's JSON copy (lists back to tuples)."""
        template = self.presets["quick"]
        changes = {
            f.name: tuple(values[f.name])
            if isinstance(getattr(template, f.name), tuple)
            else values[f.name]
            for f in dataclasses.fields(template)
            if f.name in values
        }
        return dataclasses.replace(template, **changes)


def _coerce(key: str, text: str, current: Any) -> Any:
    """Parse ``text`` as YAML and convert it to the type of the field's current value."""
    if isinstance(current, str):
        return text
    value = yaml.safe_load(text)
    if current is None:
        return value
    if isinstance(current, tuple):
        items = value if isinstance(value, list) else [value]
        if {type(c) for c in current} == {float}:
            return tuple(float(v) for v in items)
        return tuple(items)
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not type(current):
        raise ValueError(f"--set {key}: expected {type(current).__name__}; got {text!r}")
    return value


def apply_overrides(config: Any, overrides: Mapping[str, str]) -> Any:
    """Return ``config`` with string overrides parsed to each field's type.

    Values are parsed as YAML scalars/lists (``3``, ``1e-3``, ``true``, ``[8, 16]``). An unknown
    key raises ``ValueError`` listing the valid ones.

    Example
    -------
    >>> @dataclass(frozen=True)
    ... class C:
    ...     lr: float = 0.1
    ...     steps: tuple[int, ...] = (1, 2)
    >>> apply_overrides(C(), {"lr": "1e-3", "steps": "[4, 8]"})
    C(lr=0.001, steps=(4, 8))
    """
    fields = {f.name: f for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - set(fields))
    if unknown:
        raise ValueError(
            f"unknown config key(s) {', '.join(unknown)}; valid keys: {', '.join(fields)}"
        )
    changes = {key: _coerce(key, text, getattr(config, key)) for key, text in overrides.items()}
    return dataclasses.replace(config, **changes)


class Registry:
    """Experiments by name. ``REGISTRY`` is the package's; tests may build their own."""

    def __init__(self) -> None:
        self._experiments: dict[str, Experiment] = {}

    def add(self, experiment: Experiment) -> Experiment:
        """Add ``experiment``; a second experiment with the same name is an error."""
        old = self._experiments.get(experiment.name)
        if old is not None and old.run is not experiment.run:
            raise ValueError(f"experiment {experiment.name!r} is already registered.")
        self._experiments[experiment.name] = experiment
        return experiment

    def register(self, **spec: Any) -> Callable[[RunFn], RunFn]:
        """Decorator: register the decorated ``run`` function as an :class:`Experiment`."""

        def decorate(run: RunFn) -> RunFn:
            self.add(Experiment(run=run, **spec))
            return run

        return decorate

    def get(self, name: str) -> Experiment:
        """The experiment called ``name``; ``KeyError`` lists the valid names."""
        try:
            return self._experiments[name]
        except KeyError:
            choices = ", ".join(sorted(self._experiments)) or "(none registered)"
            raise KeyError(f"unknown experiment {name!r}; choose from: {choices}") from None

    def systems(self) -> list[str]:
        """Sorted system slugs that have at least one experiment."""
        return sorted({e.system for e in self})

    def of_system(self, slug: str) -> list[Experiment]:
        """The experiments of system ``slug``, sorted by name."""
        return [e for e in self if e.system == slug]

    def __iter__(self) -> Iterator[Experiment]:
        return iter(sorted(self._experiments.values(), key=lambda e: e.name))

    def __len__(self) -> int:
        return len(self._experiments)


REGISTRY = Registry()
register = REGISTRY.register


def discover(package: str = "icml26") -> Registry:
    """Import ``<package>.<slug>.experiments`` for every subpackage and return ``REGISTRY``."""
    root = importlib.import_module(package)
    for module in pkgutil.iter_modules(root.__path__):
        if not module.ispkg or module.name == "core":
            continue
        name = f"{package}.{module.name}.experiments"
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
    return REGISTRY
