"""The shipped BitFit model of ``debias.minilm``'s quick preset, and the recipe that retrains it.

``minilm_bitfit`` holds the bias vectors (26,180: every bias of all-MiniLM-L6-v2 and of the
intent head) that in-encoder BitFit reaches on the quick preset's seed (issue 51): exactly what
the quick task would train — the same prompts, clean-embedding head, minibatches and
perturbation stream (``RunContext(derive_seed("debias.minilm", quick, 0))``), 40 Adam steps of
16 prompts with KL to the clean logits. ``debias.minilm`` loads it when its task's seed and
BitFit settings match and trains otherwise (any ``--set`` of a field, the full preset). The
other weights are the pretrained encoder's and the head the task trains itself (seconds, on
cached clean embeddings), so only the biases are shipped.

``icml26 tool debias train-standin minilm_bitfit`` retrains it (about 15 CPU-s with the
encoder's load: short enough that an interrupted run starts again rather than resuming).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = ["BITFIT_FIELDS", "STANDINS", "shipped_bitfit"]

EXPERIMENT = "debias.minilm"
NAME = "minilm_bitfit"
# the config fields that decide the BitFit model (with the task's seed)
BITFIT_FIELDS = ("model", "n_train", "n_test", "head_epochs", "head_lr", "steps", "batch_size",
                 "encoder_lr", "loss", "p_clean", "p_case", "p_typo")  # fmt: skip

_LOADED: dict[str, Any] = {}  # one read of the shipped file per process


def shipped_bitfit(config: Any, seed: int, index: int, encoder: Any, head: Any) -> Any | None:
    """The shipped BitFit ``TextClassifier`` for ``(config, seed)``'s first seed, or ``None``.

    ``encoder`` and ``head`` are the task's base encoder and head (copied, not changed); their
    biases are replaced by the shipped ones.
    """
    import torch

    from icml26.core import load_checkpoint
    from icml26.debias import TextClassifier, select_parameters

    if "meta" not in _LOADED:
        try:
            _LOADED["state"], _LOADED["meta"] = load_checkpoint(checkpoint_dir("debias") / NAME)
        except FileNotFoundError:
            _LOADED["state"], _LOADED["meta"] = {}, {"config": {"fields": {}, "seeds": []}}
    meta = _LOADED["meta"]
    fields = {k: getattr(config, k) for k in BITFIT_FIELDS}
    if index != 0 or fields != meta["config"]["fields"] or str(seed) not in meta["config"]["seeds"]:
        return None
    prefix = f"seed{seed}."
    state = {k[len(prefix) :]: v for k, v in _LOADED["state"].items() if k.startswith(prefix)}
    model = TextClassifier(copy.deepcopy(encoder), copy.deepcopy(head))
    chosen = select_parameters(model, "bias")
    if {name for name, _ in chosen} != set(state):
        return None  # another encoder layout: train instead
    with torch.no_grad():
        for name, p in chosen:
            p.copy_(state[name])
    return model.eval()


def train_minilm_bitfit(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train quick's BitFit model on one thread, as the task does (``resume`` unused)."""
    from icml26.core import RunContext, discover, torch_threads
    from icml26.core.runner import derive_seed
    from icml26.debias import load_minilm, select_parameters
    from icml26.debias.experiments.minilm_setup import seed_setup, train_bitfit

    quick = discover().get(EXPERIMENT).presets["quick"]  # the registry: no import cycle
    seed = derive_seed(EXPERIMENT, quick, 0)
    ctx = RunContext(seed=seed)
    with torch_threads(1):  # the task declares one CPU; the sums' order follows the threads
        encoder = load_minilm()
        setup = seed_setup(quick, ctx, 0, encoder)
        model, log = train_bitfit(quick, ctx, 0, encoder, setup)
    biases = {f"seed{seed}.{name}": p.detach().clone()
              for name, p in select_parameters(model, "bias")}  # fmt: skip
    config = {"fields": {k: getattr(quick, k) for k in BITFIT_FIELDS}, "seeds": [str(seed)]}
    recipe = {
        "experiment": EXPERIMENT,
        "preset": "quick",
        "seed_index": 0,
        "streams": "RunContext(seed): texts0, head0, batches0, bitfit0 (as the task)",
        "threads": 1,
        **asdict(quick),
    }
    return TrainedStandin(
        model=biases,  # a state dict of the biases only (save_checkpoint takes one)
        config=config,
        recipe=recipe,
        data="make_intent_texts(n_train + n_test) of RunContext(seed).numpy_generator('texts0')",
        metrics={
            "final_loss": log.losses[-1],
            "mean_loss_last10": sum(log.losses[-10:]) / len(log.losses[-10:]),
            "n_trainable": float(log.n_trainable),
            "trainable_fraction": log.trainable_fraction,
        },
    )


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="debias",
        description="the in-encoder BitFit biases of debias.minilm's quick seed (all-MiniLM-L6-v2)",
        train=train_minilm_bitfit,
    )
}
