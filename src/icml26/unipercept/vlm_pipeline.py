"""The PerceptVLM pipeline of issue 44: generic pretraining -> DAPT -> GRPO, and its data.

Cao et al., UniPercept (arXiv:2512.21675), §4. The paper starts from a pretrained InternVL3-8B;
the stand-in pretrains :class:`~icml26.unipercept.PerceptVLM` on generic questions without
perceptual labels (:func:`~icml26.unipercept.make_pretrain_set`), so that the "without DAPT"
arm is RL on a pretrained model, as in the paper. DAPT follows the paper's data: perceptual text
QA (IQA and ISTA questions, the text-dependent items) and score tokens for the IQA (and IAA)
ratings only — ISTA ratings appear only in RL. GRPO runs the shared
:func:`~icml26.unipercept.train_grpo` (AGSR or threshold rating reward, binary VQA reward) with
the KL to the frozen start logged.

:func:`train_vlm_suite` trains every model the experiments read, stage by stage, each stage
from its own seed, so a run resumed at a stage boundary gives the same weights:

=============  ===================================================================
base           generic pretraining
dapt           base -> DAPT
dapt_agsr      dapt -> GRPO (AGSR), the full method
dapt_threshold dapt -> GRPO (threshold reward)
base_agsr      base -> GRPO (AGSR), the "without DAPT" arm
blind_agsr     a question-blind copy of base -> DAPT -> GRPO (AGSR), the text control
=============  ===================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

__all__ = ["SUITE", "VLM_RECIPE", "suite_data", "train_vlm_suite"]

SUITE: Final = ("base", "dapt", "dapt_agsr", "dapt_threshold", "base_agsr", "blind_agsr")
VLM_RECIPE: Final[Mapping[str, Any]] = {
    "size": 32, "n": 1500, "observer_sd": 2.0, "seed": 0,
    "pretrain_epochs": 4, "dapt_epochs": 5, "batch": 32, "lr": 5e-4,
    "grpo_steps": 150, "grpo_batch": 32, "grpo_lr": 2e-4, "n_group": 8, "clip_eps": 0.2,
    "beta": 1e-3,
}  # fmt: skip


def _rng(recipe: Mapping[str, Any], stage: int) -> np.random.Generator:
    """The generator of one stage: a resumed run draws what an uninterrupted one did."""
    return np.random.default_rng([recipe["seed"], 100 + stage])


def suite_data(recipe: Mapping[str, Any], split: str = "train") -> dict[str, list]:
    """The items of each stage: ``pretrain``, ``dapt``, ``rl`` (train) or ``vr``, ``vqa``,
    ``pretrain`` (test), drawn from ``recipe["seed"]``."""
    from icml26.unipercept import (
        make_iqa_vqa,
        make_iqa_vr,
        make_ista,
        make_pretrain_set,
        make_text_dependent_vqa,
    )

    size, n, sd = recipe["size"], recipe["n"], recipe["observer_sd"]
    rng = np.random.default_rng([recipe["seed"], 0 if split == "train" else 1])
    if split != "train":
        return {
            "vr": make_iqa_vr(400, rng, size, split, sd) + make_ista(400, rng, size, split),
            "vqa": make_iqa_vqa(400, rng, size, split)
            + make_text_dependent_vqa(400, rng, size, split)
            + make_ista(400, rng, size, split, task="vqa"),
            "pretrain": make_pretrain_set(400, rng, size, split),
        }
    return {
        "pretrain": make_pretrain_set(2 * n, rng, size),
        "dapt": make_iqa_vr(n, rng, size, observer_sd=sd) + make_iqa_vqa(n, rng, size)
        + make_text_dependent_vqa(n, rng, size) + make_ista(n, rng, size, task="vqa"),
        "rl": make_iqa_vr(n, rng, size, observer_sd=sd) + make_ista(n, rng, size)
        + make_iqa_vqa(n // 2, rng, size) + make_text_dependent_vqa(n // 2, rng, size)
        + make_ista(n // 2, rng, size, task="vqa"),
    }  # fmt: skip


def train_vlm_suite(
    recipe: Mapping[str, Any] = VLM_RECIPE,
    resume: Any = None,
    progress: Any = None,
    stages: int | None = None,
) -> tuple[dict[str, Any], dict[str, float]]:
    """Train the :data:`SUITE` models of ``recipe``; return them and the training metrics.

    ``resume`` is a :class:`~icml26.core.TrainingCheckpoint` saved after every stage;
    ``progress(done, total, metrics)`` is called after every stage. Metrics: the last epoch
    loss of each supervised stage and, for each GRPO arm, the mean KL to its reference and the
    mean reward of the last tenth of the steps. ``stages`` stops after that many of the seven
    stages (base, DAPT, three GRPO arms, blind DAPT, blind GRPO); the later models keep their
    initial weights.
    """
    import torch

    from icml26.core import adamw
    from icml26.unipercept import PerceptVLM, train_dapt, train_grpo

    r = dict(recipe)
    data = suite_data(r)
    names = (*SUITE, "blind_dapt")
    holder = torch.nn.ModuleDict({
        name: PerceptVLM(r["size"], question_blind=name.startswith("blind"), seed=r["seed"])
        for name in names
    })  # fmt: skip
    optimizer = adamw(holder, lr=1e-3)  # never stepped: the resume file's optimizer slot
    done = resume.restore(holder, optimizer) if resume is not None else 0
    metrics: dict[str, float] = dict(resume.extra) if resume is not None else {}

    def dapt(name: str, start: str | None, items: list, epochs: int, stage: int) -> None:
        if start is not None:
            holder[name].load_state_dict(holder[start].state_dict())
        history = train_dapt(holder[name], items, epochs, r["batch"], r["lr"], seed=_rng(r, stage))
        metrics[f"{name}_loss"] = history.epoch_loss[-1]

    def grpo(name: str, start: str, reward: str, stage: int) -> None:
        holder[name].load_state_dict(holder[start].state_dict())
        stats = train_grpo(
            holder[name], holder[start], data["rl"], reward, r["grpo_steps"], r["grpo_batch"],
            r["n_group"], r["grpo_lr"], r["clip_eps"], r["beta"], seed=_rng(r, stage),
        )  # fmt: skip
        tail = max(1, len(stats) // 10)
        metrics[f"{name}_kl_mean"] = float(np.mean([s.kl for s in stats]))
        metrics[f"{name}_reward_end"] = float(np.mean([s.reward_mean for s in stats[-tail:]]))

    steps = [
        lambda: dapt("base", None, data["pretrain"], r["pretrain_epochs"], 0),
        lambda: dapt("dapt", "base", data["dapt"], r["dapt_epochs"], 1),
        lambda: grpo("dapt_agsr", "dapt", "agsr", 2),
        lambda: grpo("dapt_threshold", "dapt", "threshold", 3),
        lambda: grpo("base_agsr", "base", "agsr", 4),
        lambda: dapt("blind_dapt", "base", data["dapt"], r["dapt_epochs"], 5),
        lambda: grpo("blind_agsr", "blind_dapt", "agsr", 6),
    ]
    for stage in range(done, len(steps) if stages is None else min(stages, len(steps))):
        steps[stage]()
        if resume is not None:
            resume.save(stage + 1, holder, optimizer, extra=metrics)
        if callable(progress):
            progress(stage + 1, len(steps), dict(metrics))
    return {name: holder[name].eval() for name in SUITE}, metrics
