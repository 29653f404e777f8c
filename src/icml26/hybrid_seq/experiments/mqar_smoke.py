"""The smoke learning run: a trained hybrid ``SA`` (d=32) against a two-layer RoPE Transformer
``AA`` (d=32, at most the hybrid's parameters) on small MQAR (``hybrid_seq.mqar_smoke``).

The control used to be a one-layer Transformer, which cannot form an induction head at all
(Sanford et al. 2024): the hybrid beat it by construction of the comparison, not by its
mechanism (issue 46). Two attention layers can solve MQAR, so M2 now asks whether the hybrid
is better at equal size and budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, register
from icml26.hybrid_seq.experiments.common import (
    PAPER,
    TRAIN_RESOURCES,
    WHERE_ISSUE46,
    WHERE_SPEC,
    FitSpec,
    fit,
    validate_config,
)


@dataclass(frozen=True)
class MQARSmokeConfig:
    L: int = 32
    n_kv: int = 4
    n_keys: int = 32
    n_values: int = 32
    n_fillers: int = 16
    hybrid_pattern: str = "SA"
    hybrid_d: int = 32
    transformer_pattern: str = "AA"  # two layers: an induction head is possible (issue 46)
    transformer_d: int = 32
    steps: int = 600
    lrs: tuple[float, ...] = (3e-3,)
    batch_size: int = 64
    warmup: int = 60
    n_val: int = 250
    n_test: int = 2000

    def __post_init__(self) -> None:
        validate_config(self)


NAME = "hybrid_seq.mqar_smoke"
MQAR_SMOKE = MQARSmokeConfig()
MQAR_SMOKE_PRESETS = {
    "smoke": replace(MQAR_SMOKE, steps=4, batch_size=8, warmup=1, n_val=16, n_test=32),
    "quick": MQAR_SMOKE,
    "full": replace(MQAR_SMOKE, lrs=(1e-3, 3e-3)),  # the spec's lr search
}


@register(
    name=NAME,
    title="Smoke learning run: hybrid SA (d=32) vs two-layer RoPE Transformer AA (d=32) on MQAR",
    paper=PAPER,
    claims=(
        Claim(
            "GM",
            "Gate: the control Transformer has at most the hybrid's parameters (fair comparison)",
            "transformer_params_ratio",
            "<=",
            1.0,
            "M2 against the two-layer Transformer at <= 1× parameters",
            WHERE_ISSUE46,
            source="spec",
            kind="gate",
        ),
        Claim(
            "M1",
            "Hybrid SA at d=32 reaches token accuracy >= 0.80 on MQAR(L=32, n_kv=4)",
            "hybrid_token_acc",
            ">=",
            0.80,
            "learned hybrids solve MQAR",
            WHERE_SPEC,
            source="spec",
            gates=(),
            control="an untrained hybrid (chance: 1 of 32 values)",
            control_value=1 / 32,
        ),
        Claim(
            "M2",
            "Hybrid token accuracy >= two-layer RoPE Transformer's (<= 1× parameters) + 0.20",
            "hybrid_minus_transformer",
            ">=",
            0.20,
            "learned hybrids beat non-hybrids",
            WHERE_ISSUE46,
            source="spec",
            control="the two-layer Transformer in place of the hybrid (difference 0)",
            control_value=0.0,
        ),
    ),
    presets=MQAR_SMOKE_PRESETS,
    seeds=3,  # trained models: a verdict needs >= 3 values (quick loads 3 shipped seeds)
    resources=TRAIN_RESOURCES,
    deterministic_metrics=("*_params", "transformer_params_ratio"),
)
def mqar_smoke(config: MQARSmokeConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.hybrid_seq import count_params, evaluate

    task, specs = fit_specs(config)
    test_seed = ctx.seed_for("test")
    out: dict[str, Any] = {}
    total = 2 * config.steps * len(config.lrs)
    with ctx.progress(total, "training") as bar:
        for name, pattern, d, pos, max_len in specs:
            search = fit(
                task, pattern, d, config, ctx, bar, pos_enc=pos, max_len=max_len, shipped=NAME
            )
            model, lr = search.model, search.lr
            token_acc, seq_acc = evaluate(model, task, n=config.n_test, seed=test_seed)[config.L]
            out[f"{name}_token_acc"] = token_acc
            out[f"{name}_seq_acc"] = seq_acc
            out[f"{name}_params"] = count_params(model)
            out[f"{name}_lr"] = lr
    out["hybrid_minus_transformer"] = out["hybrid_token_acc"] - out["transformer_token_acc"]
    out["transformer_params_ratio"] = out["transformer_params"] / out["hybrid_params"]
    return out


def fit_specs(config: MQARSmokeConfig) -> tuple[Any, list[FitSpec]]:
    """The training task and the models :func:`mqar_smoke` fits (also what its quick stand-in
    holds): ``(task, [(name, pattern, d_model, pos_enc, max_len), ...])``."""
    from icml26.hybrid_seq import MQAR

    task = MQAR(config.L, config.n_kv, config.n_keys, config.n_values, config.n_fillers)
    return task, [
        ("hybrid", config.hybrid_pattern, config.hybrid_d, None, 2048),
        ("transformer", config.transformer_pattern, config.transformer_d, "rope", 2048),
    ]
