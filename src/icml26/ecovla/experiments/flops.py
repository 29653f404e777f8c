"""ecovla.flops: analytic backbone FLOPs of a pruned step, alone and with FastV token pruning
(spec §5, C4).

FLOPs are counted analytically (``backbone_flops``, the FlopCounterMode convention). Every pattern
of one ratio keeps the same number of MLP channels and heads per layer, so a sparse step's FLOPs
depend on the sizes and the ratio only, not on the weights or on which channels are kept: the
counts are taken on a random-init TinyVLA of the shipped policies' sizes, and every metric is
deterministic (C4a/b hold by construction: sanity). The FLOPs with EAP's dense trigger steps
counted, and EAP + FastV's success (C4c, HF), are measured in ``ecovla.indist``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import RunContext, Table, check_in_interval, check_positive_int, register
from icml26.ecovla.experiments.common import (
    PAPER,
    RESOURCES,
    check_backbone,
    pct,
    spec_claim,
)


@dataclass(frozen=True)
class FlopsConfig:
    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 4
    d_ff: int = 512
    patch: int = 8
    ratios: tuple[float, ...] = (0.25, 0.4)
    token_keep: float = 0.5  # FastV: half of the visual tokens after block 2
    token_layer: int = 2

    def __post_init__(self) -> None:
        check_backbone(self)
        # fastv_sequence_lengths' keep ratio and start layer
        check_in_interval(
            "token_keep", self.token_keep, low=0.0, high=1.0, closed="right", owner="FlopsConfig"
        )
        check_positive_int(
            "token_layer", self.token_layer, minimum=0, maximum=self.n_layers, owner="FlopsConfig"
        )


def _shipped_sizes() -> FlopsConfig:
    """The sizes of the shipped policies (``ecovla.indist`` and ``ecovla.shift``), both ratios."""
    from icml26.ecovla.standins import POLICIES, RECIPES

    recipe = RECIPES[POLICIES[0]]
    return FlopsConfig(
        d_model=recipe.d_model,
        n_layers=recipe.n_layers,
        n_heads=recipe.n_heads,
        d_ff=recipe.d_ff,
        patch=recipe.patch,
    )


FLOPS_PRESETS = {
    "smoke": FlopsConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, patch=16, token_layer=1),
    "quick": _shipped_sizes(),
    "full": _shipped_sizes(),
}
DETERMINISTIC = ("flops_*", "fastv_flops_*", "kept_*")
FLOPS_CLAIMS = (
    spec_claim(
        "C4a",
        "Analytic backbone FLOPs of a sparse step at 40 % <= 0.65 x dense",
        "flops_ratio_40",
        "<=",
        0.65,
        "Ours 40 %: 2.74 / 4.05 T = 0.68",
        "spec §5 C4 (paper Table 1)",
        kind="sanity",
    ),
    spec_claim(
        "C4b",
        "EAP + FastV (50 % visual tokens after block 2) at 40 %: >= 1.8x fewer FLOPs",
        "fastv_flops_reduction_40",
        ">=",
        1.8,
        "FastV+Ours 40 %: 4.05 / 1.64 T = 2.47x",
        "spec §5 C4 (paper Table 1)",
        kind="sanity",
    ),
)


def flops_tables(metrics: list[dict[str, Any]], config: FlopsConfig) -> list[Table]:
    rows = []
    for ratio in config.ratios:
        tag = pct(ratio)
        cells = [
            np.mean([m[k] for m in metrics])
            for k in (
                f"kept_mlp_{tag}",
                f"kept_heads_{tag}",
                f"flops_ratio_{tag}",
                f"fastv_flops_ratio_{tag}",
                f"fastv_flops_reduction_{tag}",
            )
        ]
        rows.append(
            [
                f"{tag} %",
                *(f"{c:.3f}" for c in cells[:4]),
                f"{cells[4]:.2f}x",
            ]
        )
    return [
        Table(
            "Backbone FLOPs of a sparse step (analytic) relative to dense",
            [
                "ratio",
                "MLP channels kept",
                "heads kept",
                "EAP",
                "FastV+EAP",
                "FastV+EAP reduction",
            ],
            rows,
            note=f"{config.n_heads} heads per layer: the kept head fraction is rounded "
            "(round((1 - ratio) x heads)); paper (OpenVLA-OFT): 25 % 3.23/4.05 T (0.80), 40 % "
            "2.74/4.05 T (0.68); FastV+Ours 2.07x / 2.47x",
        )
    ]


def flops_plot(metrics: list[dict[str, Any]], config: FlopsConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, seeds_note, stack

    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f"{pct(r)} %" for r in config.ratios]
    for i, (key, name) in enumerate(
        (("flops_ratio", "EAP, sparse step"), ("fastv_flops_ratio", "FastV+EAP, sparse step"))
    ):
        values = np.stack([stack(metrics, f"{key}_{pct(r)}") for r in config.ratios], axis=1)
        bars_with_seeds(ax, labels, values, offset=i * 0.4, width=0.4, label=name)
    ax.set_ylabel("backbone FLOPs / dense")
    ax.set_title(f"Analytic backbone FLOPs ({seeds_note(len(metrics))})")
    legend_outside(ax)
    fig.tight_layout()
    return {"flops": fig}


@register(
    name="ecovla.flops",
    title="Analytic backbone FLOPs of a pruned step, alone and with FastV token pruning (C4)",
    paper=PAPER,
    claims=FLOPS_CLAIMS,
    presets=FLOPS_PRESETS,
    tables=flops_tables,
    plot=flops_plot,
    seeds=1,  # analytic: the same for every seed (deterministic_metrics)
    resources=RESOURCES,
    deterministic_metrics=DETERMINISTIC,
)
def run(config: FlopsConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.ecovla import (
        TinyVLA,
        TinyVLAConfig,
        backbone_flops,
        fastv_sequence_lengths,
        random_pattern,
    )

    model = TinyVLA(
        TinyVLAConfig(
            d_model=config.d_model,
            n_layers=config.n_layers,
            n_heads=config.n_heads,
            n_kv_heads=config.n_heads,
            d_ff=config.d_ff,
            patch=config.patch,
        ),
        seed=ctx.torch_generator("init"),
    )
    c = model.config
    full_tokens = [c.n_tokens] * c.n_layers
    fastv_tokens = fastv_sequence_lengths(
        c.n_tokens, c.n_visual, config.token_keep, config.token_layer, c.n_layers
    )
    dense = backbone_flops(model, None, full_tokens)
    out: dict[str, Any] = {"flops_dense": dense}
    with ctx.progress(len(config.ratios), "ratios counted") as bar:
        for ratio in config.ratios:
            tag = pct(ratio)
            # any pattern of this ratio keeps the same counts; which channels does not matter
            pattern = random_pattern(model, ratio, seed=ctx.torch_generator(f"pattern{tag}"))
            out[f"kept_mlp_{tag}"] = float(np.mean([len(k) for k in pattern.mlp])) / c.d_ff
            out[f"kept_heads_{tag}"] = float(np.mean([len(h) for h in pattern.heads])) / c.n_heads
            out[f"flops_ratio_{tag}"] = backbone_flops(model, pattern, full_tokens) / dense
            out[f"fastv_flops_ratio_{tag}"] = backbone_flops(model, pattern, fastv_tokens) / dense
            out[f"fastv_flops_reduction_{tag}"] = 1.0 / out[f"fastv_flops_ratio_{tag}"]
            bar.advance()
    for key in ("flops_ratio", "fastv_flops_ratio", "fastv_flops_reduction"):
        out.setdefault(f"{key}_40", float("nan"))
    return out
