"""The real-data LM path (spec §5): byte windows of a local corpus, loaded from text, files and
``datasets`` (a save_to_disk folder and the packaged "text" builder), used by train/evaluate."""

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.hybrid_seq import HybridLM, TextLM, TrainConfig, evaluate, train

TEXT = "the quick brown fox jumps over the lazy dog. " * 3 + "ünïcode ✓\n"


def test_windows_are_substrings_with_next_byte_targets():
    task = TextLM.from_text(TEXT, L=16)
    data = TEXT.encode("utf-8")
    assert task.corpus.tolist() == list(data) and task.vocab_size == 260 and task.seq_len == 16
    b = task.sample(200, generator=0)
    assert b.inputs.shape == (200, 16) and bool(b.mask.all())
    assert torch.equal(b.inputs[:, 1:], b.targets[:, :-1])  # target at t = input at t + 1
    for row in range(200):
        window = bytes((b.inputs[row] - 4).tolist()) + bytes([int(b.targets[row, -1]) - 4])
        assert window in data  # L + 1 consecutive corpus bytes


def test_window_starts_are_uniform():
    corpus = torch.arange(40)  # distinct bytes: the first input names the start
    task = TextLM(corpus, L=7)
    starts = task.sample(6000, generator=1).inputs[:, 0] - 4
    counts = np.bincount(starts.numpy(), minlength=33)
    assert len(counts) == 33  # every start in [0, len - L - 1], none beyond
    assert stats.chisquare(counts).pvalue > 1e-3


def test_files_and_datasets_give_the_same_corpus(tmp_path):
    datasets = pytest.importorskip("datasets")
    lines = ["first line of text", "second line", "third: hybrid models"]
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(lines[0] + "\n" + lines[1], encoding="utf-8")
    b.write_text(lines[2], encoding="utf-8")
    joined = "\n".join(lines)
    ref = TextLM.from_text(joined, L=8).corpus
    assert torch.equal(TextLM.from_files([a, b], L=8).corpus, ref)
    assert torch.equal(TextLM.from_dataset("text", L=8, data_files=[str(a), str(b)]).corpus, ref)
    saved = tmp_path / "saved"
    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"body": lines})}).save_to_disk(saved)
    assert torch.equal(TextLM.from_dataset(saved, L=8, text_field="body").corpus, ref)
    with pytest.raises(ValueError, match=r"split must be one of \['train'\]"):
        TextLM.from_dataset(saved, L=8, split="test", text_field="body")
    with pytest.raises(ValueError, match="text_field must be one of"):
        TextLM.from_dataset(saved, L=8)


def test_train_and_evaluate_run_on_text_and_learning_lowers_the_loss():
    task = TextLM.from_text("abcd" * 50, L=12)  # each byte fixes the next one
    model = HybridLM(task.vocab_size, d_model=16, pattern="SA", seed=0)
    before = evaluate(model, task, n=40, seed=2)[12][0]
    hist = train(model, task, TrainConfig(steps=60, lr=3e-3, batch_size=16, warmup=5, seed=0))
    after = evaluate(model, task, n=40, seed=2)[12][0]
    assert hist.loss[-1] < 0.5 * hist.loss[0]
    assert after > before and after > 0.9  # a bigram table solves it


def test_text_lm_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match=r"at least L \+ 1 = 11 bytes; got 5"):
        TextLM.from_text("short", L=10)
    with pytest.raises(ValueError, match="corpus values must be bytes"):
        TextLM(torch.tensor([1, 300, 2]), L=1)
    with pytest.raises(ValueError, match="corpus must be a 1-D integer tensor"):
        TextLM(torch.rand(10), L=2)
    with pytest.raises(TypeError, match=r"corpus must be a torch\.Tensor"):
        TextLM([1, 2, 3], L=1)
    with pytest.raises(ValueError, match="L must be an integer >= 1"):
        TextLM(torch.arange(5), L=0)
    with pytest.raises(TypeError, match="text must be a str"):
        TextLM.from_text(b"bytes", L=1)
    with pytest.raises(FileNotFoundError):
        TextLM.from_files([tmp_path / "missing.txt"], L=1)
    with pytest.raises(ValueError, match="nothing is downloaded"):
        TextLM.from_dataset("wikitext", L=4)
    with pytest.raises(ValueError, match="data_files must be local files"):
        TextLM.from_dataset("text", L=4, data_files=[str(tmp_path / "nope.txt")])
    with pytest.raises(ValueError, match=r"data_files .* are required"):
        TextLM.from_dataset("text", L=4)
