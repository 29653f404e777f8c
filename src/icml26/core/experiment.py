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

    @register(
        name="rex.roundtrip", title="...", paper="...", claims=(...), presets=PRESETS,
        requires=("torchsde",), resources=Resources(cpus=1),
    )
    def roundtrip(config: RoundtripConfig, ctx: RunContext) -> dict[str, float]:
        from icml26.rex import RexSolver  # heavy imports inside: listing must stay light
        ...

The decorator returns the function unchanged, so it stays picklable by reference for the
process and Ray backends. ``requires`` (import names; their extra is the system's slug unless
``extra`` says otherwise) and ``resources`` are read without importing anything heavy, so
``icml26 list`` shows a system whose extra is missing as unavailable and the others still run.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import importlib.util
import math
import pkgutil
import types
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from icml26.core.annotations import AnnotationMismatchError, annotation_text, conform, field_hints
from icml26.core.claims import Claim
from icml26.core.context import Resources, RunContext
from icml26.core.imports import (
    MissingExtraError,
    install_hint,
    missing_modules,
    missing_requirements,
)

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
RunFn = Callable[[Any, RunContext], Metrics]


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
        ``run(config, ctx) -> metrics``; scalar metrics are ``float``, series may be lists.
        ``ctx`` is the task's :class:`~icml26.core.context.RunContext`.
    plot
        Optional ``plot(metrics_per_seed, config) -> {name: matplotlib Figure}`` for the report.
    tables
        Optional ``tables(metrics_per_seed, config) -> [Table]`` for the report.
    seeds
        Default number of seeds per run (``--seeds`` overrides it).
    description
        Optional paragraph shown by ``icml26 show``.
    requires
        Import names ``run`` needs beyond the core dependencies (e.g. ``("sklearn",)``); they are
        looked up, never imported, to tell whether the experiment is available.
    resources
        What one task needs (CPU cores, GPUs, memory); the runner and Ray honour it.
    extra
        The ``icml26[<extra>]`` that installs ``requires``; by default the system's slug.
    data_check
        Optional ``data_check(config) -> reason | None`` for what pip cannot install (e.g. a
        Debian dataset package): ``reproduce`` skips a preset whose config it refuses.
    timing_metrics
        The metrics that come from a clock (wall times and their ratios), as names or
        ``fnmatch`` patterns (``"*_seconds"``). Every other metric must be a deterministic
        function of config and seed; the contract test checks that, skipping these.
    deterministic_metrics
        The metrics that do not vary with the seed (exact identities, analytic costs, counts
        fixed by the config), as names or patterns: one value of them is exact, so their claims
        need no three seeds. The contract test checks two seeds give the same values.
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
    requires: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)
    extra: str | None = None
    data_check: Callable[[Any], str | None] | None = field(default=None, compare=False)
    timing_metrics: tuple[str, ...] = ()
    deterministic_metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for attribute in ("timing_metrics", "deterministic_metrics"):
            patterns = tuple(getattr(self, attribute))
            object.__setattr__(self, attribute, patterns)
            if not all(isinstance(m, str) and m for m in patterns):
                raise TypeError(f"Experiment {self.name!r}: {attribute} must be metric names.")
        object.__setattr__(self, "requires", tuple(self.requires))
        if not all(isinstance(r, str) and r for r in self.requires):
            raise TypeError(f"Experiment {self.name!r}: requires must be import names (str).")
        if not isinstance(self.resources, Resources):
            raise TypeError(f"Experiment {self.name!r}: resources must be a Resources.")
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
        gates = {c.id for c in self.claims if c.kind == "gate"}
        for claim in self.claims:
            unknown = sorted(set(claim.gates or ()) - gates)
            if unknown:
                raise ValueError(
                    f"Experiment {self.name!r}: claim {claim.id!r} depends on {unknown}, which "
                    f"are not gates of this experiment (gates: {sorted(gates)})."
                )
        if sum(c.headline for c in self.claims) > 1:
            raise ValueError(f"Experiment {self.name!r}: at most one headline claim.")

    @property
    def system(self) -> str:
        """The system slug (the part of the name before the dot)."""
        return self.name.partition(".")[0]

    def is_timing(self, metric: str) -> bool:
        """Whether ``metric`` comes from a clock (matches one of :attr:`timing_metrics`)."""
        return any(fnmatch.fnmatchcase(metric, pattern) for pattern in self.timing_metrics)

    def is_deterministic(self, metric: str) -> bool:
        """Whether ``metric`` is declared seed-independent (:attr:`deterministic_metrics`)."""
        return any(fnmatch.fnmatchcase(metric, p) for p in self.deterministic_metrics)

    @property
    def headline(self) -> Claim | None:
        """This experiment's headline claim, if it holds the system's."""
        return next((c for c in self.claims if c.headline), None)

    @property
    def install_extra(self) -> str:
        """The extra that installs what this experiment requires."""
        return self.extra or self.system

    def missing(self) -> tuple[str, ...]:
        """What is not installed: requirements of the extra (from the package metadata) and
        the ``requires`` modules (looked up, not imported)."""
        return missing_requirements(self.install_extra) + missing_modules(self.requires)

    @property
    def unavailable_reason(self) -> str | None:
        """``None`` if the experiment can run here, else the one line saying how to fix that."""
        missing = self.missing()
        if not missing:
            return None
        return f"unavailable — {install_hint(self.install_extra)} (missing {', '.join(missing)})"

    def unavailable_for(self, preset: str) -> str | None:
        """:attr:`unavailable_reason`, or why ``preset``'s config cannot run here."""
        reason = self.unavailable_reason
        if reason is not None or self.data_check is None:
            return reason
        why = self.data_check(self.config(preset))
        return None if why is None else f"unavailable — {why}"

    def config(self, preset: str, overrides: Mapping[str, str] | None = None) -> Any:
        """The config of ``preset`` with ``--set key=value`` style string overrides applied."""
        if preset not in self.presets:
            raise ValueError(
                f"unknown preset {preset!r} for {self.name}; choose from: {', '.join(PRESETS)}"
            )
        return apply_overrides(self.presets[preset], overrides or {})

    def config_from_record(self, values: Mapping[str, Any]) -> Any:
        """Rebuild the config dataclass from a record's JSON copy (lists back to tuples, nested
        ones included)."""
        template = self.presets["quick"]
        changes = {
            f.name: _as_tuples(values[f.name])
            if isinstance(getattr(template, f.name), tuple)
            else values[f.name]
            for f in dataclasses.fields(template)
            if f.name in values
        }
        return dataclasses.replace(template, **changes)


