"""Rex benchmark: the price of reversibility, and round-trip error against wall time.

1. One sampling sweep (RK4, 50 steps) of Rex vs the plain (non-reversible) Princeps step of the
   same tableau vs torchdiffeq's fixed-grid ``odeint(method="rk4")`` of the PF-ODE, same model.
   Rex evaluates the network twice per stage (2s calls per step), so ~2x is the expected price.
2. Round-trip MSE (float32, data -> noise -> data) and wall time of every inversion method.

Run: python benchmarks/bench_rex.py
"""

from __future__ import annotations

import time

import torch
import torchdiffeq

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


def timed(fn, repeats: int = 5) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


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
        t_rex, t_plain, t_ode = timed(rex), timed(princeps), timed(odeint)
    print("1. one RK4 sampling sweep, 50 steps, batch 1024, MLP 2x128 (1 thread)")
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
    print(f"   {'method':<16}{'MSE':>12}{'seconds':>10}")
    with torch.no_grad():
        for name, m in methods.items():
            if isinstance(m, RexSolver):

                def run(m=m):
                    return m.decode(*m.encode(data, ts20), ts20)[0]
            else:

                def run(m=m):
                    return m.decode(m.encode(data, ts20), ts20)

            seconds = timed(run, repeats=3)
            print(f"   {name:<16}{roundtrip_error(run(), data):>12.2e}{seconds:>10.4f}")


if __name__ == "__main__":
    main()
