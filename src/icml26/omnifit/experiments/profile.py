"""``omnifit.profile`` (A3): the LAHP profile of the trained stand-in, its cost equation and
the ``mu = 1`` equivalence (both sanity checks: they hold by construction).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, register
from icml26.omnifit.experiments.checks import check_mus
from icml26.omnifit.experiments.common import (
    PAPER,
    QUICK_STANDIN,
    RESOURCES,
    SMOKE_STANDIN,
    WHERE_SPEC,
    StandInConfig,
    calibrate,
    prepare_standin,
)


@dataclass(frozen=True)
class ProfileConfig(StandInConfig):
    mus: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_mus(self)


PROFILE = ProfileConfig()
PROFILE_PRESETS = {
    "smoke": replace(PROFILE, **SMOKE_STANDIN),
    "quick": replace(PROFILE, **QUICK_STANDIN),
    "full": PROFILE,
}


def _profile_plot(metrics: list[dict[str, Any]], config: ProfileConfig) -> dict:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    layers = list(range(1, config.n_layers + 1))
    mean_band(left, layers, stack(metrics, "k_eff_fraction"), label="k_eff / d", marker="o")
    mean_band(left, layers, stack(metrics, "psi"), label="Psi(l)", marker="s")
    mean_band(left, layers, stack(metrics, "rho_video"), label="rho_video (x N)", marker="^")
    mean_band(left, layers, stack(metrics, "rho_audio"), label="rho_audio (x N)", marker="v")
    left.set_xlabel("layer")
    left.set_title("TRP and MPP profile")
    legend_outside(left)
    for mu in config.mus:
        mean_band(right, layers, stack(metrics, f"r_{mu:g}"), label=f"mu = {mu:g}", marker="o")
    right.set_xlabel("layer")
    right.set_ylabel("retention r(l)")
    right.set_title("cost-equivalent retention per layer")
    legend_outside(right)
    fig.suptitle(f"LAHP profile of the trained stand-in ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"lahp_profile": fig}


PROFILE_CLAIMS = (
    Claim(
        "A3",
        "sum_l C(K_l) <= L C(mu N) before rounding, every mu (relative excess <= 1e-6)",
        "cost_excess",
        "<=",
        1e-6,
        "cost-equivalent budgets (Eq. for xi)",
        WHERE_SPEC,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "E1",
        "mu = 1 compressed forward is bit-identical to the full forward (max |diff| = 0)",
        "mu1_max_abs_diff",
        "<=",
        0.0,
        "training-free plug-in: no change at full retention",
        WHERE_SPEC,
        source="spec",
        kind="sanity",
    ),
)


@register(
    name="omnifit.profile",
    title="A3: LAHP profile of the trained stand-in, its cost equation and mu = 1 equivalence",
    paper=PAPER,
    claims=PROFILE_CLAIMS,
    presets=PROFILE_PRESETS,
    plot=_profile_plot,
    seeds=1,  # A3 checks one profile per mu (>= 3 values); E1 is exact at any seed
    resources=RESOURCES,
    deterministic_metrics=("mu1_max_abs_diff",),
)
def profile(config: ProfileConfig, ctx: RunContext) -> dict[str, Any]:
    import numpy as np
    import torch

    from icml26.omnifit import OmniFitCompressor, layer_cost, modality_counts, run_compressed

    s = config
    model, test, calib, _ = prepare_standin(s, ctx)
    prof = calibrate(model, calib, s)
    _, ids, _ = model.embed(test.batch(slice(0, 1)))
    counts = modality_counts(ids)
    N = counts["video"] + counts["audio"]
    out: dict[str, Any] = {
        "k_eff": prof.k_eff,
        "k_eff_fraction": [k / prof.d for k in prof.k_eff],
        "psi": prof.psi.tolist(),
        "rho_video": [r * N for r in prof.rho["video"]],
        "rho_audio": [r * N for r in prof.rho["audio"]],
        "k_eff_spread": (max(prof.k_eff) - min(prof.k_eff)) / prof.d,
    }
    excess = []
    for mu in config.mus:
        r, xi = prof.retention(mu, N)
        cost = float(layer_cost(r * N, prof.c1, prof.c2).sum())
        uniform = prof.n_layers * float(layer_cost(mu * N, prof.c1, prof.c2))
        excess.append(cost / uniform - 1.0)
        budgets = prof.layer_budgets(mu, counts)
        out[f"r_{mu:g}"] = r.tolist()
        out[f"xi_{mu:g}"] = xi
        out[f"mean_retention_{mu:g}"] = float(np.mean(r))
        out[f"kept_{mu:g}"] = [b["video"] + b["audio"] for b in budgets]
    out["cost_excess"] = excess  # one per mu
    out["max_cost_excess"] = max(excess)
    batch = test.batch(slice(0, 32))
    with torch.no_grad():
        full = model(batch)
        same = run_compressed(model, batch, OmniFitCompressor(prof, 1.0, M=s.M, k=s.k)).logits
    out["mu1_max_abs_diff"] = float((full - same).abs().max())
    return out
