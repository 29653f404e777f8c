"""``omnifit.efficiency`` (A4): prefill latency, KV cache and selection overhead at W = 32.

Wall-clock medians (round-robin over the methods, ``ctx.median_seconds``) give the speed-ups
the claims judge; they are timing metrics. The analytic FLOP counts of the same prefills
(:func:`~icml26.omnifit.prefill_flops`, :func:`~icml26.omnifit.arts_selection_flops`) and the
KV-cache sizes are reported beside them as deterministic metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, Resources, RunContext, register
from icml26.omnifit.experiments.common import (
    LABELS,
    PAPER,
    SMOKE_STANDIN,
    WHERE_SPEC,
    StandInConfig,
    calibrate,
    make_compressor,
    prepare_standin,
)


@dataclass(frozen=True)
class EfficiencyConfig(StandInConfig):
    train_samples: int = 0  # latency does not need trained weights (0: random init)
    windows: int = 32  # about 780 tokens
    batch: int = 8  # the paper's prefill batch
    mu: float = 0.2
    repeats: int = 20
    warmup: int = 3
    fastv_layer: int = 2


EFFICIENCY = EfficiencyConfig()
EFFICIENCY_PRESETS = {
    "smoke": replace(
        EFFICIENCY, **{**SMOKE_STANDIN, "train_samples": 0, "windows": 8}, batch=2, repeats=3,
        warmup=1, fastv_layer=1,  # the smoke model has 2 layers
    ),
    "quick": replace(EFFICIENCY, repeats=7, warmup=2),  # fewer timing repeats
    "full": EFFICIENCY,
}  # fmt: skip
TIMED = ("omnifit", "omnifit_prune", "random", "fastv")
TIMING_METRICS = (
    "prefill_seconds_*",
    "speedups",
    "speedup_omnifit",
    "selection_seconds",
    "selection_fraction",
    "attention_scoring_over_arts",
)


def _efficiency_plot(metrics: list[dict[str, Any]], config: EfficiencyConfig) -> dict:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    labels = [LABELS[name] for name in TIMED]
    speed = stack(metrics, "speedups")
    bars_with_seeds(left, labels, speed)
    left.axhline(1.8, color="k", linestyle=":", linewidth=1)
    left.set_ylabel("prefill speed-up vs full (x)")
    left.set_title(f"W = {config.windows}, mu = {config.mu:g}: prefill")
    left.tick_params(axis="x", labelrotation=30)
    kv = stack(metrics, "kv_reductions")
    bars_with_seeds(right, labels, kv)
    right.axhline(3.0, color="k", linestyle=":", linewidth=1)
    right.set_ylabel("KV-cache reduction vs full (x)")
    right.set_title("KV cache")
    right.tick_params(axis="x", labelrotation=30)
    fig.suptitle(f"Efficiency on CPU ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"efficiency": fig}


EFFICIENCY_CLAIMS = (
    Claim("A4a", "Prefill speed-up of OmniFit vs full at W = 32, mu = 0.2 >= 1.8x",
          "speedup_omnifit", ">=", 1.8, ">= 1.8x (paper: TTFT 2.20x 7B / 2.31x 30B at 10 %, H800)",
          WHERE_SPEC, source="spec"),
    Claim("A4b", "KV cache >= 3x smaller than full at mu = 0.2", "kv_reduction_omnifit", ">=", 3.0,
          ">= 3x (paper: memory 35.7 -> 14.5 GB, about 2.5x, 7B)", WHERE_SPEC, source="spec"),
    Claim("A4c", "ARTS selection < 10 % of the full prefill time", "selection_fraction", "<", 0.10,
          "< 10 % (paper: 27.8x-42x cheaper than attention-based selection)", WHERE_SPEC,
          source="spec"),
)  # fmt: skip


@register(
    name="omnifit.efficiency",
    title="A4: prefill latency, KV cache and selection overhead at W = 32 (CPU)",
    paper=PAPER,
    claims=EFFICIENCY_CLAIMS,
    presets=EFFICIENCY_PRESETS,
    plot=_efficiency_plot,
    seeds=1,
    resources=Resources(cpus=2),  # the spec times prefill on 2 threads
    timing_metrics=TIMING_METRICS,
)
def efficiency(config: EfficiencyConfig, ctx: RunContext) -> dict[str, Any]:
    import torch

    from icml26.omnifit import (
        TinyOmni,
        TinyOmniConfig,
        arts_selection_flops,
        attention_map_flops,
        kv_bytes,
        make_dataset,
        prefill_flops,
        run_compressed,
    )

    s = config
    if s.train_samples > 0:
        model, _, _, _ = prepare_standin(s, ctx)
    else:
        model = TinyOmni(
            TinyOmniConfig(s.n_layers, s.d, s.n_heads, s.d_ff), seed=ctx.seed_for("init")
        )
    model.eval()
    calib = make_dataset(max(8, config.batch), config.windows, ctx.seed_for("calib"), "train",
                         s.clutter)  # fmt: skip
    profile = calibrate(model, calib, s)
    batch = make_dataset(
        config.batch, config.windows, ctx.seed_for("test"), "test", s.clutter
    ).batch(slice(None))
    seed = ctx.seed_for("random-drop")
    out: dict[str, Any] = {"tokens": int(model.embed(batch)[0].shape[1])}
    h, ids, pos = model.embed(batch)

    def flops(alive: list[int]) -> float:
        return prefill_flops(alive, s.d, s.d_ff, s.n_heads, batch=config.batch)

    # Every timed callable runs once per round, round after round (medians over the rounds), so a
    # load spike on a shared machine slows all of them alike instead of one method's block.
    jobs: dict[str, Any] = {}
    analytic: dict[str, float] = {}
    with torch.no_grad(), ctx.progress(len(TIMED) + 3, "timed prefills") as bar:
        full_alive = run_compressed(model, batch).alive
        jobs["full"], analytic["full"] = (lambda: model(batch)), flops(full_alive)
        alives: dict[str, list[int]] = {}
        for name in TIMED:

            def prefill(n=name):
                return run_compressed(model, batch, make_compressor(n, config.mu, profile, s, seed))

            alives[name] = prefill().alive
            jobs[name], analytic[name] = prefill, flops(alives[name])

        # selection alone: anchors + scores + plan (ARTS) vs one eager attention-map pass
        def select():
            make_compressor("omnifit", config.mu, profile, s, seed).prepare(h, ids)

        def attention_scoring():
            model.attention_map(config.fastv_layer, h, pos, None)

        jobs["select"] = select
        analytic["select"] = config.batch * arts_selection_flops(ids, s.d, s.M)
        jobs["attention"] = attention_scoring
        analytic["attention"] = config.batch * attention_map_flops(h.shape[1], s.d)
        bar.advance()
        times = ctx.median_seconds(jobs, config.repeats, config.warmup)
        bar.advance(len(TIMED) + 2)
    full_time = times["full"]
    speedups, reductions = [], []
    for name in TIMED:
        speedups.append(full_time / times[name])
        reductions.append(kv_bytes(full_alive, s.d) / kv_bytes(alives[name], s.d))
        out[f"prefill_seconds_{name}"] = times[name]
        out[f"prefill_flops_{name}"] = analytic[name]
        out[f"alive_{name}"] = alives[name]
    selection, attention = times["select"], times["attention"]
    out.update({
        "prefill_seconds_full": full_time,
        "speedups": speedups,
        "kv_reductions": reductions,
        "speedup_omnifit": speedups[0],
        "kv_reduction_omnifit": reductions[0],
        "selection_seconds": selection,
        "selection_fraction": selection / full_time,
        "attention_scoring_over_arts": attention / selection,
        "prefill_flops_full": analytic["full"],
        "flops_speedups": [analytic["full"] / analytic[name] for name in TIMED],
        "selection_flops_fraction": analytic["select"] / analytic["full"],
        "attention_over_arts_flops": analytic["attention"] / analytic["select"],
        "k_eff": profile.k_eff,
    })  # fmt: skip
    return out
