import dataclasses
import importlib
import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from toy_experiments import TOY

from icml26.core import derive_seed, plan, run_tasks
from icml26.core.results import load_records


def test_seed_derivation_is_stable_and_separates_tasks():
    config = TOY.get("toy.coin").config("smoke")
    seed = derive_seed("toy.coin", config, 0)
    # Regression guard, computed once by this function: it must never change, or stored results
    # stop being recomputable from their records.
    assert seed == derive_seed("toy.coin", config, 0) == 2902943036086385150
    assert seed != derive_seed("toy.coin", config, 1)
    assert seed != derive_seed("toy.other", config, 0)
    assert seed != derive_seed("toy.coin", replace(config, p=0.4), 0)
    assert 0 <= seed < 2**63


def test_run_writes_one_record_per_seed(tmp_path):
    tasks = plan(TOY.get("toy.coin"), "smoke", 3)
    records = run_tasks(tasks, tmp_path, progress=False)
    assert [r.seed_index for r in records] == [0, 1, 2]
    assert all(r.ok and 0.1 < r.metrics["p_hat"] < 0.5 for r in records)
    assert [r.seed for r in records] == [t.seed for t in tasks]
    assert sorted(load_records(tmp_path), key=lambda r: r.seed_index) == records
    r = records[0]
    assert (
        r.config["flips"] == 200 and r.versions["numpy"] and r.wall_time_s > 0 and r.cpu_time_s >= 0
    )


def test_a_failing_task_is_recorded_and_the_others_go_on(tmp_path):
    exp = TOY.get("toy.coin")
    tasks = plan(exp, "smoke", 2) + plan(exp, "smoke", 1, {"fail": "true"})
    records = run_tasks(tasks, tmp_path, progress=False)
    assert [r.status for r in records] == ["ok", "ok", "failed"]
    assert "RuntimeError: asked to fail" in records[2].error
    assert records[2].metrics == {}


def test_resume_after_an_interrupted_run_skips_finished_tasks(tmp_path):
    folder = tmp_path / "calls"
    folder.mkdir()
    (folder / "crash-at-2").touch()
    out = tmp_path / "run"
    tasks = plan(TOY.get("toy.counter"), "smoke", 4, {"folder": str(folder)})
    with pytest.raises(KeyboardInterrupt):
        run_tasks(tasks, out, progress=False)
    assert len(list(out.rglob("*.json"))) == 2
    assert not list(out.rglob(".*.tmp"))  # nothing half-written

    (folder / "crash-at-2").unlink()
    records = run_tasks(tasks, out, progress=False)
    assert len(list(folder.glob("call-*"))) == 4  # 2 before the crash + only the 2 missing after
    assert [r.ok for r in records] == [True] * 4
    assert [r.seed for r in records] == [t.seed for t in tasks]


def test_process_pool_gives_the_same_records_as_in_process(tmp_path):
    tasks = plan(TOY.get("toy.coin"), "smoke", 3)
    local = run_tasks(tasks, tmp_path / "a", progress=False)
    pooled = run_tasks(tasks, tmp_path / "b", jobs=2, progress=False)
    assert [r.metrics for r in pooled] == [r.metrics for r in local]


def test_ray_backend_gives_the_same_records_as_local(tmp_path):
    import ray

    tasks = plan(TOY.get("toy.coin"), "smoke", 3)
    tasks += plan(TOY.get("toy.context"), "smoke", 1, {"write_artifact": "false"})
    local = run_tasks(tasks, tmp_path / "local", progress=False)
    try:
        remote = run_tasks(tasks, tmp_path / "ray", backend="ray", jobs=2, progress=False)
        assert not ray.is_initialized()  # the local cluster the run started ends with it
    finally:
        ray.shutdown()

    def comparable(record):  # everything but timing and the run folder's own path
        data = dataclasses.asdict(record)
        data.pop("wall_time_s")
        data.pop("cpu_time_s")
        data["metrics"].pop("artifact_dir", None)
        return data

    assert [comparable(r) for r in remote] == [comparable(r) for r in local]


