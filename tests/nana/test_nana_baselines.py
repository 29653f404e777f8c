"""Baselines: the transcoder's attribution and splice, the neuron and random bases."""

import pytest
import torch

from icml26.nana import (
    decompose_mlp,
    neuron_basis,
    next_token_prompts,
    random_basis,
    train_transcoder,
    transcoder_contributions,
    transcoder_data,
    transcoder_splice,
)


def test_random_basis_spans_the_same_subspace_and_writes_the_same_output(adapter, tokens):
    deus = decompose_mlp(adapter, 1, "out")
    rnd = random_basis(deus, seed=4)
    eye = torch.eye(deus.rank, dtype=torch.float64)
    assert torch.allclose(rnd.detectors @ rnd.detectors.T, eye, atol=1e-10)
    # same projector onto the detectors' span
    assert torch.allclose(
        rnd.detectors.T @ rnd.detectors, deus.detectors.T @ deus.detectors, atol=1e-10
    )
    acts = adapter.run_with_cache(tokens).acts[1]
    assert torch.allclose(rnd.reconstruct(acts), deus.reconstruct(acts), atol=1e-10)
    # it mixes units: the effectors are no longer orthogonal
    assert float((rnd.effectors @ rnd.effectors.T - eye).abs().max()) > 1e-3


def test_neuron_basis_reconstructs_the_mlp(adapter, tokens):
    cache = adapter.run_with_cache(tokens)
    basis = neuron_basis(adapter, 0)
    assert basis.rank == adapter.d_mlp and torch.equal(
        basis.detectors, torch.eye(adapter.d_mlp, dtype=torch.float64)
    )
    assert torch.allclose(basis.reconstruct(cache.acts[0]), cache.mlp_out[0], atol=1e-10)


def test_transcoder_attribution_sums_to_its_write_and_splices(adapter, tokens, targets):
    x, y = transcoder_data(adapter, tokens, 1)
    assert x.shape == (tokens.numel(), adapter.d_model) == y.shape
    cached = transcoder_data(adapter, tokens, 1, cache=adapter.run_with_cache(tokens))
    assert torch.equal(cached[0], x) and torch.equal(cached[1], y)
    with pytest.raises(TypeError, match="cache"):
        transcoder_data(adapter, tokens, 1, cache={})
    with pytest.raises(ValueError, match=r"train_transcoder: inputs and outputs .* d >= 1"):
        train_transcoder(x[:, :0], y[:, :0], layer=1)  # fuzz campaign 4: named only d_model
    fit = train_transcoder(x, y, layer=1, expansion=2, steps=30, batch_tokens=16, seed=0)
    tc = fit.transcoder
    parts = transcoder_contributions(adapter, tc, tokens, 1, targets)  # (B, T, m)
    cache = adapter.run_with_cache(tokens)
    with torch.no_grad():
        write = tc(cache.normed[1].float()).double()
        bias = tc.b_dec.double()
    w = adapter.W_U.T[targets]
    centred = write - write.mean(-1, keepdim=True)
    bias = bias - bias.mean()
    total = (centred * w).sum(-1) / cache.sigma_f
    assert torch.allclose(
        parts.sum(-1) + (w @ bias) / cache.sigma_f, total, atol=1e-5
    )  # float32 tc
    # zero-ablating every latent leaves out − f W_dec; the full splice gives the prediction
    everything = transcoder_splice(tc, range(tc.W_dec.shape[0]))
    out = cache.mlp_out[1]
    with torch.no_grad():
        f = tc.encode(cache.normed[1].float())
        expected = out - (f @ tc.W_dec).double()
    assert torch.allclose(everything(cache.normed[1], out), expected, atol=1e-5)
    assert torch.allclose(transcoder_splice(tc)(cache.normed[1], out), write, atol=1e-6)


def test_next_token_prompts_are_windows_and_their_successors():
    stream = torch.arange(1000) * 7 % 101
    prompts, targets = next_token_prompts(stream, 5, 9, seed=2)
    for p, t in zip(prompts, targets, strict=True):
        start = int(torch.nonzero((stream.unfold(0, 9, 1) == p).all(1))[0, 0])
        assert int(stream[start + 9]) == int(t)


def test_random_effectors_are_unit_directions_drawn_from_the_seed():
    from icml26.nana import random_effectors

    g = torch.Generator().manual_seed(0)
    a, b = random_effectors(5, 7, layer=2, seed=g), random_effectors(5, 7, layer=2, seed=g)
    assert a.rank == 5 and a.layer == 2 and a.basis == "random"
    assert torch.allclose(a.effectors.norm(dim=1), torch.ones(5, dtype=torch.float64))
    assert not torch.equal(a.effectors, b.effectors)  # one generator: fresh directions
    assert torch.equal(
        random_effectors(5, 7, seed=3).effectors, random_effectors(5, 7, seed=3).effectors
    )
    # identity detectors, σ = 1: the coefficient of unit j is input coordinate j
    x = torch.randn(3, 5, dtype=torch.float64)
    assert torch.equal(a.coefficients(x), x)


def test_transcoder_training_reports_progress():
    x = torch.randn(64, 4, generator=torch.Generator().manual_seed(0))
    seen = []
    fit = train_transcoder(
        x, x, expansion=1, steps=3, batch_tokens=8, progress=lambda *a: seen.append(a)
    )
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [m["loss"] for _, _, m in seen] == fit.losses
