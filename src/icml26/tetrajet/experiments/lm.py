"""``tetrajet.lm``: a tiny GPT on Shakespeare trained under the NVFP4 recipes (spec §5, issue 47).

The paper's headline is the gap to BF16 closed by TetraJet-v2 (R5) relative to the best prior FP4
method, so the control is the best prior recipe of the same run, chosen on the validation play
(the lowest final validation loss among ``prior_recipes``: R1 naive NVFP4, R2 NVIDIA-like,
FP4-all-the-way, R2+ NVIDIA as published). Gaps are then measured on the fixed test play
(``test_tokens`` tokens in non-overlapping windows, the same for every recipe and seed), as
per-window paired differences. A gap reduction means something only where that recipe trails
FP32 by more than the noise: gate G asks for a gap >= 0.03 nats and G1 for a lower bound > 0.01
(issue 47); where they fail the C4 claims read "testbed invalid" (not measurable). The corpus
gate D keeps the claims off any fallback corpus. Quick: 100 steps of R0, the four prior recipes
and R5 on a d = 64 model, three seeds (the gates are judged; the gap is not expected to exist at
that scale), read from shipped final weights (:mod:`icml26.tetrajet.standins`, issue 51) and
evaluated on the validation and test plays; full: all eight recipes x 3,000 steps on the spec's
model, three seeds, trained.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, check_in_interval, check_one_of, register
from icml26.tetrajet.experiments.common import (
    PAPER,
    RECIPE_NAMES,
    RESOURCES,
    check_config,
    check_names,
    train_recipe,
)

PRIOR_RECIPES = ("naive_nvfp4", "nvidia_nvfp4", "fp4_all_the_way", "nvidia_nvfp4_published")


@dataclass(frozen=True)
class LMConfig:
    """Char-level Shakespeare LM trained under several recipes (spec §5, issue 47)."""

    recipes: tuple[str, ...] = (
        "fp32",
        *PRIOR_RECIPES,
        "tetrajet_v2_base",
        "tetrajet_v2_mix_fp8",
        "tetrajet_v2",
    )
    # the prior FP4 methods the best of which (on validation) is the headline's control
    prior_recipes: tuple[str, ...] = PRIOR_RECIPES
    tokenizer: str = "char"
    steps: int = 3000
    batch_size: int = 16
    context: int = 128
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    d_mlp: int = 512
    lr: float = 3e-3
    warmup: int = 100
    eval_every: int = 100
    eval_batches: int = 8
    test_tokens: int = 65_536  # the fixed paired test set (issue 47: >= 64 k tokens)

    def __post_init__(self) -> None:
        # the bounds of GPTConfig, TrainConfig, fixed_windows and load_text_data
        check_config(
            self,
            {"steps": (1, 10**7), "batch_size": (1, 2**16), "context": (1, 2**20),
             "d_model": (1, 2**16), "n_layers": (1, 1024), "n_heads": (1, 1024),
             "d_mlp": (1, 2**18), "warmup": (0, 10**7), "eval_every": (1, 10**7),
             "eval_batches": (1, 2**16), "test_tokens": (self.context, 2**24)},
        )  # fmt: skip
        if self.d_model % self.n_heads:
            raise ValueError(
                f"LMConfig: d_model must be a multiple of n_heads={self.n_heads}; "
                f"got {self.d_model}."
            )
        check_in_interval("lr", self.lr, low=0.0, owner="LMConfig")
        check_one_of("tokenizer", self.tokenizer, ("char", "bpe"), owner="LMConfig")
        check_names(self, "recipes", RECIPE_NAMES)
        check_names(self, "prior_recipes", RECIPE_NAMES)
        if "fp32" not in self.recipes:
            raise ValueError(f"LMConfig: recipes must include 'fp32'; got {self.recipes!r}.")


LM = LMConfig()
LM_PRESETS = {
    # seconds: six steps of FP32, one prior recipe and R5 on a one-layer model
    "smoke": replace(
        LM, recipes=("fp32", "naive_nvfp4", "tetrajet_v2"), steps=6, batch_size=2, context=64,
        n_layers=1, warmup=2, eval_every=3, eval_batches=1, test_tokens=1024,
    ),
    # 100 steps of R0, the prior recipes and R5 on a d = 64 model, 3 seeds: the training gate
    # and the gap gates are judged; the FP4 gap is not expected to exist at this scale (C4b/C4c
    # need R3/R4: full). The test set is cut to 8 k tokens (full: 64 k). The 18 runs' final
    # weights are shipped (standins.py: `icml26 tool tetrajet train-standin lm_quick`), so quick
    # evaluates them instead of training; any --set of a training field trains.
    "quick": replace(
        LM, recipes=("fp32", *PRIOR_RECIPES, "tetrajet_v2"), steps=100, batch_size=4,
        context=64, d_model=64, n_layers=2, d_mlp=256, warmup=10, eval_every=50,
        eval_batches=16, test_tokens=8192,
    ),
    "full": LM,  # 8 recipes x 3,000 steps, 3 seeds, 64 k test tokens
}  # fmt: skip

GAP_GATE = 0.03  # nats: the FP4 gap a 51.3 % reduction can be told from noise on (issue 47)
GAP_FLOOR = 0.01  # nats: the gap's lower bound must exceed this (issue 47)
_C4_GATES = ("D", "L1", "G", "G1")
_CONTROL = "the best prior FP4 recipe of the run (chosen on validation) in place of R5"

LM_CLAIMS = (
    Claim("L1", "The testbed trains: every recipe's validation loss is finite and decreases",
          "min_loss_decrease", ">", 0.0, "training converges", "spec §5 quick", source="spec",
          kind="gate"),
    Claim("D", "The corpus is Shakespeare (not the standard-library fallback)",
          "shakespeare_corpus", ">=", 1.0, "Shakespeare, two plays held out", "issue 47",
          source="spec", kind="gate"),
    Claim("G", "An FP4 gap exists: the best prior FP4 recipe trails FP32 on the test play by "
          ">= 0.03 nats (paired per window)", "gap_best_prior", ">=", GAP_GATE,
          "gaps to BF16 at 70M-370M params, 50-212B tokens", "issue 47", source="spec",
          kind="gate", over="items"),
    Claim("G1", "The FP4 gap's lower bound exceeds 0.01 nats", "gap_best_prior", ">",
          GAP_FLOOR, "a measurable gap", "issue 47", source="spec", kind="gate", over="items"),
    Claim("G2", "Weights oscillate without OsciReset: R4's oscillation fraction >= 0.2",
          "osc_fraction_r4", ">=", 0.2, "oscillation is the late-training bottleneck",
          "spec C3 (the toy's bar)", source="spec", kind="gate"),
    Claim("C4", "TetraJet-v2 (R5) reduces the best prior FP4 recipe's gap to FP32 by >= 51.3 %",
          "gap_reduction_vs_best_prior", ">=", 0.513, "51.3 % (average, vs the best prior FP4 "
          "method)", "abstract", source="paper", headline=True, gates=_C4_GATES,
          control=_CONTROL, control_value=0.0),
    Claim("C4a", "TetraJet-v2 (R5) closes >= 30 % of the best prior FP4 recipe's gap to FP32",
          "gap_reduction_vs_best_prior", ">=", 0.3, "30 % (spec's small-scale bar)", "spec C4",
          source="spec", gates=_C4_GATES, control=_CONTROL, control_value=0.0),
    Claim("C4b", "OutControl + OsciReset help: gap_R5 - gap_R3 < 0 (paired per test window)",
          "gap_r5_minus_r3", "<", 0.0, "each add-on lowers the loss (ablation)",
          "spec C4 (bar: issue 39)", source="spec", gates=_C4_GATES, over="items",
          control="R3 (no add-ons) in place of R5", control_value=0.0),
    Claim("C4c", "OsciReset halves the oscillation fraction (R5 <= 0.5 x R4)", "osc_ratio_r5_r4",
          "<=", 0.5, "oscillation suppressed", "spec C4", source="spec", gates=("D", "L1", "G2"),
          control="R4 (no OsciReset) in place of R5", control_value=1.0),
)  # fmt: skip


def lm_claim_metrics(
    val: dict[str, float],
    test: dict[str, np.ndarray],
    oscillation: dict[str, float],
    prior_recipes: tuple[str, ...],
) -> dict[str, Any]:
    """The claims' metrics from one seed's validation losses, per-window test losses, oscillation.

    The control is the best prior recipe present, chosen on validation (lowest final validation
    loss among ``prior_recipes``); its gap and R5's are measured on the test windows. A reduction
    is only defined where the control's gap is positive (NaN otherwise, and NaN or empty for every
    metric whose recipes were not trained).
    """
    diffs = {r: np.asarray(test[r]) - np.asarray(test["fp32"]) for r in test}
    gaps = {r: float(d.mean()) for r, d in diffs.items()}
    priors = [r for r in prior_recipes if r in val]
    best = min(priors, key=val.__getitem__) if priors else None
    gap_best = gaps[best] if best is not None else math.nan
    r5 = _get(gaps, "tetrajet_v2")
    osc_r4, osc_r5 = (_get(oscillation, k) for k in ("tetrajet_v2_mix_fp8", "tetrajet_v2"))
    both = "tetrajet_v2" in diffs and "tetrajet_v2_base" in diffs
    return {
        "gap_best_prior": diffs[best].tolist() if best is not None else [],
        "gap_best_prior_mean": gap_best,
        "best_prior": best or "",
        "gap_reduction_vs_best_prior": 1 - r5 / gap_best if gap_best > 0 else math.nan,
        "gap_r5_minus_r3": (
            (diffs["tetrajet_v2"] - diffs["tetrajet_v2_base"]).tolist() if both else []
        ),
        "osc_fraction_r4": osc_r4,
        "osc_ratio_r5_r4": osc_r5 / osc_r4 if osc_r4 > 0 else math.nan,
        "gap_to_fp32": gaps,
    }


def _get(values: dict[str, float], key: str) -> float:
    return values.get(key, math.nan)


def _lm_plot(metrics: list[dict[str, Any]], config: LMConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    fig, ax = plt.subplots(figsize=(7, 4))
    for recipe in metrics[0]["val_curves"]:
        curves = np.asarray([m["val_curves"][recipe] for m in metrics], dtype=float)
        mean_band(ax, metrics[0]["eval_steps"], curves, label=recipe)
    ax.set(xlabel="step", ylabel="validation loss (nats/char)",
           title=f"NVFP4 recipes ({seeds_note(len(metrics))})")  # fmt: skip
    legend_outside(ax)
    fig.tight_layout()
    return {"lm_val_loss": fig}


def _lm_tables(metrics: list[dict[str, Any]], config: LMConfig) -> list[Table]:
    rows = []
    for recipe in config.recipes:
        losses = [m["final_val_loss"][recipe] for m in metrics]
        gaps = [m["gap_to_fp32"].get(recipe, math.nan) for m in metrics]
        best = sum(m.get("best_prior") == recipe for m in metrics)
        rows.append(
            [recipe, f"{np.mean(losses):.4f}", f"{np.mean(gaps):+.4f}", f"{best}/{len(metrics)}"]
        )
    note = (
        "Paper: TetraJet-v2 reduces the gap to BF16 by 51.3% on average vs the best prior FP4 "
        "method (OLMo2 70M-370M, up to 212B tokens); per-table numbers were not available. "
        "'best prior' counts the seeds where the recipe was the control (lowest validation "
        f"loss among {', '.join(config.prior_recipes)}). Loss: validation play; gap: test play "
        f"({config.test_tokens} tokens), corpus {metrics[0].get('corpus', '?')}."
    )
    return [
        Table(
            "Final validation loss and gap to FP32 (mean over seeds)",
            ["recipe", "loss", "gap", "best prior"],
            rows,
            note,
        )
    ]


@register(
    name="tetrajet.lm",
    title="Tiny GPT on Shakespeare: gap to FP32 of NVFP4 recipes vs the best prior FP4 recipe",
    paper=PAPER,
    claims=LM_CLAIMS,
    presets=LM_PRESETS,
    plot=_lm_plot,
    tables=_lm_tables,
    seeds=3,  # the gate and the reduction vary with the seed: three values give a verdict
    deterministic_metrics=("shakespeare_corpus",),
    resources=RESOURCES,
)
def lm(config: LMConfig, ctx: RunContext) -> dict[str, Any]:
    """Train the same initial model under each recipe; report final losses, gaps, oscillation.

    A recipe whose weights for this config and seed are shipped (the quick preset's seeds,
    :mod:`icml26.tetrajet.standins`) is loaded and evaluated instead of trained.
    """
    from icml26.tetrajet import fixed_windows, load_text_data, window_losses
    from icml26.tetrajet.standins import shipped_run

    data = load_text_data(config.tokenizer)
    test_x, test_y = fixed_windows(data.test, config.context, config.test_tokens)
    final, test, osc, resets, curves, decrease = {}, {}, {}, {}, {}, []
    for recipe in config.recipes:
        run = shipped_run(config, data, ctx.seed, recipe)
        if run is None:
            with ctx.progress(config.steps, f"training {recipe}") as bar:
                run = train_recipe(config, data, recipe, ctx.seed, bar)
        model, result = run
        final[recipe], osc[recipe] = result.final_val_loss, result.oscillation
        test[recipe] = window_losses(model, test_x, test_y).numpy()
        resets[recipe] = result.n_reset
        curves[recipe] = result.val_loss
        ok = all(math.isfinite(v) for v in result.val_loss)
        decrease.append(result.val_loss[0] - result.final_val_loss if ok else math.nan)
    return {
        "min_loss_decrease": min(decrease),
        "shakespeare_corpus": float(data.corpus == "shakespeare"),
        **lm_claim_metrics(final, test, osc, config.prior_recipes),
        "final_val_loss": final,
        "oscillation": osc,
        "n_resets": resets,
        "val_curves": curves,
        "eval_steps": list(result.eval_steps),
        "corpus": data.corpus,
        "test_windows": len(test_x),
    }
