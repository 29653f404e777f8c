"""Report figures and tables of the UniPercept experiments (every seed drawn, spec §5).

Kept apart from ``experiments.py`` so that module stays short; importing this module is light
(matplotlib is imported inside the functions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import Table

__all__ = [
    "dapt_plot",
    "joint_plot",
    "main_plot",
    "main_tables",
    "reward_model_plot",
    "reward_plot",
    "reward_tables",
]


def main_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note, stack

    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels, keys = [], []
    for domain in config.domains:
        d = domain.lower()
        labels += [f"{domain} DAPT", f"{domain} +GRPO"]
        keys += [f"dapt_{d}_srcc", f"{d}_srcc"]
    labels.append("IQA specialist")
    keys.append("specialist_iqa_srcc")
    values = np.stack([stack(metrics, k) for k in keys], axis=1)  # (seeds, bars)
    bars_with_seeds(ax, labels, values, color="tab:blue")
    ax.set_ylabel("test SRCC")
    ax.set_title(f"E1: VR SRCC by stage ({seeds_note(len(metrics))})")
    ax.tick_params(axis="x", labelrotation=30)
    fig.tight_layout()
    fig2, ax2 = plt.subplots(figsize=(6, 3.5))
    reward = stack(metrics, "grpo_reward")
    mean_band(ax2, np.arange(1, reward.shape[1] + 1), reward, label="mean reward (AGSR + VQA)")
    ax2.set_xlabel("GRPO step")
    ax2.set_ylabel("reward")
    ax2.set_title(f"E1: GRPO training reward ({seeds_note(len(metrics))})")
    legend_outside(ax2)
    fig2.tight_layout()
    return {"vr_srcc": fig, "grpo_reward": fig2}


def main_tables(metrics: list[dict[str, Any]], config: Any) -> list[Table]:
    def cell(key: str) -> str:
        values = [m[key] for m in metrics if key in m]
        return f"{np.mean(values):.3f} ± {np.std(values):.3f}" if values else "—"

    rows = [
        ["IQA-VR SRCC", "0.940 (KonIQ-10K)", cell("dapt_iqa_srcc"), cell("iqa_srcc")],
        ["IQA-VR PLCC", "0.949 (KonIQ-10K)", cell("dapt_iqa_plcc"), cell("iqa_plcc")],
        ["ISTA-VR SRCC", "0.778 (ISTA-10K)", cell("dapt_ista_srcc"), cell("ista_srcc")],
        ["ISTA-VR PLCC", "0.767 (ISTA-10K)", cell("dapt_ista_plcc"), cell("ista_plcc")],
        ["IQA specialist SRCC", "0.767 (Q-Insight, IQA avg)", "—", cell("specialist_iqa_srcc")],
        ["VQA mean accuracy", "80.62 %", cell("dapt_vqa_mean"), cell("vqa_mean")],
    ]
    title = "E1: the paper's figures (8B MLLM, real data) beside ours (TinyPercept, PerceptToy)"
    columns = ["metric", "paper", "ours: DAPT only", "ours: DAPT -> GRPO-AGSR"]
    note = "Not comparable in scale: the paper's are human-rated benchmarks."
    return [Table(title, columns, rows, note=note)]


def reward_tables(metrics: list[dict[str, Any]], config: Any) -> list[Table]:
    rows = []
    for i, m in enumerate(metrics):
        for start in ("short", "full"):
            rows.append(
                [
                    i,
                    start,
                    *(
                        f"{m[f'{start}_{arm}_{d}']:.3f}"
                        for arm in ("dapt", "agsr", "threshold")
                        for d in ("iqa", "ista")
                    ),
                ]
            )
    columns = [
        "seed",
        "start",
        "DAPT IQA",
        "DAPT ISTA",
        "AGSR IQA",
        "AGSR ISTA",
        "thr IQA",
        "thr ISTA",
    ]
    return [
        Table(
            "E2: test SRCC per seed and starting checkpoint",
            columns,
            rows,
            note="paper (ArtiMuse | KonIQ | ISTA-10K): AGSR 0.746 | 0.940 | 0.778, "
            "threshold 0.604 | 0.882 | 0.303",
        )
    ]


def reward_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, legend_outside, seeds_note, stack

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    labels = ["IQA", "ISTA"]
    for ax, start in zip(axes, ("short", "full"), strict=True):
        for j, arm in enumerate(("dapt", "agsr", "threshold")):
            values = np.stack(
                [stack(metrics, f"{start}_{arm}_{d}") for d in ("iqa", "ista")], axis=1
            )
            bars_with_seeds(ax, labels, values, offset=(j - 1) * 0.27, width=0.27, label=arm)
        ax.set_xticks(np.arange(2), labels)
        ax.set_title(f"E2: from the {start} DAPT")
    axes[0].set_ylabel("test SRCC")
    fig.suptitle(f"E2: AGSR vs threshold reward ({seeds_note(len(metrics))})")
    legend_outside(axes[1])
    fig.tight_layout()
    return {"reward_ablation": fig}


def dapt_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, ax = plt.subplots(figsize=(6, 3.5))
    keys = [
        "dapt_iqa_srcc",
        "full_iqa_srcc",
        "scratch_iqa_srcc",
        "dapt_ista_srcc",
        "full_ista_srcc",
        "scratch_ista_srcc",
    ]
    labels = ["IQA DAPT", "IQA DAPT+RL", "IQA RL only", "ISTA DAPT", "ISTA DAPT+RL", "ISTA RL only"]
    bars_with_seeds(
        ax, labels, np.stack([stack(metrics, k) for k in keys], axis=1), color="tab:green"
    )
    ax.set_ylabel("test SRCC")
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_title(f"E3: DAPT ablation ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"dapt_ablation": fig}


def joint_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, ax = plt.subplots(figsize=(6, 3.5))
    keys = ["joint_cross", *(f"single_{d.lower()}_cross" for d in config.domains)]
    labels = ["joint", *(f"{d} only" for d in config.domains)]
    bars_with_seeds(
        ax, labels, np.stack([stack(metrics, k) for k in keys], axis=1), color="tab:purple"
    )
    ax.set_ylabel("mean over domains of (SRCC + PLCC) / 2")
    ax.set_title(f"E4: joint vs single-domain training ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"joint": fig}


def reward_model_plot(metrics: list[dict[str, Any]], config: Any) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, domain in zip(axes, ("iqa", "ista"), strict=True):
        truth, reward = (
            stack(metrics, f"{domain}_truth_curve"),
            stack(metrics, f"{domain}_reward_curve"),
        )
        steps = np.arange(1, truth.shape[1] + 1)
        mean_band(ax, steps, truth, label="true score")
        mean_band(ax, steps, 100 * reward, label="reward x 100")
        ax.set_xlabel("generator GRPO step")
        ax.set_title(f"E5: {domain.upper()}-rewarded generator")
        legend_outside(ax)
    fig.suptitle(f"E5: TinyPercept as a reward model ({seeds_note(len(metrics))})")
    fig.tight_layout()
    return {"reward_model": fig}
