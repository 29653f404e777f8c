"""Rex benchmark: the price of reversibility, and round-trip error against wall time.

1. One sampling sweep (RK4, 50 steps) of Rex vs the plain (non-reversible) Princeps step of the
   same tableau vs torchdiffeq's fixed-grid ``odeint(method="rk4")`` of the PF-ODE, same model.
   Rex evaluates the network twice per stage (2s calls per step), so ~2x is the expected price.
2. Round-trip MSE (float32, data -> noise -> data) and wall time of every inversion method.
3. Cost of resolving the Brownian path: a Rex-EM sampling sweep (data SDE, 50 log-SNR steps,
   t_end = 1e-3) whose tree depth follows the grid's shortest clock step (the default) against
   the former fixed depth 20, interleaved over rounds; the fixed depth is the wrong path (its
   first steps have Var(W) / step = 0.009), so this is the price of correctness, not a choice.
4. Overhead of the diffusers protocol: a DDPMPipeline (tiny random UNet2DModel, float32) with
   ``RexScheduler`` against ``RexSolver`` on the same UNet through ``from_diffusers``, RK4, same
   grid, interleaved over rounds (skipped without diffusers).

Times are medians of round-robin rounds after one warm-up round
(``icml26.core.interleaved_median_seconds``); ratios are ratios of the medians.

Run: python benchmarks/bench_rex.py
"""

from __future__ import annotations

import torch
import torchdiffeq

from icml26.core import interleaved_median_seconds
from icml26.rex import (
    BDIA,
    DDIM,
    EDICT,
    OBELM,
    GaussianMixtureData,
    RexSolver,
    VPSchedule,
    princeps_solve,
    roundtrip_error,
    train_denoiser,
)


