"""Optional imports: install hints, lazily loaded system APIs, and a light CLI import."""

import subprocess
import sys
import textwrap

import pytest

from icml26.core import MissingExtraError, require
from icml26.core.imports import missing_modules, module_versions


def test_require_names_the_extra_and_missing_modules_does_not_import():
    assert require("json", "dev").__name__ == "json"
    with pytest.raises(MissingExtraError, match=r"pip install 'icml26\[taco\]'") as err:
        require("icml26_no_such_module", "taco", owner="TACOClassifier")
    assert err.value.extra == "taco" and err.value.missing == ("icml26_no_such_module",)
    assert "TACOClassifier needs icml26_no_such_module" in str(err.value)
    assert missing_modules(["json", "icml26_no_such_module", "a_missing_parent.child"]) == (
        "icml26_no_such_module",
        "a_missing_parent.child",
    )
    assert module_versions(["icml26_no_such_module"]) == {"icml26_no_such_module": "not installed"}
    assert module_versions(["yaml"])["yaml"][0].isdigit()


def _package(tmp_path, extra):
    pkg = tmp_path / "icml26_lazy_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        textwrap.dedent(f"""
        from icml26.core.imports import lazy_api

        __getattr__, __dir__, __all__ = lazy_api(__name__, __file__, extra={extra!r})
        """)
    )
    (pkg / "__init__.pyi").write_text("from icml26_lazy_demo.heavy import VALUE, helper\n")
    (pkg / "heavy.py").write_text("VALUE = 42\n\ndef helper():\n    return VALUE\n")
    return tmp_path


def _python(path, code):
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(path), "PATH": ""},
        check=False,
    )


def test_lazy_api_loads_a_module_on_first_use(tmp_path):
    path = _package(tmp_path, "no_such_extra")
    code = """
import sys, icml26_lazy_demo as m
assert "icml26_lazy_demo.heavy" not in sys.modules
assert m.__all__ == ["VALUE", "helper"] and dir(m) == ["VALUE", "helper"]
from icml26_lazy_demo import helper
assert helper() == 42 and "icml26_lazy_demo.heavy" in sys.modules
try:
    m.nope
except AttributeError as err:
    assert "has no attribute 'nope'" in str(err)
print("ok")
"""
    result = _python(path, code)
    assert result.stdout.strip() == "ok", result.stderr


def test_requirements_are_read_from_the_package_metadata(monkeypatch):
    import importlib.metadata

    from icml26.core.imports import extra_requirements, missing_requirements

    assert any(r.startswith("networkx") for r in extra_requirements("matroid"))
    assert set(extra_requirements("taco")) <= set(extra_requirements("taco-tables"))  # nested
    assert extra_requirements("no_such_extra") == []
    assert missing_requirements("matroid") == ()
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: "1.0" if name == "networkx" else real(name),  # installed, but too old
    )
    assert missing_requirements("matroid") == ("networkx>=3 (found 1.0)",)


def test_lazy_api_refuses_import_when_a_requirement_is_missing(tmp_path):
    path = _package(tmp_path, "matroid")
    code = (
        "import importlib.metadata as md\n"
        "real = md.version\n"
        "def version(name):\n"
        "    if name == 'networkx':\n"
        "        raise md.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "md.version = version\n"
        "import icml26_lazy_demo\n"
    )
    result = _python(path, code)
    assert "MissingExtraError: icml26_lazy_demo needs networkx>=3" in result.stderr
    assert "pip install 'icml26[matroid]'" in result.stderr


def test_the_cli_module_and_help_import_no_torch():
    code = (
        "import sys, icml26.cli\n"
        "heavy = [m for m in ('torch', 'transformers', 'scipy', 'sklearn') if m in sys.modules]\n"
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_lazy_api_refuses_a_public_name_that_is_also_a_submodule(tmp_path):
    path = _package(tmp_path, "no_such_extra")
    (path / "icml26_lazy_demo" / "helper.py").write_text("")
    result = _python(path, "import icml26_lazy_demo")
    assert "public names ['helper'] are also submodule names" in result.stderr
