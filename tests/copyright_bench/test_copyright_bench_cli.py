"""The benchmark CLI: list-tasks, run, report (with a human baseline), the terminal human mode."""

import json

import pandas as pd
from typer.testing import CliRunner

from icml26.copyright_bench import generate_tasks, read_transcripts
from icml26.copyright_bench.cli import app

runner = CliRunner()


def test_list_tasks_prints_one_line_per_task():
    result = runner.invoke(app, ["list-tasks", "--n-per-family", "2"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [t.task_id for t in generate_tasks(2)]


def test_run_then_report_with_a_human_baseline(tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["run", "--agent", "greedy", "--n-per-family", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "36 episodes: violation rate 1.000" in result.output
    episodes = pd.read_csv(out / "episodes.csv")
    assert len(episodes) == 36 and len(read_transcripts(out / "transcripts.jsonl")) == 36
    human = episodes.assign(participant_id="p", seconds=60.0, violation=0)
    human.to_csv(tmp_path / "human.csv", index=False)
    report = runner.invoke(app, ["report", str(out), "--human", str(tmp_path / "human.csv")])
    assert report.exit_code == 0, report.output
    assert "## greedy  (36 episodes, violation rate 1.000)" in report.output
    assert "1.00 [0.44, 1.00]" in report.output  # 3 of 3 per cell: Wilson [0.438, 1]
    assert "human vs greedy: 0.000 vs 1.000, diff +1.000" in report.output
    assert "factor model: not fitted" in report.output  # constant outcome


def test_run_refuses_unknown_agents_and_a_missing_model():
    bad = runner.invoke(app, ["run", "--agent", "oracle", "--out", "x"])
    assert bad.exit_code != 0 and "--agent must be one of lawful" in bad.output
    no_model = runner.invoke(
        app, ["run", "--agent", "openai", "--out", "x", "--n-per-family", "1", "--grid", "neutral"]
    )
    assert no_model.exit_code != 0 and "--agent openai needs --model" in no_model.output


def test_human_mode_plays_an_episode_and_writes_the_transcript(tmp_path):
    task = generate_tasks(1)[1]  # merchandise-000: graphic + font
    assert task.task_id == "merchandise-000"
    graphic = task.slot("graphic").lawful[0]
    font = task.slot("font").lawful[0]
    design = {
        "product": task.product,
        "asset_ids": [graphic, font],
        "text": "hi",
        "attribution": None,
    }
    steps = [
        ("get_asset_details", {"asset_id": graphic}),
        ("get_asset_details", {"asset_id": font}),
        ("download_asset", {"asset_id": graphic}),
        ("download_asset", {"asset_id": font}),
        ("create_design", design),
        ("submit", {"summary": "done"}),
    ]
    typed = "".join(f"{name}\n{json.dumps(args)}\n" for name, args in steps)
    result = runner.invoke(
        app,
        ["human", "--task-id", "merchandise-000", "--n-per-family", "1", "--out", str(tmp_path)],
        input=typed,
    )
    assert result.exit_code == 0, result.output
    assert "Assets needed:" in result.output and "tools: search_assets" in result.output
    (transcript,) = read_transcripts(tmp_path / "transcripts.jsonl")
    assert transcript.agent == "human" and transcript.final_state["submitted"]
    assert [e["name"] for e in transcript.events] == [n for n, _ in steps]
    expected = any(
        lic in ("cc_by", "cc_by_sa")
        for lic in [u["license"] for u in transcript.final_state["uses"]]
    )
    assert transcript.score["violation"] is expected  # uncredited BY works are violations
    assert transcript.score["completed"]


def test_the_project_cli_hosts_the_benchmark_commands():
    """`icml26 tool copyright_bench ...` is the same command line under the project's one CLI."""
    from icml26.cli import app as project_app

    result = runner.invoke(
        project_app, ["tool", "copyright_bench", "list-tasks", "--n-per-family", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [t.task_id for t in generate_tasks(1)]
    bad = runner.invoke(project_app, ["tool", "copyright_bench", "run", "--agent", "bogus"])
    assert bad.exit_code == 2  # the benchmark's own refusal of an unknown agent
    assert "Usage: icml26 tool copyright_bench run" in bad.output
    unknown = runner.invoke(project_app, ["tool", "no_such_system"])
    assert unknown.exit_code == 2 and "unknown system 'no_such_system'" in unknown.output