def main() -> None:
    torch.set_num_threads(1)
    schedule = VPSchedule(t_data=1e-3)
    # a briefly trained denoiser: an untrained one predicts wild noise that says nothing about
    # round-trip error in practice
    gmm = GaussianMixtureData()
    net = train_denoiser(gmm.sample(10_000, seed=0), schedule, steps=800, seed=0)
    x_T = torch.randn(1024, 2, generator=torch.Generator().manual_seed(0))
    solver = RexSolver(net, schedule, tableau="rk4", n_steps=50)
    ts = solver.timesteps()

    def rex():
        solver.forward_solve(x_T, x_T.clone(), ts)

    def princeps():
        princeps_solve(net, schedule, x_T, ts, tableau="rk4")

    def pf_ode(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        tt = float(t)
        a, s = schedule.alpha(tt), schedule.sigma(tt)
        a_dot, s_dot = schedule.alpha_dot(tt), schedule.sigma_dot(tt)
        eps = net(x, torch.full((x.shape[0],), tt))
        return (a_dot / a) * x + (s_dot - a_dot * s / a) * eps  # dx/dt of x = a x0 + s eps

    def odeint():
        torchdiffeq.odeint(pf_ode, x_T, torch.tensor(ts, dtype=torch.float32), method="rk4")

    with torch.no_grad():
        t = interleaved_median_seconds({"rex": rex, "princeps": princeps, "odeint": odeint}, 5)
    t_rex, t_plain, t_ode = t["rex"], t["princeps"], t["odeint"]
    print("1. one RK4 sampling sweep, 50 steps, batch 1024, MLP 2x128 (1 thread, median of 5)")
    print(f"   {'solver':<28}{'seconds':>10}{'ratio to Rex':>15}")
    for name, t in [("Rex (reversible)", t_rex), ("Princeps (non-reversible)", t_plain),
                    ("torchdiffeq odeint rk4", t_ode)]:  # fmt: skip
        print(f"   {name:<28}{t:>10.4f}{t / t_rex:>15.2f}")
    print(f"   price of reversibility: Rex / Princeps = {t_rex / t_plain:.2f}x (expected ~2x)")

    print("\n2. round trip data -> noise -> data, float32, 2-D mixture, 20 steps")
    data = gmm.sample(1024, seed=1, dtype=torch.float32)
    ts20 = RexSolver(net, schedule, n_steps=20).timesteps()
    methods = {"DDIM": DDIM(net, schedule), "EDICT": EDICT(net, schedule),
               "BDIA": BDIA(net, schedule), "O-BELM": OBELM(net, schedule)}  # fmt: skip
    for tableau in ("euler", "midpoint", "rk4"):
        methods[f"Rex-{tableau}"] = RexSolver(net, schedule, tableau=tableau, n_steps=20)

    def round_trip(m):
        if isinstance(m, RexSolver):
            return lambda: m.decode(*m.encode(data, ts20), ts20)[0]
        return lambda: m.decode(m.encode(data, ts20), ts20)

    runs = {name: round_trip(m) for name, m in methods.items()}
    print(f"   {'method':<16}{'MSE':>12}{'seconds':>10}")
    with torch.no_grad():
        seconds = interleaved_median_seconds(runs, 3)
        for name, run in runs.items():
            print(f"   {name:<16}{roundtrip_error(run(), data):>12.2e}{seconds[name]:>10.4f}")


def brownian_cost(rounds: int = 5) -> None:
    """Section 3: seconds per Rex-EM sweep, grid-derived depth vs fixed depth 20."""
    import itertools

    from icml26.rex import SeededBrownian

    schedule = VPSchedule(t_data=1e-3)
    model = GaussianMixtureData().denoiser(schedule)
    solver = RexSolver(model, schedule, sde="em", model_output="data", grid="logsnr", n_steps=50)
    ts = solver.timesteps()
    x_T = torch.randn(1024, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    deep = solver.brownian(ts, x_T)

    def sweep(depth: int) -> None:
        # a fresh path each time: no cached splits
        bm = SeededBrownian(solver.seed, x_T.shape, deep.lo, deep.hi, depth=depth, dtype=x_T.dtype)
        x, x_hat = x_T, x_T.clone()
        for t0, t1 in itertools.pairwise(ts):
            x, x_hat, _ = solver.forward_step(x, x_hat, t0, t1, solver.noise(bm, t0, t1))

    depths = {f"tree depth {d:>2}": d for d in (deep.depth, 20)}
    times = interleaved_median_seconds(
        {name: lambda d=d: sweep(d) for name, d in depths.items()}, rounds
    )
    grid_depth, fixed_depth = times.values()
    ratio = grid_depth / fixed_depth
    print(f"\n3. Rex-EM sweep, 50 log-SNR steps, batch 1024 (median of {rounds} rounds)")
    for name, seconds in times.items():
        print(f"   {name}: {seconds:.4f} s")
    print(f"   depth {deep.depth} (from the shortest step) / fixed depth 20 = {ratio:.2f}x")


def scheduler_overhead(rounds: int = 5) -> None:
    """Section 4: seconds per sampling sweep, RexScheduler in a pipeline vs RexSolver."""
    try:
        import diffusers
    except ImportError:
        print("\n4. skipped: diffusers is not installed (pip install 'icml26[rex-diffusers]')")
        return
    from icml26.core import seeded_default_init
    from icml26.rex import RexScheduler, from_diffusers

    with seeded_default_init(0):
        unet = diffusers.UNet2DModel(
            sample_size=16, in_channels=3, out_channels=3, block_out_channels=(32, 32),
            down_block_types=("DownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "UpBlock2D"), layers_per_block=1, norm_num_groups=8,
        ).eval()  # fmt: skip
    ddpm = diffusers.DDPMScheduler()
    pipe = diffusers.DDPMPipeline(unet=unet, scheduler=RexScheduler.from_config(ddpm.config))
    pipe.set_progress_bar_config(disable=True)
    model, schedule, output = from_diffusers(unet, ddpm)
    solver = RexSolver(model, schedule, model_output=output, tableau="rk4", n_steps=10)
    x_T = torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(0))

    def in_pipeline() -> None:
        pipe(batch_size=4, num_inference_steps=10, output_type="np",
             generator=torch.Generator().manual_seed(0))  # fmt: skip

    times = interleaved_median_seconds(
        {"pipeline + RexScheduler": in_pipeline, "RexSolver": lambda: solver.sample(x_T)}, rounds
    )
    ratio = times["pipeline + RexScheduler"] / times["RexSolver"]
    print(f"\n4. RK4, 10 steps (80 UNet calls), batch 4 x 3 x 16 x 16 (median of {rounds} rounds)")
    for name, seconds in times.items():
        print(f"   {name:<26}{seconds:.4f} s")
    print(f"   pipeline + RexScheduler / RexSolver = {ratio:.2f}x")


if __name__ == "__main__":
    main()
    brownian_cost()
    scheduler_overhead()
