"""ecovla.indist: EAP at 25 % and 40 % against dense, static Wanda and random channels, and EAP +
FastV, on the shipped TinyVLA policies in distribution (training textures, new layouts) — the
headline's testbed (issue 42; the paper's LIBERO numbers are in distribution).

Every method plays the same episodes (episode i has the same layout for every method and
policy), in lock-step batches with per-row channel masks; each comparison is a list of
per-episode paired differences over policies x episodes, judged with a bootstrap over those
items (``over="items"``). Gates say whether this testbed can show what pruning keeps: a
competent dense policy in distribution (>= 85 %; the shift split's competence gate is in
``ecovla.shift``), a backbone
that matters (skipping it leaves <= 10 %), no competence cliff (small action noise costs <= 5
points), open-loop redundancy that Wanda finds and chance does not, and keep-sets that depend
on the task phase (the premise of re-estimating them).
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
    openloop_frames,
    paired,
    pct,
    play,
    policy_models,
    relative_errors,
    success,
    trigger_log,
)
from icml26.ecovla.experiments.indist_claims import INDIST_CLAIMS

METHODS = ("dense", "skip", "noisy", "random_40", "static_40", "eap_25", "eap_40", "eap_fastv_25")


def _mean(metrics: list[dict[str, Any]], key: str) -> float:
    values = [np.mean(m[key]) for m in metrics if np.size(m.get(key, math.nan))]
    return float(np.nanmean(values)) if values else math.nan


def indist_tables(metrics: list[dict[str, Any]], config: EvalConfig) -> list[Table]:
    n = len(config.policies) * config.episodes
    rows = [[m, f"{_mean(metrics, f'sr_{m}'):.1f}"] for m in METHODS]
    cost = [
        [
            key,
            f"{_mean(metrics, key):.3f}",
        ]
        for key in (
            "flops_ratio_sparse_40",
            "flops_ratio_with_dense_steps_25",
            "flops_ratio_with_dense_steps_40",
            "fastv_flops_ratio_with_dense_steps_25",
            "trigger_rate_25",
            "trigger_rate_40",
            "kept_heads_25",
            "kept_heads_40",
            "openloop_dense_error",
        )
    ]
    return [
        Table(
            "In distribution: success rate (%) by method, pooled over the shipped policies",
            ["method", "SR (%)"],
            rows,
            note=f"{n} paired episodes per method ({len(config.policies)} policies x "
            f"{config.episodes}); static = Wanda on initial-phase frames",
        ),
        Table(
            "Analytic backbone FLOPs (/ dense), EAP trigger rates, kept head fractions",
            ["metric", "value"],
            cost,
            note="with dense steps = EAP's trigger steps (and t = 0) counted at dense cost",
        ),
    ]


def _phase_jaccard(model: Any, frames: Any, config: EvalConfig, rng: np.random.Generator) -> list:
    """Jaccard of the instantaneous keep-sets (alpha = 0) of a reach frame and a carry frame
    of the same expert episode, at the open-loop ratio; one value per pair."""
    from icml26.ecovla import calibration_energy

    carrying = frames.proprio[:, 2] > 0  # gripper closed: the carry phase
    values = []
    episodes = [
        e for e in np.unique(frames.episode) if len(set(carrying[frames.episode == e])) == 2
    ]
    for e in rng.permutation(episodes)[: config.phase_pairs]:
        rows = np.flatnonzero(frames.episode == e)
        reach = rng.choice(rows[~carrying[rows]])
        carry = rng.choice(rows[carrying[rows]])
        patterns = [
            model.pattern_from_energy(
                *calibration_energy(model, frames.observations([int(r)])), config.openloop_ratio
            )
            for r in (reach, carry)
        ]
        values.append(patterns[0].jaccard(patterns[1]))
    return values


@register(
    name="ecovla.indist",
    title="EAP at 25 % / 40 % vs dense, static Wanda, random channels and EAP + FastV in "
    "distribution on three shipped policies, behind competence, redundancy and premise gates",
    paper=PAPER,
    claims=INDIST_CLAIMS,
    presets=PRESETS,
    tables=indist_tables,
    # one task evaluates every shipped policy (three training seeds): the metrics are lists over
    # policies x episodes; the shipped weights do not depend on the task's seed
    seeds=1,
    resources=RESOURCES,
)
def run(config: EvalConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.ecovla import (
        DensePolicy,
        EcoVLAPruner,
        FixedPatternPolicy,
        NoisyPolicy,
        backbone_flops,
        calibration_energy,
        fastv_sequence_lengths,
        first_action_errors,
        mean_step_flops,
        random_pattern,
    )
    from icml26.ecovla.pruner import SkipBackbonePolicy

    initial, _ = calibration_sets(config)
    frames = openloop_frames(config, "train")
    rng = np.random.default_rng(config.eval_seed + 2)
    lists: dict[str, list] = {}
    scalars: dict[str, list] = {}

    def add(key: str, values: Any) -> None:
        lists.setdefault(key, []).extend(np.asarray(values, dtype=np.float64).ravel().tolist())

    def note(key: str, value: float) -> None:
        scalars.setdefault(key, []).append(float(value))

    models = policy_models(config)
    with ctx.progress(len(models), "policies evaluated") as bar:
        for _, model in models:
            # the dense calibration passes on the initial frames, once per policy: every static
            # pattern and EAP prior below is made from them (FastV's are its own, below)
            energy = calibration_energy(model, initial)
            # open loop (gates): first-action errors on expert frames, frame by frame
            dense_errors = first_action_errors(model, frames)
            note("openloop_dense_error", np.mean(dense_errors))
            r = config.openloop_ratio
            static = first_action_errors(model, frames, model.pattern_from_energy(*energy, r))
            add("openloop_static_ratio_25", relative_errors(static, dense_errors))
            rand = np.mean(
                [
                    first_action_errors(
                        model, frames, random_pattern(model, r, seed=rng.integers(2**31))
                    )
                    for _ in range(config.openloop_random)
                ],
                axis=0,
            )
            add("openloop_random_ratio_25", relative_errors(rand, dense_errors))
            add("phase_jaccard", _phase_jaccard(model, frames, config, rng))

            dense = DensePolicy(model)
            methods: dict[str, Any] = {
                "dense": dense,
                "skip": SkipBackbonePolicy(model),
                "noisy": NoisyPolicy(dense, config.noise, seed=rng.integers(2**31)),
            }
            for ratio in config.ratios:
                tag = pct(ratio)
                pattern = random_pattern(model, ratio, seed=rng.integers(2**31))
                methods[f"random_{tag}"] = FixedPatternPolicy(model, pattern)
                static = model.pattern_from_energy(*energy, ratio)
                methods[f"static_{tag}"] = FixedPatternPolicy(model, static)
                eap = EcoVLAPruner(model, ratio, config.p, alpha=config.alpha)
                methods[f"eap_{tag}"] = eap.calibrate_energy(*energy)
            played = play(model, methods, "train", config)
            fastv_ratio = config.ratios[0]
            model.set_token_pruning(config.token_keep, config.token_layer)
            try:
                eap = EcoVLAPruner(model, fastv_ratio, config.p, alpha=config.alpha)
                fastv = play(model, {"eap_fastv": eap.calibrate(initial)}, "train", config)
            finally:
                model.set_token_pruning(1.0, config.token_layer)

            sr = {key: success(value) for key, value in played.items() if ":" not in key}
            sr[f"eap_fastv_{pct(fastv_ratio)}"] = success(fastv["eap_fastv"])
            add("dense_success", sr["dense"])
            add("skip_success", sr["skip"])
            add("noise_minus_dense", paired(sr["noisy"], sr["dense"]))
            for key, values in sr.items():
                note(f"sr_{key}", values.mean())
            for ratio in config.ratios:
                tag = pct(ratio)
                add(f"eap_minus_dense_{tag}", paired(sr[f"eap_{tag}"], sr["dense"]))
                add(f"eap_minus_static_{tag}", paired(sr[f"eap_{tag}"], sr[f"static_{tag}"]))
                add(f"eap_minus_random_{tag}", paired(sr[f"eap_{tag}"], sr[f"random_{tag}"]))
            ftag = pct(fastv_ratio)
            add(f"eap_fastv_minus_dense_{ftag}", paired(sr[f"eap_fastv_{ftag}"], sr["dense"]))

            # analytic FLOPs, EAP's dense trigger steps counted; kept head fractions
            c = model.config
            full = [c.n_tokens] * c.n_layers
            dense_flops = backbone_flops(model, None, full)
            for ratio in config.ratios:
                tag = pct(ratio)
                log = trigger_log(played[f"eap_{tag}:rows"])
                p0 = methods[f"eap_{tag}"].initial_pattern_
                note(f"trigger_rate_{tag}", log.trigger_rate)
                note(f"flops_ratio_sparse_{tag}", backbone_flops(model, p0, full) / dense_flops)
                steps = mean_step_flops(model, p0, full, log.records)
                note(f"flops_ratio_with_dense_steps_{tag}", steps / dense_flops)
                note(f"kept_heads_{tag}", len(p0.heads[0]) / c.n_heads)
                note(f"kept_mlp_{tag}", len(p0.mlp[0]) / c.d_ff)
            tokens = fastv_sequence_lengths(
                c.n_tokens, c.n_visual, config.token_keep, config.token_layer, c.n_layers
            )
            log = trigger_log(fastv["eap_fastv:rows"])
            p0 = fastv["eap_fastv:rows"][0].initial_pattern_
            steps = mean_step_flops(model, p0, tokens, log.records)
            note(f"fastv_flops_ratio_with_dense_steps_{ftag}", steps / dense_flops)
            bar.advance()
    out: dict[str, Any] = dict(lists)
    out.update({key: float(np.mean(values)) for key, values in scalars.items()})
    for key in ("flops_ratio_with_dense_steps_25", "fastv_flops_ratio_with_dense_steps_25"):
        out.setdefault(key, math.nan)
    return out
