"""``debias.certify`` (spec §5.1 D4): certified accuracy before and after bias-only debiasing.

The toy intent task's test prompts are certified against random filler perturbations
(Clopper–Pearson, fresh certification seeds) for the base model and its bias-only debiased copy.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, check_one_of, register
from icml26.debias.experiments.common import PAPER, RESOURCES, check_config


@dataclass(frozen=True)
class CertifyConfig:
    """Certified accuracy before/after bias-only debiasing (spec §5.1, the reduced run)."""

    n_seeds: int = 3
    regimes: tuple[str, ...] = ("systematic", "variance")
    n_train: int = 1000
    n_test: int = 300
    epochs: int = 80
    lr: float = 1e-2
    debias_steps: int = 150
    debias_lr: float = 1e-2
    batch_size: int = 64
    p_clean: float = 0.2
    n_cert: int = 100
    alpha: float = 1e-3
    eps: float = 0.1
    # what the debiased arm is: "bias" (algorithm B) or, as the claims' control, "none" (the
    # base model itself: the do-nothing method)
    bias_arm: str = "bias"

    def __post_init__(self) -> None:
        check_config(
            self,
            unit=("p_clean", "alpha", "eps"),
            positive=("lr", "debias_lr"),
            choices={"regimes": ("systematic", "variance"), "bias_arm": ("bias", "none")},
        )


CERT = CertifyConfig()
CERT_PRESETS = {
    # seconds: the contract test runs it twice
    "smoke": replace(CERT, n_seeds=1, n_train=300, n_test=20, epochs=30, debias_steps=20,
                     n_cert=20),
    "quick": CERT,  # the spec's reduced run: 1000 prompts, 150 steps, 300 × 100, 3 seeds
    "full": replace(CERT, n_seeds=5, n_train=2000, debias_steps=300, n_test=1000),
}  # fmt: skip
# Every bar is the spec's (§5.1 D4, its reduced run); each claim is judged on the n_seeds
# per-seed values, paired within a seed (same prompts, base model and certification draws).
CERT_CLAIMS = (
    Claim("G1", "The base model is competent: clean accuracy ≥ 0.9 (systematic regime)",
          "base_clean_acc_per_seed", ">=", 0.9, "our bar (spec reduced run: 0.95–0.96)",
          "spec §5.1 D4", source="none", kind="gate"),
    Claim("D4a", "Systematic regime: certified accuracy (n=100, α=0.001, ε=0.1) rises by ≥ 0.05 "
          "after bias-only debiasing", "sys_cert_gain_per_seed", ">=", 0.05,
          "0.423→0.610, 0.633→0.717, 0.603→0.663 (spec reduced run)", "spec §5.1 D4",
          source="spec",
          control="the base model in place of the debiased one (do nothing): gain 0",
          control_value=0.0),
    Claim("D4b", "Condition: debiasing certifies where the shift is systematic, not where "
          "fluctuation dominates — certified-accuracy gain (systematic) − gain (variance) > 0",
          "cert_gain_sys_minus_var_per_seed", ">", 0.0,
          "+0.19, +0.08, +0.06 vs ≈ 0 (spec reduced run)", "spec §5.1 D4", source="spec",
          control="the base model in place of the debiased one (do nothing): 0",
          control_value=0.0),
)  # fmt: skip


def certify_toy(config: CertifyConfig, ctx: RunContext) -> dict[str, Any]:
    """Base vs bias-only certified accuracy per regime, with fresh certification seeds."""
    import torch

    from icml26.debias import (
        certified_accuracy,
        certify_many,
        debias_finetune,
        evaluate_toy,
        make_toy_intent_task,
        train_toy_model,
    )

    c = config
    check_one_of("bias_arm", c.bias_arm, ("bias", "none"), owner="debias.certify")
    per: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        per.setdefault(key, []).append(float(value))

    with ctx.progress(c.n_seeds * len(c.regimes) * 2, "certify: seeds x regimes x models") as bar:
        for i in range(c.n_seeds):
            cert_seed = int(ctx.numpy_generator(f"cert{i}").integers(2**31))  # fresh, unshared
            eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
            for regime in c.regimes:
                task = make_toy_intent_task(regime, ctx.numpy_generator(f"task{i}"),
                                            n_train=c.n_train, n_test=c.n_test)  # fmt: skip
                base = train_toy_model(task, epochs=c.epochs, lr=c.lr,
                                       seed=ctx.torch_generator(f"init{i}"))  # fmt: skip
                model = copy.deepcopy(base)
                if c.bias_arm == "bias":  # "none": the do-nothing control keeps the base model
                    batches = task.train_batches(c.batch_size,
                                                 ctx.numpy_generator(f"batches{i}"))  # fmt: skip
                    debias_finetune(model, batches, task.perturb, p_clean=c.p_clean,
                                    lr=c.debias_lr, steps=c.debias_steps, params="bias",
                                    seed=ctx.numpy_generator(f"debias{i}"))  # fmt: skip
                for name, net in (("base", base), ("bias", model)):

                    @torch.no_grad()
                    def predict(xs: list[Any], net: Any = net) -> Any:
                        return net(torch.stack(xs)).argmax(-1)

                    certs = certify_many(predict, list(task.test_tokens),
                                         task.test_labels.tolist(), task.perturb_example,
                                         n=c.n_cert, alpha=c.alpha, eps=c.eps, seed=cert_seed,
                                         prompts_per_call=50)  # fmt: skip
                    ev = evaluate_toy(net, task, seed=eval_seed, reference=base)
                    add(f"{regime}_{name}_cert_acc", certified_accuracy(certs))
                    add(f"{regime}_{name}_mean_p_low", np.mean([x.p_low for x in certs]))
                    add(f"{regime}_{name}_clean_acc", ev.clean_acc)
                    add(f"{regime}_{name}_pert_acc", ev.pert_acc)
                    bar.advance()
    return summarise_certify(per)


def summarise_certify(per: dict[str, list[float]]) -> dict[str, Any]:
    """Flat metrics from the per-seed values ``per["<regime>_<model>_<field>"]``: the means,
    the per-seed lists, and the per-seed gains the claims are judged on."""
    out: dict[str, Any] = {}
    for key, values in per.items():
        out[key] = float(np.mean(values))
        out[f"{key}_per_seed"] = values
    n = len(next(iter(per.values()))) if per else 0
    for regime, tag in (("systematic", "sys"), ("variance", "var")):
        before = out.get(f"{regime}_base_cert_acc", math.nan)
        after = out.get(f"{regime}_bias_cert_acc", math.nan)
        out[f"{tag}_cert_before"], out[f"{tag}_cert_after"] = before, after
        out[f"{tag}_cert_gain"] = after - before
        out[f"{tag}_cert_gain_per_seed"] = np.subtract(
            per.get(f"{regime}_bias_cert_acc", [math.nan] * n),
            per.get(f"{regime}_base_cert_acc", [math.nan] * n),
        ).tolist()
    out["cert_gain_sys_minus_var_per_seed"] = np.subtract(
        out["sys_cert_gain_per_seed"], out["var_cert_gain_per_seed"]
    ).tolist()
    out["base_clean_acc_per_seed"] = per.get("systematic_base_clean_acc", [math.nan] * n)
    return out


def certify_tables(metrics: list[dict[str, Any]], config: CertifyConfig) -> list[Table]:
    """Certified accuracy, mean p_low, clean and perturbed accuracy per regime and model."""
    rows = []
    for regime in config.regimes:
        for name in ("base", "bias"):
            keys = ("cert_acc", "mean_p_low", "clean_acc", "pert_acc")
            cells = [np.mean([m[f"{regime}_{name}_{k}"] for m in metrics]) for k in keys]
            rows.append([regime, name, *(f"{v:.3f}" for v in cells)])
    return [
        Table(
            "Certification (Clopper–Pearson, n = 100, α = 0.001, ε = 0.1), fresh seeds",
            ["regime", "model", "certified acc", "mean p_low", "clean acc", "perturbed acc"],
            rows,
            note="Spec reduced run, systematic: certified 0.423→0.610, 0.633→0.717, "
            "0.603→0.663; variance ≈ 0 before and after.",
        )
    ]


register(
    name="debias.certify",
    title="Certified accuracy against random filler perturbations, before/after debiasing",
    paper=PAPER,
    claims=CERT_CLAIMS,
    presets=CERT_PRESETS,
    seeds=1,  # n_seeds runs inside the task; the claims are judged on its per-seed lists
    description=(
        "Toy intent task (1000 training prompts), bias-only debiasing for 150 steps, then every "
        "test prompt is certified with 100 fresh perturbations: certified = correct on the clean "
        "prompt and Clopper–Pearson p_low ≥ 0.9 at α = 0.001."
    ),
    tables=certify_tables,
    resources=RESOURCES,
)(certify_toy)
