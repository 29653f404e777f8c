"""Best SGG vs Gaussian and ℓ2 over (ε, δ, T); the composed ℓ2 mechanism vs Monte Carlo.

Holds the system's headline: the abstract's "members of this family outperform both the Gaussian
and ℓ2 mechanisms in certain low-dimensional settings", at the paper's "up to 15 % lower MSE"
(reported by the paper's summary, spec §1/§3), judged on the smallest best/min(G, ℓ2) over the
rows. Every MSE and ratio is deterministic quadrature and calibration (declared so); only the
Monte-Carlo check of the composed ℓ2 PLD varies with the seed, and it returns one value per
independent batch of its draws.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, register
from icml26.sgg_dp.experiments.common import PAPER, RESOURCES, baselines, check_table, k_grid

SPEC_TABLE = {  # (ε, δ, T): spec author's (G, ℓ2, best SGG, best/min) with the §2.4 grids
    (0.5, 1e-2, 3): (29.71, 28.91, 25.76, 0.891),
    (0.5, 1e-2, 5): (49.52, 49.84, 45.60, 0.921),
    (0.5, 1e-2, 10): (99.03, 100.38, 95.36, 0.963),
    (0.5, 1e-2, 50): (495.15, 497.40, 491.80, 0.993),
    (0.5, 1e-2, 200): (1980.6, 1983.0, 1977.3, 0.998),
    (1.0, 1e-2, 3): (10.58, 8.63, 8.07, 0.935),
    (1.0, 1e-3, 5): (33.14, 22.61, 22.05, 0.975),
    (1.0, 1e-5, 1): (13.92, 2.00, 2.00, 1.000),
    (1.0, 1e-5, 10): (139.18, 83.80, 83.27, 0.994),
    (1.0, 1e-5, 200): (2783.5, 2708.6, 2706.7, 0.999),
    (1.0, 1e-1, 3): (3.54, 4.14, 3.48, 0.984),
    (3.0, 1e-5, 5): (9.67, 3.23, 3.23, 1.000),
}
WIN_SETTINGS = ((0.5, 1e-2, 3), (0.5, 1e-2, 5), (1.0, 1e-2, 3))
SEQUENCES = ((0.5, 1e-2), (1.0, 1e-5))


@dataclass(frozen=True)
class TableConfig:
    rows: tuple[tuple[float, float, int], ...] = tuple(SPEC_TABLE)
    p_grid: tuple[float, ...] = (1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0)
    k_offsets: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
    composed_dim: int = 3
    composed_eps: float = 1.0
    composed_delta: float = 1e-5
    n_compositions: int = 10
    target_delta: float = 1e-5
    mc_samples: int = 1_000_000  # split into mc_batches independent batches, one z each
    mc_batches: int = 10
    mc_deltas: tuple[float, ...] = (0.1, 0.01)
    M: int = 65536
    value_discretization_interval: float = 1e-4

    def __post_init__(self) -> None:
        check_table(self)


DEFAULT = TableConfig()
PRESETS = {
    # seconds: one row, three members, small PLD and Monte Carlo
    "smoke": replace(
        DEFAULT,
        rows=((0.5, 1e-2, 3),),
        p_grid=(1.0, 1.35, 2.0),
        k_offsets=(0.0,),
        mc_samples=20_000,
        M=4096,
        value_discretization_interval=1e-3,
    ),
    # ~2 minutes: the three low-dimensional win settings with a thinner k grid, smaller Monte Carlo
    "quick": replace(DEFAULT, rows=WIN_SETTINGS, k_offsets=(-0.5, 0.0, 0.5), mc_samples=200_000),
    "full": DEFAULT,
}


def _composed_l2(config: TableConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import compose_epsilon, l2_member

    mech = l2_member(config.composed_dim).calibrate(config.composed_eps, config.composed_delta)
    n = config.n_compositions
    options = {"value_discretization_interval": config.value_discretization_interval, "M": config.M}
    pld = mech.to_pld(**options).self_compose(n)
    rng = ctx.numpy_generator()
    loss_sum = np.zeros(config.mc_samples)
    with ctx.progress(n, "Monte Carlo of the composed loss") as bar:
        for _ in range(n):
            loss_sum += mech.privacy_loss(mech.sample(config.mc_samples, rng))
            bar.advance()
    z = np.zeros((config.mc_batches, len(config.mc_deltas)))  # one z per batch and target δ
    for j, target in enumerate(config.mc_deltas):
        eps = pld.get_epsilon_for_delta(target)
        delta_pld = pld.get_delta_for_epsilon(eps)
        for i, batch in enumerate(np.array_split(loss_sum, config.mc_batches)):
            v = -np.expm1(np.minimum(eps - batch, 0.0))  # (1 − e^{ε − ΣL})₊
            z[i, j] = (delta_pld - v.mean()) / (v.std(ddof=1) / math.sqrt(v.size))
    tight = compose_epsilon([(mech, n)], config.target_delta, **options)
    basic = n * mech.epsilon(config.target_delta / n)
    return {
        "composed_max_abs_z": np.max(np.abs(z), axis=1).tolist(),  # one value a batch
        "composed_eps_tight": tight,
        "composed_eps_basic": basic,
        "tight_over_basic": tight / basic,
    }


def _table_figures(metrics: list[dict[str, Any]], config: TableConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    fig, ax = plt.subplots(figsize=(7.5, 4))
    first = metrics[0]["rows"]  # every seed has the same rows in the same order
    for eps, delta in SEQUENCES:
        idx = sorted(
            (i for i, r in enumerate(first) if (r["eps"], r["delta"]) == (eps, delta)),
            key=lambda i: first[i]["T"],
        )
        if not idx:
            continue
        T = [first[i]["T"] for i in idx]
        per_seed = [[m["rows"][i] for i in idx] for m in metrics]
        for key, style, name in (("best", "o-", "best"), ("l2", "s--", "ℓ2")):
            ratios = [[r[key] / r["gaussian"] for r in seq] for seq in per_seed]
            mean_band(ax, T, ratios, label=f"{name}/G, ε={eps}, δ={delta:g}", marker=style[0],
                      linestyle=style[1:])  # fmt: skip
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set(
        xscale="log",
        xlabel="dimension T",
        ylabel="MSE / Gaussian MSE",
        title=f"Gains vanish as T grows (Gaussian asymptotically optimal)\n"
        f"{seeds_note(len(metrics))}",
    )
    legend_outside(ax)
    fig.tight_layout()
    return {"ratio_vs_T": fig}


def _table_tables(metrics: list[dict[str, Any]], config: TableConfig) -> list[Table]:
    out = []
    for r in metrics[0]["rows"]:
        key = (r["eps"], r["delta"], r["T"])
        g, l2, best, ratio = SPEC_TABLE.get(key, (math.nan,) * 4)
        out.append(
            [
                r["eps"],
                r["delta"],
                r["T"],
                f"{g:.2f} / {l2:.2f} / {best:.2f} ({ratio:.3f})",
                f"{r['gaussian']:.2f} / {r['l2']:.2f} / {r['best']:.2f} ({r['ratio']:.3f})",
                f"({r['best_k']:g}, {r['best_p']:g})",
            ]
        )
    return [
        Table(
            "MSE: Gaussian / ℓ2 / best SGG (best / min(G, ℓ2))",
            ["ε", "δ", "T", "spec author's prototype", "ours", "best (k, p)"],
            out,
            note="The paper's own tables were not available; the spec author's numbers "
            "come from the same inferred family and grids.",
        )
    ]


def _ratio(rows: list[dict[str, Any]], key: tuple[float, float, int], field: str) -> float:
    match = [r[field] for r in rows if (r["eps"], r["delta"], r["T"]) == key]
    return match[0] if match else math.nan


def ratio_violations(rows: list[dict[str, Any]]) -> float:
    """Steps along T where best/G fails to increase, in the two sequences.

    NaN if no sequence has 3 rows: a trend needs three points (the quick preset has two).
    """
    count, checked = 0, False
    for eps, delta in SEQUENCES:
        seq = sorted(
            (r["T"], r["best"] / r["gaussian"])
            for r in rows
            if (r["eps"], r["delta"]) == (eps, delta)
        )
        if len(seq) >= 3:
            checked = True
            count += sum(b[1] <= a[1] for a, b in itertools.pairwise(seq))
    return float(count) if checked else math.nan


CLAIMS = (
    Claim(
        "H",
        "An SGG member beats both the Gaussian and the ℓ2 mechanism in MSE at the same "
        "(ε, δ, T), by the paper's 15 %: smallest best/min(G, ℓ2) over the rows ≤ 0.85",
        "min_win_ratio",
        "<=",
        0.85,
        "up to 15 % lower MSE than both (best/min 0.85)",
        "abstract (outperform both in low dimensions); 15 %: the paper's summary, spec §1, §3",
        source="paper",
        headline=True,
        control="the better of the Gaussian and ℓ2 mechanisms itself (the family's own "
        "members k = T, p ∈ {1, 2}): ratio 1",
        control_value=1.0,
    ),
    Claim(
        "T1",
        "best/min(G, ℓ2) <= 0.95 at (0.5, 1e-2, 3), (0.5, 1e-2, 5), (1, 1e-2, 3)",
        "max_win_ratio",
        "<=",
        0.95,
        "spec prototype 0.891, 0.921, 0.935",
        "spec §3 table, §5 full (i)",
        source="spec",
        control="the better of the Gaussian and ℓ2 mechanisms: ratio 1",
        control_value=1.0,
    ),
    Claim(
        "T2a",
        "best/G increases with T along (0.5, 1e-2) and (1, 1e-5) (steps where it does not; "
        "needs 3 rows a sequence, so full only)",
        "monotone_violations",
        "<=",
        0.0,
        "spec prototype: non-decreasing (paper: Gaussian asymptotically optimal)",
        "spec §3 table, §5 full (ii)",
        source="spec",
        control="no dimension effect (best/G the same at every T): every step fails",
        control_value=1.0,
    ),
    Claim(
        "T2b",
        "best/G >= 0.99 at T = 200, (0.5, 1e-2)",
        "best_over_g_T200_d1e-2",
        ">=",
        0.99,
        "spec prototype 0.998",
        "spec §3 table, §5 full (ii)",
        source="spec",
        control="no dimension effect: the T = 3 row's best/G (0.867) at T = 200",
        control_value=0.867,
    ),
    Claim(
        "T2c",
        "best/G >= 0.96 at T = 200, (1, 1e-5)",
        "best_over_g_T200_d1e-5",
        ">=",
        0.96,
        "spec prototype 0.972",
        "spec §3 table, §5 full (ii)",
        source="spec",
        control="no dimension effect: the T = 10 row's best/G (0.598) at T = 200",
        control_value=0.598,
    ),
    Claim(
        "T3a",
        "composed ℓ2 (n = 10): PLD δ agrees with Monte Carlo of the loss sum (max |z| over "
        "the target δs in each of 10 independent batches of the draws)",
        "composed_max_abs_z",
        "<=",
        3.0,
        "spec: agree within MC error (paper: tight composition)",
        "spec §5 full (iii)",
        source="spec",
        kind="sanity",
    ),
    Claim(
        "T3b",
        "composed ε at δ = 1e-5 is below basic composition",
        "tight_over_basic",
        "<",
        1.0,
        "spec: below basic composition",
        "spec §5 full (iii)",
        source="spec",
        kind="sanity",
    ),
)


@register(
    name="sgg_dp.table",
    title="Best SGG vs Gaussian and ℓ2 over (ε, δ, T); composed ℓ2 mechanism",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    resources=RESOURCES,
    plot=_table_figures,
    tables=_table_tables,
    seeds=1,  # deterministic search; the Monte Carlo check returns one value per batch
    deterministic_metrics=(
        "min_win_ratio",
        "max_win_ratio",
        "monotone_violations",
        "best_over_g_*",
        "composed_eps_*",
        "tight_over_basic",
        "rows",
    ),
)
def table(config: TableConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import best_member

    rows = []
    n_ks = sum(len(k_grid(T, config.k_offsets)) for _, _, T in config.rows)
    n_members = n_ks * len(config.p_grid)
    with ctx.progress(n_members, "calibrating SGG members") as bar:  # one bar for every row
        for eps, delta, T in config.rows:
            gauss, l2 = baselines(eps, delta, T)
            best, _ = best_member(
                eps,
                delta,
                T,
                k_grid(T, config.k_offsets),
                config.p_grid,
                progress=lambda done, total, metrics: bar.advance(),
            )
            rows.append(
                {
                    "eps": eps,
                    "delta": delta,
                    "T": T,
                    "gaussian": gauss,
                    "l2": l2,
                    "best": best.mse(),
                    "best_k": best.k,
                    "best_p": best.p,
                    "ratio": best.mse() / min(gauss, l2),
                }
            )
    wins = [_ratio(rows, key, "ratio") for key in WIN_SETTINGS]
    wins = [w for w in wins if not math.isnan(w)]

    def best_over_g(key):
        return _ratio(rows, key, "best") / _ratio(rows, key, "gaussian")

    ratios = [r["ratio"] for r in rows]
    return {
        "min_win_ratio": min(ratios) if ratios else math.nan,
        "max_win_ratio": max(wins) if wins else math.nan,
        "monotone_violations": ratio_violations(rows),
        "best_over_g_T200_d1e-2": best_over_g((0.5, 1e-2, 200)),
        "best_over_g_T200_d1e-5": best_over_g((1.0, 1e-5, 200)),
        **_composed_l2(config, ctx),
        "rows": rows,
    }
