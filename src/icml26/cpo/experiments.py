"""Registered reproductions of *Conditional Equivalence of DPO and RLHF* (spec §5).

The paper's evidence at scale (UltraFeedback, 7–8B models) is out of reach here; these toys check
its central theoretical claim from measurement: DPO can converge with a loss below ``log 2`` while
the policy still prefers the dispreferred responses, and CPO's raised target fixes it.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, ProgressBar, Resources, RunContext, Table, register

PAPER = (
    "Yang, Zhang, Xue, Fang, Han, Guo, Conditional Equivalence of DPO and RLHF: Implicit "
    "Assumption, Failure Modes, and Provable Alignment, ICML 2026 (arXiv:2605.20834)"
)
METRICS = ("loss", "acc_viol", "acc_nonviol", "frac_in_U", "expected_reward", "kl")
THEORY = "qualitative (no numeric table retrievable)"
REQUIRES = ("transformers", "trl", "datasets")  # the package's extra (import icml26.cpo checks it)


# ---------------------------------------------------------------- cpo.bandit (A1, A2, A4, A5)


@dataclass(frozen=True)
class BanditConfig:
    """Tabular bandit reproduction (spec §5.1); CPO hyper-parameters are the official defaults."""

    n_prompts: int = 300
    n_responses: int = 6
    violated_frac: float = 0.4
    ref_strength: float = 3.0
    n_annotations: int = 5
    steps: int = 300
    lr: float = 0.05
    beta: float = 1.0
    gamma: float = 0.5
    tau: float = 2.0
    alpha_limit: float = 1e6
    easy_gamma: float = 0.05
    simpo_gamma: float = 0.5
    baselines: tuple[str, ...] = ("easy", "ipo", "simpo")


BANDIT = BanditConfig()
BANDIT_PRESETS = {
    "smoke": replace(BANDIT, n_prompts=30, steps=40, baselines=()),  # seconds: run twice by tests
    "quick": BANDIT,
    "full": replace(BANDIT, n_prompts=1000),  # more prompts: tighter per-seed estimates
}
BANDIT_CLAIMS = (
    Claim("A1a", "DPO converges with loss below log 2 (≤ 0.60)", "dpo_loss", "<=", 0.60,
          THEORY, "abstract; spec §5.1 A1", source="paper", kind="claim"),
    Claim("A1b", "...yet DPO prefers y_l on violated prompts (acc ≤ 0.25)", "dpo_acc_viol", "<=",
          0.25, THEORY, "abstract; spec §5.1 A1", source="paper", kind="claim"),
    Claim("A1c", "...with ≥ 25% of true pairs in the undesirable set U", "dpo_frac_in_U", ">=",
          0.25, "U non-empty when δ_ref < 0", "Def. 3.3 / Eq. 14; spec §5.1 A1",
          source="paper", kind="claim"),
    Claim("A2a", "CPO raises violated-prompt accuracy by ≥ 0.50 over DPO",
          "cpo_minus_dpo_acc_viol", ">=", 0.50, "provable alignment (qualitative)",
          "abstract; spec §5.1 A2", source="paper", kind="claim"),
    Claim("A2b", "CPO leaves ≤ 12% of pairs in U", "cpo_frac_in_U", "<=", 0.12,
          "provable alignment (qualitative)", "spec §5.1 A2", source="paper", kind="claim"),
    Claim("A2c", "CPO does not hurt non-violated prompts (≥ DPO − 0.02)",
          "cpo_minus_dpo_acc_nonviol", ">=", -0.02, "—", "spec §5.1 A2",
          source="spec", kind="claim"),
    Claim("A2d", "CPO's expected true reward exceeds DPO's by > 0.3",
          "cpo_minus_dpo_expected_reward", ">", 0.3, "—", "spec §5.1 A2",
          source="spec", kind="claim"),
    Claim("A4a", "Smooth CPO with α = 1e6 reproduces DPO (max metric gap ≤ 1e-3)",
          "alpha_limit_max_gap", "<=", 1e-3, "α → ∞ gives DPO", "official loss code; spec A4",
          source="paper", kind="sanity"),
    Claim("A4b", "clip ≈ smooth CPO with γ = 0, τ = 50 (max metric gap ≤ 0.02)",
          "clip_limit_max_gap", "<=", 0.02, "clip = smooth at γ=0, τ→∞", "spec A4",
          source="spec", kind="sanity"),
    Claim("A5", "No violated prompts: CPO accuracy ≥ DPO − 0.02", "control_cpo_minus_dpo_acc",
          ">=", -0.02, "DPO ≡ RLHF when (A) holds", "abstract (i); spec A5",
          source="paper", kind="claim"),
)  # fmt: skip


def _run_methods(
    problem: Any, config: BanditConfig, methods: dict[str, tuple[str, dict]], bar: ProgressBar
) -> dict:
    from icml26.cpo import train_tabular

    runs = {}
    for name, (method, kwargs) in methods.items():
        runs[name] = train_tabular(problem, method, steps=config.steps, lr=config.lr,
                                   beta=config.beta, **kwargs)["metrics"]  # fmt: skip
        bar.advance()
    return runs


def _max_gap(a: dict[str, float], b: dict[str, float]) -> float:
    return max(abs(a[k] - b[k]) for k in METRICS if not (math.isnan(a[k]) and math.isnan(b[k])))


def bandit(config: BanditConfig, ctx: RunContext) -> dict[str, Any]:
    """Train every method on one problem draw and return flat metrics ``<method>_<metric>``."""
    from icml26.cpo import make_bandit_problem, policy_metrics

    c = config
    problem = make_bandit_problem(c.n_prompts, c.n_responses, c.violated_frac, c.ref_strength,
                                  c.n_annotations, seed=ctx.numpy_generator())  # fmt: skip
    smooth = {"gamma": c.gamma, "tau": c.tau, "alpha": 1.0}
    methods = {
        "dpo": ("dpo", {}),
        "cpo": ("smooth", smooth),
        "clip": ("clip", {}),
        "alpha_limit": ("smooth", {**smooth, "alpha": c.alpha_limit}),
        "smooth_gamma0": ("smooth", {"gamma": 0.0, "tau": 50.0, "alpha": 1.0}),
    }
    extra = {
        "easy": ("easy", {"gamma": c.easy_gamma}),
        "ipo": ("ipo", {}),
        "simpo": ("simpo", {"gamma": c.simpo_gamma}),
    }
    methods |= {name: extra[name] for name in c.baselines}
    control_methods = {"dpo": ("dpo", {}), "cpo": ("smooth", smooth)}
    with ctx.progress(len(methods) + len(control_methods), "bandit methods") as bar:
        runs = _run_methods(problem, c, methods, bar)
        # an independent draw without violated prompts; `seed + 1` keeps the pre-v2 numbers
        control = make_bandit_problem(c.n_prompts, c.n_responses, 0.0, c.ref_strength,
                                      c.n_annotations, seed=ctx.seed + 1)  # fmt: skip
        ctrl = _run_methods(control, c, control_methods, bar)
    ref = policy_metrics(problem, problem.ref_logits)
    out: dict[str, Any] = {f"{n}_{k}": v for n, m in runs.items() for k, v in m.items()}
    out |= {f"ref_{k}": ref[k] for k in ("acc_viol", "acc_nonviol", "expected_reward")}
    out |= {f"control_{n}_{k}": m[k] for n, m in ctrl.items() for k in ("acc", "frac_in_U")}
    for k in ("acc_viol", "acc_nonviol", "expected_reward"):
        out[f"cpo_minus_dpo_{k}"] = runs["cpo"][k] - runs["dpo"][k]
    out["alpha_limit_max_gap"] = _max_gap(runs["alpha_limit"], runs["dpo"])
    out["clip_limit_max_gap"] = _max_gap(runs["clip"], runs["smooth_gamma0"])
    out["control_cpo_minus_dpo_acc"] = ctrl["cpo"]["acc"] - ctrl["dpo"]["acc"]
    return out


def _mean_sd(values: list[float]) -> str:
    arr = np.asarray(values, dtype=float)
    return f"{arr.mean():.3f} ± {arr.std(ddof=1) if arr.size > 1 else 0.0:.3f}"


def bandit_tables(metrics: list[dict[str, Any]], config: BanditConfig) -> list[Table]:
    """Per-method final metrics (mean ± sd over seeds) beside the spec prototype's figures."""
    prototype = {
        "dpo": "loss 0.50, acc_viol 0.10–0.11, U 0.35–0.40",
        "cpo": "acc_viol 0.83, U 0.074–0.077, E[r] 0.81–0.88",
        "clip": "acc_viol 0.78–0.79, U ≈ 0.10",
        "alpha_limit": "= DPO to 3 decimals",
    }
    names = sorted({k.split("_acc_viol")[0] for k in metrics[0] if k.endswith("_acc_viol")}
                   - {"ref", "cpo_minus_dpo"})  # fmt: skip
    rows = [
        [name, *(_mean_sd([m[f"{name}_{k}"] for m in metrics]) for k in METRICS),
         prototype.get(name, "—")]
        for name in names
    ]  # fmt: skip
    return [
        Table(
            f"Final metrics per method (mean ± sd over {len(metrics)} seeds)",
            ["method", *METRICS, "spec prototype (3 seeds; the paper gives no numbers)"],
            rows,
            note="acc_* = policy preference accuracy mean[δ_θ > 0] on truly ordered pairs; "
            "frac_in_U over all truly ordered pairs; E[r] and KL averaged over prompts.",
        )
    ]


