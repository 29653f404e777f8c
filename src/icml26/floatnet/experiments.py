"""Registered reproductions of floatnet (spec section 5): depth 3, width, exact vs float, full.

Every claim is checked by exhaustive evaluation of the rounded networks on random target tables.
Cases are written ``"p,emax,d"`` (``",nonneg"`` appended for the non-negative domain).

Importing this module stays light (``icml26 list`` reads it): the floatnet library and matplotlib
are imported inside the functions that use them. Everything is numpy on small arrays, so each task
asks for one CPU; random tables come from ``ctx.numpy_generator()``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

if TYPE_CHECKING:
    from icml26.floatnet import FloatFormat, FloatReLUNet

PAPER = (
    "Park, Park & Hwang, On Minimum Depth and Width of Floating-Point Neural Networks for "
    "Representing Floating-Point Functions, ICML 2026 (poster 65974; no arXiv id)"
)
# Hidden widths of C3 reported by the spec author's prototype (spec section 3).
SPEC_C3_WIDTHS = {"3,3,1": (232, 55, 1), "2,3,2": (136, 729, 1), "3,3,2": (464, 3025, 1)}
REQUIRES = ("ml_dtypes",)  # the floatnet extra, as the package declares it
RESOURCES = Resources(cpus=1)  # numpy on small arrays: one core per task


def _case(case: str) -> tuple[FloatFormat, int, bool]:
    from icml26.floatnet import FloatFormat

    p, emax, d, *rest = case.split(",")
    return FloatFormat(int(p), int(emax)), int(d), rest == ["nonneg"]


def _random_table(fmt: FloatFormat, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(fmt.values(), size=n)


# ----- floatnet.depth3 ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Depth3Config:
    """C3 cases, random tables per case, and the case whose precondition must fail."""

    cases: tuple[str, ...] = ("3,3,1", "2,3,2", "4,7,1")
    n_tables: int = 3
    failing_case: str = "2,2,2"


DEPTH3 = Depth3Config()
DEPTH3_PRESETS = {
    "smoke": replace(DEPTH3, cases=("3,3,1",), n_tables=1),  # seconds: the contract runs it twice
    "quick": DEPTH3,
    "full": replace(DEPTH3, cases=(*DEPTH3.cases, "3,3,2", "3,15,1", "4,8,1")),
}
DEPTH3_CLAIMS = (
    Claim(
        "C3-exact",
        "Depth 3 represents every f: F^d -> F exactly (worst fraction of exact inputs)",
        "exact_fraction_min",
        ">=",
        1.0,
        "min depth = 3 (exact on all inputs)",
        "abstract (T1); spec 2.4",
        source="paper",
        kind="claim",
    ),
    Claim(
        "C3-finite",
        "No hidden activation of C3 is +inf or NaN (dense engine when d = 1)",
        "nonfinite_inputs",
        "<=",
        0.0,
        "none",
        "spec 2.2",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "C3-engines",
        "Dense and sparse engines agree on every input (d = 1 cases)",
        "engine_agreement",
        ">=",
        1.0,
        "agree",
        "spec 2.2",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "C3-widths",
        "Hidden widths equal the spec prototype's (232/55/1, 136/729/1, 464/3025/1)",
        "width_mismatches",
        "<=",
        0.0,
        "as in spec 3",
        "spec 3",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "C3-guard",
        "build_depth3 refuses formats with 2 emax < p + 3",
        "precondition_raises",
        ">=",
        1.0,
        "F(2,2) d=2 fails (72/361 inputs)",
        "spec 7",
        source="spec",
        kind="sanity",
    ),
)


@register(
    name="floatnet.depth3",
    title="Depth-3 construction C3 is exact on every input of toy formats",
    paper=PAPER,
    claims=DEPTH3_CLAIMS,
    presets=DEPTH3_PRESETS,
    tables=lambda metrics, config: _depth3_table(metrics),
    seeds=1,  # exhaustive and exact: one seed of random tables suffices
    requires=REQUIRES,
    resources=RESOURCES,
)
def depth3(config: Depth3Config, ctx: RunContext) -> dict[str, Any]:
    """Build C3 for random tables on each case and verify it on all of F^d."""
    from icml26.floatnet import build_depth3

    rng = ctx.numpy_generator()
    fractions, nonfinite, agree, widths, mismatched = [], 0, [], {}, 0
    with ctx.progress(len(config.cases) * config.n_tables, "C3 networks verified") as bar:
        for case in config.cases:
            fmt, d, _ = _case(case)
            X = fmt.grid(d)
            for _ in range(config.n_tables):
                f = _random_table(fmt, len(X), rng)
                net = build_depth3(fmt, d, lambda D, f=f: f, domain=X)
                dense = net.evaluate(X, engine="dense") if d == 1 else None
                sparse = net.evaluate(X, engine="sparse")
                fractions.append(float(np.mean(sparse.y == f)))
                nonfinite += int((sparse if dense is None else dense).nonfinite.sum())
                if dense is not None:
                    agree.append(float(np.mean(dense.y == sparse.y)))
                bar.advance()
            widths[case] = list(net.widths)
            mismatched += case in SPEC_C3_WIDTHS and tuple(net.widths) != SPEC_C3_WIDTHS[case]
    fmt, d, _ = _case(config.failing_case)
    try:
        build_depth3(fmt, d, lambda D: np.zeros(len(D)))
        raises = 0.0
    except ValueError:
        raises = 1.0
    return {
        "exact_fraction_min": min(fractions),
        "nonfinite_inputs": float(nonfinite),
        "engine_agreement": min(agree) if agree else float("nan"),
        "width_mismatches": float(mismatched),
        "precondition_raises": raises,
        "widths": widths,
    }


def _per_seed(metrics: list[dict[str, Any]], key: str) -> tuple[list[tuple[str, Any]], str]:
    """``(case, value)`` rows of ``metrics[i][key]``: one per case when every seed agrees, else
    one per case and seed (the case then reads ``case, seed i``); and a note saying which."""
    cases = metrics[0][key]
    if all(m[key] == cases for m in metrics):
        note = "1 seed" if len(metrics) == 1 else f"identical in all {len(metrics)} seeds"
        return list(cases.items()), note
    rows = [(f"{case}, seed {i}", m[key][case]) for case in cases for i, m in enumerate(metrics)]
    return rows, f"one row per seed ({len(metrics)} seeds differ)"


def _depth3_table(metrics: list[dict[str, Any]]) -> list[Table]:
    cases, note = _per_seed(metrics, "widths")
    rows = [
        [
            case,
            "/".join(map(str, SPEC_C3_WIDTHS.get(case.split(", seed")[0], ("—",)))),
            "/".join(map(str, w)),
        ]
        for case, w in cases
    ]
    return [Table("C3 layer widths (p,emax,d)", ["case", "spec prototype", "ours"], rows, note)]


# ----- floatnet.width -----------------------------------------------------------------------------
@dataclass(frozen=True)
class WidthConfig:
    """Cw cases, the binary-code network, and the width-1 monotonicity check."""

    cases: tuple[str, ...] = ("3,3,1", "3,3,1,nonneg", "2,2,2")
    code_d: int = 8
    code_p: int = 11  # float16
    code_emax: int = 15
    n_monotone: int = 200
    monotone_depth: int = 4


WIDTH = WidthConfig()
WIDTH_PRESETS = {
    "smoke": replace(WIDTH, cases=("3,3,1,nonneg",), code_d=6, n_monotone=20),  # seconds
    "quick": WIDTH,
    "full": replace(WIDTH, cases=(*WIDTH.cases, "2,3,2", "3,3,2,nonneg", "4,3,1", "2,3,1")),
}
WIDTH_CLAIMS = (
    Claim(
        "Cw-exact",
        "Width 2d+4 (d+4 on non-negative inputs) represents every f exactly",
        "exact_fraction_min",
        ">=",
        1.0,
        "min width <= 2d+4 (d+4)",
        "abstract (T3); spec 2.5",
        source="paper",
        kind="claim",
    ),
    Claim(
        "Cw-width",
        "Cw has width exactly 2d+4 (d+4): largest deviation",
        "width_excess",
        "<=",
        0.0,
        "2d+4 / d+4",
        "abstract (T3)",
        source="paper",
        kind="sanity",
    ),
    Claim(
        "Cw-finite",
        "No hidden activation of Cw is +inf or NaN (dense engine)",
        "nonfinite_inputs",
        "<=",
        0.0,
        "none",
        "spec 2.2",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "below-d",
        "A width-5 network represents a random f on {0,1}^d exactly (d = 8: width < d)",
        "code_exact_fraction",
        ">=",
        1.0,
        "min width can be < d on smaller domains",
        "abstract (T3); spec 2.6",
        source="paper",
        kind="claim",
    ),
    Claim(
        "below-d-width",
        "d minus the width of the binary-code network (> 0 means width < d)",
        "code_d_minus_width",
        ">",
        0.0,
        "width < d",
        "abstract (T3)",
        source="paper",
        kind="sanity",
    ),
    Claim(
        "width1-monotone",
        "Width-1 networks are monotone, so the indicator of {0} needs width >= 2 = 2d (d = 1)",
        "monotone_fraction",
        ">=",
        1.0,
        "min width >= 2d",
        "abstract (T3); spec 2.8",
        source="paper",
        kind="claim",
    ),
)


@register(
    name="floatnet.width",
    title="Width 2d+4 / d+4 suffice (Cw), width 5 < d on {0,1}^8, width 1 is monotone",
    paper=PAPER,
    claims=WIDTH_CLAIMS,
    presets=WIDTH_PRESETS,
    tables=lambda metrics, config: _width_table(metrics),
    seeds=1,  # exhaustive and exact
    requires=REQUIRES,
    resources=RESOURCES,
)
def width(config: WidthConfig, ctx: RunContext) -> dict[str, Any]:
    """Build Cw and the binary-code net for random tables; test random width-1 nets."""
    from icml26.floatnet import FloatFormat, build_binary_code_net, build_narrow, is_monotone

    rng = ctx.numpy_generator()
    fractions, excess, nonfinite, shapes = [], 0, 0, {}
    total = len(config.cases) + 1 + config.n_monotone
    with ctx.progress(total, "Cw, binary-code and width-1 networks") as bar:
        for case in config.cases:
            fmt, d, nonneg = _case(case)
            X = fmt.grid(d, nonneg=nonneg)
            f = _random_table(fmt, len(X), rng)
            net = build_narrow(fmt, d, lambda D, f=f: f, nonneg=nonneg, domain=X)
            out = net.evaluate(X, engine="dense")
            fractions.append(float(np.mean(out.y == f)))
            nonfinite += int(out.nonfinite.sum())
            excess = max(excess, abs(net.width - ((d if nonneg else 2 * d) + 4)))
            shapes[case] = [net.width, net.depth]
            bar.advance()
        code_fmt = FloatFormat(config.code_p, config.code_emax)
        codes = range(2**config.code_d)
        bits = np.array([[(k >> i) & 1 for i in range(config.code_d)] for k in codes])
        f = _random_table(code_fmt, len(bits), rng)
        code_net = build_binary_code_net(code_fmt, config.code_d, lambda D: f)
        code_out = code_net.evaluate(bits.astype(np.float64))
        bar.advance()
        mono_fmt = FloatFormat(3, 3)
        nets = [
            _random_width1(mono_fmt, config.monotone_depth, rng) for _ in range(config.n_monotone)
        ]
        monotone = []
        for net in nets:
            monotone.append(is_monotone(net))
            bar.advance()
    return {
        "exact_fraction_min": min(fractions),
        "width_excess": float(excess),
        "nonfinite_inputs": float(nonfinite + code_out.nonfinite.sum()),
        "code_exact_fraction": float(np.mean(code_out.y == f)),
        "code_d_minus_width": float(config.code_d - code_net.width),
        "monotone_fraction": float(np.mean(monotone)),
        "shapes": {**shapes, f"code d={config.code_d}": [code_net.width, code_net.depth]},
    }


def _random_width1(fmt: FloatFormat, depth: int, rng: np.random.Generator) -> FloatReLUNet:
    from icml26.floatnet import FloatReLUNet

    small = fmt.values()[np.abs(fmt.values()) <= 4]  # avoid nets that overflow everywhere
    layers = [(rng.choice(small, (1, 1)), rng.choice(small, 1)) for _ in range(depth)]
    return FloatReLUNet(fmt, layers)


def _width_table(metrics: list[dict[str, Any]]) -> list[Table]:
    cases, note = _per_seed(metrics, "shapes")
    rows = [[case, w, dep] for case, (w, dep) in cases]
    return [Table("Narrow networks (p,emax,d)", ["case", "width", "depth"], rows, note)]


# ----- floatnet.exact_vs_float --------------------------------------------------------------------
@dataclass(frozen=True)
class ExactVsFloatConfig:
    """Data-set sizes for the classical depth-2 memoriser, evaluated exactly and in float16."""

    n_points: tuple[int, ...] = (16, 64, 256)
    x_range: float = 8.0
    p: int = 11  # float16
    emax: int = 15


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
    ),
)


def _exact_memoriser(x: np.ndarray, y: np.ndarray) -> tuple[Fraction, list[Fraction]]:
    """Classical depth-2 interpolant y(t) = y_1 + sum_j s_j ReLU(t - x_j) with real s_j."""
    xs, ys = [Fraction(v) for v in x], [Fraction(v) for v in y]
    slopes = [(ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j]) for j in range(len(xs) - 1)]
    return ys[0], [slopes[0]] + [slopes[j] - slopes[j - 1] for j in range(1, len(slopes))]


def _exact_output(bias: Fraction, s: list[Fraction], knots: np.ndarray, t: float) -> Fraction:
    return bias + sum(
        sj * max(Fraction(t) - Fraction(k), 0) for sj, k in zip(s, knots, strict=True)
    )


@register(
    name="floatnet.exact_vs_float",
    title="A depth-2 memoriser that is exact in real arithmetic fails in float16",
    paper=PAPER,
    claims=EXACT_VS_FLOAT_CLAIMS,
    presets=EXACT_VS_FLOAT_PRESETS,
    plot=lambda metrics, config: _exact_vs_float_plot(metrics, config),
    seeds=3,  # random data sets
    requires=REQUIRES,
    resources=RESOURCES,
)
def exact_vs_float(config: ExactVsFloatConfig, ctx: RunContext) -> dict[str, Any]:
    """Memorise random float16 data with the classical construction; count float16 errors."""
    from icml26.floatnet import FloatFormat, FloatReLUNet, build_depth2_integer, build_depth3

    rng = ctx.numpy_generator()
    fmt = FloatFormat(config.p, config.emax)
    exact_wrong, float_wrong, c3_wrong = [], [], []
    with ctx.progress(len(config.n_points), "data sets memorised") as bar:
        for n in config.n_points:
            x = np.unique(fmt.round(rng.uniform(0.0, config.x_range, 4 * n)))[:n]
            x = np.sort(rng.permutation(x)[:n])
            y = fmt.round(rng.uniform(-1.0, 1.0, len(x)))
            bias, s = _exact_memoriser(x, y)
            exact = [_exact_output(bias, s, x[:-1], t) for t in x]
            exact_wrong.append(float(np.mean([e != v for e, v in zip(exact, y, strict=True)])))
            hidden = (np.ones((len(x) - 1, 1)), -x[:-1])
            out_w = fmt.round(np.array([float(v) for v in s]))[None, :]
            net = FloatReLUNet(fmt, [hidden, (out_w, np.array([float(bias)]))])
            y_float = net(x[:, None])
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


def _exact_vs_float_plot(
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


# ----- floatnet.full ------------------------------------------------------------------------------
@dataclass(frozen=True)
class FullConfig:
    """The spec's full preset: larger C3/Cw cases, every summation order, a float16 sub-domain."""

    c3_cases: tuple[str, ...] = ("3,3,1", "3,15,1")
    cw_cases: tuple[str, ...] = ("3,3,1", "3,3,1,nonneg")
    float16_low: float = 1.0
    float16_high: float = 1.25