def test_the_thread_budget_is_applied_and_restored_and_artifacts_land_per_task(tmp_path):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        task = plan(TOY.get("toy.context"), "smoke", 1)[0]
        record = run_tasks([task], tmp_path, progress=False)[0]
        assert record.ok, record.error
        assert record.metrics["threads"] == record.metrics["ctx_threads"] == 1.0
        assert record.metrics["blas_threads"] == 1.0  # numpy/scipy's pools too
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)
    artifacts = Path(record.metrics["artifact_dir"])
    assert artifacts.parent == tmp_path.resolve() / "toy.context"
    assert (artifacts / "note.txt").read_text() == f"seed {task.seed}"
    empty = plan(TOY.get("toy.context"), "smoke", 1, {"write_artifact": "false"})[0]
    record = run_tasks([empty], tmp_path, progress=False)[0]
    assert not Path(record.metrics["artifact_dir"]).exists()  # no clutter when nothing is saved


def test_nested_progress_bars_reach_the_driver_from_worker_processes(tmp_path):
    tasks = plan(TOY.get("toy.context"), "smoke", 2)
    events = []

    class Recorder:
        def __init__(self, progress):
            pass

        def __call__(self, event):
            events.append(event)

    import icml26.core.runner as runner

    original = runner._Bars
    runner._Bars = Recorder
    try:
        run_tasks(tasks, tmp_path, jobs=2, progress=True)
    finally:
        runner._Bars = original
    assert sorted(e[0] for e in events) == ["advance"] * 6 + ["start"] * 2 + ["stop"] * 2


def test_cpu_time_counts_the_child_processes_a_task_waited_for():
    import subprocess
    import sys

    from icml26.core.runner import _cpu_seconds

    before = _cpu_seconds()
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", spin], check=True)
    assert _cpu_seconds() - before >= 0.3  # time.process_time() alone misses the child


def test_cpu_time_counts_a_pool_the_task_leaves_running():
    import subprocess
    import sys
    import time

    from icml26.core.runner import _CpuClock

    clock = _CpuClock.start()
    spin = (
        "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
        "time.sleep(30)"
    )
    worker = subprocess.Popen([sys.executable, "-c", spin])  # like a reusable loky worker
    try:
        deadline = time.monotonic() + 20
        while clock.elapsed() < 0.3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert clock.elapsed() >= 0.3  # counted while it lives, never waited for
    finally:
        worker.kill()
        worker.wait()
    assert clock.elapsed() >= 0.3  # and still counted once reaped


def _logs_like_torch_and_torchao(config, ctx):
    import logging

    logging.getLogger("torch.utils._pytree").warning("Enum subclass: register_constant deprecated")
    logging.getLogger("torchao").warning("Failed to load a kernel library")
    return {"p_hat": 0.5}


def test_library_log_records_go_to_the_warnings_log_not_the_console(tmp_path, capfd):
    import logging

    import torch  # noqa: F401  (torch's own, non-propagating handler on the "torch" logger)

    torch_handlers = list(logging.getLogger("torch").handlers)
    task = replace(plan(TOY.get("toy.coin"), "smoke", 1)[0], run=_logs_like_torch_and_torchao)
    assert run_tasks([task], tmp_path, progress=False)[0].ok
    log = (tmp_path / "warnings.log").read_text()
    assert "WARNING torch.utils._pytree: Enum subclass" in log
    assert "WARNING torchao: Failed to load" in log
    err = capfd.readouterr().err
    assert "Enum subclass" not in err and "Failed to load" not in err
    assert logging.getLogger("torch").handlers == torch_handlers  # restored after the task


def test_a_lost_progress_process_stops_the_bars_not_the_task():
    from icml26.core.runner import _QueueSink

    class GoneQueue:
        calls = 0

        def put(self, event):
            GoneQueue.calls += 1
            raise BrokenPipeError("the manager process is gone")

    sink = _QueueSink(GoneQueue())
    sink(("start", 1, 3, "steps"))
    sink(("advance", 1, 1))  # no error, and no second try on a dead queue
    assert GoneQueue.calls == 1


def test_a_full_disk_stops_the_run_with_one_error_and_the_run_resumes(tmp_path, monkeypatch):
    import errno

    from icml26.core.results import TaskRecord
    from icml26.core.runner import RecordWriteError

    tasks = plan(TOY.get("toy.coin"), "smoke", 3)
    save, written = TaskRecord.save, []

    def save_twice(record, run_dir):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(record)
        return save(record, run_dir)

    monkeypatch.setattr(TaskRecord, "save", save_twice)
    with pytest.raises(RecordWriteError, match="No space left on device; the 2 record"):
        run_tasks(tasks, tmp_path, progress=False)
    monkeypatch.setattr(TaskRecord, "save", save)
    records = run_tasks(tasks, tmp_path, progress=False)
    assert [r.ok for r in records] == [True] * 3
    assert [r.metrics for r in records[:2]] == [r.metrics for r in written]


