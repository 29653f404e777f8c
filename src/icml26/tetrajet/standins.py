"""The shipped final weights of ``tetrajet.lm``'s quick preset, and the recipe that retrains them.

``lm_quick`` holds the 18 tiny GPTs the quick preset trains — its six recipes (FP32, the four
prior FP4 recipes, TetraJet-v2) on each of its three seeds (issue 51) — in float16. Each is
exactly what the quick task trains: :func:`~icml26.tetrajet.experiments.common.train_recipe` at the
task's seed (``derive_seed("tetrajet.lm", quick config, i)``) on one torch thread, as the task's
``Resources(cpus=1)``. Each run's record (validation curve, oscillation fraction, OsciReset
count) sits in the metadata, with the float16 weights' validation and test losses.

``tetrajet.lm`` loads a run when the corpus, the training fields of its config, its seed and its
recipe match a shipped one, rebuilds the layers the run ended with (NVIDIA's published recipe
ends in full precision) and evaluates the weights on the validation and test plays; anything else
(a ``--set`` of a training field, more seeds, other recipes, the full preset) trains.

``icml26 tool tetrajet train-standin lm_quick`` retrains it (~40 CPU-s: an interrupted run starts
again rather than resuming).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = ["STANDINS", "TRAIN_FIELDS", "shipped_run", "train_lm_quick"]

EXPERIMENT = "tetrajet.lm"
NAME = "lm_quick"
N_SEEDS = 3
# the fields of LMConfig that decide a trained run (with the seed, the recipe and the corpus)
TRAIN_FIELDS = ("tokenizer", "steps", "batch_size", "context", "d_model", "n_layers", "n_heads",
                "d_mlp", "lr", "warmup", "eval_every", "eval_batches")  # fmt: skip

_LOADED: dict[str, Any] = {}  # one read of the shipped file per process


def _key(seed: int, recipe: str) -> str:
    return f"seed{seed}.{recipe}"


def _shipped() -> tuple[dict[str, Any], dict[str, Any]]:
    from icml26.core import load_checkpoint

    if "meta" not in _LOADED:
        try:
            _LOADED["state"], _LOADED["meta"] = load_checkpoint(checkpoint_dir("tetrajet") / NAME)
        except FileNotFoundError:
            _LOADED["state"], _LOADED["meta"] = {}, {"config": {"fields": {}, "runs": {}}}
    return _LOADED["state"], _LOADED["meta"]


def shipped_run(config: Any, data: Any, seed: int, recipe: str) -> tuple[Any, Any] | None:
    """The shipped model of ``(config, seed, recipe)`` and its ``TrainResult``, or ``None``.

    The model is evaluated once on the validation batches (the result's final validation loss);
    the rest of the curve, the oscillation fraction and the reset count are the recorded run's.
    """
    from icml26.tetrajet import TinyGPT, TrainResult
    from icml26.tetrajet.experiments.common import lm_model_configs
    from icml26.tetrajet.training import _as_trained_, _evaluate

    state, meta = _shipped()
    fields = {k: getattr(config, k) for k in TRAIN_FIELDS}
    run = meta["config"]["runs"].get(_key(seed, recipe))
    if run is None or fields != meta["config"]["fields"] or data.corpus != meta["config"]["corpus"]:
        return None
    gpt, train = lm_model_configs(config, data.vocab_size)
    model = TinyGPT(gpt, seed=0)  # every weight is overwritten below
    _as_trained_(model, recipe, config.steps)
    prefix = _key(seed, recipe) + "."
    model.load_state_dict({k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)})
    result = TrainResult(
        eval_steps=list(run["eval_steps"]),
        val_loss=[*run["val_loss"][:-1], _evaluate(model, data.val, train, config.context)],
        oscillation=float(run["oscillation"]),
        n_reset=float(run["n_reset"]),
    )
    return model, result


def _train_run(config: Any, data: Any, seed: int, recipe: str) -> tuple[dict[str, Any], Any]:
    """One run as the task trains it (one torch thread); its float16 state and ``TrainResult``."""
    import torch

    from icml26.core import torch_threads
    from icml26.tetrajet.experiments.common import train_recipe

    with torch_threads(1):
        model, result = train_recipe(config, data, recipe, seed)
    state = {
        k: v.to(torch.float16) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
    }
    return state, result


def train_lm_quick(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train the quick preset's 18 runs as the task does (``resume`` unused: ~40 CPU-s)."""
    from icml26.core import discover, progress_reporter, torch_threads
    from icml26.core.runner import derive_seed
    from icml26.tetrajet import fixed_windows, load_text_data, window_losses

    quick = discover().get(EXPERIMENT).presets["quick"]  # the registry: no import cycle
    data = load_text_data(quick.tokenizer)
    test_x, test_y = fixed_windows(data.test, quick.context, quick.test_tokens)
    seeds = [derive_seed(EXPERIMENT, quick, i) for i in range(N_SEEDS)]
    weights, runs, metrics = {}, {}, {}
    with progress_reporter(progress, N_SEEDS * len(quick.recipes), "lm_quick runs") as report:
        for seed in seeds:
            for recipe in quick.recipes:
                state, result = _train_run(quick, data, seed, recipe)
                key = _key(seed, recipe)
                weights.update({f"{key}.{k}": v for k, v in state.items()})
                runs[key] = {
                    "eval_steps": result.eval_steps,
                    "val_loss": result.val_loss,
                    "oscillation": result.oscillation,
                    "n_reset": result.n_reset,
                }
                metrics[f"{key}.final_val_loss_fp32"] = result.final_val_loss
                report(len(runs))
    _LOADED.clear()
    config = {
        "fields": {k: getattr(quick, k) for k in TRAIN_FIELDS},
        "corpus": data.corpus,
        "vocab_size": data.vocab_size,
        "seeds": [str(s) for s in seeds],
        "recipes": list(quick.recipes),
        "runs": runs,
    }
    _LOADED["state"], _LOADED["meta"] = weights, {"config": config}
    with torch_threads(1):  # what quick reads: the float16 weights, evaluated as the task does
        for seed in seeds:
            for recipe in quick.recipes:
                model, result = shipped_run(quick, data, seed, recipe)
                key = _key(seed, recipe)
                metrics[f"{key}.final_val_loss"] = result.final_val_loss
                metrics[f"{key}.test_loss"] = float(window_losses(model, test_x, test_y).mean())
    _LOADED.clear()
    recipe_record = {
        "experiment": EXPERIMENT,
        "preset": "quick",
        "seed_indices": list(range(N_SEEDS)),
        "seeds": "derive_seed('tetrajet.lm', quick config, i): TinyGPT(seed), train_lm(seed)",
        "threads": 1,
        "dtype": "float16 (trained in float32)",
        "recipes": list(quick.recipes),
        **{k: getattr(quick, k) for k in TRAIN_FIELDS},
    }
    return TrainedStandin(
        model=weights,  # a state dict, keys prefixed by run
        config=config,
        recipe=recipe_record,
        data=(
            f"load_text_data({quick.tokenizer!r}): corpus {data.corpus}, train plays; "
            f"validation {quick.eval_batches} fixed batches of the first held-out play"
        ),
        metrics=metrics,
    )


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="tetrajet",
        description="the 18 final tiny GPTs of tetrajet.lm's quick preset (6 recipes x 3 seeds)",
        train=train_lm_quick,
    )
}