FULL = FullConfig()
FULL_PRESETS = {
    "smoke": replace(FULL, c3_cases=("2,3,1",), cw_cases=("2,3,1",), float16_high=1.0625),
    "quick": FULL,
    "full": replace(
        FULL,
        c3_cases=("3,3,1", "3,3,2", "3,15,1", "4,8,1"),
        cw_cases=("3,3,1", "2,3,2", "3,3,2,nonneg"),
        float16_high=4.0,  # D = [1, 4) u {0, +-s_min, +-max}: 2053 points, as in spec 5
    ),
}
FULL_CLAIMS = (
    Claim(
        "orders",
        "C3 and Cw stay exact under every summation order (d = 1 cases; fraction of runs exact)",
        "order_exact_fraction",
        ">=",
        1.0,
        "exact under bias-last, reversed, pairwise",
        "spec 3",
        source="spec",
        kind="claim",
    ),
    Claim(
        "all-exact",
        "Every C3/Cw case of the preset is exact (worst fraction of exact inputs)",
        "exact_fraction_min",
        ">=",
        1.0,
        "exact",
        "abstract (T1, T3)",
        source="paper",
        kind="claim",
    ),
    Claim(
        "float16-subdomain",
        "C3 in float16 is exact on D = [low, high) u {0, +-s_min, +-max}",
        "float16_exact",
        ">=",
        1.0,
        "exact (spec: 2053 points)",
        "spec 5",
        source="spec",
        kind="claim",
    ),
)


