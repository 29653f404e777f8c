"""Pieces every tetrajet reproduction shares: the paper, the resources of a task and the check
of an experiment config."""

from typing import Any

from icml26.core import Resources, check_fields, check_positive_int

# Each task runs single-threaded: element-wise fake quantization of small tensors is faster on
# one intra-op thread than on the shared machine's two (measured ~10x in the tests).
RESOURCES = Resources(cpus=1)

PAPER = (
    "Chen et al., TetraJet-v2: Accurate NVFP4 Training for Large Language Models with Oscillation "
    "Suppression and Outlier Control, ICML 2026 (arXiv:2510.27527)"
)
# icml26.tetrajet.recipes.RECIPES' names, here so that building a preset does not import torch
# (a test checks that they agree)
RECIPE_NAMES = (
    "fp32", "naive_nvfp4", "nvidia_nvfp4", "nvidia_nvfp4_published", "fp4_all_the_way",
    "tetrajet_v2_base", "tetrajet_v2_mix_fp8", "tetrajet_v2",
)  # fmt: skip


def check_config(config: Any, ints: dict[str, tuple[int, int]]) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; ``ints`` maps fields to their ``(low, high)``.
    """
    check_fields(config)
    for name, (low, high) in ints.items():
        check_positive_int(
            name, getattr(config, name), owner=type(config).__name__, minimum=low, maximum=high
        )


def check_names(config: Any, name: str, allowed: tuple[str, ...]) -> None:
    """Raise ``ValueError`` unless tuple field ``name`` holds distinct values of ``allowed``."""
    values = getattr(config, name)
    if len(set(values)) != len(values) or not set(values) <= set(allowed):
        raise ValueError(
            f"{type(config).__name__}: {name} must be distinct values of {allowed}; got {values}."
        )


def lm_model_configs(config: Any, vocab_size: int) -> tuple[Any, Any]:
    """The ``GPTConfig`` and ``TrainConfig`` of a ``tetrajet.lm`` config (``LMConfig``)."""
    from icml26.tetrajet import GPTConfig, TrainConfig

    gpt = GPTConfig(
        vocab_size=vocab_size,
        context=config.context,
        d_model=config.d_model,
        n_layers=config.n_layers,
        n_heads=config.n_heads,
        d_mlp=config.d_mlp,
    )
    train = TrainConfig(
        steps=config.steps,
        batch_size=config.batch_size,
        lr=config.lr,
        warmup=config.warmup,
        eval_every=config.eval_every,
        eval_batches=config.eval_batches,
    )
    return gpt, train


def train_recipe(
    config: Any, data: Any, recipe: str, seed: int, progress: Any = None
) -> tuple[Any, Any]:
    """Train one recipe as ``tetrajet.lm`` does (and its shipped stand-ins were): ``TinyGPT(seed)``
    then ``train_lm(seed)``; the model and its ``TrainResult``."""
    from icml26.tetrajet import TinyGPT, train_lm

    gpt, train = lm_model_configs(config, data.vocab_size)
    model = TinyGPT(gpt, seed=seed)
    result = train_lm(
        model, data, recipe, train, context=config.context, seed=seed, progress=progress
    )
    return model, result
