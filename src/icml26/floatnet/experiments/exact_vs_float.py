"""floatnet.exact_vs_float: the classical depth-2 memoriser, exact in real arithmetic, fails in
float16, while the float-aware depth-3 construction on the same data is exact (T1, T2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, check_in_interval, check_positive_int, register
from icml26.floatnet.experiments.common import PAPER, RESOURCES, check_config


@dataclass(frozen=True)
class ExactVsFloatConfig:
    """Data-set sizes for the classical depth-2 memoriser, evaluated exactly and in float16."""

    n_points: tuple[int, ...] = (16, 64, 256)
    x_range: float = 8.0
    p: int = 11  # float16
    emax: int = 15

    def __post_init__(self) -> None:
        from icml26.floatnet import FloatFormat
        from icml26.floatnet.interpolant import MAX_POINTS

        check_config(self, {"p": (11, 25), "emax": (1, 500)})  # the integer toy: 4 M N + M < 2^p
        fmt = FloatFormat(self.p, self.emax)
        if 2 * self.emax < self.p + 3:
            raise ValueError(
                f"ExactVsFloatConfig: emax must satisfy 2 emax >= p + 3 = {self.p + 3} (C3); "
                f"got {self.emax}."
            )
        # at least 1 keeps many format values in [0, x_range); at most max keeps draws finite
        owner = "ExactVsFloatConfig"
        check_in_interval("x_range", self.x_range, low=1.0, high=float(fmt.max), owner=owner)
        if not self.n_points:
            raise ValueError("ExactVsFloatConfig: n_points must hold at least one size; got ().")
        for n in self.n_points:
            check_positive_int("n_points", n, owner=owner, minimum=2, maximum=MAX_POINTS)


EXACT_VS_FLOAT = ExactVsFloatConfig()
EXACT_VS_FLOAT_PRESETS = {
    "smoke": replace(EXACT_VS_FLOAT, n_points=(16,)),  # seconds
    "quick": EXACT_VS_FLOAT,
    "full": replace(EXACT_VS_FLOAT, n_points=(16, 64, 256, 1024)),
}
EXACT_VS_FLOAT_CLAIMS = (
    Claim(
        "exact-memorises",
        "In exact arithmetic the depth-2 interpolating ReLU net memorises the data",
        "exact_wrong_fraction_max",
        "<=",
        0.0,
        "depth 2 memorises any finite set",
        "classical (exact arithmetic)",
        source="none",
        kind="sanity",
    ),
    Claim(
        "float-breaks",
        "The same net in float16 (parameters in F, every op rounded) gets points wrong",
        "float_wrong_fraction_min",
        ">",
        0.0,
        "exact-arithmetic results do not carry over",
        "abstract",
        source="paper",
        kind="claim",
        control="exact arithmetic (no rounding): the net memorises every point",
        control_value=0.0,
    ),
    Claim(
        "c3-fixes",
        "The float-aware depth-3 construction on the same data is exact in float16",
        "c3_wrong_fraction_max",
        "<=",
        0.0,
        "depth 3 suffices",
        "abstract (T1)",
        source="paper",
        kind="claim",
        control="the classical depth-2 memoriser in float16 on the same data (float-breaks: "
        "0.88-1.0 of the points wrong)",
        control_value=0.88,
    ),
    Claim(
        "depth2-integer",
        "Depth 2 suffices on a small domain/codomain (integer toy, N=31, M=15, float16)",
        "depth2_integer_wrong_fraction",
        "<=",
        0.0,
        "depth 2 suffices for smaller domain and/or codomain",
        "abstract (T2); spec 2.7",
        source="paper",
        kind="claim",
        control="a network that ignores its input (constant output): wrong on all but about "
        "1/31 of the 32 points",
        control_value=0.9,
    ),
)


@register(
    name="floatnet.exact_vs_float",
    title="A depth-2 memoriser that is exact in real arithmetic fails in float16",
    paper=PAPER,
    claims=EXACT_VS_FLOAT_CLAIMS,
    presets=EXACT_VS_FLOAT_PRESETS,
    plot=lambda metrics, config: exact_vs_float_plot(metrics, config),
    seeds=3,  # random data sets: three values per claim
    resources=RESOURCES,
)
def run(config: ExactVsFloatConfig, ctx: RunContext) -> dict[str, Any]:
    """Memorise random float16 data with the classical construction; count float16 errors."""
    from icml26.floatnet import FloatFormat, build_depth2_integer, build_depth3, relu_interpolant

    rng = ctx.numpy_generator()
    fmt = FloatFormat(config.p, config.emax)
    exact_wrong, float_wrong, c3_wrong = [], [], []
    with ctx.progress(len(config.n_points), "data sets memorised") as bar:
        for n in config.n_points:
            x = np.unique(fmt.round(rng.uniform(0.0, config.x_range, 4 * n)))[:n]
            x = np.sort(rng.permutation(x)[:n])
            y = fmt.round(rng.uniform(-1.0, 1.0, len(x)))
            interpolant = relu_interpolant(x, y)  # depth 2, exact in real arithmetic
            exact = [interpolant(t) for t in x]
            exact_wrong.append(float(np.mean([e != v for e, v in zip(exact, y, strict=True)])))
            y_float = interpolant.float_net(fmt)(x[:, None])  # the same net, rounded
            float_wrong.append(float(np.mean(y_float != y)))
            c3 = build_depth3(fmt, 1, lambda D, y=y: y, domain=x[:, None])
            c3_wrong.append(float(np.mean(c3(x[:, None], engine="sparse") != y)))
            bar.advance()
    g = rng.integers(-15, 16, 32).astype(np.float64)
    toy = build_depth2_integer(fmt, g)
    return {
        "exact_wrong_fraction_max": max(exact_wrong),
        "float_wrong_fraction_min": min(float_wrong),
        "c3_wrong_fraction_max": max(c3_wrong),
        "depth2_integer_wrong_fraction": float(np.mean(toy(np.arange(32.0)[:, None]) != g)),
        "float_wrong_fraction": float_wrong,
        "x": x.tolist(),
        "y": y.tolist(),
        "y_float": y_float.tolist(),
    }


def exact_vs_float_plot(
    metrics: list[dict[str, Any]], config: ExactVsFloatConfig
) -> dict[str, Any]:
    """Left: float16 error rate per data-set size, every seed a dot. Right: every seed's float16
    output error on its largest data set (exact arithmetic has none)."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, seeds_note, stack

    fig, (rate, error) = plt.subplots(1, 2, figsize=(10, 3.8))
    labels = [str(n) for n in config.n_points]
    bars_with_seeds(rate, labels, stack(metrics, "float_wrong_fraction"), label="float16")
    rate.set_xlabel("points memorised")
    rate.set_ylabel("fraction of points wrong")
    n_seeds = len(metrics)
    note = seeds_note(1) if n_seeds == 1 else f"bar: mean, dots: {n_seeds} seeds"
    rate.set_title(f"Float16 error rate ({note})", fontsize=10)
    for i, m in enumerate(metrics):
        gap = np.asarray(m["y_float"], dtype=float) - np.asarray(m["y"], dtype=float)
        error.plot(m["x"], gap, "x", ms=4, label=f"seed {i}" if len(metrics) <= 8 else None)
    error.axhline(0.0, color="k", lw=0.8, label="exact arithmetic")
    error.set_xlabel("x")
    error.set_ylabel("float16 output − target")
    error.set_title(f"Errors on {config.n_points[-1]} points, every seed", fontsize=10)
    legend_outside(error)
    fig.tight_layout()
    return {"exact_vs_float16": fig}
