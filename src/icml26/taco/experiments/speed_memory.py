"""``taco.speed_memory`` (E1): predict time, multiply-adds and activations, TACO vs POT, growing N.

Randomly initialised weights (spec E1 allows them: the cost depends on the architecture only).
Per N, the predict step of POT without and with a KV cache and of TACO at each p is timed
round-robin on ``ctx.clock`` (timing metrics), and its multiply-adds and activations are counted
analytically (deterministic metrics).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register
from icml26.taco.experiments.common import PAPER

TIMED = (
    "time_pot", "time_pot_cache", "time_taco", "time_compress", "rss_pot", "rss_taco",
    "rounds_pot", "rounds_pot_cache", "rounds_taco",
)  # fmt: skip


@dataclass(frozen=True)
class SpeedConfig:
    n_train: tuple[int, ...] = (512, 1024, 2048)
    percentages: tuple[float, ...] = (1.0, 4.0, 16.0)
    n_test: int = 256
    batch_size: int = 256
    n_features: int = 10
    repeats: int = 5  # timed rounds: each gives one paired POT / TACO ratio
    emsize: int = 64
    nlayers: int = 4
    measure_rss: bool = False

    def __post_init__(self) -> None:
        from icml26.core import check_in_interval, check_positive_int

        owner = "SpeedConfig"
        if not (isinstance(self.n_train, tuple) and 1 <= len(self.n_train) <= 16):
            raise TypeError(f"{owner}: n_train must be a tuple of 1 to 16 row counts.")
        for n in self.n_train:
            check_positive_int("n_train", n, owner=owner, maximum=1 << 20)
        if not (isinstance(self.percentages, tuple) and 1 <= len(self.percentages) <= 16):
            raise TypeError(f"{owner}: percentages must be a tuple of 1 to 16 values in (0, 100].")
        for p in self.percentages:
            check_in_interval("percentages", p, low=0, high=100, closed="right", owner=owner)
        check_positive_int("n_test", self.n_test, owner=owner, maximum=1 << 20)
        check_positive_int("batch_size", self.batch_size, owner=owner, maximum=1 << 20)
        check_positive_int("n_features", self.n_features, owner=owner, maximum=16)
        check_positive_int("repeats", self.repeats, owner=owner, maximum=1000)
        check_positive_int("nlayers", self.nlayers, owner=owner, maximum=64)
        check_positive_int("emsize", self.emsize, owner=owner, minimum=4, maximum=4096)
        if self.emsize % 4:
            raise ValueError(f"{owner}: emsize must be a multiple of 4; got {self.emsize!r}.")
        if not isinstance(self.measure_rss, bool):
            raise TypeError(f"{owner}: measure_rss must be a bool; got {self.measure_rss!r}.")


SPEED = SpeedConfig()
PRESETS = {
    # seconds: a 1-layer model on tiny tables
    "smoke": replace(SPEED, n_train=(128, 256), n_test=32, batch_size=32, repeats=1, nlayers=1),
    # 2 shared cores: N up to 2048 and one test batch keep POT's quadratic runs within ~1 minute
    "quick": SPEED,
    "full": replace(SPEED, n_train=(1024, 2048, 4096, 8192, 16384), n_test=1024, measure_rss=True),
}


def _series(metrics: list[dict[str, Any]], config: SpeedConfig, key: str, p_index: int = 0):
    """``key`` of every seed's rows at each N for the ``p_index``-th percentage: (seeds, N's).

    Rows are in run order (for N: for p), so they are matched by position, not by value; the
    ``time_*`` keys come from ``measured``, the others from ``rows``.
    """
    P = len(config.percentages)
    table = "measured" if key in TIMED else "rows"
    return np.array(
        [[m[table][i * P + p_index][key] for i in range(len(config.n_train))] for m in metrics],
        dtype=float,
    )


def _plot(metrics: list[dict[str, Any]], config: SpeedConfig) -> dict[str, Any]:
    """Predict time and activations against N: seed means with min–max bands."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4))
    ns = list(config.n_train)
    series = _series
    mean_band(ax_t, ns, series(metrics, config, "time_pot"), color="k", marker="o",
              label="POT (no cache)")  # fmt: skip
    mean_band(ax_t, ns, series(metrics, config, "time_pot_cache"), color="k", ls="--",
              marker="o", label="POT (KV cache)")  # fmt: skip
    mean_band(ax_m, ns, series(metrics, config, "activations_pot"), color="k", marker="o",
              label="POT")  # fmt: skip
    for i, p in enumerate(config.percentages):
        label = f"TACO p={p:g}%"
        mean_band(ax_t, ns, series(metrics, config, "time_taco", i), marker="s", label=label)
        mean_band(ax_m, ns, series(metrics, config, "activations_taco", i), marker="s",
                  label=label)  # fmt: skip
    note = seeds_note(len(metrics))
    for ax, ylabel, title in (
        (ax_t, "predict time [s]", f"Predict time vs N ({note})"),
        (ax_m, "activations per layer", f"Activations per layer vs N ({note})"),
    ):
        ax.set(xscale="log", yscale="log", xlabel="training rows N", ylabel=ylabel)
        ax.set_xticks(ns, [str(n) for n in ns], minor=False)
        ax.set_xticks([], minor=True)
        ax.set_title(title, fontsize=9)
        legend_outside(ax)
    fig.tight_layout()
    return {"speed_memory": fig}


