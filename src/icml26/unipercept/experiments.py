"""Registered reproductions of UniPercept (spec §5) on PerceptToy with TinyPercept.

E1 ``unipercept.main``: DAPT -> GRPO-AGSR, joint domains; VR SRCC on held-out sources, with the
handcrafted Laplacian/noise/blockiness + ridge specialist as the anchor.

The paper's own figures are for an 8B MLLM on human-rated datasets and cannot be measured here;
every threshold is the spec's own small-scale target (``source="spec"``), except M4, the paper's
qualitative claim that UniPercept beats the IQA specialists (``source="paper"``).

Importing this module stays light (``icml26 list``): torch, the method and matplotlib are
imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

REQUIRES = ("skimage", "sklearn", "PIL", "pywt", "safetensors")
# Small convolutions on a shared 2-core machine: one intra-op thread is several times faster
# than two when other processes load the cores (measured 0.15 s vs 1.9 s per DAPT step).
RESOURCES = Resources(cpus=1)
PAPER = (
    "Cao et al., UniPercept: Towards Unified Perceptual-Level Image Understanding across "
    "Aesthetics, Quality, Structure, and Texture, ICML 2026 (arXiv:2512.21675)"
)


@dataclass(frozen=True)
class MainConfig:
    size: int = 32
    domains: tuple[str, ...] = ("IQA", "ISTA")
    n_train: int = 1500  # training images per domain and task (VR, VQA)
    n_test: int = 400  # held-out items per domain and task (test sources only)
    observer_sd: float = 2.0  # MOS noise N(0, 2^2), spec §5
    dapt_epochs: int = 2
    dapt_batch: int = 32
    dapt_lr: float = 1e-3
    label_sigma: float = 0.0  # one-hot score token (spec §2.7 step 3)
    grpo_steps: int = 40
    grpo_batch: int = 32
    grpo_lr: float = 3e-4
    n_group: int = 8
    clip_eps: float = 0.2
    beta: float = 1e-3
    channels: tuple[int, ...] = (16, 32, 64, 128)
    d_model: int = 128


MAIN_DEFAULT = MainConfig()
MAIN_PRESETS = {
    # seconds: a tiny network on tiny sets; the claims are not expected to hold
    "smoke": replace(
        MAIN_DEFAULT,
        size=16,
        n_train=24,
        n_test=12,
        dapt_epochs=1,
        grpo_steps=2,
        grpo_batch=8,
        channels=(4, 4, 8, 8),
        d_model=16,
    ),
    "quick": MAIN_DEFAULT,  # spec §5 quick: 1.5K crops at 32 px, IQA + ISTA, 2 epochs, 40 steps
    # spec §5 full: three domains, ~20K training items at 48 px, 5 DAPT epochs, 300 GRPO steps
    "full": replace(
        MAIN_DEFAULT,
        size=48,
        domains=("IAA", "IQA", "ISTA"),
        n_train=3300,
        dapt_epochs=5,
        grpo_steps=300,
    ),
}
MAIN_CLAIMS = (
    Claim("M1", "Quick target: DAPT -> GRPO-AGSR reaches IQA-VR SRCC >= 0.6 on held-out sources",
          "iqa_srcc", ">=", 0.6, "0.940 KonIQ-10K (8B MLLM)", "spec §5 quick", source="spec"),
    Claim("M2", "Full target (E1): IQA-VR SRCC >= 0.85", "iqa_srcc", ">=", 0.85,
          "0.940 KonIQ-10K (8B MLLM)", "spec §5 E1", source="spec"),
    Claim("M3", "Full target (E1): ISTA-VR SRCC >= 0.80", "ista_srcc", ">=", 0.80,
          "0.778 ISTA-10K (8B MLLM)", "spec §5 E1", source="spec"),
    Claim("M4", "The unified model beats the IQA specialist anchor (SRCC difference > 0)",
          "main_minus_specialist_iqa_srcc", ">", 0.0,
          "IQA avg 0.824 vs Q-Insight 0.767", "VR results table, IQA average", source="paper"),
)  # fmt: skip


def _domain_sets(config: MainConfig, ctx: RunContext, split: str, n: int) -> tuple[list, list]:
    from icml26.unipercept import make_iaa_proxy, make_iqa_vqa, make_iqa_vr, make_ista

    rng = ctx.numpy_generator(f"data-{split}")
    vr: list = []
    vqa: list = []
    for domain in config.domains:
        if domain == "IQA":
            vr += make_iqa_vr(n, rng, config.size, split, config.observer_sd)
            vqa += make_iqa_vqa(n, rng, config.size, split)
        elif domain == "ISTA":
            vr += make_ista(n, rng, config.size, split, "vr")
            vqa += make_ista(n, rng, config.size, split, "vqa")
        else:
            vr += make_iaa_proxy(n, rng, config.size, split, "vr")
            vqa += make_iaa_proxy(n, rng, config.size, split, "vqa")
    return vr, vqa


def _scores(model: Any, vr: list, vqa: list, prefix: str) -> dict[str, float]:
    from icml26.unipercept import evaluate_vqa, evaluate_vr

    out: dict[str, float] = {}
    for domain, m in evaluate_vr(model, vr).items():
        out[f"{prefix}{domain.lower()}_srcc"] = m["srcc"]
        out[f"{prefix}{domain.lower()}_plcc"] = m["plcc"]
    acc = evaluate_vqa(model, vqa, by=("domain", "criterion"))
    for criterion, value in acc["criterion"].items():
        out[f"{prefix}vqa_{criterion.lower().replace(' ', '_').replace('-', '')}"] = value
    out[f"{prefix}vqa_mean"] = acc["domain_mean"]
    return out


def main_plot(metrics: list[dict[str, Any]], config: MainConfig) -> dict[str, Any]:
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


def main_tables(metrics: list[dict[str, Any]], config: MainConfig) -> list[Table]:
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


@register(
    name="unipercept.main",
    title="E1: DAPT -> GRPO-AGSR joint model vs the handcrafted IQA specialist (VR SRCC)",
    paper=PAPER,
    claims=MAIN_CLAIMS,
    presets=MAIN_PRESETS,
    seeds=1,  # spec §5 quick: 1 seed; the full preset is meant for --seeds 5
    plot=main_plot,
    tables=main_tables,
    requires=REQUIRES,
    resources=RESOURCES,
)
def main_experiment(config: MainConfig, ctx: RunContext) -> dict[str, Any]:
    import copy

    from icml26.unipercept import OPTION_VOCAB, HandcraftedIQA, TinyPercept, train_dapt, train_grpo
    from icml26.unipercept.metrics import vr_metrics

    train_vr, train_vqa = _domain_sets(config, ctx, "train", config.n_train)
    test_vr, test_vqa = _domain_sets(config, ctx, "test", config.n_test)
    seed = int(ctx.numpy_generator("model").integers(2**31))
    model = TinyPercept(option_vocab=OPTION_VOCAB, channels=config.channels,
                        d_model=config.d_model, seed=seed)  # fmt: skip
    train = train_vr + train_vqa
    steps = config.dapt_epochs * -(-len(train) // config.dapt_batch) + config.grpo_steps
    with ctx.progress(steps, "DAPT + GRPO steps") as bar:
        train_dapt(model, train, config.dapt_epochs, config.dapt_batch, config.dapt_lr,
                   label_sigma=config.label_sigma, seed=ctx.numpy_generator("dapt"),
                   on_step=bar.advance)  # fmt: skip
        metrics: dict[str, Any] = _scores(model, test_vr, test_vqa, "dapt_")
        reference = copy.deepcopy(model)
        history = train_grpo(model, reference, train, "agsr", config.grpo_steps, config.grpo_batch,
                             config.n_group, config.grpo_lr, config.clip_eps, config.beta,
                             seed=ctx.numpy_generator("grpo"), on_step=bar.advance)  # fmt: skip
    metrics.update(_scores(model, test_vr, test_vqa, ""))
    iqa_train = [it for it in train_vr if it.domain == "IQA"]
    iqa_test = [it for it in test_vr if it.domain == "IQA"]
    specialist = HandcraftedIQA().fit(iqa_train)
    spec = vr_metrics(specialist.predict(iqa_test), np.array([it.mos for it in iqa_test]))
    metrics["specialist_iqa_srcc"] = spec["srcc"]
    metrics["specialist_iqa_plcc"] = spec["plcc"]
    metrics["main_minus_specialist_iqa_srcc"] = metrics["iqa_srcc"] - spec["srcc"]
    metrics["grpo_reward"] = [s.reward_mean for s in history]
    metrics["grpo_kl"] = [s.kl for s in history]
    return metrics
