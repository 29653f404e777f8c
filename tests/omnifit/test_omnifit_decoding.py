"""Decoding with per-layer KV caches of different lengths (spec §2.4 step 7).

References: (i) a no-cache greedy loop that re-runs the whole forward on prompt + generated
tokens at every step, (ii) for compressed decoding, the same loop with the compressor applied to
the grown sequence (generated tokens are text, never dropped, and causality keeps the video and
audio hidden states, hence the ARTS scores, the plan and the merges, independent of them)."""

import pytest
import torch

from icml26.omnifit import (
    LAHPProfile,
    OmniFitCompressor,
    RandomDrop,
    TinyOmni,
    TinyOmniConfig,
    generate,
    make_dataset,
    run_compressed,
)
from icml26.omnifit.avsync import VOCAB, AVSyncBatch

CONFIG = TinyOmniConfig(n_layers=3, d=16, n_heads=2, d_ff=32)
T = 6
# float64 throughout: the cached and recomputed paths differ only in summation order (SDPA over
# one query row vs the full causal matrix), so 1e-10 is round-off headroom, not a fudge factor
ATOL = 1e-10


class RandomReadout:
    """TinyOmni with a fixed random next-token readout instead of its tied head.

    With unit-scale text embeddings an untrained model's last hidden state is dominated by its
    input token, so the tied head predicts that token again and greedy decoding repeats it; a
    random readout maps each token to another, so the generated sequences vary and token
    equality means something.
    """

    def __init__(self, model):
        self.model = model
        g = torch.Generator().manual_seed(1)
        self.readout = torch.randn(CONFIG.d, VOCAB, generator=g, dtype=torch.float64)

    def __getattr__(self, name):
        return getattr(self.model, name)

    def lm_head(self, h):
        return self.model.norm(h[:, -1]) @ self.readout

    def embed_tokens(self, token_ids):
        return self.model.embed_tokens(token_ids)


@pytest.fixture(scope="module")
def model():
    model = TinyOmni(CONFIG, seed=0).double().eval()
    with torch.no_grad():  # unit-scale text embeddings: the fed-back token shapes the next one
        model.text_emb.weight.normal_(generator=torch.Generator().manual_seed(2))
    return RandomReadout(model)


@pytest.fixture(scope="module")
def batch():
    return make_dataset(3, windows=3, seed=0).batch(slice(None), dtype=torch.float64)


def _profile():
    return LAHPProfile(
        [16, 12, 9],
        16,
        {"video": [0.2, 0.3, 0.1], "audio": [0.3, 0.1, 0.2]},
        *(8 * 16 * 16 + 6 * 16 * 32, 4 * 16),
    )


def extended(batch, tokens):
    """The prompt with ``tokens`` (B, t) appended to its text."""
    return AVSyncBatch(batch.video, batch.audio, torch.cat([batch.text, tokens], 1), batch.labels)


def recompute_greedy(model, batch, make_compressor, steps):
    """No cache: at every step, the whole (compressed) forward of prompt + tokens so far."""
    tokens = torch.zeros(batch.text.shape[0], 0, dtype=torch.long)
    all_logits = []
    for _ in range(steps):
        current = extended(batch, tokens)
        compressor = make_compressor()
        h, ids, pos = model.embed(current)
        mask = None
        if compressor is not None:
            compressor.prepare(h, ids, adapter=model, pos_ids=pos)
        for layer in range(len(model.layers)):
            if compressor is not None:
                h, pos, mask, _ = compressor.before_layer(layer, h, pos, mask)
            h = model.run_layer(layer, h, pos, mask)
        all_logits.append(model.lm_head(h))
        tokens = torch.cat([tokens, all_logits[-1].argmax(-1, keepdim=True)], dim=1)
    return tokens, torch.stack(all_logits, dim=1)


def test_mu_one_equals_full_cache_and_recompute(model, batch):
    with torch.no_grad():
        full = generate(model, batch, None, max_new_tokens=T)
        mu_one = generate(model, batch, OmniFitCompressor(_profile(), mu=1.0), max_new_tokens=T)
        ref_tokens, ref_logits = recompute_greedy(model, batch, lambda: None, T)
    assert torch.equal(mu_one.tokens, full.tokens)
    assert torch.equal(mu_one.logits, full.logits)  # mu = 1 touches nothing: bit-identical
    assert torch.equal(full.tokens, ref_tokens)
    torch.testing.assert_close(full.logits, ref_logits, rtol=0, atol=ATOL)
    n = batch.video.shape[1] * 24 + batch.text.shape[1]
    assert full.alive == [n] * 3 and full.cache_lengths == [n + T - 1] * 3
    # every sample's sequence changes over time (token equality would be weak on a constant one)
    assert all(len(torch.unique(row)) > 1 for row in full.tokens)


