"""ecovla.flops: analytic backbone FLOPs of EAP, alone and with FastV token pruning (spec §5, C4).

FLOPs are counted analytically (``backbone_flops``, the FlopCounterMode convention) for the
patterns a trained TinyVLA's EAP pruner uses on the shift split; success rates come from the same
episodes. Every reference figure is the spec's own small-scale target (``spec_claim``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from icml26.core import RunContext, Table, register
from icml26.ecovla.experiments.common import (
    PAPER,
    RESOURCES,
    SHIFT_DEFAULT,
    SHIFT_PRESETS,
    ShiftConfig,
    calibration_sets,
    pct,
    spec_claim,
    success_rate,
    train_policy,
)

FLOPS_PRESETS = {
    "smoke": replace(SHIFT_PRESETS["smoke"], p_sweep=(), alpha_sweep=()),
    "quick": replace(SHIFT_PRESETS["quick"], p_sweep=(), alpha_sweep=()),
    "full": replace(SHIFT_DEFAULT, p_sweep=(), alpha_sweep=()),
}
FLOPS_CLAIMS = (
    spec_claim(
        "C4a",
        "Analytic backbone FLOPs of a sparse step at 40 % <= 0.65 x dense",
        "flops_ratio_40",
        "<=",
        0.65,
        "Ours 40 %: 2.74 / 4.05 T = 0.68",
        "spec §5 C4 (paper Table 1)",
    ),
    spec_claim(
        "C4b",
        "EAP + FastV (50 % visual tokens after block 2) at 40 %: >= 1.8x fewer FLOPs",
        "fastv_flops_reduction_40",
        ">=",
        1.8,
        "FastV+Ours 40 %: 4.05 / 1.64 T = 2.47x",
        "spec §5 C4 (paper Table 1)",
    ),
    spec_claim(
        "C4c",
        "EAP + FastV at 40 %: SR >= Dense SR - 10 points",
        "eap_fastv_minus_dense_40",
        ">=",
        -10.0,
        "FastV+Ours 40 %: 92.9 vs 96.7 (−3.8)",
        "spec §5 C4 (paper Table 1)",
    ),
)


def flops_tables(metrics: list[dict[str, Any]], config: ShiftConfig) -> list[Table]:
    rows = []
    for ratio in config.ratios:
        tag = pct(ratio)
        cells = [
            np.mean([m[k] for m in metrics])
            for k in (
                f"flops_ratio_{tag}",
                f"flops_ratio_with_dense_steps_{tag}",
                f"fastv_flops_reduction_{tag}",
                f"fastv_flops_reduction_with_dense_steps_{tag}",
                f"sr_eap_{tag}",
                f"sr_eap_fastv_{tag}",
            )
        ]
        rows.append(
            [
                f"{tag} %",
                *(f"{c:.3f}" for c in cells[:2]),
                *(f"{c:.2f}x" for c in cells[2:4]),
                *(f"{c:.1f}" for c in cells[4:]),
            ]
        )
    return [
        Table(
            "Backbone FLOPs (analytic) relative to dense, and success rates (%)",
            [
                "ratio",
                "EAP sparse step",
                "EAP incl. dense steps",
                "FastV+EAP reduction",
                "... incl. dense steps",
                "SR EAP",
                "SR FastV+EAP",
            ],
            rows,
            note=f"dense SR {np.mean([m['sr_dense'] for m in metrics]):.1f}; paper (OpenVLA-OFT): "
            "25 % 3.23/4.05 T (0.80), 40 % 2.74/4.05 T (0.68); FastV+Ours 2.07x / 2.47x",
        )
    ]


def flops_plot(metrics: list[dict[str, Any]], config: ShiftConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, seeds_note, stack

    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f"{pct(r)} %" for r in config.ratios]
    for i, (key, name) in enumerate(
        (
            ("flops_ratio", "EAP, sparse step"),
            ("flops_ratio_with_dense_steps", "EAP, incl. dense steps"),
            ("fastv_flops_ratio", "FastV+EAP, sparse step"),
        )
    ):
        values = np.stack([stack(metrics, f"{key}_{pct(r)}") for r in config.ratios], axis=1)
        bars_with_seeds(ax, labels, values, offset=i * 0.27, width=0.27, label=name)
    ax.set_ylabel("backbone FLOPs / dense")
    ax.set_title(f"Analytic backbone FLOPs ({seeds_note(len(metrics))})")
    legend_outside(ax)
    fig.tight_layout()
    return {"flops": fig}


@register(
    name="ecovla.flops",
    title="Analytic backbone FLOPs of EAP, alone and with FastV token pruning (C4)",
    paper=PAPER,
    claims=FLOPS_CLAIMS,
    presets=FLOPS_PRESETS,
    tables=flops_tables,
    plot=flops_plot,
    seeds=1,
    resources=RESOURCES,
)
def run(config: ShiftConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.ecovla import (
        DensePolicy,
        EcoVLAPruner,
        PruningLog,
        backbone_flops,
        fastv_sequence_lengths,
        mean_step_flops,
    )

    model, demos, train_loss = train_policy(config, ctx)
    initial, _ = calibration_sets(config, demos, ctx)
    c = model.config
    full_tokens = [c.n_tokens] * c.n_layers
    fastv_tokens = fastv_sequence_lengths(
        c.n_tokens, c.n_visual, config.token_keep, config.token_layer, c.n_layers
    )
    out: dict[str, Any] = {"train_loss": train_loss}
    with ctx.progress(1 + 2 * len(config.ratios), "policies evaluated") as bar:
        out["sr_dense"] = success_rate(DensePolicy(model), config, ctx)
        bar.advance()
        for ratio in config.ratios:
            tag = pct(ratio)
            for name, keep in (("eap", 1.0), ("eap_fastv", config.token_keep)):
                model.set_token_pruning(keep, config.token_layer)
                pruner = EcoVLAPruner(model, ratio, config.p, alpha=config.alpha).calibrate(initial)
                log = PruningLog()
                out[f"sr_{name}_{tag}"] = success_rate(pruner, config, ctx, log=log)
                model.set_token_pruning(1.0, config.token_layer)
                tokens = full_tokens if keep == 1.0 else fastv_tokens
                dense = backbone_flops(model, None, tokens)
                sparse = backbone_flops(model, pruner.initial_pattern_, tokens)
                with_dense_steps = mean_step_flops(
                    model, pruner.initial_pattern_, tokens, log.records
                )
                dense_flops = dense if keep == 1.0 else out[f"flops_dense_{tag}"]
                out[f"flops_dense_{tag}" if keep == 1.0 else f"flops_fastv_dense_{tag}"] = dense
                prefix = "" if keep == 1.0 else "fastv_"
                out[f"{prefix}flops_ratio_{tag}"] = sparse / dense_flops
                out[f"{prefix}flops_ratio_with_dense_steps_{tag}"] = with_dense_steps / dense_flops
                bar.advance()
            out[f"fastv_flops_reduction_{tag}"] = 1.0 / out[f"fastv_flops_ratio_{tag}"]
            out[f"fastv_flops_reduction_with_dense_steps_{tag}"] = (
                1.0 / out[f"fastv_flops_ratio_with_dense_steps_{tag}"]
            )
            out[f"eap_fastv_minus_dense_{tag}"] = out[f"sr_eap_fastv_{tag}"] - out["sr_dense"]
    for tag in ("25", "40"):
        for key in ("flops_ratio", "fastv_flops_reduction", "eap_fastv_minus_dense"):
            out.setdefault(f"{key}_{tag}", math.nan)
    return out