def _tables(metrics: list[dict[str, Any]], config: SpeedConfig) -> list[Table]:
    def mean(table: str, i: int, key: str) -> float:
        return float(np.mean([m[table][i][key] for m in metrics]))

    rows = []
    for i, r in enumerate(metrics[0]["rows"]):
        t = {k: mean("measured", i, k) for k in ("time_pot", "time_pot_cache", "time_taco")}
        rows.append(
            [
                r["n_train"],
                f"{r['percentage']:g}",
                r["n_latents"],
                f"{t['time_pot']:.3f}",
                f"{t['time_pot_cache']:.3f}",
                f"{t['time_taco']:.3f}",
                f"{t['time_pot'] / t['time_taco']:.1f}×",
                f"{r['macs_pot'] / r['macs_taco']:.1f}×",
                f"{1 - r['activations_taco'] / r['activations_pot']:.1%}",
                f"{mean('measured', i, 'time_compress'):.3f}",
            ]
        )
    over = "1 seed" if len(metrics) == 1 else f"mean over {len(metrics)} seeds"
    columns = ["N", "p %", "K", "POT s", "POT+cache s", "TACO s", "speed-up", "MACs ratio",
               "act. saved", "compress s"]  # fmt: skip
    return [
        Table(
            f"Predict cost (paper: up to 94× faster, 97 % less memory; {over})",
            columns,
            rows,
            note=f"{config.n_test} test rows in batches of {config.batch_size}, "
            f"{config.n_features} features, {metrics[0]['threads']} torch thread(s); "
            "MACs ratio: POT / TACO multiply-adds (analytic).",
        )
    ]


