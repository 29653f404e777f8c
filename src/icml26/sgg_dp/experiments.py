"""Registered reproductions of the SGG paper's claims (spec §5), composed from the public API.

Every experiment except the sampler is deterministic numerical integration, so one seed suffices
and the reported figure has no confidence interval. Importing this module stays light (no scipy,
dp_accounting or matplotlib): the library is imported inside the run, plot and tables functions.
Everything here is numpy / scipy on one core (``Resources(cpus=1)``).

Labels (issue 15). The paper's text and tables were not available (only its abstract and a
third-party summary), so every reference figure is the spec's own target or its prototype's
measurement: ``source="spec"`` throughout, with the paper's qualitative claim quoted beside it
where there is one (Q2: "up to 15% lower MSE"). A check that holds by construction of the inferred
family or of the PLD's rounding is ``kind="sanity"`` and is not counted as a reproduction: Q1a-c
(the Gaussian and Laplace members *are* those mechanisms), Q3a (rounding up makes the PLD
pessimistic), Q4a-b (the sampler's law is the density the profile integrates) and T3b (tight
composition below basic composition); each is also a unit test in ``tests/sgg_dp``. The claims
that can fail on the paper's mechanism are Q2, Q3b and T1-T3a.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

PAPER = (
    "Wei, Bienstock & Polychroniadou, Asymptotic Optimality of the High-Dimensional Gaussian "
    "Mechanism and Improved Low-Dimensional Mechanisms for DP, ICML 2026 (arXiv:2606.08681)"
)
REQUIRES = ("dp_accounting", "prv_accountant")  # the sgg_dp extra, as the package declares it
RESOURCES = Resources(cpus=1)  # numpy / scipy quadrature: no torch threads to spend


def _rel_err(value: float, reference: float) -> float:
    return abs(value - reference) / reference if reference > 0 else abs(value)


# --- Q1: the exact profile reproduces the closed forms of the Gaussian and Laplace members --------


@dataclass(frozen=True)
class ProfileConfig:
    dims: tuple[int, ...] = (1, 3, 5, 20)
    stds: tuple[float, ...] = (1.3, 4.0)
    eps: float = 1.0
    laplace_scales: tuple[float, ...] = (0.5, 1.5, 4.0)
    laplace_eps: tuple[float, ...] = (0.0, 0.3, 1.0, 2.5)


PROFILE = ProfileConfig()
PROFILE_PRESETS = {
    "smoke": replace(PROFILE, dims=(1, 3), stds=(4.0,), laplace_scales=(1.5,)),  # seconds
    "quick": PROFILE,
    "full": replace(PROFILE, dims=(1, 3, 4, 5, 10, 20, 50, 200), stds=(0.7, 1.3, 4.0, 8.0)),
}


@register(
    name="sgg_dp.profile",
    title="Q1: exact δ(ε) of the Gaussian and Laplace members vs their closed forms",
    paper=PAPER,
    claims=(
        Claim(
            "Q1a",
            "Gaussian member's δ(ε) equals the analytic Gaussian profile (T ≠ 2)",
            "gaussian_max_rel_err",
            "<=",
            1e-5,
            "spec: ≤ 1e-5 (the member is the Gaussian)",
            "spec §5 quick Q1 (≤ 1e-5)",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "Q1b",
            "... and at T = 2 (arcsine direction law)",
            "gaussian_t2_rel_err",
            "<=",
            1e-3,
            "spec: ≤ 1e-3 at T = 2",
            "spec §5 quick Q1 (≤ 1e-3 at T = 2)",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "Q1c",
            "Laplace member at T = 1 equals 1 − exp((ε − Δ/b)/2)₊",
            "laplace_max_rel_err",
            "<=",
            1e-6,
            "closed form (the member is Laplace)",
            "spec §5 quick Q1, §7",
            source="spec",
            kind="sanity",
        ),
    ),
    presets=PROFILE_PRESETS,
    requires=REQUIRES,
    resources=RESOURCES,
    seeds=1,  # deterministic quadrature
)
def profile(config: ProfileConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import analytic_gaussian_delta, gaussian_member, laplace_member

    dims = (*config.dims, 2)
    n_cells = len(dims) * len(config.stds) + len(config.laplace_scales) * len(config.laplace_eps)
    errors = {}
    laplace = []
    with ctx.progress(n_cells, "δ(ε) vs closed forms") as bar:
        for T in dims:
            for s in config.stds:
                exact = analytic_gaussian_delta(config.eps, s)
                errors[(T, s)] = _rel_err(gaussian_member(T, std=s).delta(config.eps), exact)
                bar.advance()
        for b in config.laplace_scales:
            for eps in config.laplace_eps:
                exact = max(0.0, -math.expm1((eps - 1.0 / b) / 2))
                laplace.append(_rel_err(laplace_member(scale=b).delta(eps), exact))
                bar.advance()
    return {
        "gaussian_max_rel_err": max(e for (T, _), e in errors.items() if T != 2),
        "gaussian_t2_rel_err": max(e for (T, _), e in errors.items() if T == 2),
        "laplace_max_rel_err": max(laplace),
        "gaussian_rel_err_by_T": {str(T): max(errors[(T, s)] for s in config.stds) for T in dims},
    }


# --- Q2: a member beats both the Gaussian and the l2 mechanism in low dimension -------------------


@dataclass(frozen=True)
class LowDimConfig:
    eps: float = 0.5
    delta: float = 1e-2
    T: int = 3
    k_grid: tuple[float, ...] = (2.5, 3.0, 3.5)
    p_grid: tuple[float, ...] = (1.0, 1.2, 1.35, 1.5, 2.0)


LOW_DIM = LowDimConfig()
LOW_DIM_PRESETS = {
    "smoke": replace(LOW_DIM, k_grid=(3.0,), p_grid=(1.35, 2.0)),  # seconds
    "quick": LOW_DIM,
    "full": replace(
        LOW_DIM, k_grid=(2.0, 2.5, 3.0, 3.5, 4.0), p_grid=(1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0)
    ),
}


def _baselines(eps: float, delta: float, T: int) -> tuple[float, float]:
    from icml26.sgg_dp import analytic_gaussian_sigma, l2_member

    gauss = T * analytic_gaussian_sigma(eps, delta) ** 2
    return gauss, l2_member(T).calibrate(eps, delta).mse()


def _low_dim_tables(metrics: list[dict[str, Any]], config: LowDimConfig) -> list[Table]:
    m = metrics[0]
    return [
        Table(
            title=f"MSE at (ε, δ, T) = ({config.eps}, {config.delta}, {config.T})",
            columns=["", "Gaussian", "ℓ2", "best SGG (k, p)", "best / min(G, ℓ2)"],
            rows=[
                ["spec author's prototype", 29.71, 28.91, "25.76 (3, 1.35)", 0.891],
                [
                    "ours",
                    m["mse_gaussian"],
                    m["mse_l2"],
                    f"{m['mse_best']:.2f} ({m['best_k']:g}, {m['best_p']:g})",
                    m["ratio_best_over_min"],
                ],
            ],
            note="The paper reports 'up to 15% lower MSE' in some low-dimensional settings.",
        )
    ]


@register(
    name="sgg_dp.low_dim_win",
    title="Q2: best SGG member vs Gaussian and ℓ2 mechanisms at (ε, δ, T) = (0.5, 1e-2, 3)",
    paper=PAPER,
    claims=(
        Claim(
            "Q2",
            "Best SGG member's MSE <= 0.92 × min(Gaussian, ℓ2)",
            "ratio_best_over_min",
            "<=",
            0.92,
            "spec prototype 0.891 at (3, 1.35); paper (summary): up to 15% lower MSE",
            "spec §3 table row 1, §5 quick Q2",
            source="spec",
            kind="claim",
        ),
    ),
    presets=LOW_DIM_PRESETS,
    requires=REQUIRES,
    resources=RESOURCES,
    tables=_low_dim_tables,
    seeds=1,  # deterministic quadrature and calibration
)
def low_dim_win(config: LowDimConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import best_member

    gauss, l2 = _baselines(config.eps, config.delta, config.T)
    n_members = len(config.k_grid) * len(config.p_grid)
    with ctx.progress(n_members, "calibrating SGG members") as bar:
        best, _ = best_member(
            config.eps,
            config.delta,
            config.T,
            config.k_grid,
            config.p_grid,
            callback=lambda _row: bar.advance(),
        )
    return {
        "ratio_best_over_min": best.mse() / min(gauss, l2),
        "mse_gaussian": gauss,
        "mse_l2": l2,
        "mse_best": best.mse(),
        "best_k": best.k,
        "best_p": best.p,
    }


# --- Q3: PLD accounting is pessimistic and tight for composition ----------------------------------


@dataclass(frozen=True)
class CompositionConfig:
    T: int = 5
    std: float = 2.0
    eps: float = 1.0
    counts: tuple[int, ...] = (1, 4, 16)
    M: int = 65536  # direction-table cells: the snapping cost is far below the loss grid step
    n_panels: int = 40
    value_discretization_interval: float = 1e-3


COMPOSITION = CompositionConfig()
COMPOSITION_PRESETS = {
    "smoke": replace(COMPOSITION, counts=(1, 4), M=4096, n_panels=10),  # seconds
    "quick": COMPOSITION,
    "full": replace(COMPOSITION, counts=(1, 2, 4, 8, 16, 32, 64)),
}


@register(
    name="sgg_dp.composition",
    title="Q3: PLD of the Gaussian member (T = 5, s = 2) after n compositions vs exact δ",
    paper=PAPER,
    claims=(
        Claim(
            "Q3a",
            "PLD δ is pessimistic: δ_PLD / δ_exact >= 1 for every n",
            "min_ratio",
            ">=",
            1.0,
            "δ_PLD ≥ δ_exact (pessimistic rounding)",
            "spec §5 quick Q3",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "Q3b",
            "PLD δ is within 3% of exact: δ_PLD / δ_exact <= 1.03",
            "max_ratio",
            "<=",
            1.03,
            "spec prototype 1.017, 1.009, 1.009",
            "spec §2.5, §5 quick Q3",
            source="spec",
            kind="claim",
        ),
    ),
    presets=COMPOSITION_PRESETS,
    requires=REQUIRES,
    resources=RESOURCES,
    seeds=1,  # deterministic
)
def composition(config: CompositionConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import analytic_gaussian_delta, gaussian_member

    mech = gaussian_member(config.T, std=config.std)
    pld = mech.to_pld(config.value_discretization_interval, config.M, config.n_panels)
    ratios = []
    with ctx.progress(len(config.counts), "composing the PLD") as bar:
        for n in config.counts:
            # n Gaussian releases with std s are one release with std s/√n.
            exact = analytic_gaussian_delta(config.eps, config.std / math.sqrt(n))
            ratios.append(pld.self_compose(n).get_delta_for_epsilon(config.eps) / exact)
            bar.advance()
    return {"min_ratio": min(ratios), "max_ratio": max(ratios), "ratios": ratios}


# --- Q4: the sampler has the law the profile integrates -------------------------------------------


@dataclass(frozen=True)
class SamplerConfig:
    T: int = 3
    k: float = 3.0
    p: float = 1.35
    calibrate_eps: float = 0.5
    calibrate_delta: float = 1e-2
    n_samples: int = 200_000
    eps_grid: tuple[float, ...] = (0.0, 0.25, 0.5)


SAMPLER = SamplerConfig()
SAMPLER_PRESETS = {
    "smoke": replace(SAMPLER, n_samples=20_000),  # seconds
    "quick": SAMPLER,
    "full": replace(SAMPLER, n_samples=2_000_000),
}


@register(
    name="sgg_dp.sampler",
    title="Q4: SGG(3, 3, 1.35) samples match the MSE formula and the exact δ(ε)",
    paper=PAPER,
    claims=(
        Claim(
            "Q4a",
            "Empirical MSE within 1% of σ²Γ((k+2)/p)/Γ(k/p)",
            "mse_rel_err",
            "<=",
            0.01,
            "spec: within 1% (MSE formula of the inferred family)",
            "spec §5 quick Q4",
            source="spec",
            kind="sanity",
        ),
        Claim(
            "Q4b",
            "Monte-Carlo δ(ε) within 3 standard errors of the exact profile",
            "max_abs_z",
            "<=",
            3.0,
            "spec: within 3 SE",
            "spec §5 quick Q4",
            source="spec",
            kind="sanity",
        ),
    ),
    presets=SAMPLER_PRESETS,
    requires=REQUIRES,
    resources=RESOURCES,
    seeds=3,  # Monte Carlo: the verdict uses the 95% interval over seeds
)
def sampler(config: SamplerConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import SGGMechanism

    mech = SGGMechanism(config.T, config.k, config.p).calibrate(
        config.calibrate_eps, config.calibrate_delta
    )
    x = mech.sample(config.n_samples, ctx.numpy_generator())  # (n, T)
    mse_hat = float(np.mean(np.sum(x**2, axis=1)))
    loss = mech.privacy_loss(x)
    z = []
    for eps in config.eps_grid:
        # δ(ε) = E_P[1{L > ε} − e^ε 1{L < −ε}]
        v = (loss > eps).astype(float) - math.exp(eps) * (loss < -eps)
        z.append((v.mean() - mech.delta(eps)) / (v.std(ddof=1) / math.sqrt(v.size)))
    return {
        "mse_rel_err": abs(mse_hat / mech.mse() - 1),
        "max_abs_z": float(np.max(np.abs(z))),
        "z_by_eps": z,
    }


# --- Full table: gains vs dimension, asymptotic optimality of the Gaussian, composed l2 -----------

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
    mc_samples: int = 1_000_000
    mc_deltas: tuple[float, ...] = (0.1, 0.01)
    M: int = 65536
    value_discretization_interval: float = 1e-4


TABLE = TableConfig()
TABLE_PRESETS = {
    # seconds: one row, three members, small PLD and Monte Carlo
    "smoke": replace(
        TABLE,
        rows=((0.5, 1e-2, 3),),
        p_grid=(1.0, 1.35, 2.0),
        k_offsets=(0.0,),
        mc_samples=20_000,
        M=4096,
        value_discretization_interval=1e-3,
    ),
    # ~2 minutes: the three low-dimensional win settings with a thinner k grid, smaller Monte Carlo
    "quick": replace(TABLE, rows=WIN_SETTINGS, k_offsets=(-0.5, 0.0, 0.5), mc_samples=200_000),
    "full": TABLE,
}


def _k_grid(T: int, config: TableConfig) -> list[float]:
    if T == 1:
        return [1.0]  # the slower exact 1-D routine: only k = 1, as in the spec's table
    return [T + o for o in config.k_offsets if T + o > 0]


def _composed_l2(config: TableConfig, ctx: RunContext) -> dict[str, float]:
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
    z = []
    for target in config.mc_deltas:
        eps = pld.get_epsilon_for_delta(target)
        v = -np.expm1(np.minimum(eps - loss_sum, 0.0))  # (1 − e^{ε − ΣL})₊
        z.append((pld.get_delta_for_epsilon(eps) - v.mean()) / (v.std(ddof=1) / math.sqrt(v.size)))
    tight = compose_epsilon([(mech, n)], config.target_delta, **options)
    basic = n * mech.epsilon(config.target_delta / n)
    return {
        "composed_max_abs_z": float(np.max(np.abs(z))),
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


def _violations(rows: list[dict[str, Any]]) -> float:
    """Decreases of best/G along T in the two sequences (NaN if no sequence has 2 rows)."""
    count, checked = 0, False
    for eps, delta in SEQUENCES:
        seq = sorted(
            (r["T"], r["best"] / r["gaussian"])
            for r in rows
            if (r["eps"], r["delta"]) == (eps, delta)
        )
        if len(seq) >= 2:
            checked = True
            count += sum(b[1] < a[1] for a, b in itertools.pairwise(seq))
    return float(count) if checked else math.nan


@register(
    name="sgg_dp.table",
    title="Best SGG vs Gaussian and ℓ2 over (ε, δ, T); composed ℓ2 mechanism",
    paper=PAPER,
    claims=(
        Claim(
            "T1",
            "best/min(G, ℓ2) <= 0.95 at (0.5, 1e-2, 3), (0.5, 1e-2, 5), (1, 1e-2, 3)",
            "max_win_ratio",
            "<=",
            0.95,
            "spec prototype 0.891, 0.921, 0.935",
            "spec §3 table, §5 full (i)",
            source="spec",
            kind="claim",
        ),
        Claim(
            "T2a",
            "best/G non-decreasing in T along (0.5, 1e-2) and (1, 1e-5)",
            "monotone_violations",
            "<=",
            0.0,
            "spec prototype: non-decreasing (paper: Gaussian asymptotically optimal)",
            "spec §3 table, §5 full (ii)",
            source="spec",
            kind="claim",
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
            kind="claim",
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
            kind="claim",
        ),
        Claim(
            "T3a",
            "composed ℓ2 (n = 10): PLD δ agrees with Monte Carlo of the loss sum",
            "composed_max_abs_z",
            "<=",
            3.0,
            "spec: agree within MC error (paper: tight composition)",
            "spec §5 full (iii)",
            source="spec",
            kind="claim",
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
    ),
    presets=TABLE_PRESETS,
    requires=REQUIRES,
    resources=RESOURCES,
    plot=_table_figures,
    tables=_table_tables,
    seeds=1,  # deterministic search; the Monte Carlo part is judged by its own z-score
)
def table(config: TableConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.sgg_dp import best_member

    rows = []
    n_members = sum(len(_k_grid(T, config)) for _, _, T in config.rows) * len(config.p_grid)
    with ctx.progress(n_members, "calibrating SGG members") as bar:
        for eps, delta, T in config.rows:
            gauss, l2 = _baselines(eps, delta, T)
            best, _ = best_member(
                eps,
                delta,
                T,
                _k_grid(T, config),
                config.p_grid,
                callback=lambda _row: bar.advance(),
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

    return {
        "max_win_ratio": max(wins) if wins else math.nan,
        "monotone_violations": _violations(rows),
        "best_over_g_T200_d1e-2": best_over_g((0.5, 1e-2, 200)),
        "best_over_g_T200_d1e-5": best_over_g((1.0, 1e-5, 200)),
        **_composed_l2(config, ctx),
        "rows": rows,
    }
