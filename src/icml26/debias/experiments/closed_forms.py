"""``debias.closed_forms`` (spec §5.1 Q1): the closed forms against Monte Carlo, and algorithm A.

The ReLU/Gaussian bias ``u Φ(u/s) + s φ(u/s) − relu(u)`` against Monte Carlo on a ``(u, s)`` grid;
a linear module's zero bias under antithetic noise and its bias ``Wμ`` under a mean shift (with
the decomposition identity); algorithm A (mean-shift correction) on a random ReLU net.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.debias.experiments.common import PAPER, RESOURCES, check_config


@dataclass(frozen=True)
class ClosedFormsConfig:
    """ReLU/Gaussian bias vs Monte Carlo, linear zero bias, algorithm A (spec §5.1 Q1)."""

    mc_draws: int = 100_000
    # |u|/s <= 2: further out a 10^5-draw sample holds too few positive draws for its
    # standard error to mean anything (the far tail is checked against closed values in tests)
    u_grid: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
    s_grid: tuple[float, ...] = (0.5, 1.0, 2.0)
    d_in: int = 8
    hidden: int = 64
    d_out: int = 4
    noise_std: float = 1.0
    # after the correction the held-out ‖E b‖ is Monte-Carlo error of the calibration and
    # evaluation sets (~ 1/sqrt(n·K)); 2000 × 32 left it at the 5 % bar's edge (0.950, one seed)
    n_inputs: int = 8000
    k_perturb: int = 64

    def __post_init__(self) -> None:
        check_config(self, positive=("s_grid", "noise_std"))


CLOSED = ClosedFormsConfig()
CLOSED_PRESETS = {
    "smoke": replace(CLOSED, mc_draws=20_000, n_inputs=300, k_perturb=16),  # seconds, run twice
    "quick": CLOSED,
    "full": replace(CLOSED, mc_draws=1_000_000, n_inputs=32_000),  # tighter Monte Carlo
}
CLOSED_CLAIMS = (
    Claim("Q1a", "ReLU/Gaussian bias u Φ(u/s) + s φ(u/s) − relu(u) matches 10^5-draw Monte Carlo "
          "(max |z| ≤ 4 over the grid)", "relu_mc_max_z", "<=", 4.0, "closed form",
          "spec §2.2.3, §7.1", source="spec", kind="sanity"),
    Claim("Q1b", "Linear module under antithetic ±δ has zero bias (≤ 1e-12, float64)",
          "linear_antithetic_max_bias", "<=", 1e-12, "b = 0 exactly", "spec §2.2.1, §7.2",
          source="spec", kind="sanity"),
    Claim("Q1c", "Decomposition E‖M(h+δ)−M(h)‖² = ‖b‖² + tr Cov holds on samples (≤ 1e-9 rel.)",
          "decomposition_rel_error", "<=", 1e-9, "exact identity", "spec §2.1, §7.3",
          source="spec", kind="sanity"),
    Claim("Q1d", "Algorithm A cuts a 1-hidden-layer ReLU net's output-bias norm by ≥ 95% "
          "(held-out inputs, fresh noise): it subtracts the mean shift it measures, so this "
          "holds by construction up to Monte-Carlo error", "alg_a_bias_reduction", ">=", 0.95,
          "≥ 95% (spec prototype)", "spec §5.1 Q1", source="spec", kind="sanity"),
)  # fmt: skip


def closed_forms(config: ClosedFormsConfig, ctx: RunContext) -> dict[str, Any]:
    """Check the closed forms against Monte Carlo and run algorithm A on a random ReLU net."""
    import torch
    from torch import nn

    from icml26.core import seeded_default_init
    from icml26.debias import mean_shift_debias, module_bias, relu_gaussian_bias

    c = config
    rng = ctx.numpy_generator("mc")
    zs = []
    with ctx.progress(len(c.u_grid) * len(c.s_grid) + 2, "closed forms") as bar:
        for u in c.u_grid:
            for s in c.s_grid:
                draws = np.maximum(u + s * rng.standard_normal(c.mc_draws), 0.0) - max(u, 0.0)
                se = draws.std(ddof=1) / math.sqrt(c.mc_draws)
                zs.append(abs(draws.mean() - relu_gaussian_bias(u, s)) / se)
                bar.advance()
        g = ctx.torch_generator("linear")
        with seeded_default_init(g):
            lin = nn.Sequential(nn.Linear(c.d_in, c.d_out, dtype=torch.float64))
        x = torch.randn(c.n_inputs, c.d_in, generator=g, dtype=torch.float64)
        delta = torch.randn(c.n_inputs, c.k_perturb, c.d_in, generator=g, dtype=torch.float64)
        antithetic = x[:, None] + torch.cat([delta, -delta], dim=1)  # (n, 2K, d_in)
        lin_rep = module_bias(lin, "0", x, antithetic)
        mu = torch.full((c.d_in,), 0.5, dtype=torch.float64)
        shifted = module_bias(lin, "0", x, antithetic + mu)  # bias W mu exactly
        decomp = (shifted.bias**2).sum(1) + shifted.fluct_var
        bar.advance()

        g = ctx.torch_generator("relu_net")
        with seeded_default_init(g):
            net = nn.Sequential(
                nn.Linear(c.d_in, c.hidden), nn.ReLU(), nn.Linear(c.hidden, c.d_out)
            )
        original = copy.deepcopy(net)

        def draw() -> tuple[torch.Tensor, torch.Tensor]:
            x = torch.randn(c.n_inputs, c.d_in, generator=g)
            noise = c.noise_std * torch.randn(c.n_inputs, c.k_perturb, c.d_in, generator=g)
            return x, x[:, None] + noise

        x_cal, xp_cal = draw()
        x_eval, xp_eval = draw()  # held-out inputs and fresh noise
        before = module_bias(net, "2", x_eval, xp_eval)
        mean_shift_debias(net, x_cal, xp_cal, ["0", "1", "2"])
        after = module_bias(net, "2", x_eval, xp_eval, reference=original)
        bar.advance()
    return {
        "relu_mc_max_z": float(max(zs)),
        "linear_antithetic_max_bias": float(lin_rep.bias.abs().max()),
        "linear_mean_shift_error": float((shifted.mean_bias - lin[0].weight.detach() @ mu)
                                         .abs().max()),
        "decomposition_rel_error": float(((decomp - shifted.sq_shift).abs()
                                          / shifted.sq_shift).max()),
        "relu_net_rho": before.rho,
        "alg_a_bias_before": before.bias_norm,
        "alg_a_bias_after": after.bias_norm,
        "alg_a_bias_reduction": 1.0 - after.bias_norm / before.bias_norm,
    }  # fmt: skip


register(
    name="debias.closed_forms",
    title="Closed forms: ReLU/Gaussian bias, linear zero bias, algorithm A",
    paper=PAPER,
    claims=CLOSED_CLAIMS,
    presets=CLOSED_PRESETS,
    seeds=3,  # Monte-Carlo checks: a seed-dependent metric needs >= 3 values for a verdict
    description=(
        "The ReLU bias closed form against 10^5-draw Monte Carlo on a (u, s) grid; a linear "
        "module under antithetic noise (zero bias) and under a mean shift μ (bias Wμ, checked "
        "with the decomposition identity); algorithm A on Linear-ReLU-Linear with Gaussian input "
        "noise, output-bias norm ‖E_x b(x)‖ measured on held-out inputs with fresh noise."
    ),
    resources=RESOURCES,
)(closed_forms)
