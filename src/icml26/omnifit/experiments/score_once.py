"""``omnifit.score_once`` (A5): scoring once from ``H^(0)`` vs re-scoring before every layer.

Per-stream correctness of both variants on the same test streams (A5a: an equivalence claim on
the paired differences, within +-1.5 points), and their compressed prefill: wall-clock medians
(round-robin, ``ctx.median_seconds``, in ``blocks`` timing replicates; timing metrics) and
analytic FLOPs (the layers plus one ARTS selection, or one per layer).

An equivalence claim is passed by any selector when selection does not matter; the gate G5
asks that it does: every-layer scoring must beat RandomDrop with the same LAHP budgets (no
scoring at all) by >= 3 points, so that a selector that ignores the scores falls outside A5a's
band. A5b (every-layer scoring is slower) holds by construction: it runs the selection once
per layer instead of once (a sanity check).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, check_positive_int, register
from icml26.omnifit.experiments.checks import check_retention
from icml26.omnifit.experiments.common import (
    PAPER,
    QUICK_STANDIN,
    RESOURCES,
    SMOKE_STANDIN,
    WHERE_SPEC,
    StandInConfig,
    calibrate,
    make_compressor,
    paired_points,
    prepare_standin,
    stream_correct,
)


@dataclass(frozen=True)
class ScoreOnceConfig(StandInConfig):
    mu: float = 0.3  # the paper's ablation retention
    repeats: int = 4  # timed rounds per block
    blocks: int = 3  # independent timing blocks (one time ratio each)
    timing_batch: int = 8

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "ScoreOnceConfig"
        check_retention("mu", self.mu, owner, at_least=self.r_min)
        for name in ("repeats", "blocks", "timing_batch"):
            check_positive_int(name, getattr(self, name), maximum=10_000, owner=owner)


SCORE_ONCE = ScoreOnceConfig()
SCORE_ONCE_PRESETS = {
    "smoke": replace(SCORE_ONCE, **SMOKE_STANDIN, timing_batch=2, repeats=1),
    "quick": replace(SCORE_ONCE, **QUICK_STANDIN, repeats=2),
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
    Claim("G5", "Every-layer scoring - RandomDrop+LAHP (no scoring) >= +3 points at mu = 0.3: "
          "selection matters, so A5a's band can tell a selector from none", "every_minus_random",
          ">=", 3.0, "a selector that ignores the scores must fall outside the band",
          "issue 39 (a control must fail the claim)", source="spec", kind="gate", over="items"),
    Claim("A5a", "Once-scoring accuracy within 1.5 points of every-layer scoring (paired streams)",
          "once_minus_every", "within", 0.0, "62.5 vs 62.8 (0.3 points)", WHERE_SPEC,
          tolerance=1.5, source="spec", over="items",
          control="RandomDrop+LAHP (no scoring) in place of once-scoring; G5 puts it at <= -3",
          control_value=-3.0),
    Claim("A5b", "Once-scoring prefill faster than every-layer scoring (time ratio > 1; by "
          "construction: one selection instead of one per layer)", "every_over_once_time", ">",
          1.0, "208 vs 245 ms", WHERE_SPEC, source="spec", kind="sanity"),
)  # fmt: skip


@register(
    name="omnifit.score_once",
    title="A5: scoring once from H0 vs re-scoring before every layer",
    paper=PAPER,
    claims=SCORE_ONCE_CLAIMS,
    presets=SCORE_ONCE_PRESETS,
    plot=_score_once_plot,
    seeds=1,  # quick: one seed, paired streams and timing blocks inside it
    resources=RESOURCES,
    timing_metrics=("prefill_seconds", "every_over_once_time"),
)
def score_once(config: ScoreOnceConfig, ctx: RunContext) -> dict[str, Any]:
    import numpy as np
    import torch

    from icml26.omnifit import (
        OmniFitCompressor,
        arts_selection_flops,
        prefill_flops,
        run_compressed,
    )

    s = config
    model, test, calib, _ = prepare_standin(s, ctx)
    profile = calibrate(model, calib, s)
    batch = test.batch(slice(0, config.timing_batch))
    accuracies, flops, prefills, correct = [], [], {}, {}
    with torch.no_grad():
        _, ids, _ = model.embed(batch)
    for once in (True, False):

        def factory(index=None, once=once):
            return OmniFitCompressor(profile, config.mu, s.lam, s.M, s.k, score_once=once)

        hits, _ = stream_correct(model, test, factory)
        correct[once] = hits
        accuracies.append(float(hits.mean()))
        with torch.no_grad():
            out = run_compressed(model, batch, factory())
        # the layers' FLOPs plus one selection (once) or one per layer (every)
        selections = 1 if once else s.n_layers
        flops.append(
            prefill_flops(out.alive, s.d, s.d_ff, s.n_heads, batch=len(batch))
            + selections * len(batch) * arts_selection_flops(ids, s.d, s.M)
        )
        prefills["once" if once else "every"] = lambda f=factory: run_compressed(model, batch, f())
    seed = ctx.seed_for("random-drop")
    no_scoring, _ = stream_correct(
        model, test, lambda index: make_compressor("random_lahp", config.mu, profile, s, seed)
    )
    with torch.no_grad():
        blocks = [
            ctx.median_seconds(prefills, config.repeats, 1 if b == 0 else 0)
            for b in range(config.blocks)
        ]
    times = [float(np.median([block[key] for block in blocks])) for key in ("once", "every")]
    return {
        "accuracies": accuracies,
        "accuracy_random_lahp": float(no_scoring.mean()),
        "prefill_seconds": times,
        "prefill_flops": flops,
        "once_minus_every": paired_points(correct[True], correct[False]),
        "once_minus_every_abs": abs(100 * (accuracies[0] - accuracies[1])),
        "every_minus_random": paired_points(correct[False], no_scoring),
        "every_over_once_time": [block["every"] / block["once"] for block in blocks],
        "every_over_once_flops": flops[1] / flops[0],
    }
