"""Packaging: a lazy package, a light experiments module, install hints, run(config, ctx)."""

import subprocess
import sys
import textwrap
from dataclasses import replace

from icml26.core import RunContext

HEAVY = ("torch", "transformers", "scipy", "matplotlib", "sklearn", "ml_dtypes", "tokenizers")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )


def test_package_and_experiments_import_light_and_names_load_their_module():
    result = _python(f"""
        import sys
        import icml26.tetrajet
        import icml26.tetrajet.experiments
        heavy = [m for m in sys.modules if m.split(".")[0] in {HEAVY!r}]
        assert heavy == [], heavy
        assert "icml26.tetrajet.formats" not in sys.modules
        from icml26.tetrajet import round_e2m1
        assert "icml26.tetrajet.formats" in sys.modules and "torch" in sys.modules
        assert "icml26.tetrajet.training" not in sys.modules
    """)
    assert result.returncode == 0, result.stderr


def test_real_model_paths_without_their_libraries_name_an_extra():
    result = _python("""
        import sys
        sys.modules["transformers"] = None
        sys.modules["tokenizers"] = None
        from icml26.core import MissingExtraError
        from icml26.tetrajet import load_text_data, olmo2_model
        for call in (lambda: olmo2_model("70M"), lambda: load_text_data("bpe")):
            try:
                call()
            except MissingExtraError as err:
                assert "pip install 'icml26[tetrajet-hf]'" in str(err), err
            else:
                raise AssertionError("no MissingExtraError")
    """)
    assert result.returncode == 0, result.stderr


def test_formats_runs_under_a_context_and_reports_progress(tmp_path):
    from icml26.tetrajet.experiments import FORMATS_PRESETS, formats

    events = []
    ctx = RunContext(seed=3, artifact_dir=tmp_path, progress_sink=events.append)
    config = replace(FORMATS_PRESETS["smoke"], size=64, draws=(2, 4))
    first = formats(config, ctx)
    assert first["format_checks_failed"] == 0.0
    (start,) = [e for e in events if e[0] == "start"]
    assert start[2] == 3 * 4  # three backward recipes, four draws each
    assert sum(e[2] for e in events if e[0] == "advance") == start[2]
    assert events[-1][0] == "stop"
    assert formats(config, RunContext(seed=3, artifact_dir=tmp_path)) == first  # seeded by ctx
