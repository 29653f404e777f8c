"""What the AmbiguousReach2D experiments share: config, presets, the policy, the evaluation loop,
the competence gate and the figures and tables.

``scale.ambiguous_reach`` (S1-S3) and ``scale.ablations`` run the same loop (:func:`run_reach`)
with other decoders. The quick presets evaluate the shipped policy ``reach_quick``
(:mod:`icml26.scale.standins`). torch, matplotlib and the method are imported inside the
functions, so importing this module stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table

PAPER = (
    "Choi, Ahn, Lee, Kang, Cho & Choi, SCALE: Self-uncertainty Conditioned Adaptive Looking and "
    "Execution for Vision-Language-Action Models, ICML 2026 (arXiv:2602.04208)"
)
SPLIT_NAMES = ("id", "ood_hue", "ood_noise")
FIXED = ("temperature", "top_k", "top_p")
COMPARISON = ("greedy", *FIXED, "scale", "scale_action_only", "scale_vision_only")
ABLATIONS = (
    "greedy",
    "scale",
    "scale_action_only",
    "scale_vision_only",
    "scale_p_max",
    "scale_entropy",
    "scale_self_certainty",
    "scale_gini",
    "scale_instantaneous",
)


@dataclass(frozen=True)
class ReachConfig:
    train_episodes: int = 3000
    n_walls: tuple[int, int] = (0, 2)
    train_steps: int = 4000
    batch_size: int = 64
    lr: float = 1e-3
    # TinyARVLA sizes (spec §5: ViT d=64 x3, decoder d=96 x3, 4 heads)
    d_vision: int = 64
    d_model: int = 96
    layers: int = 3
    mlp_ratio: int = 4
    episodes: int = 300
    splits: tuple[str, ...] = SPLIT_NAMES
    decoders: tuple[str, ...] = COMPARISON
    expert_episodes: int = 100
    # a shipped or saved policy (icml26.scale.standins) to evaluate instead of training one
    policy: str = ""


REACH_DEFAULT = ReachConfig()
REACH_PRESETS = {
    # seconds: a 2-layer model barely trained; the claims need not hold
    "smoke": replace(
        REACH_DEFAULT, train_episodes=20, n_walls=(1, 1), train_steps=5, batch_size=8,
        d_vision=16, d_model=16, layers=1, mlp_ratio=2, episodes=4, splits=("id",),
        expert_episodes=4,
    ),
    # spec §5: ID only, 100 episodes, 1 wall. The policy is the shipped reach_quick (3000
    # demonstrations, 6000 BC steps of a smaller model than the spec's; 6 CPU-minutes to
    # retrain with `icml26 tool scale train-standin reach_quick`), so that the quick run only
    # evaluates the decoders
    "quick": replace(
        REACH_DEFAULT, train_episodes=3000, n_walls=(1, 1), train_steps=6000, d_vision=32,
        d_model=48, layers=2, mlp_ratio=2, episodes=100, splits=("id",), expert_episodes=50,
        policy="reach_quick",
    ),
    "full": REACH_DEFAULT,
}  # fmt: skip


def points(x: float) -> float:
    return 100.0 * x


def policy_for(config: ReachConfig, ctx: RunContext) -> tuple[Any, float]:
    """Demonstrations on the ID split, then behaviour cloning (each seed its own model).

    With ``config.policy`` set, that saved policy is loaded instead (the same for every seed).
    Returns the model and its final BC loss (mean of the last 20 steps).
    """
    from icml26.scale import (
        AmbiguousReach2DEnv,
        TinyARVLA,
        collect_demonstrations,
        load_policy,
        train_bc,
    )

    if config.policy:
        model, meta = load_policy(config.policy)
        return model, float(meta["metrics"]["final_bc_loss"])
    env = AmbiguousReach2DEnv("id", n_walls=config.n_walls)
    demos = collect_demonstrations(env, config.train_episodes, seed=ctx.numpy_generator("demos"))
    model = TinyARVLA(
        d_vision=config.d_vision, d_model=config.d_model, vision_layers=config.layers,
        layers=config.layers, mlp_ratio=config.mlp_ratio, seed=ctx.torch_generator("init"),
    )  # fmt: skip
    with ctx.progress(config.train_steps, "behaviour cloning") as bar:
        losses = train_bc(
            model, demos, steps=config.train_steps, batch_size=config.batch_size, lr=config.lr,
            seed=ctx.torch_generator("batches"), progress=bar,
        )  # fmt: skip
    return model, float(np.mean(losses[-20:]))


def run_reach(config: ReachConfig, ctx: RunContext) -> dict[str, Any]:
    """Train one policy, evaluate every decoder on every split with common episodes."""
    from icml26.scale import (
        AmbiguousReach2DEnv,
        TinyVLAAdapter,
        evaluate,
        expert_success_rate,
        make_decoder,
    )

    model, final_loss = policy_for(config, ctx)
    adapter = TinyVLAAdapter(model)
    eval_seed = int(ctx.numpy_generator("episodes").integers(2**30))
    out: dict[str, Any] = {"final_bc_loss": final_loss}
    passes = {}
    with ctx.progress(len(config.splits) * len(config.decoders), "evaluations") as bar:
        for split in config.splits:
            env = AmbiguousReach2DEnv(split, n_walls=config.n_walls)
            for name in config.decoders:
                decoder = make_decoder(name, seed=ctx.torch_generator(f"decode/{name}/{split}"))
                result = evaluate(decoder, env, config.episodes, [eval_seed], adapter)
                out[f"sr_{split}_{name}"] = result.mean
                passes[name] = result.forward_passes_per_step
                if name == "scale":
                    out[f"gamma_trace_{split}"] = result.gamma_trace
                    out[f"tau_trace_{split}"] = result.tau_trace
                bar.advance()
            expert_env = AmbiguousReach2DEnv(split, n_walls=config.n_walls)
            out[f"expert_{split}"] = expert_success_rate(
                expert_env, config.expert_episodes, eval_seed
            )
    for name in config.decoders:
        out[f"sr_mean_{name}"] = float(np.mean([out[f"sr_{s}_{name}"] for s in config.splits]))
    out["expert_min"] = min(out[f"expert_{s}"] for s in config.splits)
    if "greedy" in passes and "scale" in passes:
        out["forward_pass_gap"] = abs(passes["scale"] - passes["greedy"])
    return out


def gap(out: dict[str, Any], a: str, others: tuple[str, ...], splits, how=max) -> float:
    """a minus how(others) on the split mean, in points (NaN if a decoder was not run)."""
    if any(f"sr_mean_{n}" not in out for n in (a, *others)):
        return float("nan")
    return points(out[f"sr_mean_{a}"] - how(out[f"sr_mean_{n}"] for n in others))


COMPETENCE = Claim(
    "B1",
    "Precondition: the behaviour-cloned policy is competent (greedy ID success >= 30 %); "
    "without it the decoder comparisons are vacuous",
    "sr_id_greedy",
    ">=",
    0.3,
    "OpenVLA greedy 75.7 % (LIBERO avg.)",
    "paper Table 1",
    source="none",
)
LABELS = {
    "greedy": "greedy",
    "temperature": "temp. 1.0",
    "top_k": "top-k 40",
    "top_p": "top-p 0.9",
    "scale": "SCALE",
    "scale_action_only": "action only",
    "scale_vision_only": "vision only",
    "scale_p_max": "p_max τ",
    "scale_entropy": "entropy τ",
    "scale_self_certainty": "self-cert. τ",
    "scale_gini": "Gini τ",
    "scale_instantaneous": "instant. u",
}


def sr_figure(metrics, config, title: str):
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, seeds_note, stack

    labels = [LABELS[n] for n in config.decoders]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.8 / len(config.splits)
    for j, split in enumerate(config.splits):
        values = np.stack([stack(metrics, f"sr_{split}_{n}") for n in config.decoders], axis=1)
        offset = (j - (len(config.splits) - 1) / 2) * width
        bars_with_seeds(ax, labels, 100 * values, offset=offset, width=width, label=split)
    ax.set_xticks(np.arange(len(labels)), labels, rotation=20)
    ax.set_ylabel("success rate (%)")
    ax.set_title(f"{title} ({seeds_note(len(metrics))})")
    legend_outside(ax)
    fig.tight_layout()
    return fig


def trace_figure(metrics, config, title: str):
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note

    split = config.splits[0]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for ax, key, ylabel in ((axes[0], "gamma_trace", "mean γ"), (axes[1], "tau_trace", "mean τ")):
        traces = [list(m[f"{key}_{split}"]) for m in metrics]
        length = max(len(t) for t in traces)
        values = np.array([t + [np.nan] * (length - len(t)) for t in traces], dtype=float)
        mean_band(ax, np.arange(1, length + 1), values, label=f"SCALE, {split}")
        ax.set_xlabel("control step t")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {ylabel} ({seeds_note(len(metrics))})")
    legend_outside(axes[1])
    fig.tight_layout()
    return fig


def per_seed(metrics, key: str, scale: float = 100.0) -> str:
    values = [scale * float(m[key]) for m in metrics]
    mean = f"{np.mean(values):.1f}"
    return mean if len(values) == 1 else f"{mean} ({', '.join(f'{v:.1f}' for v in values)})"


def reach_tables(metrics: list[dict[str, Any]], config: ReachConfig) -> list[Table]:
    rows = [
        [LABELS[n]] + [per_seed(metrics, f"sr_{s}_{n}") for s in config.splits]
        + [per_seed(metrics, f"sr_mean_{n}")]
        for n in config.decoders
    ]  # fmt: skip
    return [
        Table(
            "Success rate (%) per split and decoder: seed mean (per-seed values)",
            ["decoder", *config.splits, "mean"],
            rows,
            note="paper (OpenVLA, LIBERO avg.): greedy 75.7, best fixed 77.2, SCALE 81.5",
        )
    ]
