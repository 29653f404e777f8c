"""floatnet.full: larger C3/Cw cases, every summation order, and a float16 sub-domain (spec
section 5's full preset; its quick preset keeps the small cases).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.floatnet.experiments.common import (
    PAPER,
    RESOURCES,
    check_config,
    check_depth3_cases,
    parse_case,
)


@dataclass(frozen=True)
class FullConfig:
    """The spec's full preset: larger C3/Cw cases, every summation order, a float16 sub-domain."""

    c3_cases: tuple[str, ...] = ("3,3,1", "3,15,1")
    cw_cases: tuple[str, ...] = ("3,3,1", "3,3,1,nonneg")
    float16_low: float = 1.0
    float16_high: float = 1.25

    def __post_init__(self) -> None:
        from icml26.floatnet import FloatFormat

        float16 = FloatFormat(11, 15)
        # above s_min and at most max: the sub-domain must not repeat the points added to it
        reals = {"float16_low": (float16.smin * 2, float16.max), "float16_high": (0.0, float16.max)}
        check_config(self, {}, reals, cases=("c3_cases", "cw_cases"))
        check_depth3_cases("c3_cases", self.c3_cases, type(self).__name__)
        if self.float16_high <= self.float16_low:
            raise ValueError(
                f"FullConfig: float16_high must exceed float16_low = {self.float16_low}; "
                f"got {self.float16_high}."
            )


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
        control="a network that ignores its input (constant output): exact under no order on "
        "a random table",
        control_value=0.0,
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
        control="a network that ignores its input (constant output): exact only where the "
        "random table takes that value, about 1/|F| of the inputs",
        control_value=0.05,
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
        control="a network that ignores its input (constant output): not exact on a random "
        "table (reads 0)",
        control_value=0.0,
    ),
)


@register(
    name="floatnet.full",
    title="Larger cases, every summation order, and a float16 sub-domain",
    paper=PAPER,
    claims=FULL_CLAIMS,
    presets=FULL_PRESETS,
    seeds=1,  # exhaustive and exact
    resources=RESOURCES,
    deterministic_metrics=(
        "order_exact_fraction",
        "exact_fraction_min",
        "float16_exact",
        "float16_points",
    ),
)
def run(config: FullConfig, ctx: RunContext) -> dict[str, Any]:
    """Verify C3 and Cw on each case (all orders when d = 1) and C3 on a float16 sub-domain."""
    from icml26.floatnet import (
        ORDERS,
        FloatFormat,
        build_depth3,
        build_narrow,
        random_table,
        verify,
    )

    rng = ctx.numpy_generator()
    fractions, order_ok = [], []
    builders = [(c, build_depth3) for c in config.c3_cases] + [(c, None) for c in config.cw_cases]
    with ctx.progress(len(builders) + 1, "C3/Cw cases, then the float16 sub-domain") as bar:
        for case, builder in builders:
            fmt, d, nonneg = parse_case(case)
            X = fmt.grid(d, nonneg=nonneg)
            f = random_table(fmt, len(X), rng)
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
        f = random_table(fmt, len(D), rng)
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