def bandit_plot(metrics: list[dict[str, Any]], config: BanditConfig) -> dict[str, Any]:
    """Violated / non-violated accuracy and frac_in_U per method: seed-mean bars, seed dots."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside

    names = [n for n in ("ref", "dpo", "cpo", "clip", "easy", "ipo", "simpo")
             if f"{n}_acc_viol" in metrics[0]]  # fmt: skip
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    width = 0.27
    for i, key in enumerate(("acc_viol", "acc_nonviol", "frac_in_U")):
        values = [[m.get(f"{n}_{key}", np.nan) for n in names] for m in metrics]  # (seeds, names)
        bars_with_seeds(ax, names, values, offset=(i - 1) * width, width=width, label=key)
    ax.set_xticks(np.arange(len(names)), names)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_ylabel("fraction of truly ordered pairs")
    ax.set_title(f"Tabular bandit: accuracy and U per method ({_bars_note(len(metrics))})")
    legend_outside(ax)
    fig.tight_layout()
    return {"accuracy": fig}


def _bars_note(n_seeds: int) -> str:
    return "1 seed" if n_seeds == 1 else f"bars: mean, dots: {n_seeds} seeds"


register(
    name="cpo.bandit",
    title="Tabular bandit: DPO's pathological convergence and CPO's fix",
    paper=PAPER,
    claims=BANDIT_CLAIMS,
    presets=BANDIT_PRESETS,
    seeds=5,
    description=(
        "Free-logit policies on prompts whose reference is anti-aligned with the true reward on "
        "40% of prompts; DPO vs smooth/clip CPO, limits (α → ∞, τ → ∞) and a no-violation control."
    ),
    plot=bandit_plot,
    tables=bandit_tables,
    requires=REQUIRES,
    resources=Resources(cpus=1),  # tiny tensors: a second thread made it 10x slower
)(bandit)


# ------------------------------------------------------------------------ cpo.kl_matched (A3)


@dataclass(frozen=True)
class KLMatchedConfig:
    """DPO β sweep against smooth CPO at the same step budget (spec §5.1 A3)."""

    n_prompts: int = 300
    steps: int = 1000
    lr: float = 0.05
    dpo_betas: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5, 1.0)
    beta: float = 1.0
    gamma: float = 0.5
    tau: float = 2.0


KL = KLMatchedConfig()
KL_PRESETS = {
    "smoke": replace(KL, n_prompts=30, steps=40, dpo_betas=(0.3, 1.0)),  # seconds
    "quick": KL,
    "full": replace(KL, n_prompts=1000),  # more prompts: tighter per-seed estimates
}
KL_CLAIMS = (
    Claim("A3", "At matched KL, CPO's violated-prompt accuracy beats DPO's by ≥ 0.05",
          "cpo_minus_kl_matched_dpo_acc_viol", ">=", 0.05, "not just more KL (qualitative)",
          "spec §5.1 A3", source="spec", kind="claim"),
)  # fmt: skip


def kl_matched(config: KLMatchedConfig, ctx: RunContext) -> dict[str, Any]:
    """DPO for each β and smooth CPO; compare CPO with the KL-matched DPO."""
    from icml26.cpo import make_bandit_problem, train_tabular

    c = config
    problem = make_bandit_problem(n_prompts=c.n_prompts, seed=ctx.numpy_generator())
    dpo = []
    with ctx.progress(len(c.dpo_betas) + 1, "DPO β sweep + CPO") as bar:
        for b in c.dpo_betas:
            dpo.append(train_tabular(problem, "dpo", c.steps, c.lr, beta=b)["metrics"])
            bar.advance()
        cpo = train_tabular(problem, "smooth", c.steps, c.lr, beta=c.beta, gamma=c.gamma,
                            tau=c.tau)  # fmt: skip
        bar.advance()
    cpo_m = cpo["metrics"]
    star = int(np.argmin([abs(m["kl"] - cpo_m["kl"]) for m in dpo]))
    return {
        "dpo_kl": [m["kl"] for m in dpo],
        "dpo_acc_viol": [m["acc_viol"] for m in dpo],
        "dpo_expected_reward": [m["expected_reward"] for m in dpo],
        "cpo_kl": cpo_m["kl"],
        "cpo_acc_viol": cpo_m["acc_viol"],
        "cpo_expected_reward": cpo_m["expected_reward"],
        "kl_matched_beta": c.dpo_betas[star],
        "kl_matched_dpo_kl": dpo[star]["kl"],
        "cpo_minus_kl_matched_dpo_acc_viol": cpo_m["acc_viol"] - dpo[star]["acc_viol"],
    }


def kl_tables(metrics: list[dict[str, Any]], config: KLMatchedConfig) -> list[Table]:
    """The accuracy-vs-KL frontier (mean ± sd over seeds)."""
    rows = [
        [f"DPO β={b:g}", _mean_sd([m["dpo_kl"][i] for m in metrics]),
         _mean_sd([m["dpo_acc_viol"][i] for m in metrics]),
         _mean_sd([m["dpo_expected_reward"][i] for m in metrics])]
        for i, b in enumerate(config.dpo_betas)
    ]  # fmt: skip
    rows.append(
        [f"CPO β={config.beta:g}, γ={config.gamma:g}", _mean_sd([m["cpo_kl"] for m in metrics]),
         _mean_sd([m["cpo_acc_viol"] for m in metrics]),
         _mean_sd([m["cpo_expected_reward"] for m in metrics])]
    )  # fmt: skip
    title = f"Accuracy-vs-KL frontier (mean ± sd over {len(metrics)} seeds)"
    return [Table(title, ["method", "KL(π‖π_ref)", "acc_viol", "E[r]"], rows,
                  note="Spec prototype: DPO β=0.3 KL 2.35 → 0.59; β=0.1 KL 3.8 → 0.84; "
                  "CPO KL 2.4–2.8 → 0.83.")]  # fmt: skip


def kl_plot(metrics: list[dict[str, Any]], config: KLMatchedConfig) -> dict[str, Any]:
    """Violated-prompt accuracy against KL(π‖π_ref): every seed's DPO β frontier (thin), their
    mean (bold) and CPO per seed (stars) and on average (large star)."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, stack

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    kl, acc = stack(metrics, "dpo_kl"), stack(metrics, "dpo_acc_viol")  # (seeds, betas)
    (mean,) = ax.plot(kl.mean(axis=0), acc.mean(axis=0), "o-", label="DPO β sweep (mean)")
    if len(metrics) > 1:
        for i, (k, a) in enumerate(zip(kl, acc, strict=True)):
            label = "DPO β sweep (per seed)" if i == 0 else None
            ax.plot(k, a, ".-", color=mean.get_color(), alpha=0.3, lw=0.8, label=label)
    for b, k, a in zip(config.dpo_betas, kl.mean(axis=0), acc.mean(axis=0), strict=True):
        ax.annotate(f"β={b:g}", (k, a), fontsize=7)
    cpo_kl, cpo_acc = stack(metrics, "cpo_kl"), stack(metrics, "cpo_acc_viol")
    ax.plot(cpo_kl, cpo_acc, "r*", ms=7, alpha=0.6, label="CPO (per seed)")
    ax.plot(cpo_kl.mean(), cpo_acc.mean(), "r*", ms=14, mec="k", label="CPO (mean)")
    ax.set_xlabel("KL(π‖π_ref)")
    ax.set_ylabel("acc on violated prompts")
    n = len(metrics)
    ax.set_title(f"Accuracy-vs-KL frontier ({n} seed{'s' if n > 1 else ''})", fontsize=10)
    legend_outside(ax)
    fig.tight_layout()
    return {"frontier": fig}


