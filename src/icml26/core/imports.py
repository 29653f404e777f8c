"""Optional imports: declared requirements, install hints, and lazily loaded system APIs.

A system's heavy dependencies (torch, transformers, its extra) are imported only when its API is
used, so ``icml26 list`` can read every experiment's registration without importing them. A
system's ``__init__.py`` is::

    \"\"\"Docstring: the paper, what the package gives, an example.\"\"\"

    from icml26.core.imports import lazy_api

    __getattr__, __dir__, __all__ = lazy_api(__name__, __file__, requires=("sklearn",))

and its sibling ``__init__.pyi`` holds the public names as plain imports, which type checkers
and IDEs read and :func:`lazy_api` parses (``from icml26.<slug>.<module> import Name``). Importing
the package checks ``requires`` (without importing them) and raises :class:`MissingExtraError`
naming the extra that installs what is missing; a public name's module is imported on first use.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "MissingExtraError",
    "extra_requirements",
    "install_hint",
    "lazy_api",
    "missing_modules",
    "missing_requirements",
    "module_versions",
    "require",
]

# Import names whose distribution on PyPI is called differently (only where a hint names one).
_DISTRIBUTIONS = {
    "sklearn": "scikit-learn",
    "yaml": "pyyaml",
    "pyEDM": "pyEDM",
    "dp_accounting": "dp-accounting",
    "prv_accountant": "prv-accountant",
    "ml_dtypes": "ml-dtypes",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it.

    Attributes
    ----------
    extra
        The ``icml26[<extra>]`` the missing modules belong to.
    missing
        The import names that could not be found.
    """

    def __init__(
        self, owner: str, missing: Iterable[str], extra: str, *, hint: str | None = None
    ) -> None:
        self.extra = extra
        self.missing = tuple(missing)
        names = ", ".join(self.missing)
        hint = hint or install_hint(extra)
        super().__init__(f"{owner} needs {names}, which is not installed: {hint}")


def install_hint(extra: str) -> str:
    """The one install line for an extra, e.g. ``pip install 'icml26[taco]'``."""
    return f"pip install 'icml26[{extra}]'"


def _is_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or a stub left in sys.modules
        return False


def missing_modules(modules: Iterable[str]) -> tuple[str, ...]:
    """The names in ``modules`` that cannot be imported, found without importing them.

    Examples
    --------
    >>> missing_modules(["json", "no_such_module_here"])
    ('no_such_module_here',)
    """
    return tuple(m for m in modules if not _is_installed(m))


def extra_requirements(extra: str, *, _seen: frozenset[str] = frozenset()) -> list[str]:
    """The requirement lines (``"networkx>=3"``) the extra ``icml26[<extra>]`` installs.

    Read from the installed package's metadata, i.e. from ``pyproject.toml``, the one place a
    system's dependencies are declared; ``icml26[a,b]`` inside an extra is expanded. An empty
    list when the package metadata is not installed (a bare source tree) or the extra is unknown.

    Examples
    --------
    >>> any(r.startswith("networkx") for r in extra_requirements("matroid"))
    True
    """
    from packaging.requirements import Requirement

    try:
        lines = importlib.metadata.requires("icml26") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    out: list[str] = []
    for line in lines:
        req = Requirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": extra}):
            continue
        if req.name == "icml26":
            for inner in sorted(req.extras - _seen - {extra}):
                out += extra_requirements(inner, _seen=_seen | {extra})
        else:
            out.append(str(Requirement(line.split(";")[0])))
    return out


def missing_requirements(extra: str) -> tuple[str, ...]:
    """The requirements of ``icml26[<extra>]`` that are not installed, or installed too old.

    Examples
    --------
    >>> missing_requirements("matroid")
    ()
    """
    from packaging.requirements import Requirement

    missing = []
    for line in extra_requirements(extra):
        req = Requirement(line)
        try:
            installed = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(line)
            continue
        if req.specifier and not req.specifier.contains(installed, prereleases=True):
            missing.append(f"{line} (found {installed})")
    return tuple(missing)


def require(module: str, extra: str, *, owner: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming ``extra``.

    Examples
    --------
    >>> require("json", "dev").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        top = (err.name or module).partition(".")[0]
        if top != module.partition(".")[0]:
            raise  # the module exists but one of its own imports failed: not ours to rename
        raise MissingExtraError(owner or "this feature", [module], extra) from err


@functools.cache
def _packages_distributions() -> Mapping[str, list[str]]:
    # Scans every installed distribution (~0.3 CPU-s here); every task's record asks for it.
    return importlib.metadata.packages_distributions()


def module_versions(modules: Iterable[str]) -> dict[str, str]:
    """Installed version of each import name's distribution (``"not installed"`` if missing).

    Examples
    --------
    >>> module_versions(["yaml"])["yaml"] != "not installed"
    True
    """
    distributions = _packages_distributions()
    out = {}
    for module in modules:
        top = module.partition(".")[0]
        names = distributions.get(top) or [_DISTRIBUTIONS.get(top, top)]
        try:
            out[module] = importlib.metadata.version(names[0])
        except importlib.metadata.PackageNotFoundError:
            out[module] = "not installed"
    return out


def _stub_exports(stub: Path, package: str) -> dict[str, str]:
    """``{public name: module}`` from the ``from <package>.<module> import ...`` lines of a stub."""
    exports = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith(f"{package}."):
                raise ValueError(
                    f"{stub}: public names must come from {package}.*; got {node.module}"
                )
            for alias in node.names:
                exports[alias.asname or alias.name] = node.module
    return exports


def lazy_api(
    package: str, init_file: str, *, extra: str | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for a system package whose names load on first use.

    Parameters
    ----------
    package
        The package's ``__name__``.
    init_file
        The package's ``__file__``; the public names are read from the ``__init__.pyi`` beside it.
    extra
        The extra that installs what the package needs (default: the system's slug); its
        requirements are read from the package metadata (:func:`missing_requirements`).

    Raises
    ------
    MissingExtraError
        If a requirement of the extra is not installed (or too old).
    """
    extra = extra or package.rpartition(".")[2]
    missing = missing_requirements(extra)
    if missing:
        raise MissingExtraError(package, missing, extra)
    exports = _stub_exports(Path(init_file).with_suffix(".pyi"), package)
    folder = Path(init_file).parent
    # Importing submodule `x` sets the package attribute `x` to the module, which would then hide
    # a public name `x` from __getattr__: refuse the clash instead of returning the wrong object.
    clashes = [n for n in exports if (folder / f"{n}.py").exists() or (folder / n).is_dir()]
    if clashes:
        raise ValueError(f"{package}: public names {clashes} are also submodule names; rename one.")

    def getattr_(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later lookups skip __getattr__
        return value

    def dir_() -> list[str]:
        return sorted(exports)

    return getattr_, dir_, list(exports)
