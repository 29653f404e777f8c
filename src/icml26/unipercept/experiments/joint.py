"""E4 ``unipercept.joint``: one joint model vs single-domain models; VQA accuracy.

Every model starts from the same initial weights and runs the same DAPT -> GRPO pipeline on its
own data; all are scored on every domain's held-out ratings.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.unipercept.experiments.common import (
    PAPER,
    PIPELINE_PRESETS,
    RESOURCES,
    MainConfig,
    dapt,
    domain_sets,
    grpo,
    joint_pipeline,
    new_model,
    pipeline_context,
)

# J1 ("joint >= best single-domain", spec §5 E4) was dropped with issue 39: a non-strict bar on
# the difference passes when the joint model merely equals the best single-domain one; J2 carries
# the comparison with a strict bar.
JOINT_CLAIMS = (
    Claim(
        "J2",
        "Joint training beats every single-domain model across domains: mean cross-domain "
        "(SRCC+PLCC)/2 of the joint model − the best single-domain model's > 0",
        "joint_minus_best_single",
        ">",
        0.0,
        "IQA-only: KonIQ 0.901, ISTA 0.341",
        "ablation table (single domain)",
        source="paper",
        control="the best single-domain model in place of the joint one (difference 0)",
        control_value=0.0,
    ),
    Claim(
        "J3",
        "Full target (E4): IQA distortion-type VQA accuracy >= 90 %",
        "vqa_type",
        ">=",
        0.9,
        "IQA VQA 81.07 %",
        "spec §5 E4",
        source="spec",
        control="guessing among the 4 options (25 %)",
        control_value=0.25,
    ),
    Claim(
        "J4",
        "Full target (E4): IQA severity VQA accuracy >= 80 %",
        "vqa_severity",
        ">=",
        0.8,
        "IQA VQA 81.07 %",
        "spec §5 E4",
        source="spec",
        control="guessing among the 3 options (33 %)",
        control_value=1 / 3,
    ),
    Claim(
        "J5",
        "Full target (E4): ISTA base-morphology VQA accuracy >= 80 %",
        "vqa_morphology",
        ">=",
        0.8,
        "ISTA VQA 84.23 %",
        "spec §5 E4",
        source="spec",
        control="guessing among the 4 options (25 %)",
        control_value=0.25,
    ),
)
VQA_CRITERIA = {
    "vqa_type": "Distortion Types Present",
    "vqa_severity": "Severity Level",
    "vqa_location": "Location Description",
    "vqa_morphology": "Base Morphology",
    "vqa_contour": "2D Contour",
    "vqa_material": "Material Identification",
}


def _cross_domain(model: Any, vr: list) -> float:
    """Mean over domains of (SRCC + PLCC) / 2."""
    from icml26.unipercept import evaluate_vr

    return float(np.mean([m["mean"] for m in evaluate_vr(model, vr).values()]))


def joint_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, ax = plt.subplots(figsize=(6, 3.5))
    keys = ["joint_cross", *(f"single_{d.lower()}_cross" for d in config.domains)]
    labels = ["joint", *(f"{d} only" for d in config.domains)]
    bars_with_seeds(
        ax, labels, np.stack([stack(metrics, k) for k in keys], axis=1), color="tab:purple"
    )
    ax.set_ylabel("mean over domains of (SRCC + PLCC) / 2")
    ax.set_title(f"E4: joint vs single-domain training ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"joint": fig}


@register(
    name="unipercept.joint",
    title="E4: one joint model vs single-domain models; VQA accuracy",
    paper=PAPER,
    claims=JOINT_CLAIMS,
    presets=PIPELINE_PRESETS,
    plot=joint_plot,
    seeds=1,
    resources=RESOURCES,
)
def joint_experiment(config: MainConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.unipercept import evaluate_vqa

    ctx = pipeline_context("unipercept.joint", config, ctx)  # unipercept.main's seed
    train_vr, train_vqa = domain_sets(config, ctx, "train", config.n_train)
    test_vr, test_vqa = domain_sets(config, ctx, "test", config.n_test)
    train = train_vr + train_vqa
    metrics: dict[str, Any] = {}
    groups = {"joint": train, **{d: [it for it in train if it.domain == d] for d in config.domains}}
    for name, data in groups.items():
        if name == "joint":
            model = joint_pipeline(config, ctx).model
        else:
            model = new_model(config, ctx)  # the same initial weights as the joint model
            dapt(model, data, config.dapt_epochs, config, ctx, "dapt")
            grpo(model, copy.deepcopy(model), data, "agsr", config, ctx, "grpo")
        key = "joint" if name == "joint" else f"single_{name.lower()}"
        metrics[f"{key}_cross"] = _cross_domain(model, test_vr)
        if name == "joint":
            acc = evaluate_vqa(model, test_vqa, by=("criterion",))["criterion"]
            metrics.update({metric: acc[c] for metric, c in VQA_CRITERIA.items()})
    best = max(metrics[f"single_{d.lower()}_cross"] for d in config.domains)
    metrics["joint_minus_best_single"] = metrics["joint_cross"] - best
    return metrics
