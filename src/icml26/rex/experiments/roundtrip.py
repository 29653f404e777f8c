"""``rex.roundtrip`` — spec §5, R1-R3: exact round trips in both directions.

data -> noise -> data (encode, decode) and noise -> data -> noise (decode, backward solve) with
every ODE tableau, in float64 and float32, and with the Euler-Maruyama and ShARK SDE steps on a
seeded Brownian path (float64: SDE inversion amplifies round-off ~1e7), on the Gaussian and the
2-D mixture with their exact denoisers; DDIM inversion at the fewest steps as the control that
is not exact.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from icml26.core import Claim, Resources, RunContext, register
from icml26.rex.experiments.common import PAPER


@dataclass(frozen=True)
class RoundtripConfig:
    tableaus: tuple[str, ...] = ("euler", "midpoint", "rk4", "dopri5")
    sde_methods: tuple[str, ...] = ("em", "shark")
    n_steps: tuple[int, ...] = (10, 50)
    problems: tuple[str, ...] = ("gaussian", "gmm")
    n_points: int = 512
    zeta: float = 0.999  # the reference code's default
    t_end: float = 1e-3
    grid: str = "logsnr"


ROUNDTRIP = RoundtripConfig()


def roundtrip(config: RoundtripConfig, ctx: RunContext) -> dict[str, float]:
    """R1-R3: Rex round trips in both directions (ODE and SDE) against DDIM inversion."""
    import torch

    from icml26.rex import (
        DDIM,
        GaussianData,
        GaussianMixtureData,
        RexSolver,
        VPSchedule,
        roundtrip_error,
        roundtrip_errors,
    )

    dtypes = {"float64": torch.float64, "float32": torch.float32}
    schedule = VPSchedule(t_data=config.t_end)
    worst: dict[str, float] = {}
    ddim_mse = []
    identical = 1.0
    with ctx.progress(len(config.problems) * len(config.n_steps), "problems x step counts") as bar:
        for p_i, problem_name in enumerate(config.problems):
            problem = (
                GaussianData(mu=0.5, s=0.5, dim=2)
                if problem_name == "gaussian"
                else GaussianMixtureData()
            )
            model = problem.denoiser(schedule)
            for n in config.n_steps:
                for dtype_name, dtype in dtypes.items():
                    data = problem.sample(config.n_points, seed=ctx.seed + p_i, dtype=dtype)
                    noise = torch.randn(data.shape, dtype=dtype, generator=ctx.torch_generator())
                    runs = [(t, None) for t in config.tableaus]
                    if dtype_name == "float64":  # SDE inversion amplifies round-off ~1e7
                        runs += [("euler", m) for m in config.sde_methods]
                    for tableau, sde in runs:
                        solver = RexSolver(
                            model, schedule, tableau=tableau, model_output="data", sde=sde,
                            zeta=config.zeta, n_steps=n, grid=config.grid, seed=ctx.seed,
                        )  # fmt: skip
                        data_err, noise_err = roundtrip_errors(solver, data, noise)
                        kind = "sde" if sde else "ode"
                        for direction, err in (("data", data_err), ("noise", noise_err)):
                            key = f"{kind}_{direction}_roundtrip_{dtype_name}"
                            worst[key] = max(worst.get(key, 0.0), err)
                        if sde is not None:
                            ts = solver.timesteps()
                            first = solver.decode(noise, noise.clone(), ts)[0]
                            again = solver.decode(noise, noise.clone(), ts)[0]
                            identical = min(identical, float(torch.equal(first, again)))
                if n == min(config.n_steps):
                    ddim = DDIM(model, schedule, model_output="data")
                    ts = RexSolver(model, schedule, n_steps=n, grid=config.grid).timesteps()
                    data = problem.sample(config.n_points, seed=ctx.seed + p_i)
                    ddim_mse.append(roundtrip_error(ddim.decode(ddim.encode(data, ts), ts), data))
                bar.advance()
    return {**worst, "sde_rerun_bit_identical": identical, "ddim_roundtrip_mse": min(ddim_mse)}


register(
    name="rex.roundtrip",
    title="Exact round trips (data->noise->data and noise->data->noise), ODE and SDE",
    paper=PAPER,
    resources=Resources(cpus=2),  # torch's default thread count on this 2-core machine
    claims=(
        Claim("R1a", "ODE data round trip (Euler/midpoint/RK4/Dopri5, 10 and 50 steps), float64",
              "ode_data_roundtrip_float64", "<=", 1e-10, "near machine precision", "Table 2",
              source="paper", kind="claim"),
        Claim("R1b", "ODE data round trip, float32", "ode_data_roundtrip_float32", "<=", 1e-4,
              "3.8e-9 MSE (SD 1.5 latents, fp32)", "Table 2", source="paper", kind="claim"),
        Claim("R1c", "ODE noise round trip (decode then encode), float64",
              "ode_noise_roundtrip_float64", "<=", 1e-10, "exact inverse (algebraic)", "§3.2",
              source="paper", kind="claim"),
        Claim("R1d", "ODE noise round trip, float32", "ode_noise_roundtrip_float32", "<=", 1e-4,
              "exact inverse (algebraic)", "§3.2", source="paper", kind="claim"),
        Claim("R2a", "SDE data round trip (Euler-Maruyama, ShARK), seeded Brownian, float64",
              "sde_data_roundtrip_float64", "<=", 1e-6, "exact SDE inversion", "§3.3",
              source="paper", kind="claim"),
        Claim("R2b", "SDE noise round trip, float64", "sde_noise_roundtrip_float64", "<=", 1e-6,
              "exact SDE inversion", "§3.3", source="paper", kind="claim"),
        Claim("R2c", "re-running an SDE sampler with the same seed is bit-identical",
              "sde_rerun_bit_identical", ">=", 1.0, "seeded Brownian path", "§3.3",
              source="none", kind="sanity"),
        Claim("R3", "DDIM inversion is not exact (MSE at the fewest steps)",
              "ddim_roundtrip_mse", ">=", 1e-3, "3.6e-1 MSE at 10 steps", "Table 2",
              source="paper", kind="claim"),
    ),
    presets={
        "smoke": replace(ROUNDTRIP, tableaus=("euler", "rk4"), sde_methods=("em",),
                         n_steps=(5,), problems=("gmm",), n_points=32),
        "quick": ROUNDTRIP,
        "full": replace(ROUNDTRIP, n_steps=(10, 20, 50, 100), n_points=4096),
    },
)(roundtrip)  # fmt: skip
