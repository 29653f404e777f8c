"""``--track mlflow``: records read back from a real MLflow store equal the records."""

import mlflow
from toy_experiments import TOY

from icml26.core import plan, run_tasks, write_report
from icml26.core.tracking import track_mlflow


def test_records_sent_to_mlflow_read_back_equal(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    exp = TOY.get("toy.coin")
    tasks = plan(exp, "smoke", 2) + plan(exp, "smoke", 1, {"fail": "true"})
    records = run_tasks(tasks, tmp_path, progress=False)
    md, html = write_report(tmp_path, TOY)
    parent = track_mlflow(tmp_path, records, artifacts=[md, html, tmp_path / "figures"])
    track_mlflow(tmp_path, records)  # a second call sends nothing twice

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")
    runs = mlflow.search_runs(
        experiment_names=["icml26"], filter_string="tags.experiment = 'toy.coin'"
    )
    assert len(runs) == 3
    assert set(runs["tags.mlflow.parentRunId"]) == {parent}
    for record in records:
        row = runs[runs["tags.icml26.record"] == str(record.relpath())].iloc[0]
        assert row["params.flips"] == str(record.config["flips"])
        assert row["params.fail"] == str(record.config["fail"])
        assert row["tags.seed"] == str(record.seed)
        assert row["tags.code_fingerprint"] == record.code_fingerprint
        assert row["status"] == ("FINISHED" if record.ok else "FAILED")
        if record.ok:
            assert row["metrics.p_hat"] == record.metrics["p_hat"]
            history = mlflow.MlflowClient().get_metric_history(row["run_id"], "flips")
            assert [m.value for m in history] == [float(v) for v in record.metrics["flips"]]
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(parent)}
    assert {"report.md", "report.html", "figures"} <= artifacts
