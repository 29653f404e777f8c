"""``tetrajet.lm``: a tiny GPT on Shakespeare trained under the NVFP4 recipes R0-R5 (spec §5).

Quick: the spec's 200-step sanity run of R0, R1 and R5; full: six recipes x 3,000 steps (C4: the
gap to FP32 closed by TetraJet-v2, the add-on ladder, the oscillation halved by OsciReset).
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
    # seconds: two steps of two recipes on a one-layer model
    "smoke": replace(
        LM, recipes=("fp32", "tetrajet_v2"), steps=6, batch_size=2, context=64, n_layers=1,
        warmup=2, eval_every=3, eval_batches=1,
    ),
    # the spec's 200-step R1 vs R5 sanity (+ R0 for the gap); smaller batch/context for 2 minutes
    "quick": replace(
        LM, recipes=("fp32", "naive_nvfp4", "tetrajet_v2"), steps=200, batch_size=4, context=64,
        n_layers=2, warmup=20, eval_every=50, eval_batches=4,
    ),
    "full": LM,  # spec §5: 6 recipes x 3,000 steps (run with --seeds 3)
}  # fmt: skip

LM_CLAIMS = (
    Claim("L1", "Every recipe's validation loss is finite and decreases", "min_loss_decrease", ">",
          0.0, "training converges", "spec §5 quick", source="spec", kind="claim"),
    Claim("C4a", "TetraJet-v2 (R5) closes >= 30% of naive NVFP4's (R1) gap to FP32",
          "gap_reduction_r5_vs_r1", ">=", 0.3, "51.3% gap reduction", "abstract",
          source="paper", kind="claim"),
    Claim("C4b", "Add-ons never hurt: gap_R5 <= gap_R3 + 0.005", "gap_r5_minus_r3", "<=", 0.005,
          "monotone ablation ladder", "spec C4", source="spec", kind="claim"),
    Claim("C4c", "OsciReset halves the oscillation fraction (R5 <= 0.5 x R4)", "osc_ratio_r5_r4",
          "<=", 0.5, "oscillation suppressed", "spec C4", source="spec", kind="claim"),
)  # fmt: skip


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
        rows.append([recipe, f"{np.mean(losses):.4f}", f"{np.mean(gaps):+.4f}"])
    note = (
        "Paper: TetraJet-v2 reduces the gap to BF16 by 51.3% on average vs the best prior FP4 "
        "method (OLMo2 70M-370M, up to 212B tokens); per-table numbers were not available."
    )
    return [Table("Final validation loss and gap to FP32", ["recipe", "loss", "gap"], rows, note)]


@register(
    name="tetrajet.lm",
    title="Tiny GPT on Shakespeare: gap to FP32 of NVFP4 recipes R0-R5",
    paper=PAPER,
    claims=LM_CLAIMS,
    presets=LM_PRESETS,
    plot=_lm_plot,
    tables=_lm_tables,
    seeds=1,
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
    gaps = {r: final[r] - final["fp32"] for r in final if "fp32" in final}
    r1, r3, r5 = (_get(gaps, k) for k in ("naive_nvfp4", "tetrajet_v2_base", "tetrajet_v2"))
    return {
        "min_loss_decrease": min(decrease),
        "gap_reduction_r5_vs_r1": 1 - r5 / r1 if r1 > 0 else math.nan,
        "gap_r5_minus_r3": r5 - r3,
        "osc_ratio_r5_r4": _get(osc, "tetrajet_v2") / _get(osc, "tetrajet_v2_mix_fp8"),
        "final_val_loss": final,
        "gap_to_fp32": gaps,
        "oscillation": osc,
        "n_resets": resets,
        "val_curves": curves,
        "eval_steps": list(result.eval_steps),
        "corpus": data.corpus,
    }