register(
    name="cpo.kl_matched",
    title="Accuracy-vs-KL frontier: DPO β sweep against CPO",
    paper=PAPER,
    claims=KL_CLAIMS,
    presets=KL_PRESETS,
    seeds=5,
    description="β* = the swept DPO β whose KL(π‖π_ref) is closest to CPO's, per seed.",
    plot=kl_plot,
    tables=kl_tables,
    requires=REQUIRES,
    resources=Resources(cpus=1),  # tiny tensors: one thread is faster
)(kl_matched)


# ----------------------------------------------------------------------------- cpo.tiny_lm (§5.2)


@dataclass(frozen=True)
class TinyLMConfig:
    """Tiny causal LM from scratch on the arithmetic preference task (spec §5.2)."""

    n_numbers: int = 30  # vocabulary 30 numbers + Q + 8 operations + "=" = 40 tokens
    n_types: int = 8
    n_violated: int = 3
    wrong_frac: float = 0.8
    label_flip: float = 0.1
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    sft_steps: int = 1500
    sft_batch: int = 256
    sft_lr: float = 3e-3
    steps: int = 300
    batch_size: int = 64
    lr: float = 1e-3
    beta: float = 2.5
    gamma: float = 0.5
    tau: float = 2.0
    easy_gamma: float = 0.05
    methods: tuple[str, ...] = ("dpo", "smooth", "easy", "clip")


