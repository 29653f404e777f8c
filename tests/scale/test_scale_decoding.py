"""Decoders: single-pass cost, KV cache = full forward, baselines = HF warpers, tokenizer (§7)."""

import numpy as np
import pytest
import torch

from icml26.scale import (
    ActionTokenizer,
    BestOfN,
    GreedyDecoder,
    ScaleConfig,
    ScaleDecoder,
    TemperatureDecoder,
    TinyARVLA,
    TinyVLAAdapter,
    TopKDecoder,
    TopPDecoder,
    UncertaintyState,
    count_forward_passes,
    top_k_filter,
    top_p_filter,
)

G = torch.Generator().manual_seed(0)


@pytest.fixture(scope="module")
def model():
    return TinyARVLA(d_vision=32, d_model=32, vision_layers=2, layers=2, seed=0).double().eval()


def _images(n, seed=0):
    rng = np.random.default_rng(seed)
    return torch.as_tensor(rng.integers(0, 256, (n, 48, 48, 3), dtype=np.uint8))


def test_kv_cached_decoding_equals_full_forward(model):
    images, instr = _images(5), torch.arange(5) % 8
    tokens = torch.randint(*model.action_token_range, (5, 3), generator=G)
    with torch.no_grad():
        full = model(images, instr, tokens)  # (B, 3, vocab)
        logits, cache = model.prefill(images, instr)
        cached = [logits]
        for k in range(2):
            logits, cache = model.step(tokens[:, k], cache)
            cached.append(logits)
    # float64 forward of a few small layers: round-off ~1e-14; 1e-5 is the spec's bound
    torch.testing.assert_close(torch.stack(cached, 1), full, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "decoder",
    [
        GreedyDecoder(),
        ScaleDecoder(seed=0),
        TemperatureDecoder(seed=0),
        TopKDecoder(seed=0),
        TopPDecoder(seed=0),
    ],
    ids=lambda d: d.name,
)
def test_every_decoder_is_one_prefix_plus_ka_minus_one_cached_passes(model, decoder):
    adapter = TinyVLAAdapter(model)
    state = UncertaintyState(3, batch_size=4)
    with count_forward_passes(model) as counts:
        for step in range(3):  # SCALE tempers the ViT from the second step on
            tokens, info = decoder.decode(
                adapter, _images(4, step), torch.zeros(4, dtype=torch.long), state
            )
    assert counts == {"decoder": 3 * 3, "vision": 3}  # per step: 1 prefix + (K_a - 1) = 2 cached
    assert not model.blocks[0]._forward_pre_hooks and not model.vision._forward_pre_hooks
    assert info.forward_passes == 3 and info.prefix_passes == 1
    start, stop = model.action_token_range
    assert bool(((tokens >= start) & (tokens < stop)).all())


def test_scale_gamma_follows_the_state_and_tau_follows_u(model):
    adapter = TinyVLAAdapter(model)
    state = UncertaintyState(3, batch_size=2)
    dec = ScaleDecoder(seed=1)
    _, first = dec.decode(adapter, _images(2), torch.tensor([1, 2]), state)
    assert first.gamma.tolist() == [1.0, 1.0]  # no history on the first step
    torch.testing.assert_close(first.tau, torch.sigmoid(first.u))
    expected = 2.0 ** torch.tanh(0.3 * state.delta_batch())
    _, second = dec.decode(adapter, _images(2, 1), torch.tensor([1, 2]), state)
    torch.testing.assert_close(second.gamma, expected)


def test_scale_limits_reduce_to_greedy(model):
    adapter = TinyVLAAdapter(model)
    images, instr = _images(6), torch.arange(6)
    greedy, _ = GreedyDecoder().decode(adapter, images, instr)
    # T0 -> 0: every tau is below greedy_below, so SCALE's action decoding is greedy exactly
    cold = ScaleDecoder(ScaleConfig(T0=1e-6, adaptive_attention=False), seed=0)
    assert torch.equal(cold.decode(adapter, images, instr, UncertaintyState(3, 6))[0], greedy)
    vision_only = ScaleDecoder(ScaleConfig(adaptive_decoding=False), seed=0)
    assert torch.equal(
        vision_only.decode(adapter, images, instr, UncertaintyState(3, 6))[0], greedy
    )


def test_top_k_and_top_p_match_the_hf_logits_warpers():
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    logits = torch.randn(64, 256, generator=G) * 2
    for k in (1, 5, 40, 256):
        torch.testing.assert_close(
            top_k_filter(logits, k), TopKLogitsWarper(k)(None, logits.clone())
        )
    for p in (0.1, 0.5, 0.9, 1.0):
        torch.testing.assert_close(
            top_p_filter(logits, p), TopPLogitsWarper(p)(None, logits.clone())
        )


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
def test_top_k_and_top_p_refuse_non_float_logits(dtype):
    logits = torch.tensor([[1, 0, 1]]).to(dtype)  # -inf does not fit in an integer tensor
    with pytest.raises(TypeError, match="logits must be a floating-point tensor"):
        top_k_filter(logits, 2)
    with pytest.raises(TypeError, match="logits must be a floating-point tensor"):
        top_p_filter(logits, 0.5)
    # an empty batch keeps its shape
    assert top_k_filter(torch.zeros(0, 5), 16).shape == (0, 5)