def test_pooled_tasks_start_longest_first_by_the_measured_table(tmp_path, monkeypatch):
    import json

    import icml26.core.runner as runner

    tasks = plan(TOY.get("toy.coin"), "smoke", 1) + plan(TOY.get("toy.counter"), "smoke", 1)
    table = tmp_path / "task_seconds.json"
    table.write_text(json.dumps({"toy.counter": {"smoke": 9.0}, "toy.coin": {"smoke": 1.0}}))
    monkeypatch.setattr(runner, "TASK_SECONDS", table)
    assert runner._longest_first(tasks, [0, 1]) == [1, 0]
    table.write_text(json.dumps({"toy.coin": {"smoke": 1.0}}))  # unmeasured tasks go last
    assert runner._longest_first(tasks, [1, 0]) == [0, 1]
    monkeypatch.setattr(runner, "TASK_SECONDS", tmp_path / "missing.json")
    assert runner._longest_first(tasks, [1, 0]) == [1, 0]


def test_worker_processes_size_their_blas_pools_from_the_environment(monkeypatch):
    import os

    from icml26.core.runner import _worker_thread_environment

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with _worker_thread_environment(1):
        assert os.environ["OMP_NUM_THREADS"] == os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "7" and "OPENBLAS_NUM_THREADS" not in os.environ