TINY_LM = TinyLMConfig()
TINY_LM_PRESETS = {
    # seconds: run twice by the contract test
    "smoke": replace(TINY_LM, n_numbers=6, d_model=16, n_layers=1, n_heads=2, sft_steps=20,
                     sft_batch=32, steps=5, batch_size=16, methods=("dpo", "smooth")),
    # ~2 min for 3 seeds on a loaded 2-core box: a shorter SFT (reference less calibrated) and
    # only the two methods the claims compare
    "quick": replace(TINY_LM, sft_steps=600, sft_batch=128, methods=("dpo", "smooth")),
    "full": TINY_LM,
}  # fmt: skip
TINY_LM_CLAIMS = (
    Claim("L1", "Violated types: CPO greedy exact match ≥ DPO + 0.15", "cpo_minus_dpo_em_viol",
          ">=", 0.15, "provable alignment (qualitative)", "spec §5.2", source="spec", kind="claim"),
    Claim("L2", "frac_in_U(CPO) ≤ 0.5 · frac_in_U(DPO)", "cpo_minus_half_dpo_frac_in_U", "<=",
          0.0, "CPO leaves U (qualitative)", "spec §5.2", source="spec", kind="claim"),
    Claim("L3", "Other types: CPO greedy exact match ≥ DPO − 0.03", "cpo_minus_dpo_em_nonviol",
          ">=", -0.03, "—", "spec §5.2", source="spec", kind="claim"),
)  # fmt: skip
TINY_LM_METRICS = ("loss", "acc_viol", "acc_nonviol", "frac_in_U", "em_viol", "em_nonviol",
                   "delta_viol")  # fmt: skip


