"""The shipped SFT references of ``cpo.tiny_lm``'s quick preset, and the recipe that retrains them.

``tiny_lm_sft`` holds the three SFT-trained :class:`~icml26.cpo.TinyCausalLM` references of the
quick preset's seeds 0, 1, 2 (issue 51): each is exactly what the quick task would train — the
same task draw, initialisation and minibatch stream of that seed (``derive_seed("cpo.tiny_lm",
quick config, i)``), 600 Adam steps of 128 prompts. ``cpo.tiny_lm`` loads a reference when its
task's seed and SFT settings match one shipped here and trains it otherwise (any ``--set`` of
an SFT field, more seeds, the full preset). DPO and CPO always train in the task.

``icml26 tool cpo train-standin tiny_lm_sft`` retrains it (about 30 CPU-s: short enough that an
interrupted run starts again rather than resuming).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = ["SFT_FIELDS", "STANDINS", "sft_reference", "shipped_reference"]

EXPERIMENT = "cpo.tiny_lm"
NAME = "tiny_lm_sft"
N_SEEDS = 3
# the config fields that decide the SFT reference (with the task's seed)
SFT_FIELDS = ("n_numbers", "n_types", "n_violated", "wrong_frac", "label_flip", "d_model",
              "n_layers", "n_heads", "sft_steps", "sft_batch", "sft_lr")  # fmt: skip


def sft_reference(config: Any, seed: int) -> tuple[Any, Any, list[float]]:
    """The task, the SFT-trained reference and its loss history for a config and task seed.

    What ``cpo.tiny_lm`` does before preference training: the init and the SFT minibatches
    restart the same stream of ``seed``.
    """
    from icml26.core import RunContext
    from icml26.cpo.tiny_lm import TinyCausalLM, make_arith_preference_task, train_sft

    c, ctx = config, RunContext(seed=seed)
    task = make_arith_preference_task(c.n_numbers, c.n_types, c.n_violated, c.wrong_frac,
                                      c.label_flip, seed=ctx.numpy_generator())  # fmt: skip
    reference = TinyCausalLM(task.vocab_size, d_model=c.d_model, n_layers=c.n_layers,
                             n_heads=c.n_heads, seed=ctx.torch_generator())  # fmt: skip
    history = train_sft(reference, task, c.sft_steps, c.sft_batch, c.sft_lr,
                        seed=ctx.torch_generator())  # fmt: skip
    return task, reference, history


_LOADED: dict[str, Any] = {}  # one read of the shipped file per process


def shipped_reference(config: Any, seed: int) -> tuple[Any, float] | None:
    """The shipped reference and its final SFT loss for ``(config, seed)``, or ``None``."""
    from icml26.core import load_checkpoint
    from icml26.cpo.tiny_lm import TinyCausalLM

    if "meta" not in _LOADED:
        try:
            _LOADED["state"], _LOADED["meta"] = load_checkpoint(checkpoint_dir("cpo") / NAME)
        except FileNotFoundError:
            _LOADED["state"], _LOADED["meta"] = {}, {"config": {"sft": {}, "seeds": []}}
    meta = _LOADED["meta"]
    sft = {k: getattr(config, k) for k in SFT_FIELDS}
    if sft != meta["config"]["sft"] or str(seed) not in meta["config"]["seeds"]:
        return None
    prefix = f"seed{seed}."
    state = {k[len(prefix) :]: v for k, v in _LOADED["state"].items() if k.startswith(prefix)}
    model = TinyCausalLM(int(meta["config"]["vocab_size"]), d_model=config.d_model,
                         n_layers=config.n_layers, n_heads=config.n_heads)  # fmt: skip
    model.load_state_dict(state)
    return model.eval(), float(meta["metrics"][f"sft_final_loss_seed{seed}"])


def train_tiny_lm_sft(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train the quick preset's three SFT references (``resume`` unused: ~30 CPU-s in all)."""
    import torch

    from icml26.core import discover
    from icml26.core.runner import derive_seed

    quick = discover().get(EXPERIMENT).presets["quick"]  # the registry: no import cycle
    seeds = [derive_seed(EXPERIMENT, quick, i) for i in range(N_SEEDS)]
    refs: dict[str, Any] = {}
    losses: dict[str, float] = {}
    for seed in seeds:
        task, reference, history = sft_reference(quick, seed)
        refs[f"seed{seed}"] = reference
        losses[f"sft_final_loss_seed{seed}"] = history[-1]
    model = torch.nn.ModuleDict(refs)
    config = {
        "sft": {k: getattr(quick, k) for k in SFT_FIELDS},
        "seeds": [str(s) for s in seeds],
        "vocab_size": task.vocab_size,
    }
    recipe = {
        "experiment": EXPERIMENT,
        "preset": "quick",
        "seed_indices": list(range(N_SEEDS)),
        "init_and_batches": "RunContext(seed).torch_generator() (as the task)",
        **asdict(quick),
    }
    return TrainedStandin(
        model=model,
        config=config,
        recipe=recipe,
        data="make_arith_preference_task of each seed (RunContext(seed).numpy_generator())",
        metrics=losses,
    )


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="cpo",
        description="the SFT references of cpo.tiny_lm's quick seeds 0-2 (2-layer d=64 LM)",
        train=train_tiny_lm_sft,
    )
}
