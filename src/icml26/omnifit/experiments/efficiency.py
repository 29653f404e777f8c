"""``omnifit.efficiency`` (A4): prefill latency, KV cache and selection overhead at W = 32.

Wall-clock medians (round-robin over the methods, ``ctx.median_seconds``) give the speed-ups
the claims judge; they are timing metrics, measured in ``blocks`` independent timing blocks
(one speed-up per block: the replicates a verdict needs). The analytic FLOP counts of the same
prefills (:func:`~icml26.omnifit.prefill_flops`, :func:`~icml26.omnifit.arts_selection_flops`)
are reported beside them. The KV-cache reduction is the ratio of the plan's KV sizes at a
cost-equivalent retention: it holds by construction (a sanity check).

The LAHP profile that sets the budgets is calibrated here on a random-init model (the timed
sizes, L = 8, d = 96, have no shipped stand-in); the paper's 2.31x is end-to-end time to first
token at 10 % tokens, this is the decoder prefill at ``mu`` (spec §5).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, Resources, RunContext, check_positive_int, register
from icml26.omnifit.experiments.checks import check_retention
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
    repeats: int = 7  # timed rounds per block
    blocks: int = 3  # independent timing blocks (one speed-up each)
    calib_per_block: int = 3  # calibration streams of each block's LAHP profile
    warmup: int = 3
    fastv_layer: int = 2

    _min_train_samples = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "EfficiencyConfig"
        check_retention("mu", self.mu, owner, at_least=self.r_min)
        for name in ("batch", "repeats", "blocks", "calib_per_block"):
            check_positive_int(name, getattr(self, name), maximum=10_000, owner=owner)
        check_positive_int("warmup", self.warmup, minimum=0, maximum=10_000, owner=owner)
        check_positive_int(  # a layer index of the model
            "fastv_layer", self.fastv_layer, minimum=0, maximum=self.n_layers - 1, owner=owner
        )


EFFICIENCY = EfficiencyConfig()
EFFICIENCY_PRESETS = {
    "smoke": replace(
        EFFICIENCY, **{**SMOKE_STANDIN, "train_samples": 0, "windows": 8}, batch=2, repeats=1,
        blocks=2, calib_per_block=1, warmup=1, fastv_layer=1,  # the smoke model has 2 layers
    ),
    # issue 51 (<= 60 CPU-s): the quick stand-in's sizes (L = 4, d = 64) and a prefill batch of
    # 2 at W = 32; 3 blocks x 2 timed rounds
    "quick": replace(EFFICIENCY, n_layers=4, d=64, d_ff=128, batch=2, repeats=2, warmup=1),
    "full": EFFICIENCY,
}  # fmt: skip
TIMED = ("omnifit", "omnifit_prune", "random", "fastv")
# one eager attention-map pass over the full prefill: A4c's metric when ARTS selection is
# replaced by attention-map scoring (0.16-0.22 in the loaded quick run of 2026-12-07, 0.43 in
# the idle one of 2026-12-02; docs/omnifit.md)
CONTROL_ATTENTION_FRACTION = 0.2
TIMING_METRICS = (
    "prefill_seconds_*",
    "speedups",
    "speedup_omnifit",
    "selection_seconds",
    "selection_fraction",
    "attention_fraction",
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
          WHERE_SPEC, source="spec", control="no compression (the full prefill)",
          control_value=1.0),
    Claim("A4b", "KV cache of the plan >= 3x smaller than full at mu = 0.2 (by construction of "
          "the cost-equivalent budgets)", "kv_reduction_omnifit", ">=", 3.0,
          ">= 3x (paper: memory 35.7 -> 14.5 GB, about 2.5x, 7B)", WHERE_SPEC, source="spec",
          kind="sanity"),
    Claim("A4c", "ARTS selection < 10 % of the full prefill time", "selection_fraction", "<", 0.10,
          "< 10 % (paper: 27.8x-42x cheaper than attention-based selection)", WHERE_SPEC,
          source="spec", control="attention-map scoring (one eager attention pass, FastV-style)",
          control_value=CONTROL_ATTENTION_FRACTION),
)  # fmt: skip


@register(
    name="omnifit.efficiency",
    title="A4: prefill latency, KV cache and selection overhead at W = 32 (CPU)",
    paper=PAPER,
    claims=EFFICIENCY_CLAIMS,
    presets=EFFICIENCY_PRESETS,
    plot=_efficiency_plot,
    seeds=1,  # one seed, `blocks` timing replicates inside it
    resources=Resources(cpus=2),  # the spec times prefill on 2 threads
    timing_metrics=TIMING_METRICS,
    deterministic_metrics=("tokens",),
)
def efficiency(config: EfficiencyConfig, ctx: RunContext) -> dict[str, Any]:
    import numpy as np
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
    batch = make_dataset(
        config.batch, config.windows, ctx.seed_for("test"), "test", s.clutter
    ).batch(slice(None))
    seed = ctx.seed_for("random-drop")
    out: dict[str, Any] = {"tokens": int(model.embed(batch)[0].shape[1])}
    h, ids, pos = model.embed(batch)

    def flops(alive: list[int]) -> float:
        return prefill_flops(alive, s.d, s.d_ff, s.n_heads, batch=config.batch)

    # Each timing block has its own LAHP profile, calibrated on its own streams, so the blocks
    # are replicates of the whole protocol. Every timed callable runs once per round, round after
    # round (medians over the rounds), so a load spike slows all of them alike.
    blocks, plans = [], []
    analytic: dict[str, float] = {}
    with torch.no_grad(), ctx.progress(config.blocks, "timing blocks") as bar:
        full_alive = run_compressed(model, batch).alive
        analytic["full"] = flops(full_alive)
        for b in range(config.blocks):
            calib = make_dataset(config.calib_per_block, config.windows,
                                 ctx.seed_for(f"calib-{b}"), "train", s.clutter)  # fmt: skip
            profile = calibrate(model, calib, s)
            jobs: dict[str, Any] = {"full": lambda: model(batch)}
            alives: dict[str, list[int]] = {}
            for name in TIMED:

                def prefill(n=name, p=profile):
                    return run_compressed(model, batch, make_compressor(n, config.mu, p, s, seed))

                alives[name] = prefill().alive
                jobs[name] = prefill

            # selection alone: anchors + scores + plan (ARTS) vs one eager attention-map pass
            def select(p=profile):
                make_compressor("omnifit", config.mu, p, s, seed).prepare(h, ids)

            def attention_scoring():
                model.attention_map(config.fastv_layer, h, pos, None)

            jobs["select"], jobs["attention"] = select, attention_scoring
            blocks.append(ctx.median_seconds(jobs, config.repeats, config.warmup if b == 0 else 0))
            plans.append((profile, alives))
            bar.advance()
    profile, alives = plans[0]
    for name in TIMED:
        analytic[name] = flops(alives[name])
    analytic["select"] = config.batch * arts_selection_flops(ids, s.d, s.M)
    analytic["attention"] = config.batch * attention_map_flops(h.shape[1], s.d)
    times = {key: float(np.median([block[key] for block in blocks])) for key in blocks[0]}
    full_time = times["full"]
    speedups, reductions = [], []
    for name in TIMED:
        speedups.append(full_time / times[name])
        reductions.append(kv_bytes(full_alive, s.d) / kv_bytes(alives[name], s.d))
        out[f"prefill_seconds_{name}"] = times[name]
        out[f"prefill_flops_{name}"] = analytic[name]
        out[f"alive_{name}"] = alives[name]
    selection, attention = times["select"], times["attention"]

    def per_block(key: str, over: str = "full") -> list[float]:
        return [block[key] / block[over] for block in blocks]

    out.update({
        "prefill_seconds_full": full_time,
        "speedups": speedups,
        "kv_reductions": reductions,
        "speedup_omnifit": per_block("full", "omnifit"),
        "kv_reduction_omnifit": [
            kv_bytes(full_alive, s.d) / kv_bytes(a["omnifit"], s.d) for _, a in plans
        ],
        "selection_seconds": selection,
        "selection_fraction": per_block("select"),
        "attention_fraction": per_block("attention"),
        "attention_scoring_over_arts": attention / selection,
        "prefill_flops_full": analytic["full"],
        "flops_speedups": [analytic["full"] / analytic[name] for name in TIMED],
        "selection_flops_fraction": analytic["select"] / analytic["full"],
        "attention_over_arts_flops": analytic["attention"] / analytic["select"],
        "k_eff": profile.k_eff,
    })  # fmt: skip
    return out
