"""The reproductions run under a context and report progress; the real-model paths' install hint."""

import subprocess
import sys
import textwrap
from dataclasses import replace

from icml26.core import RunContext
from icml26.tetrajet.experiments.formats import FORMATS_PRESETS, formats
from icml26.tetrajet.experiments.oscillation_toy import TOY_PRESETS, oscillation_toy


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )


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
    events = []
    ctx = RunContext(seed=3, artifact_dir=tmp_path, progress_sink=events.append)
    config = replace(FORMATS_PRESETS["smoke"], size=64, draws=(2, 4))
    first = formats(config, ctx)
    assert first["format_checks_failed"] == 0.0
    (start,) = [e for e in events if e[0] == "start"]
    assert start[2] == config.replicates * 3 * 4  # replicates x three backward recipes x 4 draws
    assert sum(e[2] for e in events if e[0] == "advance") == start[2]
    assert events[-1][0] == "stop"
    assert formats(config, RunContext(seed=3, artifact_dir=tmp_path)) == first  # seeded by ctx


def test_oscillation_toy_moves_one_bar_over_every_trained_step_to_its_end(tmp_path):
    events = []
    ctx = RunContext(seed=1, artifact_dir=tmp_path, progress_sink=events.append)
    config = replace(TOY_PRESETS["smoke"], dim=32, n_samples=64, steps=40, period=10, track_steps=4)
    metrics = oscillation_toy(config, ctx)
    starts = [e for e in events if e[0] == "start"]
    # the 24 steps before OsciReset's start (60 %) are trained once, then 16 + 16 more
    assert [e[2] for e in starts] == [24 + 16 + 16]
    assert sum(e[2] for e in events if e[0] == "advance") == 56
    assert metrics["loss_increase"] == metrics["loss_reset"] / metrics["loss_plain"] - 1