def _floats(value: Any) -> Iterator[float]:
    if isinstance(value, float):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _floats(item)


def _coerce(key: str, text: str, hint: Any, current: Any) -> Any:
    """Parse ``text`` as YAML and conform it, element by element, to the field's annotation.

    Numbers must be finite unless the field's current value already holds a NaN or infinity.
    """
    if hint is str:
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ValueError(f"--set {key}: {text!r} is not a YAML value") from None
    finite = all(math.isfinite(v) for v in _floats(current))
    try:
        return conform(value, hint, lenient=True, finite=finite)
    except AnnotationMismatchError:
        pass
    if finite and _has_non_finite(value):
        raise ValueError(f"--set {key}: expected finite numbers; got {text!r}")
    raise ValueError(
        f"--set {key}: expected {annotation_text(hint)}; got {text!r} "
        f"(write it as YAML, e.g. --set {key}={_example(hint)})"
    )


def _example(hint: Any) -> str:
    """A value of the annotation ``hint`` as a user types it after ``--set key=``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return _example(options[0]) if options else "null"
    if origin is typing.Literal:
        return str(args[0])
    if origin is tuple:
        inner = [_example(a) for a in args if a is not Ellipsis] or ["1"]
        return "'[" + ", ".join((inner * 2)[:2] if Ellipsis in args else inner) + "]'"
    return {bool: "true", int: "3", float: "0.5", str: "text"}.get(hint, "...")


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str):
        try:
            return not math.isfinite(float(value))
        except ValueError:
            return False
    return isinstance(value, list) and any(_has_non_finite(v) for v in value)


def apply_overrides(config: Any, overrides: Mapping[str, str]) -> Any:
    """Return ``config`` with string overrides parsed to each field's type.

    Values are parsed as YAML scalars/lists (``3``, ``1e-3``, ``true``, ``[8, 16]``, ``null``)
    and checked element-wise against the field's annotation (``tuple[int, ...]``, ``bool``,
    ``float | None``, ...); an ``int`` is accepted where a ``float`` is expected. A mismatch or an
    unknown key raises ``ValueError`` in one line.

    Examples
    --------
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
    hints = field_hints(type(config)) or {
        f.name: type(getattr(config, f.name)) for f in dataclasses.fields(config)
    }
    changes = {
        key: _coerce(key, text, hints[key], getattr(config, key)) for key, text in overrides.items()
    }
    return dataclasses.replace(config, **changes)


class Registry:
    """Experiments by name. ``REGISTRY`` is the package's; tests may build their own."""

    def __init__(self) -> None:
        self._experiments: dict[str, Experiment] = {}
        self.unavailable: dict[str, str] = {}
        """Systems whose package cannot be imported here, with the line that says why."""

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
            slug = name.partition(".")[0]
            if slug in self.unavailable:
                raise KeyError(f"{slug} is {self.unavailable[slug]}") from None
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
    """Import ``<package>.<slug>.experiments`` for every subpackage and return ``REGISTRY``.

    A system whose package needs a module that is not installed is recorded in
    ``REGISTRY.unavailable`` with its install line; one whose experiments fail to import (a bug)
    is recorded there as ``broken`` with the error, and a warning is issued. The other systems
    are still registered.
    """
    root = importlib.import_module(package)
    for module in pkgutil.iter_modules(root.__path__):
        if not module.ispkg or module.name == "core":
            continue
        name = f"{package}.{module.name}.experiments"
        try:
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
        except MissingExtraError as err:
            REGISTRY.unavailable[module.name] = f"unavailable — {install_hint(err.extra)}"
        except ModuleNotFoundError as err:
            if (err.name or "").partition(".")[0] == package:
                _record_broken(package, module.name, err)  # our own module is missing: a bug
                continue
            missing = err.name or "a dependency"
            REGISTRY.unavailable[module.name] = (
                f"unavailable — {install_hint(module.name)} (missing {missing})"
            )
        except Exception as err:  # one broken system must not take the others down with it
            _record_broken(package, module.name, err)
    return REGISTRY


def _record_broken(package: str, slug: str, err: BaseException) -> None:
    """List a system whose experiments fail to import as broken, with none of its experiments."""
    for name in [e.name for e in REGISTRY.of_system(slug)]:
        del REGISTRY._experiments[name]
    REGISTRY.unavailable[slug] = f"broken — {type(err).__name__} on import: {err}"
    warnings.warn(f"{package}.{slug} is broken and was left out: {err!r}", stacklevel=3)


def _as_tuples(value: Any) -> Any:
    """``value`` with every list, at any depth, made a tuple (JSON's copy of a tuple field)."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list) else value
