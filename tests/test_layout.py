"""The shape every system keeps (core v3): experiments as a package of small modules, no import
cycles inside a system (deferred imports included), tests that use public names only, and numpydoc
section names."""

import ast
import re
from pathlib import Path

import pytest

from icml26.core import discover

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "icml26"
SYSTEMS = discover().systems()
MAX_EXPERIMENT_LINES = 350  # one experiment: config, presets, claims, run, report hooks


@pytest.mark.parametrize("slug", SYSTEMS)
def test_experiments_are_a_package_of_small_modules(slug):
    folder = SRC / slug / "experiments"
    assert folder.is_dir() and not (SRC / slug / "experiments.py").exists(), (
        f"icml26.{slug}.experiments must be a package with one module per experiment"
    )
    long = {
        f.name: n
        for f in folder.glob("*.py")
        if (n := len(f.read_text().splitlines())) > MAX_EXPERIMENT_LINES
    }
    assert not long, f"experiment modules over {MAX_EXPERIMENT_LINES} lines: {long}"


def _module_name(path):
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stub_exports(slug):
    stub = SRC / slug / "__init__.pyi"
    exports = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                exports[alias.asname or alias.name] = node.module
    return exports


def _imports(path, package, exports, modules):
    """The modules of the same system that ``path`` imports, deferred imports included."""
    this = _module_name(path)
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = this.split(".")
                if path.name != "__init__.py":
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [(base, [a.name for a in node.names])]
        else:
            continue
        for module, names in targets:
            if module == package:  # the lazy package: each name comes from its own module
                out |= {exports[n] for n in names if n in exports}
            elif module.startswith(package + "."):
                subs = {f"{module}.{n}" for n in names} & modules
                out |= subs or {module}
    return out - {this}


@pytest.mark.parametrize("slug", SYSTEMS)
def test_no_import_cycles_inside_a_system(slug):
    package = f"icml26.{slug}"
    files = [p for p in (SRC / slug).rglob("*.py")]
    modules = {_module_name(p) for p in files}
    exports = _stub_exports(slug)
    graph = {_module_name(p): _imports(p, package, exports, modules) & modules for p in files}
    # packages import their own modules (the experiments package registers each experiment):
    # an edge from a package to its children is not a cycle through the package's own code.
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt.startswith(node + ".") and node.endswith("experiments"):
                continue
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_tests_import_no_private_name_from_an_experiment():
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and ".experiments" in (node.module or ""):
                offenders += [
                    f"{path.relative_to(ROOT)}: {a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert not offenders, f"private names imported from experiments: {offenders}"


def test_docstrings_use_the_numpydoc_examples_heading():
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted(SRC.rglob("*.py*"))
        if path.suffix in {".py", ".pyi"}
        if re.search(r"^(\s*)Example\n\1-------\n", path.read_text(), re.M)
    ]
    assert not offenders, f"numpydoc's section is 'Examples', not 'Example': {offenders}"
