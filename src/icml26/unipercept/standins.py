"""The shipped seed-0 PerceptVLM suite (issue 44) and the recipe that retrains it.

``vlm_suite`` holds the six models of :func:`~icml26.unipercept.vlm_pipeline.train_vlm_suite`
trained from :data:`~icml26.unipercept.vlm_pipeline.VLM_RECIPE` (seed 0): the pretrained base,
DAPT, DAPT -> GRPO-AGSR, DAPT -> GRPO-threshold, base -> GRPO-AGSR and the question-blind copy.
Weights are stored as float16 (1.5 MB a model) and loaded as float32; the quick experiments
evaluate them instead of training. ``icml26 tool unipercept train-standin vlm_suite`` retrains
them on one thread (resumable after every stage).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = ["STANDINS", "load_vlm_suite", "train_suite_standin"]

NAME = "vlm_suite"


def _half_state(models: Mapping[str, Any]) -> dict[str, Any]:
    """Every model's weights under ``<name>.``, as float16 (the tied ``lm_head`` left out)."""
    return {f"{name}.{k}": v.detach().half() for name, m in models.items()
            for k, v in m.model.state_dict().items() if k != "lm_head.weight"}  # fmt: skip


def train_suite_standin(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train the seed-0 suite on one thread (``resume``: after every stage)."""
    from icml26.core.threads import torch_threads
    from icml26.unipercept.vlm_pipeline import SUITE, VLM_RECIPE, train_vlm_suite

    with torch_threads(1):
        models, metrics = train_vlm_suite(VLM_RECIPE, resume, progress)
    config = {"models": list(SUITE), **models["base"].config(), "dtype": "float16"}
    config.pop("question_blind")
    return TrainedStandin(
        model=_half_state(models),  # save_checkpoint takes a state dict
        config=config,
        recipe=dict(VLM_RECIPE),
        data="unipercept.vlm_pipeline.suite_data(VLM_RECIPE): make_pretrain_set, make_iqa_vr, "
        "make_iqa_vqa, make_text_dependent_vqa, make_ista (train sources, seed 0)",
        metrics=metrics,
    )


_LOADED: dict[str, Any] = {}  # one read of the shipped file per process


def load_vlm_suite(
    recipe: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, float]] | None:
    """The shipped models by name (float32, eval mode) and their training metrics, or ``None``
    when ``recipe`` (default: ``VLM_RECIPE``) is not the one they were trained with or nothing
    is shipped."""
    from icml26.core import load_checkpoint
    from icml26.unipercept.vlm import PerceptVLM
    from icml26.unipercept.vlm_pipeline import VLM_RECIPE

    if "meta" not in _LOADED:
        try:
            _LOADED["state"], _LOADED["meta"] = load_checkpoint(checkpoint_dir("unipercept") / NAME)
        except FileNotFoundError:
            return None
    meta = _LOADED["meta"]
    if dict(VLM_RECIPE if recipe is None else recipe) != meta["recipe"]:
        return None
    config = {k: v for k, v in meta["config"].items() if k not in ("models", "dtype")}
    models = {}
    for name in meta["config"]["models"]:
        model = PerceptVLM(**config, question_blind=name.startswith("blind"))
        prefix = f"{name}."
        state = {k[len(prefix) :]: v.float() for k, v in _LOADED["state"].items()
                 if k.startswith(prefix)}  # fmt: skip
        missing, unexpected = model.model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - {"lm_head.weight"}:
            raise ValueError(f"load_vlm_suite: shipped weights of {name!r} do not fit PerceptVLM.")
        models[name] = model.eval().requires_grad_(False)
    return models, dict(meta["metrics"])


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="unipercept",
        description="seed-0 PerceptVLM suite: base, DAPT, DAPT->GRPO (AGSR / threshold), "
        "base->GRPO (AGSR), question-blind copy",
        train=train_suite_standin,
        checkpoint_every=1,
    )
}
