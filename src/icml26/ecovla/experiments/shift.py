"""ecovla.shift: EAP against static Wanda (two calibrations), fixed-interval recomputation,
alpha = 0 and the oracle at 40 % under mid-episode scene shifts, on the shipped TinyVLA policies
(spec §5 C1/C3; secondary to ``ecovla.indist``, as SIMPLER's variant aggregation is to LIBERO in
the paper).

Every method plays the same shift-split episodes in lock-step batches with per-row channel
masks; each comparison is a list of per-episode paired differences over policies x episodes
(``over="items"``). Gate G1s: the dense policy succeeds on >= 60 % of the shift episodes. The
trigger's rates at p = 5 and p = 80 (C3d-f) are properties of the quantile rule (sanity).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icml26.core import RunContext, Table, register
from icml26.ecovla.experiments.common import (
    PAPER,
    PRESETS,
    RESOURCES,
    EvalConfig,
    calibration_sets,
    episode_trigger_rates,
    paired,
    pct,
    play,
    policy_models,
    success,
    trigger_log,
)
from icml26.ecovla.experiments.shift_claims import SHIFT_CLAIMS

METHODS = ("dense", "static_initial", "static_mixed", "eap", "eap_alpha0", "oracle", "fixed")


def _mean(metrics: list[dict[str, Any]], key: str) -> float:
    values = [np.mean(m[key]) for m in metrics if np.size(m.get(key, math.nan))]
    return float(np.nanmean(values)) if values else math.nan


def shift_tables(metrics: list[dict[str, Any]], config: EvalConfig) -> list[Table]:
    tag = pct(config.ratios[-1])
    rows = [[m, f"{_mean(metrics, f'sr_{m}'):.1f}"] for m in (*METHODS, "eap_p_high")]
    rows.append(
        [
            "EAP trigger rate (p low / high)",
            f"{_mean(metrics, 'trigger_rate_low_p'):.3f} / "
            f"{_mean(metrics, 'trigger_rate_high_p'):.3f}",
        ]
    )
    return [
        Table(
            f"Shift split, {tag} %: success rate (%) by method, pooled over the shipped policies",
            ["method", "SR (%)"],
            rows,
            note=f"{len(config.policies) * config.episodes} paired episodes per method; fixed "
            "interval = EAP's recompute count",
        )
    ]


@register(
    name="ecovla.shift",
    title="EAP vs static Wanda, fixed interval, alpha = 0 and the oracle at 40 % under "
    "mid-episode scene shifts, on three shipped policies",
    paper=PAPER,
    claims=SHIFT_CLAIMS,
    presets=PRESETS,
    tables=shift_tables,
    seeds=1,  # one task evaluates every shipped policy (lists over policies x episodes)
    resources=RESOURCES,
)
def run(config: EvalConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.ecovla import DensePolicy, EcoVLAPruner, FixedPatternPolicy, calibration_energy

    initial, mixed = calibration_sets(config)
    ratio = config.ratios[-1]
    lists: dict[str, list] = {}
    scalars: dict[str, list] = {}

    def add(key: str, values: Any) -> None:
        lists.setdefault(key, []).extend(np.asarray(values, dtype=np.float64).ravel().tolist())

    models = policy_models(config)
    with ctx.progress(len(models), "policies evaluated") as bar:
        for _, model in models:
            # the calibration passes, once per policy and frame set (every pruner and static
            # pattern below calibrates on the same frames)
            energy = calibration_energy(model, initial)

            def eap(p: float, alpha: float, model: Any = model, energy: Any = energy) -> Any:
                return EcoVLAPruner(model, ratio, p, alpha=alpha).calibrate_energy(*energy)

            methods = {
                "dense": DensePolicy(model),
                "static_initial": FixedPatternPolicy(
                    model, model.pattern_from_energy(*energy, ratio)
                ),
                "static_mixed": FixedPatternPolicy(
                    model, model.pattern_from_energy(*calibration_energy(model, mixed), ratio)
                ),
                "eap": eap(config.p, config.alpha),
                "eap_p_high": eap(config.p_high, config.alpha),
                "eap_alpha0": eap(config.p, 0.0),
                "oracle": EcoVLAPruner(
                    model, ratio, 0.0, alpha=0.0, schedule="oracle"
                ).calibrate_energy(*energy),
            }
            played = play(model, methods, "shift", config)
            log = trigger_log(played["eap:rows"])
            # the same number of recomputations: one every decisions / triggers steps
            k = max(1, round(log.decisions / max(log.triggers, 1)))
            fixed = EcoVLAPruner(
                model, ratio, 0.0, alpha=config.alpha, schedule="fixed", interval=k
            ).calibrate_energy(*energy)
            played.update(play(model, {"fixed": fixed}, "shift", config))
            sr = {m: success(played[m]) for m in (*METHODS, "eap_p_high")}
            add("dense_success", sr["dense"])
            for name in ("static_initial", "static_mixed", "fixed", "eap_alpha0"):
                add(f"eap_minus_{name}", paired(sr["eap"], sr[name]))
            add("oracle_minus_static_initial", paired(sr["oracle"], sr["static_initial"]))
            low = episode_trigger_rates(log)
            high = episode_trigger_rates(trigger_log(played["eap_p_high:rows"]))
            both = ~(np.isnan(low) | np.isnan(high))
            add("trigger_rate_step", high[both] - low[both])
            add("trigger_rate_low_p", low[~np.isnan(low)])
            add("trigger_rate_high_p", high[~np.isnan(high)])
            for key, values in sr.items():
                scalars.setdefault(f"sr_{key}", []).append(float(values.mean()))
            scalars.setdefault("fixed_interval", []).append(float(k))
            bar.advance()
    out: dict[str, Any] = dict(lists)
    out.update({key: float(np.mean(values)) for key, values in scalars.items()})
    return out