@pytest.mark.parametrize("mode", ["merge", "prune"])
def test_compressed_caches_hold_alive_tokens(model, batch, mode):
    def make():
        return OmniFitCompressor(_profile(), mu=0.3, M=4, k=2, mode=mode)

    with torch.no_grad():
        out = generate(model, batch, make(), max_new_tokens=T)
        prefill = run_compressed(model, batch, make())
        ref_tokens, ref_logits = recompute_greedy(model, batch, make, T)
    n = batch.video.shape[1] * 24 + batch.text.shape[1]
    assert out.alive == prefill.alive
    assert len(set(out.alive)) > 1 and max(out.alive) < n  # caches of different lengths
    assert out.cache_lengths == [a + T - 1 for a in out.alive]
    for kept, ref in zip(out.kept, prefill.kept, strict=True):
        assert torch.equal(kept, ref)
    assert torch.equal(out.tokens, ref_tokens)
    torch.testing.assert_close(out.logits, ref_logits, rtol=0, atol=ATOL)


def test_baseline_caches_follow_its_prefill(model, batch):
    # RandomDrop (+LAHP budgets) seeded: the caches hold exactly the tokens its prefill keeps.
    # (No recompute reference here: its random subset is drawn over the whole sequence, so a
    # longer sequence draws a different one.)
    def make():
        return RandomDrop(0.4, profile=_profile(), seed=3)

    with torch.no_grad():
        out = generate(model, batch, make(), max_new_tokens=4)
        prefill = run_compressed(model, batch, make())
    assert out.alive == prefill.alive and len(set(out.alive)) > 1
    assert all(torch.equal(a, b) for a, b in zip(out.kept, prefill.kept, strict=True))
    assert out.cache_lengths == [a + 3 for a in out.alive]


def test_one_token_is_the_prefill_argmax(model, batch):
    with torch.no_grad():
        out = generate(model, batch, None, max_new_tokens=1)
    assert out.tokens.shape == (3, 1) and out.cache_lengths == out.alive


def test_cached_layer_validates_past(model, batch):
    h, _, pos = model.embed(batch)
    with torch.no_grad():
        _, (k, v) = model.run_layer_kv(0, h, pos, None)
    x = model.embed_tokens(torch.zeros(3, 1, dtype=torch.long))
    new_pos = torch.full((3, 1), h.shape[1])
    with pytest.raises(TypeError, match="past must be a"):
        model.run_layer_kv(0, x, new_pos, None, past=k)
    with pytest.raises(ValueError, match="past\\[0\\]"):
        model.run_layer_kv(0, x, new_pos, None, past=(k[:, :1], v))
    with pytest.raises(ValueError, match="same length"):
        model.run_layer_kv(0, x, new_pos, None, past=(k, v[:, :, :-1]))
    with pytest.raises(ValueError, match="token_ids"):
        model.embed_tokens(torch.full((1, 1), 10**6))


def test_generate_rejects_bad_arguments(model, batch):
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(model, batch, None, max_new_tokens=0)
    with pytest.raises(TypeError, match="compressor"):
        generate(model, batch, object())
    with pytest.raises(TypeError, match="adapter"):
        generate(object(), batch)
    wrong = LAHPProfile.uniform(2, 16)
    with pytest.raises(ValueError, match="profile has 2 layers"):
        generate(model, batch, OmniFitCompressor(wrong, mu=0.5))


def test_eos_stops_each_sample_and_the_loop(model, batch):
    with torch.no_grad():
        free = generate(model, batch, None, max_new_tokens=T)
        eos = int(free.tokens[0, 2])
        stopped = generate(model, batch, None, max_new_tokens=T, eos_token_id=eos)
    # first eos of each sample (T if none): tokens agree up to it, eos afterwards
    hits = [(row == eos).nonzero().flatten() for row in free.tokens]
    first = [int(h[0]) if len(h) else T for h in hits]
    length = min(T, max(first) + 1)
    assert stopped.tokens.shape == (3, length)
    for b, f in enumerate(first):
        assert torch.equal(stopped.tokens[b, : f + 1], free.tokens[b, : min(f + 1, length)])
        assert bool((stopped.tokens[b, f + 1 :] == eos).all())
    assert stopped.cache_lengths == [a + length - 1 for a in stopped.alive]
    # a batch whose every sample emits eos stops the loop there (sample 0 alone)
    first_sample = make_dataset(3, windows=3, seed=0).batch(slice(0, 1), dtype=torch.float64)
    with torch.no_grad():
        alone = generate(model, first_sample, None, max_new_tokens=T, eos_token_id=eos)
    assert torch.equal(alone.tokens[0], free.tokens[0, : first[0] + 1])
    assert alone.cache_lengths == [a + first[0] for a in alone.alive]
    with pytest.raises(ValueError, match="eos_token_id"):
        generate(model, batch, None, max_new_tokens=2, eos_token_id=-1)
