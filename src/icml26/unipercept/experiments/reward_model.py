"""E5 ``unipercept.reward_model``: TinyPercept's ratings as the GRPO reward of a small generator.

A TinyPercept trained by the E1 pipeline rates the images of a knob generator
(:func:`~icml26.unipercept.train_knob_policy`); the generator's images have a ground truth by
construction, so the run shows whether raising the reward raises the truth.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.unipercept.experiments.common import (
    PAPER,
    RESOURCES,
    MainConfig,
    dapt,
    domain_sets,
    grpo,
    new_model,
    smoke_sizes,
)


@dataclass(frozen=True)
class RewardModelConfig(MainConfig):
    generator_steps: int = 200  # spec E5: 200 GRPO steps
    generator_queries: int = 4  # groups per step
    generator_lr: float = 0.05
    iqa_init: tuple[float, ...] = (0.0, 0.0, 0.0)  # severities sigmoid(0) = 0.5: g about 22
    ista_init: tuple[float, ...] = (-1.5, -1.5)  # about 1-2 weak-texture objects


REWARD_MODEL_DEFAULT = RewardModelConfig()
REWARD_MODEL_PRESETS = {
    "smoke": replace(REWARD_MODEL_DEFAULT, **smoke_sizes(), generator_steps=4),
    "quick": replace(REWARD_MODEL_DEFAULT, generator_steps=100),  # half the steps: 2-minute budget
    "full": replace(REWARD_MODEL_DEFAULT, size=48, n_train=3300, dapt_epochs=5, grpo_steps=300),
}
REWARD_MODEL_CLAIMS = (
    Claim(
        "G1",
        "Full target (E5): the IQA-rewarded generator raises the true quality by >= 15 points",
        "iqa_true_gain",
        ">=",
        15.0,
        "IQA 73.59 -> 76.87 (FLUX + IQA reward)",
        "spec §5 E5",
        source="spec",
    ),
    Claim(
        "G2",
        "Full target (E5): the ISTA-rewarded generator raises the true ISTA score by >= 20 %",
        "ista_true_rel_gain",
        ">=",
        0.2,
        "ISTA 46.64 -> 59.61 (+28 %)",
        "spec §5 E5",
        source="spec",
    ),
    Claim(
        "G3",
        "Full target (E5): Spearman(reward, true quality) >= 0.8 on generated images",
        "iqa_reward_truth_spearman",
        ">=",
        0.8,
        "no reward hacking",
        "spec §5 E5",
        source="spec",
    ),
    Claim(
        "G4",
        "Full target (E5): Spearman(reward, true ISTA score) >= 0.8 on generated images",
        "ista_reward_truth_spearman",
        ">=",
        0.8,
        "no reward hacking",
        "spec §5 E5",
        source="spec",
    ),
    Claim(
        "G5",
        "The perceptual reward raises the generator's true quality (gain > 0)",
        "iqa_true_gain",
        ">",
        0.0,
        "IQA 73.59 -> 76.87",
        "reward-model table (FLUX.1-dev)",
        source="paper",
    ),
)


def reward_model_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, domain in zip(axes, ("iqa", "ista"), strict=True):
        truth = stack(metrics, f"{domain}_truth_curve")
        reward = stack(metrics, f"{domain}_reward_curve")
        steps = np.arange(1, truth.shape[1] + 1)
        mean_band(ax, steps, truth, label="true score")
        mean_band(ax, steps, 100 * reward, label="reward x 100")
        ax.set_xlabel("generator GRPO step")
        ax.set_title(f"E5: {domain.upper()}-rewarded generator")
        legend_outside(ax)
    fig.suptitle(f"E5: TinyPercept as a reward model ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"reward_model": fig}


def _generator_metrics(domain: str, reward: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """Truth at the start and end (first and last tenth of the steps), gain, reward-truth rho."""
    from scipy.stats import spearmanr

    window = max(1, len(truth) // 10)
    start, end = truth[:window].mean(), truth[-window:].mean()
    rho = spearmanr(reward.ravel(), truth.ravel()).statistic
    return {
        f"{domain}_true_start": float(start),
        f"{domain}_true_end": float(end),
        f"{domain}_true_gain": float(end - start),
        f"{domain}_true_rel_gain": float((end - start) / max(start, 1e-9)),
        f"{domain}_reward_truth_spearman": float(0.0 if np.isnan(rho) else rho),
        f"{domain}_truth_curve": truth.mean(axis=1).tolist(),
        f"{domain}_reward_curve": reward.mean(axis=1).tolist(),
    }


@register(
    name="unipercept.reward_model",
    title="E5: TinyPercept's ratings as the GRPO reward of a small generator",
    paper=PAPER,
    claims=REWARD_MODEL_CLAIMS,
    presets=REWARD_MODEL_PRESETS,
    plot=reward_model_plot,
    seeds=1,
    resources=RESOURCES,
)
def reward_model_experiment(config: RewardModelConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.unipercept import (
        GaussianKnobPolicy,
        PerceptualReward,
        clean_crops,
        train_knob_policy,
    )

    train_vr, train_vqa = domain_sets(config, ctx, "train", config.n_train)
    train = train_vr + train_vqa
    rng = ctx.numpy_generator("render")  # one stream: the crops, then both generators' renders
    clean = clean_crops(64, config.size, "test", rng)
    model = new_model(config, ctx)
    dapt(model, train, config.dapt_epochs, config, ctx, "dapt")
    grpo(model, copy.deepcopy(model), train, "agsr", config, ctx, "grpo")
    metrics: dict[str, Any] = {}
    for domain, init in (("iqa", config.iqa_init), ("ista", config.ista_init)):
        policy = GaussianKnobPolicy(
            len(init), init_mean=init, seed=ctx.torch_generator(f"gen-{domain}")
        )
        with ctx.progress(config.generator_steps, f"{domain.upper()} generator") as bar:
            history = train_knob_policy(
                policy,
                PerceptualReward(model, weights={domain: 1.0}),
                domain,
                steps=config.generator_steps,
                queries=config.generator_queries,
                n=config.n_group,
                lr=config.generator_lr,
                crops=clean,
                size=config.size,
                split="test",
                seed=rng,
                progress=bar,
            )
        metrics.update(_generator_metrics(domain, history.reward, history.truth))
    return metrics