@register(
    name="floatnet.full",
    title="Larger cases, every summation order, and a float16 sub-domain",
    paper=PAPER,
    claims=FULL_CLAIMS,
    presets=FULL_PRESETS,
    seeds=1,  # exhaustive and exact
    requires=REQUIRES,
    resources=RESOURCES,
)
def full(config: FullConfig, ctx: RunContext) -> dict[str, Any]:
    """Verify C3 and Cw on each case (all orders when d = 1) and C3 on a float16 sub-domain."""
    from icml26.floatnet import ORDERS, FloatFormat, build_depth3, build_narrow, verify

    rng = ctx.numpy_generator()
    fractions, order_ok = [], []
    builders = [(c, build_depth3) for c in config.c3_cases] + [(c, None) for c in config.cw_cases]
    with ctx.progress(len(builders) + 1, "C3/Cw cases, then the float16 sub-domain") as bar:
        for case, builder in builders:
            fmt, d, nonneg = _case(case)
            X = fmt.grid(d, nonneg=nonneg)
            f = _random_table(fmt, len(X), rng)
            if builder is None:
                net = build_narrow(fmt, d, lambda D, f=f: f, nonneg=nonneg, domain=X)
            else:
                net = builder(fmt, d, lambda D, f=f: f, domain=X)
            report = verify(net, lambda D, f=f: f, domain=X, engine="sparse")
            fractions.append(1.0 - report.mismatches / report.n_points)
            if d == 1:
                order_ok += [verify(net, lambda D, f=f: f, domain=X, order=o).exact for o in ORDERS]
            bar.advance()
        fmt = FloatFormat(11, 15)
        v = fmt.values()
        D = np.concatenate(
            [v[(v >= config.float16_low) & (v < config.float16_high)], [0.0, fmt.smin, -fmt.smin]]
        )
        D = np.concatenate([D, [fmt.max, -fmt.max]])[:, None]
        f = _random_table(fmt, len(D), rng)
        net = build_depth3(fmt, 1, lambda X: f, domain=D)
        report = verify(net, lambda X: f, domain=D, engine="sparse")
        bar.advance()
    return {
        "order_exact_fraction": float(np.mean(order_ok)),
        "exact_fraction_min": min(fractions),
        "float16_exact": float(report.exact),
        "float16_points": float(len(D)),
        "float16_widths": list(net.widths),
    }
