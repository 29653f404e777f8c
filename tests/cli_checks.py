"""A check the systems' config tests share: a bad ``--set`` exits 2 before any task runs."""

from pathlib import Path

from typer.testing import CliRunner


def assert_cli_refuses(tmp_path: Path, experiment: str, setting: str, field: str = "") -> None:
    """``icml26 run EXPERIMENT --preset quick --set SETTING`` exits 2, names ``field`` (default:
    the setting's key) and writes no record."""
    from icml26.cli import app

    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", experiment, "--preset", "quick", "--set", setting, "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert (field or setting.split("=")[0]) in result.output
    assert not list(out.glob("**/*.json"))  # nothing ran
