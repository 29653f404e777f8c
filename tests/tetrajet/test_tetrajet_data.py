"""Text data: char-level splits of the corpus and next-token batches."""

import pytest
import torch

from icml26.tetrajet import load_corpus, load_text_data, sample_batch


def test_char_splits_hold_out_the_last_documents():
    docs, _ = load_corpus()
    data = load_text_data("char", val_docs=2)
    assert len(data.val) == len("\n".join(docs[-2:]))  # one id per character
    assert len(data.train) == len("\n".join(docs[:-2]))
    assert int(data.train.max()) < data.vocab_size - 1  # the last id is for unseen characters
    assert int(data.val.max()) <= data.vocab_size - 1


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
