"""Tiny experiments, registered in a test-only registry, that exercise core.

``toy.coin`` estimates a coin's bias (claims that hold, fail, and sit on the threshold);
``toy.counter`` counts its own executions in a folder and raises ``KeyboardInterrupt`` on call
``k`` while a file ``crash-at-k`` is in that folder, to test resuming an interrupted run;
``toy.context`` reports what its context handed it (threads, artifacts, progress);
``toy.needs_gpu`` and ``toy.needs_missing`` declare a GPU and a module nobody has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from icml26.core import Claim, Registry, Resources, RunContext, Table

TOY = Registry()


@dataclass(frozen=True)
class CoinConfig:
    p: float = 0.3
    flips: int = 2000
    fail: bool = False
    sizes: tuple[int, ...] = (10, 100)


COIN_PRESETS = {
    "smoke": replace(CoinConfig(), flips=200),
    "quick": CoinConfig(),
    "full": replace(CoinConfig(), flips=100_000),
}
COIN_CLAIMS = (
    Claim("C1", "the estimate is near the true bias", "p_hat", "within", 0.3, "0.3", "Eq. 1", 0.1),
    Claim("C2", "the estimate exceeds one half", "p_hat", ">=", 0.5, "> 0.5", "Fig. 1"),
    Claim("C3", "a threshold inside the noise", "p_hat", ">=", 0.3, ">= 0.3", "-", source="spec"),
)


def coin_plot(metrics: list[dict], config: CoinConfig) -> dict:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([m["p_hat"] for m in metrics], "o")
    ax.axhline(config.p)
    return {"estimates": fig}


def coin_tables(metrics: list[dict], config: CoinConfig) -> list[Table]:
    rows = [[i, m["p_hat"]] for i, m in enumerate(metrics)]
    return [Table("Estimates per seed", ["seed", "p_hat"], rows, note=f"true p = {config.p}")]


@TOY.register(
    name="toy.coin",
    title="Estimate a coin's bias",
    paper="Toy paper (test only)",
    claims=COIN_CLAIMS,
    presets=COIN_PRESETS,
    plot=coin_plot,
    tables=coin_tables,
    seeds=3,
)
def coin(config: CoinConfig, ctx: RunContext) -> dict[str, float]:
    if config.fail:
        raise RuntimeError("asked to fail")
    flips = ctx.numpy_generator().random(config.flips) < config.p
    return {"p_hat": float(flips.mean()), "flips": flips[:5].astype(int)}


@dataclass(frozen=True)
class CounterConfig:
    folder: str = ""


@TOY.register(
    name="toy.counter",
    title="Count executions",
    paper="Toy paper (test only)",
    claims=(Claim("K1", "runs", "value", ">=", 0.0, "-", "-", source="none", kind="sanity"),),
    presets={k: CounterConfig() for k in ("smoke", "quick", "full")},
)
def counter(config: CounterConfig, ctx: RunContext) -> dict[str, float]:
    if not config.folder:  # nothing to count into (e.g. `icml26 reproduce toy` in the CLI test)
        return {"value": float(ctx.seed % 1000)}
    folder = Path(config.folder)
    calls = len(list(folder.glob("call-*")))
    if (folder / f"crash-at-{calls}").exists():
        raise KeyboardInterrupt  # what Ctrl-C raises in the middle of a sweep
    (folder / f"call-{calls}").write_text(str(ctx.seed))
    return {"value": float(ctx.seed % 1000)}


@dataclass(frozen=True)
class ContextConfig:
    steps: int = 3
    write_artifact: bool = True


@TOY.register(
    name="toy.context",
    title="Report the context",
    paper="Toy paper (test only)",
    claims=(Claim("X1", "threads applied", "threads", "within", 1.0, "-", "-", 0.0),),
    presets={k: ContextConfig() for k in ("smoke", "quick", "full")},
    resources=Resources(cpus=1),
)
def context(config: ContextConfig, ctx: RunContext) -> dict[str, float]:
    import torch
    from threadpoolctl import threadpool_info

    with ctx.progress(config.steps, "toy steps") as bar:
        for _ in range(config.steps):
            bar.advance()
    if config.write_artifact:
        ctx.artifact("note.txt").write_text(f"seed {ctx.seed}")
    return {
        "threads": float(torch.get_num_threads()),
        "ctx_threads": float(ctx.threads),
        "blas_threads": float(max(pool["num_threads"] for pool in threadpool_info())),
        "device_is_cpu": float(ctx.device == "cpu"),
        "artifact_dir": str(ctx.artifact_dir),
        "draw": float(torch.rand(1, generator=ctx.torch_generator())),
    }


@dataclass(frozen=True)
class CrashConfig:
    exit_code: int = 0  # > 0: leave through os._exit(exit_code); -9: SIGKILL itself
    sleep_s: float = 0.0
    pid_folder: str = ""


@TOY.register(
    name="toy.crash",
    title="Kill the worker",
    paper="Toy paper (test only)",
    claims=(),
    presets={k: CrashConfig() for k in ("smoke", "quick", "full")},
)
def crash(config: CrashConfig, ctx: RunContext) -> dict[str, float]:
    import os
    import signal
    import time

    if config.pid_folder:
        (Path(config.pid_folder) / f"{os.getpid()}-{ctx.seed}").touch()
    time.sleep(config.sleep_s)
    if config.exit_code == -9:
        os.kill(os.getpid(), signal.SIGKILL)
    if config.exit_code > 0:
        os._exit(config.exit_code)
    return {"pid": float(os.getpid())}


@TOY.register(
    name="toy.needs_gpu",
    title="Needs a GPU",
    paper="Toy paper (test only)",
    claims=(),
    presets={k: CounterConfig() for k in ("smoke", "quick", "full")},
    resources=Resources(gpus=1),
)
def needs_gpu(config: CounterConfig, ctx: RunContext) -> dict[str, float]:
    return {"device": ctx.device}


@TOY.register(
    name="toy.needs_missing",
    title="Needs a module nobody has",
    paper="Toy paper (test only)",
    claims=(),
    presets={k: CounterConfig() for k in ("smoke", "quick", "full")},
    requires=("icml26_no_such_module",),
    extra="toyextra",
)
def needs_missing(config: CounterConfig, ctx: RunContext) -> dict[str, float]:
    return {}