@register(
    name="taco.speed_memory",
    title="E1: predict time and activation memory, TACO vs uncompressed POT, growing N",
    paper=PAPER,
    claims=(
        Claim(
            "S1",
            "Predict speed-up vs POT (no cache) at the largest N, p = 1 % (per timed round)",
            "speedup_p1_largest",
            ">=",
            20.0,
            "≥ 20× at N = 16 384 (paper: up to 94×)",
            "spec §5.4 full (a)",
            source="spec",
            control="POT itself (no compression): speed-up 1",
            control_value=1.0,
        ),
        Claim(
            "S2",
            "The speed-up grows with N: largest-N / smallest-N speed-up, p = 1 % (per round)",
            "speedup_growth_p1",
            ">",
            1.0,
            "scales better with increased dataset sizes",
            "abstract",
            source="paper",
            control="a method whose cost grows like POT's: ratio 1",
            control_value=1.0,
        ),
        Claim(
            "S3",
            "Activations per layer at the largest N, p = 1 %: at least 85 % fewer than POT "
            "(analytic (K + B) / (N + B), B = test batch)",
            "activation_reduction_p1_largest",
            ">=",
            0.85,
            "88 % at N = 2 048, B = 256 (analytic; paper: up to 97 %)",
            "spec §5.4 (analytic count)",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "S4",
            "Predict speed-up vs POT with KV cache at the largest N, p = 1 % (per round)",
            "speedup_cache_p1_largest",
            ">=",
            5.0,
            "≥ 5× at N = 16 384",
            "spec §5.4 full (a)",
            source="spec",
            control="POT with its KV cache: speed-up 1",
            control_value=1.0,
        ),
    ),
    presets=PRESETS,
    plot=_plot,
    tables=_tables,
    seeds=1,  # the speed-up claims are judged on the per-round ratios (``repeats`` replicates)
    resources=Resources(cpus=1),  # timings on one torch thread (small tensors run faster on 1)
    timing_metrics=("measured", "speedup_*"),
    # analytic counts fixed by the config (the architecture, N, p and the test batch)
    deterministic_metrics=("rows", "macs_*", "activation_*", "threads"),
)
def speed_memory(config: SpeedConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.taco import TACOConfig, TACOModel, benchmark_inference

    # Like-for-like cost: same architecture whatever the weights (spec E1 allows random weights).
    arch = TACOConfig.small(emsize=config.emsize, nlayers=config.nlayers)
    model = TACOModel(arch, seed=ctx.torch_generator("init")).eval()
    rows, measured = [], []
    with ctx.progress(len(config.n_train), "timing predict at each N") as bar:
        for n in config.n_train:
            for cost in benchmark_inference(
                model,
                n,
                config.percentages,
                n_test=config.n_test,
                batch_size=config.batch_size,
                n_features=config.n_features,
                repeats=config.repeats,
                measure_rss=config.measure_rss,
                seed=ctx.torch_generator(),  # the same table at every N, as before
                clock=ctx.clock,
            ):
                row = asdict(cost)
                measured.append({k: row.pop(k) for k in ("n_train", "percentage", *TIMED)})
                rows.append({"n_train": n, "percentage": cost.percentage, **row})
            bar.advance()
    p1 = [i for i, r in enumerate(rows) if r["percentage"] == min(config.percentages)]
    first, last = p1[0], p1[-1]
    t0, t1, r1 = measured[first], measured[last], rows[last]

    def per_round(t: dict[str, Any], baseline: str) -> np.ndarray:
        """Speed-up of TACO over ``baseline`` in each timed round (a paired replicate)."""
        return np.asarray(t[f"rounds_{baseline}"]) / np.asarray(t["rounds_taco"])

    metrics: dict[str, Any] = {
        "rows": rows,
        "measured": measured,
        "threads": ctx.threads,
        "speedup_p1_largest": per_round(t1, "pot").tolist(),
        "speedup_growth_p1": (per_round(t1, "pot") / per_round(t0, "pot")).tolist(),
        "speedup_cache_p1_largest": per_round(t1, "pot_cache").tolist(),
        "speedup_median_p1_largest": t1["time_pot"] / t1["time_taco"],
        "macs_speedup_p1_largest": r1["macs_pot"] / r1["macs_taco"],
        "macs_speedup_cache_p1_largest": r1["macs_pot_cache"] / r1["macs_taco"],
        "activation_reduction_p1_largest": 1 - r1["activations_taco"] / r1["activations_pot"],
    }
    if config.measure_rss:
        metrics["rss_reduction_p1_largest"] = 1 - t1["rss_taco"] / max(1, t1["rss_pot"])
    return metrics
