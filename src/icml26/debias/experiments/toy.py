"""``debias.toy`` (spec §5.1 D1-D3, D5): bias-only debiasing of a toy intent classifier per regime.

A mean-pooled-embedding MLP trained from scratch on clean prompts; perturbations append unseen
filler tokens (systematic or variance regime) or add zero-mean embedding noise (the negative
control). Algorithm B (bias-only), C (output bias) and full fine-tuning, against the base model.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, check_one_of, register
from icml26.debias.experiments.common import PAPER, RESOURCES, check_config, profile_rows


@dataclass(frozen=True)
class ToyConfig:
    """Toy intent classifier trained from scratch, debiased per regime (spec §5.1 Q2)."""

    n_seeds: int = 5
    regimes: tuple[str, ...] = ("systematic", "variance", "gaussian")
    n_train: int = 2000
    n_test: int = 1000
    k_eval: int = 8
    epochs: int = 80
    lr: float = 1e-2
    debias_steps: int = 300
    debias_lr: float = 1e-2
    batch_size: int = 64
    p_clean: float = 0.2
    loss: str = "mse"
    sigma: float = 1.0
    n_profile: int = 500
    # what the bias-only arm trains: "bias" (algorithm B) or, as the claims' controls, "none"
    # (the base model itself: the do-nothing method) or "all" (full fine-tuning)
    bias_arm: str = "bias"

    def __post_init__(self) -> None:
        check_config(
            self,
            unit=("p_clean",),
            positive=("lr", "debias_lr", "sigma"),
            choices={
                "regimes": ("systematic", "variance", "gaussian"),
                "loss": ("kl", "mse"),
                "bias_arm": ("bias", "none", "all"),
            },
        )


TOY = ToyConfig()
TOY_PRESETS = {
    # seconds: the contract test runs it twice
    "smoke": replace(
        TOY, n_seeds=1, n_train=300, n_test=200, epochs=30, debias_steps=20, n_profile=100
    ),
    # spec §5.1 quick target: 3 seeds, 200 debias steps
    "quick": replace(TOY, n_seeds=3, debias_steps=200),
    "full": TOY,
}
TOY_METHODS = ("base", "bias", "output", "full")  # no-op, algorithm B, algorithm C, full FT
BIAS_ARMS = {"bias": "bias", "none": None, "all": "all"}  # bias_arm -> debias_finetune params
# The paper states no figure: the headline is its abstract's qualitative claim at the weakest
# bar that states it; the numeric bars are the spec's (§5.1, from its own prototype). Every
# claim is judged on the n_seeds per-seed values the task returns as lists.
NO_DEBIAS = "the base model in place of the bias-only one (do nothing)"
SYS_GATES = ("G1", "G2")  # the claims on the systematic regime alone do not need G3
TOY_CLAIMS = (
    Claim("G1", "The base model is competent: clean accuracy ≥ 0.9 (every regime)",
          "base_clean_acc_min_per_seed", ">=", 0.9, "our bar (spec prototype: 0.99–1.00)",
          "spec §5.1 Q2", source="none", kind="gate"),
    Claim("G2", "Systematic regime, the gap exists: full FT (the reference of gap closed) gains "
          "≥ 0.05 perturbed accuracy over the base", "sys_full_gain_per_seed", ">=", 0.05,
          "our bar (spec prototype: +0.07 / +0.23)", "spec §5.1 Q2", source="none", kind="gate"),
    Claim("G3", "Variance regime, the gap exists: full FT gains ≥ 0.05 perturbed accuracy over "
          "the base", "var_full_gain_per_seed", ">=", 0.05,
          "our bar (spec prototype: +0.31 / +0.32)", "spec §5.1 Q2", source="none", kind="gate"),
    Claim("H", "Headline: where the perturbation shifts module outputs systematically, bias-only "
          "debiasing closes a positive share of the perturbed-accuracy gap (bias-only − base) / "
          "(full FT − base) > 0", "sys_gap_closed_per_seed", ">", 0.0,
          "debiasing gives robustness without retraining the model (qualitative, no figure)",
          "abstract", source="paper", headline=True, gates=SYS_GATES,
          control=f"{NO_DEBIAS}: 0", control_value=0.0),
    Claim("D1a", "Systematic regime: bias-only perturbed accuracy ≥ base + 0.06 (mean over "
          "seeds)", "sys_gain_per_seed", ">=", 0.06, "+0.20 / +0.05 (spec prototype, seeds 0/1)",
          "spec §5.1 D1", source="spec", gates=SYS_GATES, control=f"{NO_DEBIAS}: gain 0",
          control_value=0.0),
    Claim("D1c", "Systematic regime: bias-only closes ≥ 40% of the full-FT gap",
          "sys_gap_closed_per_seed", ">=", 0.40, "0.87 / 0.68 (spec prototype)", "spec §5.1 D1",
          source="spec", gates=SYS_GATES, control=f"{NO_DEBIAS}: 0", control_value=0.0),
    Claim("D2", "Condition: gap closed (variance) ≤ gap closed (systematic) − 0.20, per seed",
          "gap_closed_diff_per_seed", ">=", 0.20, "0.26 / 0.23 vs 0.87 / 0.68 (spec prototype)",
          "spec §5.1 D2", source="spec",
          control=f"{NO_DEBIAS} (0 − 0), or full FT in place of it (1 − 1): 0",
          control_value=0.0),
    Claim("D5", "Condition: bias-only gains where the shift is systematic, not under zero-mean "
          "Gaussian embedding noise — gain(systematic) − gain(Gaussian) ≥ 0.03, per seed",
          "sys_minus_gauss_gain_per_seed", ">=", 0.03,
          "no gain under zero-mean noise (spec prototype); bars D1 ≥ 0.06, D5 ≤ 0.03",
          "spec §5.1 D1, D5", source="spec", gates=SYS_GATES,
          control=f"{NO_DEBIAS}: 0 (full FT in place of it: −0.14 in the 2026-12-07 quick run)",
          control_value=0.0),
    Claim("D3a", "Bias-only trains ≤ 2% of the parameters (a count fixed by the architecture)",
          "trainable_fraction", "<=", 0.02, "132 scalars ≈ 1.2%", "spec §5.1 D3", source="spec",
          kind="sanity"),
    Claim("D3b", "No-harm guard (the base model itself passes it, so it is no reproduction): "
          "systematic regime, clean-accuracy drop ≤ 0.07", "sys_clean_drop_per_seed", "<=", 0.07,
          "0.050 / 0.012 (spec prototype)", "spec §5.1 D3", source="spec", kind="sanity"),
)  # fmt: skip


def _toy_seed(config: ToyConfig, ctx: RunContext, i: int, bar: Any) -> dict[str, Any]:
    """All regimes x methods on seed block ``i``: ``{regime: {method: ToyEval}}`` + fractions."""
    from icml26.debias import (
        bias_profile,
        debias_finetune,
        evaluate_toy,
        make_toy_intent_task,
        train_toy_model,
    )

    c = config
    eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
    out: dict[str, Any] = {}
    for regime in c.regimes:
        # the same streams per regime: same prompts and base model, only the fillers differ
        task = make_toy_intent_task(regime, ctx.numpy_generator(f"task{i}"), n_train=c.n_train,
                                    n_test=c.n_test, sigma=c.sigma)  # fmt: skip
        base = train_toy_model(task, epochs=c.epochs, lr=c.lr, seed=ctx.torch_generator(f"init{i}"))
        evals = {"base": evaluate_toy(base, task, k=c.k_eval, seed=eval_seed)}
        batches = task.train_batches(c.batch_size, ctx.numpy_generator(f"batches{i}"))
        arms = (("bias", BIAS_ARMS[c.bias_arm]), ("output", "output_bias"), ("full", "all"))
        for method, params in arms:
            model = copy.deepcopy(base)
            if params is not None:  # None: the do-nothing control keeps the base model
                log = debias_finetune(model, batches, task.perturb, loss=c.loss,
                                      p_clean=c.p_clean, lr=c.debias_lr, steps=c.debias_steps,
                                      params=params,
                                      seed=ctx.numpy_generator(f"debias{i}"))  # fmt: skip
                if method == "bias":
                    out["trainable_fraction"] = log.trainable_fraction
            evals[method] = evaluate_toy(model, task, k=c.k_eval, seed=eval_seed, reference=base)
            bar.advance()
        out[regime] = evals
        if i == 0:  # module-wise bias / fluctuation / rho of the base model, first seed
            x = task.test_tokens[: c.n_profile]
            out[f"profile_{regime}"] = bias_profile(
                base, task.batch(x), task.perturbed_copies(x, c.k_eval, eval_seed)
            )
    return out


def _gap_closed(base: Any, bias: Any, full: Any) -> Any:
    """(bias − base) / (full − base), elementwise; NaN where full FT gains nothing."""
    gap = np.subtract(full, base)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, np.subtract(bias, base) / gap, np.nan)


def toy(config: ToyConfig, ctx: RunContext) -> dict[str, Any]:
    """Base / bias-only / output-only / full FT on every regime and seed; means and per seed."""
    c = config
    check_one_of("bias_arm", c.bias_arm, tuple(BIAS_ARMS), owner="debias.toy")
    runs = []
    with ctx.progress(c.n_seeds * len(c.regimes) * 3, "toy: seeds x regimes x methods") as bar:
        for i in range(c.n_seeds):
            runs.append(_toy_seed(c, ctx, i, bar))
    return summarise_toy(runs, c.regimes)


def summarise_toy(runs: list[dict[str, Any]], regimes: tuple[str, ...]) -> dict[str, Any]:
    """Flat metrics from the per-seed evaluations: means, and per-seed lists for the claims."""
    out: dict[str, Any] = {"trainable_fraction": runs[0].get("trainable_fraction", 0.0)}
    for regime in regimes:
        for method in TOY_METHODS:
            for field in ("clean_acc", "pert_acc", "output_bias_norm"):
                values = [getattr(r[regime][method], field) for r in runs]
                out[f"{regime}_{method}_{field}_per_seed"] = values
                out[f"{regime}_{method}_{field}"] = float(np.mean(values))
        per = {m: out[f"{regime}_{m}_pert_acc_per_seed"] for m in TOY_METHODS}
        gains = np.subtract(per["bias"], per["base"])
        out[f"{regime}_gain_per_seed"] = gains.tolist()
        out[f"{regime}_gain_mean"] = float(gains.mean())
        out[f"{regime}_gain_min"] = float(gains.min())
        out[f"{regime}_full_gain_per_seed"] = np.subtract(per["full"], per["base"]).tolist()
        # ratio of means (the table), and per seed (the claims)
        means = [float(np.mean(per[m])) for m in ("base", "bias", "full")]
        out[f"{regime}_gap_closed"] = float(_gap_closed(*means))
        closed = _gap_closed(per["base"], per["bias"], per["full"])
        out[f"{regime}_gap_closed_per_seed"] = [float(v) for v in closed]
        clean = {m: out[f"{regime}_{m}_clean_acc_per_seed"] for m in ("base", "bias")}
        drops = np.subtract(clean["base"], clean["bias"])
        out[f"{regime}_clean_drop_per_seed"] = drops.tolist()
        out[f"{regime}_clean_drop"] = float(drops.mean())
    short = {"systematic": "sys", "variance": "var", "gaussian": "gauss"}
    nan = [math.nan] * len(runs)
    for regime, tag in short.items():
        for key in ("gain_mean", "gain_min", "gap_closed", "clean_drop"):
            out[f"{tag}_{key}"] = out.get(f"{regime}_{key}", math.nan)
        for key in ("gain", "gap_closed", "clean_drop", "full_gain"):
            out[f"{tag}_{key}_per_seed"] = out.get(f"{regime}_{key}_per_seed", nan)
    out["gap_closed_diff"] = out["sys_gap_closed"] - out["var_gap_closed"]
    out["gap_closed_diff_per_seed"] = np.subtract(
        out["sys_gap_closed_per_seed"], out["var_gap_closed_per_seed"]
    ).tolist()
    out["sys_minus_gauss_gain_per_seed"] = np.subtract(
        out["sys_gain_per_seed"], out["gauss_gain_per_seed"]
    ).tolist()
    out["base_clean_acc_min_per_seed"] = np.min(
        [out[f"{r}_base_clean_acc_per_seed"] for r in regimes], axis=0
    ).tolist()
    for regime in regimes:
        profile = runs[0].get(f"profile_{regime}")
        if profile is None:
            continue
        out[f"profile_{regime}_module"] = list(profile["module"])
        for col in ("bias_norm", "fluct", "rho", "bias_share"):
            out[f"profile_{regime}_{col}"] = [float(v) for v in profile[col]]
    return out


def toy_tables(metrics: list[dict[str, Any]], config: ToyConfig) -> list[Table]:
    """Clean / perturbed accuracy and output-bias norm per regime and method (mean over seeds)."""
    rows = []
    for regime in config.regimes:
        for method in TOY_METHODS:
            cells = [np.mean([m[f"{regime}_{method}_{f}"] for m in metrics])
                     for f in ("clean_acc", "pert_acc", "output_bias_norm")]  # fmt: skip
            rows.append([regime, method, *(f"{v:.3f}" for v in cells)])
    return [
        Table(
            "Toy intent classifier: base vs bias-only (B) vs output-only (C) vs full FT",
            ["regime", "method", "clean acc", "perturbed acc", "‖E b‖ output"],
            rows,
            note="Spec prototype (seeds 0/1): systematic base 0.763/0.922 → bias-only 0.965/0.972 "
            "(full FT 0.996/0.995); variance 0.688/0.670 → 0.770/0.743 (full FT 0.998/0.994).",
        ),
        Table(
            f"Base model, module-wise bias profile (mean over {len(metrics)} records)",
            ["regime", "module", "‖E b‖", "E tr Cov", "ρ", "‖b‖² share"],
            [
                [r, mod, *(f"{v:.3f}" for v in cells)]
                for r in config.regimes
                for mod, *cells in profile_rows(metrics, f"profile_{r}_")
            ],
        ),
    ]


def toy_plot(metrics: list[dict[str, Any]], config: ToyConfig) -> dict[str, Any]:
    """Perturbed accuracy of base / bias-only / output-only / full FT per regime, and the base
    model's bias profile; every record (seed) drawn, the mean with its min–max band or dots."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note, stack

    note = seeds_note(len(metrics))
    fig, ax = plt.subplots(figsize=(7.5, 3.5))
    x = np.arange(len(config.regimes))
    for j, method in enumerate(TOY_METHODS):
        vals = [[m[f"{r}_{method}_pert_acc"] for r in config.regimes] for m in metrics]
        bars_with_seeds(ax, config.regimes, vals, offset=(j - 1.5) * 0.2, width=0.2, label=method)
    ax.set_xticks(x, config.regimes)
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("perturbed test accuracy")
    ax.set_title(f"Toy intent: perturbed accuracy per method ({note})", fontsize=9)
    legend_outside(ax)
    fig.tight_layout()
    prof, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for regime in config.regimes:
        modules = metrics[0][f"profile_{regime}_module"]
        pos = np.arange(len(modules))
        mean_band(axes[0], pos, stack(metrics, f"profile_{regime}_bias_norm"), label=regime,
                  marker="o")  # fmt: skip
        mean_band(axes[1], pos, stack(metrics, f"profile_{regime}_rho"), label=regime, marker="o")
        for a in axes:
            a.set_xticks(pos, modules, fontsize=7)
    axes[0].set_ylabel("‖E b‖ (base model)")
    axes[1].set_ylabel("ρ")
    axes[0].set_title(f"Toy base model: bias norm per module ({note})", fontsize=8)
    axes[1].set_title("Toy base model: ρ per module", fontsize=8)
    legend_outside(axes[1])
    prof.tight_layout()
    return {"perturbed_accuracy": fig, "bias_profile": prof}


register(
    name="debias.toy",
    title="Toy intent classifier: bias-only debiasing per regime, with the full-FT reference",
    paper=PAPER,
    claims=TOY_CLAIMS,
    presets=TOY_PRESETS,
    seeds=1,  # n_seeds runs inside the task; the claims are judged on its per-seed lists
    deterministic_metrics=("trainable_fraction",),
    description=(
        "Mean-pooled embeddings → MLP trained on clean prompts; perturbations append 1-4 unseen "
        "filler tokens whose frozen embeddings are c·u + s·N(0, I) (systematic c=3, s=0.3; "
        "variance c=1, s=1.5), or add N(0, 1) noise to every token embedding (negative control). "
        "Algorithm B (all 132 biases), C (logit bias) and full FT with MSE to the clean logits, "
        "p_clean = 0.2, Adam lr 1e-2, batch 64; 1000 test prompts × 8 perturbations."
    ),
    plot=toy_plot,
    tables=toy_tables,
    resources=RESOURCES,
)(toy)
