"""``omnifit.score_once`` (A5): scoring once from ``H^(0)`` vs re-scoring before every layer.

Accuracy of both variants on the test streams, and their compressed prefill: wall-clock medians
(round-robin, ``ctx.median_seconds``; timing metrics) and analytic FLOPs (the layers plus one
ARTS selection, or one per layer; deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, register
from icml26.omnifit.experiments.common import (
    PAPER,
    QUICK_STANDIN,
    RESOURCES,
    SMOKE_STANDIN,
    WHERE_SPEC,
    StandInConfig,
    calibrate,
    prepare_standin,
)


@dataclass(frozen=True)
class ScoreOnceConfig(StandInConfig):
    mu: float = 0.3  # the paper's ablation retention
    repeats: int = 10
    timing_batch: int = 8


SCORE_ONCE = ScoreOnceConfig()
SCORE_ONCE_PRESETS = {
    "smoke": replace(SCORE_ONCE, **SMOKE_STANDIN, timing_batch=2, repeats=2),
    "quick": replace(SCORE_ONCE, **QUICK_STANDIN, repeats=5),
    "full": SCORE_ONCE,
}


def _score_once_plot(metrics: list[dict[str, Any]], config: ScoreOnceConfig) -> dict:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.4))
    labels = ["score once", "every layer"]
    bars_with_seeds(left, labels, 100 * stack(metrics, "accuracies"))
    left.set_ylabel("accuracy (%)")
    left.set_title(f"accuracy at mu = {config.mu:g}")
    bars_with_seeds(right, labels, 1000 * stack(metrics, "prefill_seconds"))
    right.set_ylabel("prefill (ms)")
    right.set_title("compressed prefill time")
    fig.suptitle(f"Scoring once vs every layer ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"score_once": fig}


SCORE_ONCE_CLAIMS = (
    Claim("A5a", "Once-scoring accuracy within 1.5 points of every-layer scoring",
          "once_minus_every_abs", "<=", 1.5, "62.5 vs 62.8 (0.3 points)", WHERE_SPEC,
          source="spec"),
    Claim("A5b", "Once-scoring prefill faster than every-layer scoring (time ratio > 1)",
          "every_over_once_time", ">", 1.0, "208 vs 245 ms", WHERE_SPEC, source="spec"),
)  # fmt: skip


@register(
    name="omnifit.score_once",
    title="A5: scoring once from H0 vs re-scoring before every layer",
    paper=PAPER,
    claims=SCORE_ONCE_CLAIMS,
    presets=SCORE_ONCE_PRESETS,
    plot=_score_once_plot,
    seeds=1,  # the quick preset is one seed (spec §5); the full protocol is `-n 5`
    resources=RESOURCES,
    timing_metrics=("prefill_seconds", "every_over_once_time"),
)
def score_once(config: ScoreOnceConfig, ctx: RunContext) -> dict[str, Any]:
    import torch

    from icml26.omnifit import (
        OmniFitCompressor,
        arts_selection_flops,
        evaluate_accuracy,
        prefill_flops,
        run_compressed,
    )

    s = config
    model, test, calib, _ = prepare_standin(s, ctx)
    profile = calibrate(model, calib, s)
    batch = test.batch(slice(0, config.timing_batch))
    accuracies, flops, prefills = [], [], {}
    with torch.no_grad():
        _, ids, _ = model.embed(batch)
    for once in (True, False):

        def factory(once=once):
            return OmniFitCompressor(profile, config.mu, s.lam, s.M, s.k, score_once=once)

        accuracies.append(evaluate_accuracy(model, test, factory)[0])
        with torch.no_grad():
            out = run_compressed(model, batch, factory())
        # the layers' FLOPs plus one selection (once) or one per layer (every)
        selections = 1 if once else s.n_layers
        flops.append(
            prefill_flops(out.alive, s.d, s.d_ff, s.n_heads, batch=len(batch))
            + selections * len(batch) * arts_selection_flops(ids, s.d, s.M)
        )
        prefills["once" if once else "every"] = lambda f=factory: run_compressed(model, batch, f())
    with torch.no_grad():
        seconds = ctx.median_seconds(prefills, config.repeats, 1)
    times = [seconds["once"], seconds["every"]]
    return {
        "accuracies": accuracies,
        "prefill_seconds": times,
        "prefill_flops": flops,
        "once_minus_every_abs": abs(100 * (accuracies[0] - accuracies[1])),
        "every_over_once_time": times[1] / times[0],
        "every_over_once_flops": flops[1] / flops[0],
    }
