"""``cpo.tiny_lm`` (spec §5.2): a tiny causal LM whose SFT reference prefers the wrong answer.

A small transformer is SFT-trained from scratch on an arithmetic task where some operation types
answer with a misread operand; DPO and CPO then train copies of it on correct-vs-misread pairs.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, ProgressBar, RunContext, Table, register
from icml26.cpo.experiments.common import PAPER, RESOURCES, check_config, mean_sd


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

    def __post_init__(self) -> None:
        check_config(
            self,
            {"n_numbers": (3, 1000), "n_types": (1, 1000), "n_violated": (0, 1000),
             "d_model": (2, 4096), "n_layers": (1, 64), "n_heads": (1, 64), "sft_steps": (1, 10**6),
             "sft_batch": (1, 2**16), "steps": (1, 10**6), "batch_size": (1, 2**16)},
            {"wrong_frac": (0.0, 1.0), "label_flip": (0.0, 0.5), "sft_lr": (0.0, 10.0, "right"),
             "lr": (0.0, 10.0, "right"), "beta": (0.0, 1e3, "right"), "gamma": (-1e3, 1e3),
             "tau": (0.0, 1e3, "right"), "easy_gamma": (0.0, 1e3, "right")},
            {"methods": ("dpo", "smooth", "easy", "clip")},
        )  # fmt: skip
        if "dpo" not in self.methods or "smooth" not in self.methods:
            raise ValueError(
                f"TinyLMConfig: methods must include 'dpo' and 'smooth' (the claims "
                f"compare them); got {self.methods}."
            )


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
# The paper has no LM experiment at this scale: every bar is the spec's (§5.2, 3 seeds). Each
# seed trains DPO and CPO from the same SFT reference on the same pairs, so every comparison is
# paired within a seed and judged over the 3 seeds.
TINY_LM_CLAIMS = (
    Claim("G1", "Premise: the SFT reference prefers the misread answer on violated types "
          "(acc_viol ≤ 0.25), so (A) fails there", "ref_acc_viol", "<=", 0.25,
          "our bar (80% wrong SFT corpus)", "spec §5.2", source="none", kind="gate"),
    Claim("G2", "The SFT reference is competent on the other types (greedy exact match ≥ 0.9)",
          "ref_em_nonviol", ">=", 0.9, "our bar", "spec §5.2", source="none", kind="gate"),
    Claim("L1", "Violated types: CPO greedy exact match ≥ DPO + 0.15", "cpo_minus_dpo_em_viol",
          ">=", 0.15, "provable alignment (qualitative)", "spec §5.2", source="spec",
          control="DPO in place of CPO (difference 0)", control_value=0.0),
    Claim("L2", "frac_in_U(CPO) ≤ 0.5 · frac_in_U(DPO), by crossing over (CPO acc_viol > ½): "
          "max(U_CPO − ½ U_DPO, ½ − acc_viol_CPO) ≤ 0", "cpo_leaves_U", "<=", 0.0,
          "CPO leaves U (qualitative)", "spec §5.2", source="spec",
          control="DPO in place of CPO: 0.145 in the 2026-12-07 quick run (per seed 0.070, "
          "0.213, 0.154); the SFT reference: U empty but ½ − 0.029 = 0.47", control_value=0.145),
    Claim("L3", "No-harm guard (DPO itself passes it, so it is no reproduction): other types, "
          "CPO greedy exact match ≥ DPO − 0.03", "cpo_minus_dpo_em_nonviol", ">=", -0.03, "—",
          "spec §5.2", source="spec", kind="sanity"),
)  # fmt: skip


def comparisons(dpo: dict[str, float], cpo: dict[str, float]) -> dict[str, float]:
    """The claims' metrics from the DPO arm's and the CPO arm's held-out metrics.

    Swapping an arm for its control (DPO for CPO, or the SFT reference) gives the claims'
    control values; ``tests/cpo`` checks that no claim passes there.
    """
    return {
        "cpo_minus_dpo_em_viol": cpo["em_viol"] - dpo["em_viol"],
        "cpo_leaves_U": max(cpo["frac_in_U"] - 0.5 * dpo["frac_in_U"], 0.5 - cpo["acc_viol"]),
        "cpo_minus_dpo_em_nonviol": cpo["em_nonviol"] - dpo["em_nonviol"],
    }


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
    from icml26.cpo import make_arith_preference_task, tiny_lm_metrics, train_tiny_lm
    from icml26.cpo.standins import sft_reference, shipped_reference

    c = config
    # the quick seeds' SFT references are shipped (icml26.cpo.standins): loaded when this
    # task's seed and SFT settings match, else trained here exactly as they were
    shipped = shipped_reference(c, ctx.seed)
    if shipped is None:
        task, reference, sft = sft_reference(c, ctx.seed)
        sft_final_loss = sft[-1]
    else:
        reference, sft_final_loss = shipped
        task = make_arith_preference_task(c.n_numbers, c.n_types, c.n_violated, c.wrong_frac,
                                          c.label_flip, seed=ctx.numpy_generator())  # fmt: skip
    # preference training draws from `seed + 1`: the pre-v2 numbers
    bar.advance()
    reference.requires_grad_(False)
    kwargs = {"dpo": {}, "smooth": {"gamma": c.gamma, "tau": c.tau, "alpha": 1.0},
              "easy": {"gamma": c.easy_gamma}, "clip": {}}  # fmt: skip
    out: dict[str, Any] = {
        "sft_final_loss": sft_final_loss,
        "sft_shipped": float(shipped is not None),
    }
    out |= {f"ref_{k}": v for k, v in tiny_lm_metrics(reference, reference, task).items()}
    runs = {}
    for method in c.methods:
        policy = copy.deepcopy(reference).requires_grad_(True)
        run = train_tiny_lm(policy, reference, task, method, c.steps, c.batch_size, c.lr,
                            c.beta, seed=ctx.seed + 1, **kwargs[method])  # fmt: skip
        name = "cpo" if method == "smooth" else method
        runs[name] = run["metrics"]
        out |= {f"{name}_{k}": v for k, v in run["metrics"].items()}
        bar.advance()
    out |= comparisons(runs["dpo"], runs["cpo"])
    return out


def tiny_lm_tables(metrics: list[dict[str, Any]], config: TinyLMConfig) -> list[Table]:
    """Held-out metrics per method (mean ± sd over seeds), the SFT reference first."""
    names = [n for n in ("ref", "dpo", "cpo", "easy", "clip") if f"{n}_em_viol" in metrics[0]]
    rows = [
        [name, *(mean_sd([m.get(f"{name}_{k}", math.nan) for m in metrics])
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
    resources=RESOURCES,
)(tiny_lm)