def tiny_lm(config: TinyLMConfig, ctx: RunContext) -> dict[str, Any]:
    """SFT a tiny LM, then preference-train copies of it with each method; flat metrics."""
    with warnings.catch_warnings():
        # `easy` divides by reference scores; near-certain SFT answers sit at the clamp
        warnings.filterwarnings("ignore", "constrained_po_loss: variant 'easy'", RuntimeWarning)
        with ctx.progress(1 + len(config.methods), "SFT + preference training") as bar:
            return _tiny_lm(config, ctx, bar)


def _tiny_lm(config: TinyLMConfig, ctx: RunContext, bar: ProgressBar) -> dict[str, Any]:
    from icml26.cpo import (
        TinyCausalLM,
        make_arith_preference_task,
        tiny_lm_metrics,
        train_sft,
        train_tiny_lm,
    )

    c = config
    task = make_arith_preference_task(c.n_numbers, c.n_types, c.n_violated, c.wrong_frac,
                                      c.label_flip, seed=ctx.numpy_generator())  # fmt: skip
    # init and SFT minibatches restart the same stream, and preference training draws from
    # `seed + 1`: the pre-v2 numbers
    reference = TinyCausalLM(task.vocab_size, d_model=c.d_model, n_layers=c.n_layers,
                             n_heads=c.n_heads, seed=ctx.torch_generator())  # fmt: skip
    sft = train_sft(reference, task, c.sft_steps, c.sft_batch, c.sft_lr,
                    seed=ctx.torch_generator())  # fmt: skip
    bar.advance()
    reference.requires_grad_(False)
    kwargs = {"dpo": {}, "smooth": {"gamma": c.gamma, "tau": c.tau, "alpha": 1.0},
              "easy": {"gamma": c.easy_gamma}, "clip": {}}  # fmt: skip
    out: dict[str, Any] = {"sft_final_loss": sft[-1]}
    out |= {f"ref_{k}": v for k, v in tiny_lm_metrics(reference, reference, task).items()}
    for method in c.methods:
        policy = copy.deepcopy(reference).requires_grad_(True)
        run = train_tiny_lm(policy, reference, task, method, c.steps, c.batch_size, c.lr,
                            c.beta, seed=ctx.seed + 1, **kwargs[method])  # fmt: skip
        name = "cpo" if method == "smooth" else method
        out |= {f"{name}_{k}": v for k, v in run["metrics"].items()}
        bar.advance()
    out["cpo_minus_dpo_em_viol"] = out["cpo_em_viol"] - out["dpo_em_viol"]
    out["cpo_minus_half_dpo_frac_in_U"] = out["cpo_frac_in_U"] - 0.5 * out["dpo_frac_in_U"]
    out["cpo_minus_dpo_em_nonviol"] = out["cpo_em_nonviol"] - out["dpo_em_nonviol"]
    return out


