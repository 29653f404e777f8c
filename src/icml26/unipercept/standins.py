"""The shipped PerceptVLM suites (issue 44), one per seed, and the recipe that retrains them.

``vlm_suite`` holds the six models of :func:`~icml26.unipercept.vlm_pipeline.train_vlm_suite`
trained from :data:`~icml26.unipercept.vlm_pipeline.VLM_RECIPE` (seed 0): the pretrained base,
DAPT, DAPT -> GRPO-AGSR, DAPT -> GRPO-threshold, base -> GRPO-AGSR and the question-blind copy.
``vlm_suite_s1``, ``vlm_suite_s2`` are the same recipe with seed 1, 2 and ship only the four
models whose ratings and answers quick's claims read (:data:`CLAIM_MODELS`; the base and DAPT
stages are trained, recorded in the metrics, and not shipped). Weights are stored as float16
(1.5 MB a model) and loaded as float32; the quick experiments evaluate them instead of
training. ``icml26 tool unipercept train-standin NAME`` retrains one on one thread (resumable
after every stage).

``tinypercept_quick`` (issue 51) is the joint TinyPercept pipeline that ``unipercept.main``,
``.dapt_ablation`` and ``.joint`` share at the quick preset's seed 0: the model after DAPT and
after DAPT -> GRPO-AGSR (float16) with the GRPO reward and KL by step, exactly what
:func:`~icml26.unipercept.experiments.common.train_joint_pipeline` trains for that config and
seed (about 22 CPU-s; it is not resumable, being shorter than one resume save is worth).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = [
    "CLAIM_MODELS",
    "STANDINS",
    "SUITE_SEEDS",
    "load_vlm_suite",
    "suite_name",
    "train_pipeline_standin",
    "train_suite_standin",
]

NAME = "vlm_suite"
SUITE_SEEDS: tuple[int, ...] = (0, 1, 2)  # the seeds whose suites ship
CLAIM_MODELS = ("dapt_agsr", "dapt_threshold", "base_agsr", "blind_agsr")


def suite_name(seed: int) -> str:
    """The stand-in name of the suite trained with ``seed`` (``vlm_suite``, ``vlm_suite_s1``...)."""
    return NAME if seed == 0 else f"{NAME}_s{seed}"


def _half_state(models: Mapping[str, Any]) -> dict[str, Any]:
    """Every model's weights under ``<name>.``, as float16 (the tied ``lm_head`` left out)."""
    return {f"{name}.{k}": v.detach().half() for name, m in models.items()
            for k, v in m.model.state_dict().items() if k != "lm_head.weight"}  # fmt: skip


def train_suite_standin(
    resume: TrainingCheckpoint, progress: Progress = None, seed: int = 0
) -> TrainedStandin:
    """Train the suite of ``seed`` on one thread (``resume``: after every stage); seed 0 keeps
    every model, the others the :data:`CLAIM_MODELS`."""
    from icml26.core.threads import torch_threads
    from icml26.unipercept.vlm_pipeline import SUITE, VLM_RECIPE, train_vlm_suite

    recipe = {**VLM_RECIPE, "seed": seed}
    with torch_threads(1):
        models, metrics = train_vlm_suite(recipe, resume, progress)
    names = SUITE if seed == 0 else CLAIM_MODELS
    config = {"models": list(names), **models["base"].config(), "dtype": "float16"}
    config.pop("question_blind")
    return TrainedStandin(
        model=_half_state({name: models[name] for name in names}),  # a state dict
        config=config,
        recipe=recipe,
        data="unipercept.vlm_pipeline.suite_data(VLM_RECIPE): make_pretrain_set, make_iqa_vr, "
        f"make_iqa_vqa, make_text_dependent_vqa, make_ista (train sources, seed {seed})",
        metrics=metrics,
    )


_LOADED: dict[str, Any] = {}  # one read of each shipped file per process


def load_vlm_suite(
    recipe: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, float]] | None:
    """The shipped models of ``recipe``'s seed by name (float32, eval mode) and their training
    metrics, or ``None`` when no suite of that seed ships or ``recipe`` (default:
    ``VLM_RECIPE``) is not the one it was trained with."""
    from icml26.core import load_checkpoint
    from icml26.unipercept.vlm import PerceptVLM
    from icml26.unipercept.vlm_pipeline import VLM_RECIPE

    recipe = dict(VLM_RECIPE if recipe is None else recipe)
    if recipe.get("seed") not in SUITE_SEEDS:
        return None
    name = suite_name(recipe["seed"])
    if name not in _LOADED:
        try:
            _LOADED[name] = load_checkpoint(checkpoint_dir("unipercept") / name)
        except FileNotFoundError:
            return None
    shipped, meta = _LOADED[name]
    if recipe != meta["recipe"]:
        return None
    config = {k: v for k, v in meta["config"].items() if k not in ("models", "dtype")}
    models = {}
    for model_name in meta["config"]["models"]:
        model = PerceptVLM(**config, question_blind=model_name.startswith("blind"))
        prefix = f"{model_name}."
        state = {k[len(prefix) :]: v.float() for k, v in shipped.items()
                 if k.startswith(prefix)}  # fmt: skip
        missing, unexpected = model.model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - {"lm_head.weight"}:
            raise ValueError(
                f"load_vlm_suite: shipped weights of {model_name!r} do not fit PerceptVLM."
            )
        models[model_name] = model.eval().requires_grad_(False)
    return models, dict(meta["metrics"])


PIPELINE = "tinypercept_quick"  # experiments.common.PIPELINE_STANDIN


def train_pipeline_standin(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train the quick preset's seed-0 joint TinyPercept pipeline on one thread (``resume`` is
    not used: the run is one short piece)."""
    from icml26.unipercept.experiments.common import pipeline_standin

    return pipeline_standin()


def _seed_trainer(seed: int) -> Any:
    """``train_suite_standin`` for ``seed`` as a function of this module (its code fingerprint)."""

    def train(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
        return train_suite_standin(resume, progress, seed)

    return train


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="unipercept",
        description="seed-0 PerceptVLM suite: base, DAPT, DAPT->GRPO (AGSR / threshold), "
        "base->GRPO (AGSR), question-blind copy",
        train=train_suite_standin,
        checkpoint_every=1,
    ),
    **{
        suite_name(seed): Standin(
            name=suite_name(seed),
            system="unipercept",
            description=f"seed-{seed} PerceptVLM suite: DAPT->GRPO (AGSR / threshold), "
            "base->GRPO (AGSR), question-blind copy",
            train=_seed_trainer(seed),
            checkpoint_every=1,
        )
        for seed in SUITE_SEEDS[1:]
    },
    PIPELINE: Standin(
        name=PIPELINE,
        system="unipercept",
        description="quick seed-0 joint TinyPercept pipeline of unipercept.main, .dapt_ablation "
        "and .joint: DAPT and DAPT->GRPO-AGSR models, GRPO reward and KL by step",
        train=train_pipeline_standin,
    ),
}
