"""``rex.equivalence`` — spec §5, R5: Princeps subsumes known solvers.

Princeps with the Euler tableau in data prediction is DDIM step for step, and Princeps-EM on the
data SDE is SDE-DPM-Solver++(1) (:func:`~icml26.rex.sde_dpm_solver_pp1_step`) driven by the same
Brownian increments: both gaps must be at round-off. Both are identities (sanity checks),
reported on three disjoint subsets of the points (independent values).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from icml26.core import Claim, Resources, RunContext, register
from icml26.rex.experiments.common import PAPER, check_config, errors_by_subset, worst


@dataclass(frozen=True)
class EquivalenceConfig:
    n_steps: int = 20
    n_points: int = 256
    t_end: float = 1e-3

    def __post_init__(self) -> None:
        check_config(self, positive=("t_end",))


EQUIVALENCE = EquivalenceConfig()


def equivalence(config: EquivalenceConfig, ctx: RunContext) -> dict[str, list[float]]:
    """R5: Princeps-Euler (data) = DDIM; Princeps-EM (data SDE) = SDE-DPM-Solver++(1)."""
    import torch

    from icml26.rex import (
        DDIM,
        GaussianMixtureData,
        RexSolver,
        SeededBrownian,
        VPSchedule,
        princeps_step,
        sde_dpm_solver_pp1_step,
    )

    schedule = VPSchedule(t_data=config.t_end)
    model = GaussianMixtureData().denoiser(schedule)
    x_T = torch.randn(config.n_points, 2, dtype=torch.float64, generator=ctx.torch_generator())
    solver = RexSolver(model, schedule, model_output="data", n_steps=config.n_steps, grid="logsnr")
    ts = solver.timesteps()
    ddim = DDIM(model, schedule, model_output="data")
    x_princeps, x_ddim = x_T, x_T
    ddim_gap = None
    for t0, t1 in itertools.pairwise(ts):
        x_princeps = princeps_step(
            model, schedule, x_princeps, t0, t1, tableau="euler", prediction="data",
            model_output="data",
        )  # fmt: skip
        x_ddim = ddim.ddim(x_ddim, t0, t1)
        ddim_gap = worst(ddim_gap, errors_by_subset(x_princeps, x_ddim))
    sde_solver = RexSolver(model, schedule, model_output="data", sde="em", n_steps=config.n_steps)
    clocks = [sde_solver.tv.noise_clock(t) for t in ts]
    min_step = min(abs(b - a) for a, b in itertools.pairwise(clocks))
    bm = SeededBrownian(ctx.seed, x_T.shape, min(clocks), max(clocks), min_step=min_step)
    x_em, x_dpm = x_T, x_T
    dpm_gap = None
    for t0, t1 in itertools.pairwise(ts):
        x_em = princeps_step(model, schedule, x_em, t0, t1, sde="em", prediction="data",
                             model_output="data", bm=bm)  # fmt: skip
        # the same Brownian increment, as a standard normal draw for the DPM-Solver++ step
        W, _ = bm.increment(sde_solver.tv.noise_clock(t0), sde_solver.tv.noise_clock(t1))
        z = W / (sde_solver.tv.noise_clock(t1) - sde_solver.tv.noise_clock(t0)) ** 0.5
        x_dpm = sde_dpm_solver_pp1_step(model, schedule, x_dpm, t0, t1, z)
        dpm_gap = worst(dpm_gap, errors_by_subset(x_em, x_dpm))
    return {"princeps_euler_vs_ddim": ddim_gap, "princeps_em_vs_sde_dpm_solver_pp1": dpm_gap}


register(
    name="rex.equivalence",
    title="Subsumption: Princeps-Euler = DDIM, Princeps-EM = SDE-DPM-Solver++(1)",
    paper=PAPER,
    resources=Resources(cpus=1),  # one thread: 2-D batches gain nothing from two (measured)
    claims=(
        Claim("R5a", "Princeps with the Euler tableau and data prediction is DDIM",
              "princeps_euler_vs_ddim", "<=", 1e-12, "identical", "Theorem 3.10 / Table 1",
              source="paper", kind="sanity"),
        Claim("R5b", "Princeps-EM (data SDE) is SDE-DPM-Solver++(1)",
              "princeps_em_vs_sde_dpm_solver_pp1", "<=", 1e-12, "identical", "Table 1",
              source="paper", kind="sanity"),
    ),
    presets={
        "smoke": replace(EQUIVALENCE, n_steps=5, n_points=16),
        "quick": EQUIVALENCE,
        "full": replace(EQUIVALENCE, n_steps=100, n_points=4096),
    },
)(equivalence)  # fmt: skip
