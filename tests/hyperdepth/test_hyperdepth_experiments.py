"""The reproductions' own composition: progress per method and per epoch, derived metrics."""

from icml26.core import RunContext
from icml26.hyperdepth.experiments.synthetic import SYN_PRESETS, synthetic


def test_synthetic_smoke_reports_progress_per_method_and_epoch(tmp_path):
    events = []
    config = SYN_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = synthetic(config, ctx)
    starts = {e[1]: e[3] for e in events if e[0] == "start"}
    advances = {
        key: sum(e[2] for e in events if e[0] == "advance" and e[1] == key) for key in starts
    }
    stops = {e[1] for e in events if e[0] == "stop"}
    assert stops == set(starts)  # every bar is closed
    methods_bar = [k for k, description in starts.items() if description.startswith("methods on")]
    assert len(methods_bar) == 1 and advances[methods_bar[0]] == len(config.methods)
    trained = [m for m in config.methods if m != "raw"]
    epoch_bars = [k for k, description in starts.items() if description.endswith(" epochs")]
    assert [starts[k] for k in epoch_bars] == [f"{m} epochs" for m in trained]
    assert all(advances[k] == config.epochs for k in epoch_bars)
    assert metrics["sfi_minus_hypergrace"] == metrics["hyperdepth_sfi"] - metrics["hypergrace_sfi"]
    assert len(metrics["hyperdepth_loss_curve"]) == config.epochs
