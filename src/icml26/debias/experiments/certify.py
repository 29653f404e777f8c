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

from icml26.core import Claim, RunContext, Table, register
from icml26.debias.experiments.common import PAPER, RESOURCES


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


CERT = CertifyConfig()
CERT_PRESETS = {
    # seconds: the contract test runs it twice
    "smoke": replace(CERT, n_seeds=1, n_train=300, n_test=20, epochs=30, debias_steps=20,
                     n_cert=20),
    "quick": CERT,  # the spec's reduced run: 1000 prompts, 150 steps, 300 × 100, 3 seeds
    "full": replace(CERT, n_seeds=5, n_train=2000, debias_steps=300, n_test=1000),
}  # fmt: skip
CERT_CLAIMS = (
    Claim("D4a", "Systematic regime: certified accuracy (n=100, α=0.001, ε=0.1) rises by ≥ 0.05 "
          "after bias-only debiasing", "sys_cert_gain", ">=", 0.05,
          "0.423→0.610, 0.633→0.717, 0.603→0.663 (spec reduced run)", "spec §5.1 D4",
          source="spec"),
    Claim("D4b", "Variance regime: certified accuracy after debiasing stays ≤ 0.05 (negative "
          "result: debiasing cannot certify what fluctuation breaks)", "var_cert_after", "<=",
          0.05, "≈ 0 before and after (spec reduced run)", "spec §5.1 D4", source="spec"),
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
                batches = task.train_batches(c.batch_size, ctx.numpy_generator(f"batches{i}"))
                debias_finetune(model, batches, task.perturb, p_clean=c.p_clean, lr=c.debias_lr,
                                steps=c.debias_steps, params="bias",
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
    out: dict[str, Any] = {}
    for key, values in per.items():
        out[key] = float(np.mean(values))
        out[f"{key}_per_seed"] = values
    for regime, tag in (("systematic", "sys"), ("variance", "var")):
        before = out.get(f"{regime}_base_cert_acc", math.nan)
        after = out.get(f"{regime}_bias_cert_acc", math.nan)
        out[f"{tag}_cert_before"], out[f"{tag}_cert_after"] = before, after
        out[f"{tag}_cert_gain"] = after - before
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
    seeds=1,  # n_seeds runs inside the task (the spec's gates are on the mean over seeds)
    description=(
        "Toy intent task (1000 training prompts), bias-only debiasing for 150 steps, then every "
        "test prompt is certified with 100 fresh perturbations: certified = correct on the clean "
        "prompt and Clopper–Pearson p_low ≥ 0.9 at α = 0.001."
    ),
    tables=certify_tables,
    resources=RESOURCES,
)(certify_toy)