def _module_experiment(tmp_path, monkeypatch, body):
    (tmp_path / "toy_stale_mod.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("toy_stale_mod", None)
    module = importlib.import_module("toy_stale_mod")
    return dataclasses.replace(TOY.get("toy.counter"), name="toy.stale", run=module.run)


STALE_BODY = """
def run(config, ctx):
    return {"value": VALUE}

VALUE = 1.0
"""


def test_a_record_made_by_other_code_is_rerun_unless_reuse_stale(tmp_path, monkeypatch):
    out = tmp_path / "run"
    exp = _module_experiment(tmp_path, monkeypatch, STALE_BODY)
    first = run_tasks(plan(exp, "smoke", 1), out, progress=False)[0]
    assert first.metrics == {"value": 1.0} and first.code_fingerprint and first.replaced is None
    same = run_tasks(plan(exp, "smoke", 1), out, progress=False)[0]
    assert same.wall_time_s == first.wall_time_s  # reused: the same record read back

    exp = _module_experiment(tmp_path, monkeypatch, STALE_BODY.replace("1.0", "2.0"))
    kept = run_tasks(plan(exp, "smoke", 1), out, progress=False, reuse_stale=True)[0]
    assert kept.metrics == {"value": 1.0}  # deliberately kept
    fresh = run_tasks(plan(exp, "smoke", 1), out, progress=False)[0]
    assert fresh.metrics == {"value": 2.0} and fresh.replaced == "stale"
    assert fresh.code_fingerprint != first.code_fingerprint


def test_fingerprint_covers_the_whole_system_folder():
    from icml26.core import code_fingerprint
    from icml26.core.results import to_jsonable, versions

    assert code_fingerprint(to_jsonable) == code_fingerprint(versions)  # both are core's
    assert code_fingerprint(to_jsonable) != code_fingerprint(TOY.get("toy.coin").run)


def test_the_task_order_table_is_outside_the_fingerprint(tmp_path, monkeypatch):
    from icml26.core import code_fingerprint, results

    core = tmp_path / "core"
    core.mkdir()
    (core / "claims.py").write_text("BAR = 1\n")
    monkeypatch.setattr(results, "CORE_DIR", core)
    monkeypatch.setattr(results, "TASK_SECONDS", core / "task_seconds.json")
    before = code_fingerprint(results.to_jsonable)
    (core / "task_seconds.json").write_text('{"toy.coin/quick": 1.0}\n')
    assert code_fingerprint(results.to_jsonable) == before  # the order of tasks, not their code
    (core / "claims.py").write_text("BAR = 2\n")
    assert code_fingerprint(results.to_jsonable) != before


def test_a_corrupt_record_is_moved_aside_and_rerun(tmp_path):
    task = plan(TOY.get("toy.coin"), "smoke", 1)[0]
    good = run_tasks([task], tmp_path, progress=False)[0]
    path = tmp_path / good.relpath()
    path.write_text(path.read_text()[:40])  # truncated
    assert list(load_records(tmp_path)) == []  # the report and `list --runs` skip it, naming it
    again = run_tasks([task], tmp_path, progress=False)[0]
    assert again.ok and again.replaced == "corrupt" and again.metrics == good.metrics
    assert path.with_suffix(".json.corrupt").exists()


def test_a_gpu_task_is_refused_on_a_machine_without_one(tmp_path):
    import torch

    if torch.cuda.is_available():
        return  # this check is about machines without CUDA
    with pytest.raises(ValueError, match=r"a task needs 1 GPU\(s\) and this machine has 0"):
        run_tasks(plan(TOY.get("toy.needs_gpu"), "smoke", 1), tmp_path, progress=False)
    assert not list(tmp_path.rglob("*.json"))


def test_ray_refuses_a_gpu_task_on_a_cluster_without_gpus(tmp_path):
    import ray
    import torch

    if torch.cuda.is_available():
        return
    try:
        with pytest.raises(ValueError, match=r"the Ray cluster has 1 CPU\(s\) and 0 GPU\(s\)"):
            tasks = plan(TOY.get("toy.needs_gpu"), "smoke", 1)
            run_tasks(tasks, tmp_path, backend="ray", jobs=1, progress=False)
    finally:
        ray.shutdown()


def test_a_task_that_kills_its_worker_is_recorded_and_the_rest_finish(tmp_path):
    coin = plan(TOY.get("toy.coin"), "smoke", 2)
    crash = TOY.get("toy.crash")
    tasks = [
        coin[0],
        plan(crash, "smoke", 1, {"exit_code": "3"})[0],
        plan(crash, "smoke", 1, {"exit_code": "-9"})[0],
        coin[1],
    ]
    records = run_tasks(tasks, tmp_path, jobs=2, progress=False)
    assert [r.status for r in records] == ["ok", "failed", "failed", "ok"]
    assert "worker process running this task died (exit code 3)" in records[1].error
    assert "(killed by signal 9)" in records[2].error
    assert records[0].metrics == run_tasks(coin[:1], tmp_path / "alone", progress=False)[0].metrics
    # the failed ones are retried on resume (and fail the same way); the finished are kept
    again = run_tasks(tasks, tmp_path, jobs=2, progress=False)
    assert [r.wall_time_s for r in again[::3]] == [r.wall_time_s for r in records[::3]]


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_workers_die_with_a_killed_driver_and_nothing_is_lost(tmp_path):
    import os
    import signal
    import subprocess
    import time

    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "run"
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from toy_experiments import TOY
from icml26.core import plan, run_tasks
quick = plan(TOY.get("toy.coin"), "smoke", 1)
slow = plan(TOY.get("toy.crash"), "smoke", 2, {{"sleep_s": "60", "pid_folder": {str(pids)!r}}})
run_tasks(quick + slow, {str(out)!r}, jobs=2, progress=False)
"""
    driver = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while len(list(pids.iterdir())) < 2 and time.time() < deadline:
        time.sleep(0.2)
    workers = [int(p.name.split("-")[0]) for p in pids.iterdir()]
    assert len(workers) == 2, "the two slow tasks never started"
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    deadline = time.time() + 10
    while any(_alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers), "workers outlived their driver"
    assert len(list(out.glob("toy.coin/*.json"))) == 1  # the finished task's record survived


def test_a_second_run_on_a_busy_folder_is_refused_and_stale_temp_files_go(tmp_path):
    from icml26.core.runner import RunFolderBusyError, _locked

    tasks = plan(TOY.get("toy.coin"), "smoke", 1)
    with _locked(tmp_path), pytest.raises(RunFolderBusyError, match="another icml26 run is using"):
        run_tasks(tasks, tmp_path, progress=False)
    leftover = tmp_path / "toy.coin" / ".abc.json.x.tmp"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("{")
    assert run_tasks(tasks, tmp_path, progress=False)[0].ok
    assert not leftover.exists()


def test_tracebacks_in_records_carry_no_absolute_install_path(tmp_path):
    tasks = plan(TOY.get("toy.coin"), "smoke", 1, {"fail": "true"})
    record = run_tasks(tasks, tmp_path, progress=False)[0]
    src = str(Path(__file__).resolve().parents[2] / "src")
    assert "RuntimeError: asked to fail" in record.error and src not in record.error
    assert 'File "icml26/core/runner.py"' in record.error
