"""``tetrajet.lm``: a tiny GPT on Shakespeare trained under the NVFP4 recipes R0-R5 (spec §5).

The paper's headline is the gap to BF16 closed by TetraJet-v2 (R5) relative to the best prior FP4
method, so the control is the best prior recipe of the same run (the lowest final validation loss
among ``prior_recipes``: R1 naive NVFP4, R2 NVIDIA-like). A gap reduction means something only
where that recipe trails FP32 by more than the noise: gate G asks for >= 0.03 nats (issue 47),
and when it fails the C4 claims read "testbed invalid". Quick: 100 steps of R0, R1, R2 and R5 on
a d = 64 model, three seeds (the gate is judged, the gap is not expected to exist); full: six
recipes x 3,000 steps on the spec's model, three seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.tetrajet.experiments.common import PAPER, RESOURCES


@dataclass(frozen=True)
class LMConfig:
    """Char-level Shakespeare LM trained under several recipes (spec §5)."""

    recipes: tuple[str, ...] = (
        "fp32",
        "naive_nvfp4",
        "nvidia_nvfp4",
        "tetrajet_v2_base",
        "tetrajet_v2_mix_fp8",
        "tetrajet_v2",
    )
    # the prior FP4 methods the best of which is the headline's control (among those trained)
    prior_recipes: tuple[str, ...] = ("naive_nvfp4", "nvidia_nvfp4")
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


LM = LMConfig()
LM_PRESETS = {
    # seconds: six steps of FP32, one prior recipe and R5 on a one-layer model
    "smoke": replace(
        LM, recipes=("fp32", "naive_nvfp4", "tetrajet_v2"), steps=6, batch_size=2, context=64,
        n_layers=1, warmup=2, eval_every=3, eval_batches=1,
    ),
    # 100 steps of R0, R1, R2, R5 on a d = 64 model, 3 seeds: the training gate and the gap gate
    # are judged; the FP4 gap is not expected to exist at this scale (C4b/C4c need R3/R4: full)
    "quick": replace(
        LM, recipes=("fp32", "naive_nvfp4", "nvidia_nvfp4", "tetrajet_v2"), steps=100,
        batch_size=4, context=64, d_model=64, n_layers=2, d_mlp=256, warmup=10, eval_every=50,
        eval_batches=16,
    ),
    "full": LM,  # spec §5: 6 recipes x 3,000 steps, 3 seeds
}  # fmt: skip

GAP_GATE = 0.03  # nats: the FP4 gap a 51.3 % reduction can be told from noise on (issue 47)

LM_CLAIMS = (
    Claim("L1", "The testbed trains: every recipe's validation loss is finite and decreases",
          "min_loss_decrease", ">", 0.0, "training converges", "spec §5 quick", source="spec",
          kind="gate"),
    Claim("D", "The corpus is Shakespeare (not the standard-library fallback)",
          "shakespeare_corpus", ">=", 1.0, "Shakespeare, two plays held out", "spec §5",
          source="spec", kind="gate"),
    Claim("G", "An FP4 gap exists: the best prior FP4 recipe trails FP32 by >= 0.03 nats",
          "gap_best_prior", ">=", GAP_GATE, "gaps to BF16 at 70M-370M params, 50-212B tokens",
          "issue 47", source="spec", kind="gate"),
    Claim("G2", "Weights oscillate without OsciReset: R4's oscillation fraction >= 0.2",
          "osc_fraction_r4", ">=", 0.2, "oscillation is the late-training bottleneck",
          "spec C3 (the toy's bar)", source="spec", kind="gate"),
    Claim("C4", "TetraJet-v2 (R5) reduces the best prior FP4 recipe's gap to FP32 by >= 51.3 %",
          "gap_reduction_vs_best_prior", ">=", 0.513, "51.3 % (average, vs the best prior FP4 "
          "method)", "abstract", source="paper", headline=True, gates=("D", "L1", "G"),
          control="the best prior FP4 recipe of the run (R1 or R2) in place of R5",
          control_value=0.0),
    Claim("C4a", "TetraJet-v2 (R5) closes >= 30 % of the best prior FP4 recipe's gap to FP32",
          "gap_reduction_vs_best_prior", ">=", 0.3, "30 % (spec's small-scale bar)", "spec C4",
          source="spec", gates=("D", "L1", "G"),
          control="the best prior FP4 recipe of the run (R1 or R2) in place of R5",
          control_value=0.0),
    Claim("C4b", "OutControl + OsciReset help: gap_R5 - gap_R3 < 0", "gap_r5_minus_r3", "<",
          0.0, "each add-on lowers the loss (ablation)", "spec C4 (bar: issue 39)",
          source="spec", gates=("D", "L1", "G"), control="R3 (no add-ons) in place of R5",
          control_value=0.0),
    Claim("C4c", "OsciReset halves the oscillation fraction (R5 <= 0.5 x R4)", "osc_ratio_r5_r4",
          "<=", 0.5, "oscillation suppressed", "spec C4", source="spec", gates=("D", "L1", "G2"),
          control="R4 (no OsciReset) in place of R5", control_value=1.0),
)  # fmt: skip


def lm_claim_metrics(
    final: dict[str, float], oscillation: dict[str, float], prior_recipes: tuple[str, ...]
) -> dict[str, Any]:
    """The claims' metrics from one seed's final validation losses and oscillation fractions.

    The control is the best prior recipe present (lowest final loss among ``prior_recipes``);
    a reduction is only defined where its gap is positive (NaN otherwise, and NaN for every
    metric whose recipes were not trained).
    """
    gaps = {r: final[r] - final["fp32"] for r in final if "fp32" in final}
    priors = [r for r in prior_recipes if r in gaps]
    best = min(priors, key=gaps.__getitem__) if priors else None
    gap_best = gaps[best] if best is not None else math.nan
    r3, r5 = (_get(gaps, k) for k in ("tetrajet_v2_base", "tetrajet_v2"))
    osc_r4, osc_r5 = (_get(oscillation, k) for k in ("tetrajet_v2_mix_fp8", "tetrajet_v2"))
    return {
        "gap_best_prior": gap_best,
        "best_prior": best or "",
        "gap_reduction_vs_best_prior": 1 - r5 / gap_best if gap_best > 0 else math.nan,
        "gap_r5_minus_r3": r5 - r3,
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
           title=f"Recipes R0-R5 ({seeds_note(len(metrics))})")  # fmt: skip
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
        "'best prior' counts the seeds where the recipe was the control (lowest loss among "
        f"{', '.join(config.prior_recipes)})."
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
    title="Tiny GPT on Shakespeare: gap to FP32 of NVFP4 recipes R0-R5",
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
    """Train the same initial model under each recipe; report final losses, gaps, oscillation."""
    from icml26.tetrajet import GPTConfig, TinyGPT, TrainConfig, load_text_data, train_lm

    data = load_text_data(config.tokenizer)
    gpt = GPTConfig(
        vocab_size=data.vocab_size,
        context=config.context,
        d_model=config.d_model,
        n_layers=config.n_layers,
        n_heads=config.n_heads,
        d_mlp=config.d_mlp,
    )
    train = TrainConfig(
        steps=config.steps,
        batch_size=config.batch_size,
        lr=config.lr,
        warmup=config.warmup,
        eval_every=config.eval_every,
        eval_batches=config.eval_batches,
    )
    final, osc, resets, curves, decrease = {}, {}, {}, {}, []
    for recipe in config.recipes:
        model = TinyGPT(gpt, seed=ctx.seed)
        with ctx.progress(config.steps, f"training {recipe}") as bar:
            result = train_lm(
                model, data, recipe, train, context=config.context, seed=ctx.seed, progress=bar
            )
        final[recipe], osc[recipe] = result.final_val_loss, result.oscillation
        resets[recipe] = result.n_reset
        curves[recipe] = result.val_loss
        ok = all(math.isfinite(v) for v in result.val_loss)
        decrease.append(result.val_loss[0] - result.final_val_loss if ok else math.nan)
    return {
        "min_loss_decrease": min(decrease),
        "shakespeare_corpus": float(data.corpus == "shakespeare"),
        **lm_claim_metrics(final, osc, config.prior_recipes),
        "final_val_loss": final,
        "oscillation": osc,
        "n_resets": resets,
        "val_curves": curves,
        "eval_steps": list(result.eval_steps),
        "corpus": data.corpus,
    }
