"""floatnet.width: width 2d + 4 (d + 4 on non-negative inputs) suffices (Cw, T3), a width-5
network beats width d on {0,1}^8, and width-1 networks are monotone (so width >= 2d is needed).

The exactness claims can fail on the paper's mechanism (rounding at every operation); the widths
of the constructions and the monotonicity of width-1 networks hold by construction (sanity).
Every metric is exhaustive and exact, the same for every seed's tables when the constructions
are right (declared deterministic; the contract test checks a second seed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.floatnet.experiments.common import (
    PAPER,
    RESOURCES,
    check_config,
    parse_case,
    per_seed_rows,
)


@dataclass(frozen=True)
class WidthConfig:
    """Cw cases, the binary-code network, and the width-1 monotonicity check."""

    cases: tuple[str, ...] = ("3,3,1", "3,3,1,nonneg", "2,2,2")
    code_d: int = 8
    code_p: int = 11  # float16
    code_emax: int = 15
    n_monotone: int = 200
    monotone_depth: int = 4

    def __post_init__(self) -> None:
        from icml26.floatnet import FloatFormat
        from icml26.floatnet.instances import MAX_DEPTH

        ints = {"code_d": (1, 25), "code_p": (2, 25), "code_emax": (1, 500),
                "n_monotone": (1, 10**5), "monotone_depth": (1, MAX_DEPTH)}  # fmt: skip
        check_config(self, ints, cases=("cases",))
        FloatFormat(self.code_p, self.code_emax)
        if self.code_d > self.code_p or self.code_d - 1 > self.code_emax:
            raise ValueError(  # build_binary_code_net's exact integer codes
                f"WidthConfig: code_d must satisfy code_d <= code_p = {self.code_p} and "
                f"code_d - 1 <= code_emax = {self.code_emax}; got {self.code_d}."
            )


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
        control="a network that ignores its input (constant output): exact only where the "
        "random table takes that value, about 1/|F| of the inputs",
        control_value=0.05,
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
        control="a network that ignores its input (constant output): exact only where the "
        "random table takes that value, about 1/256 of the 256 codes",
        control_value=0.01,
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
        "Width-1 networks are monotone (each layer is a monotone map, rounding included), so "
        "the indicator of {0} needs width >= 2 = 2d (d = 1)",
        "monotone_fraction",
        ">=",
        1.0,
        "min width >= 2d",
        "abstract (T3); spec 2.8",
        source="paper",
        kind="sanity",
    ),
)


@register(
    name="floatnet.width",
    title="Width 2d+4 / d+4 suffice (Cw), width 5 < d on {0,1}^8, width 1 is monotone",
    paper=PAPER,
    claims=WIDTH_CLAIMS,
    presets=WIDTH_PRESETS,
    tables=lambda metrics, config: width_table(metrics),
    seeds=1,  # exhaustive and exact
    resources=RESOURCES,
    deterministic_metrics=(
        "exact_fraction_min",
        "width_excess",
        "nonfinite_inputs",
        "code_exact_fraction",
        "code_d_minus_width",
        "monotone_fraction",
    ),
)
def run(config: WidthConfig, ctx: RunContext) -> dict[str, Any]:
    """Build Cw and the binary-code net for random tables; test random width-1 nets."""
    from icml26.floatnet import (
        FloatFormat,
        build_binary_code_net,
        build_narrow,
        is_monotone,
        random_table,
        random_width1_net,
    )

    rng = ctx.numpy_generator()
    fractions, excess, nonfinite, shapes = [], 0, 0, {}
    total = len(config.cases) + 1 + config.n_monotone
    with ctx.progress(total, "Cw, binary-code and width-1 networks") as bar:
        for case in config.cases:
            fmt, d, nonneg = parse_case(case)
            X = fmt.grid(d, nonneg=nonneg)
            f = random_table(fmt, len(X), rng)
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
        f = random_table(code_fmt, len(bits), rng)
        code_net = build_binary_code_net(code_fmt, config.code_d, lambda D: f)
        code_out = code_net.evaluate(bits.astype(np.float64))
        bar.advance()
        mono_fmt = FloatFormat(3, 3)
        nets = [
            random_width1_net(mono_fmt, config.monotone_depth, rng)
            for _ in range(config.n_monotone)
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


def width_table(metrics: list[dict[str, Any]]) -> list[Table]:
    cases, note = per_seed_rows(metrics, "shapes")
    rows = [[case, w, dep] for case, (w, dep) in cases]
    return [Table("Narrow networks (p,emax,d)", ["case", "width", "depth"], rows, note)]