def test_best_of_n_keeps_the_verifier_favourite_and_costs_n_passes(model):
    adapter = TinyVLAAdapter(model)
    target = model.action_token_range[0] + 10

    def verifier(obs, instr, candidates):
        return -(candidates - target).abs().double().sum(-1)  # prefer tokens near `target`

    bon = BestOfN(verifier, n=6, seed=0)
    tokens, info = bon.decode(adapter, _images(3), torch.zeros(3, dtype=torch.long))
    assert info.forward_passes == 6 * 3 and info.prefix_passes == 6
    # re-draw the same candidates with the same seed: the chosen one has the best score
    base = TemperatureDecoder(1.0, seed=0)
    cands = torch.stack(
        [base.decode(adapter, _images(3), torch.zeros(3, dtype=torch.long))[0] for _ in range(6)], 1
    )
    best = verifier(None, None, cands).max(1).values
    torch.testing.assert_close(verifier(None, None, tokens[:, None])[:, 0], best)


def test_tokenizer_round_trip_centres_and_clipping():
    tok = ActionTokenizer(vocab_size=300)
    assert tok.token_range == (44, 300)
    np.testing.assert_allclose(
        tok.centers, (np.linspace(-1, 1, 256)[:-1] + np.linspace(-1, 1, 256)[1:]) / 2
    )
    assert tok.centers.shape == (255,)
    ids = tok.encode(tok.centers)  # each centre -> its own bin -> the same centre
    np.testing.assert_array_equal(tok.decode(ids), tok.centers)
    np.testing.assert_array_equal(tok.bins(ids), np.arange(255))
    # out-of-range ids clip to the end bins; out-of-range values clip to [-1, 1]
    assert tok.bins(np.array([0, 299, 300, 10_000])).tolist() == [254, 0, 0, 0]
    assert tok.encode(np.array([-5.0, 5.0])).tolist() == tok.encode(np.array([-1.0, 1.0])).tolist()


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: ScaleConfig(T0=0.0), ValueError, "T0"),
        (lambda: ScaleConfig(kappa=0.9), ValueError, "kappa"),
        (lambda: ScaleConfig(alpha=1.0), ValueError, "alpha"),
        (lambda: ScaleConfig(num_logits=0), ValueError, "num_logits"),
        (lambda: ScaleConfig(eps=0.5), ValueError, "eps"),
        (lambda: ScaleConfig(measure="variance"), ValueError, "measure"),
        (lambda: TopKDecoder(k=0), ValueError, "k"),
        (lambda: TopPDecoder(p=0.0), ValueError, "p"),
        (lambda: TopPDecoder(p=1.5), ValueError, "p"),
        (lambda: TemperatureDecoder(T=-1.0), ValueError, "T"),
        (lambda: BestOfN("not callable"), TypeError, "verifier"),
        (lambda: BestOfN(lambda *a: None, n=0), ValueError, "n"),
        (lambda: ScaleDecoder(config={"T0": 1.0}), TypeError, "config"),
        (lambda: TinyVLAAdapter(torch.nn.Linear(2, 2)), TypeError, "model"),
    ],
)
def test_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_adapter_and_num_logits(model):
    with pytest.raises(TypeError, match="adapter"):
        GreedyDecoder().decode(object(), None, None)
    adapter = TinyVLAAdapter(model)
    with pytest.raises(ValueError, match="num_logits"):
        ScaleDecoder(ScaleConfig(num_logits=300, eps=1e-6)).decode(
            adapter, _images(1), torch.tensor([0])
        )


def test_gini_measure_tau_closed_form():
    """Gini ablation: tau = T0 (1 - sum p^2) K/(K-1) over the top-K renormalised p (inferred)."""
    K, T0 = 4, 0.7
    decoder = ScaleDecoder(ScaleConfig(T0=T0, measure="gini", num_logits=K), seed=0)
    uniform = torch.zeros(1, K, dtype=torch.float64)
    assert decoder._tau(uniform, None, K).item() == pytest.approx(T0, abs=1e-12)
    a = 0.3
    two = torch.log(torch.tensor([[a, 1 - a, 1e-300, 1e-300]], dtype=torch.float64))
    expected = T0 * (1 - a**2 - (1 - a) ** 2) * K / (K - 1)
    assert decoder._tau(two, None, K).item() == pytest.approx(expected, rel=1e-9)
    one_hot = torch.tensor([[50.0, -50.0, -50.0, -50.0]], dtype=torch.float64)
    assert decoder._tau(one_hot, None, K).item() < 1e-12 * 10
    # the top-K renormalisation: extra tail tokens outside the top K do not change tau
    wide = torch.cat([two, torch.full((1, 4), -1e4, dtype=torch.float64)], dim=1)
    assert decoder._tau(wide, None, K).item() == pytest.approx(expected, rel=1e-9)


def test_count_forward_passes_refuses_other_models():
    counter = count_forward_passes(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="model must be a TinyARVLA"):
        counter.__enter__()