def tiny_lm_tables(metrics: list[dict[str, Any]], config: TinyLMConfig) -> list[Table]:
    """Held-out metrics per method (mean ± sd over seeds), the SFT reference first."""
    names = [n for n in ("ref", "dpo", "cpo", "easy", "clip") if f"{n}_em_viol" in metrics[0]]
    rows = [
        [name, *(_mean_sd([m.get(f"{name}_{k}", math.nan) for m in metrics])
                 for k in TINY_LM_METRICS)]
        for name in names
    ]  # fmt: skip
    return [
        Table(
            f"Tiny LM: held-out metrics per method (mean ± sd over {len(metrics)} seeds)",
            ["method", *TINY_LM_METRICS],
            rows,
            note="em_* = greedy exact match of the answer; acc_* = mean[δ_θ > 0] on (correct, "
            "misread) pairs; frac_in_U over all held-out pairs; delta_viol = mean δ_θ on "
            "violated types (length-normalised); loss = final training loss, expected over the "
            "label noise (the ref row has none).",
        )
    ]


register(
    name="cpo.tiny_lm",
    title="Tiny causal LM: DPO vs CPO on an SFT reference that prefers the wrong answer",
    paper=PAPER,
    claims=TINY_LM_CLAIMS,
    presets=TINY_LM_PRESETS,
    seeds=3,
    description=(
        "A 2-layer, d=64 causal transformer is SFT-trained from scratch on 'Q op a b =' prompts "
        "where 3 of 8 operation types answer with a misread operand 80% of the time; DPO and CPO "
        "(β = 2.5, length-normalised scores) then train on correct-vs-misread pairs with 10% "
        "label noise; greedy exact match and frac_in_U on held-out prompts."
    ),
    tables=tiny_lm_tables,
    requires=REQUIRES,
    resources=Resources(cpus=1),  # tiny model: a second thread only adds contention
)(tiny_lm)
