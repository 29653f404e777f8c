"""Spec §7 items 1-4: SVD structure, exact reconstruction, Eckart-Young, signs, permutations."""

import copy

import numpy as np
import pytest
import torch

from icml26.nana import decompose_mlp, decompose_model, deu_set_from_matrix, from_hf_gpt2

from .conftest import make_gpt2

SIDES = ["out", "in"]


def _matrix(adapter, layer, side):
    w = adapter.mlp(layer)
    return w.W_out if side == "out" else w.W_in


@pytest.mark.parametrize("side", SIDES)
def test_units_are_orthonormal_sorted_and_match_numpy_svd_up_to_sign(adapter, side):
    deus = decompose_mlp(adapter, 1, side)
    r = deus.rank
    eye = torch.eye(r, dtype=torch.float64)
    # float64 Gram matrices of orthonormal rows: round-off ~ r * 1e-16
    assert torch.allclose(deus.detectors @ deus.detectors.T, eye, atol=1e-10)
    assert torch.allclose(deus.effectors @ deus.effectors.T, eye, atol=1e-10)
    s = deus.sigmas
    assert bool((s > 0).all()) and bool((s[:-1] >= s[1:]).all())
    W = _matrix(adapter, 1, side).numpy()
    U, S, Vh = np.linalg.svd(W, full_matrices=False)
    np.testing.assert_allclose(s.numpy(), S[:r], rtol=1e-10)
    # σ² are the eigenvalues of WᵀW
    eig = np.sort(np.linalg.eigvalsh(W.T @ W))[::-1][:r]
    np.testing.assert_allclose(s.numpy() ** 2, eig, rtol=1e-8, atol=1e-12)
    # same singular vectors up to a per-unit sign (the spectrum here has no repeated values)
    cos_u = np.abs(np.sum(deus.detectors.numpy() * U[:, :r].T, axis=1))
    cos_v = np.abs(np.sum(deus.effectors.numpy() * Vh[:r], axis=1))
    np.testing.assert_allclose(cos_u, 1.0, atol=1e-8)
    np.testing.assert_allclose(cos_v, 1.0, atol=1e-8)


def test_centred_w_out_drops_exactly_the_all_ones_null_direction(adapter):
    deus = decompose_mlp(adapter, 0, "out")
    assert deus.rank == adapter.d_model - 1  # centring removes the mean direction
    ones = torch.ones(adapter.d_model, dtype=torch.float64) / adapter.d_model**0.5
    assert float((deus.effectors @ ones).abs().max()) < 1e-10


@pytest.mark.parametrize("side", SIDES)
def test_reconstruction_of_matrix_and_mlp_output_is_exact(adapter, tokens, side):
    deus = decompose_mlp(adapter, 1, side)
    W = _matrix(adapter, 1, side)
    assert float((deus.matrix() - W).norm() / W.norm()) < 1e-13  # float64 round-off
    cache = adapter.run_with_cache(tokens)
    x = cache.acts[1] if side == "out" else cache.normed[1]
    target = cache.mlp_out[1] if side == "out" else cache.pre[1]
    assert float((deus.reconstruct(x) - target).norm() / target.norm()) < 1e-12


def test_truncation_error_is_eckart_young(adapter):
    deus = decompose_mlp(adapter, 0, "out")
    W = _matrix(adapter, 0, "out")
    for r in (1, 5, deus.rank):
        t = deus.truncate(r)
        expected = float(deus.sigmas[r:].pow(2).sum().sqrt())
        assert t.rank == r
        assert t.truncation_error == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert float((W - t.matrix()).norm()) == pytest.approx(expected, rel=1e-8, abs=1e-10)
    assert torch.allclose(deus.energy().sum(), torch.tensor(1.0, dtype=torch.float64))


def test_sign_flips_leave_contributions_unchanged_and_conventions_hold(adapter, tokens):
    cache = adapter.run_with_cache(tokens)
    raw = deu_set_from_matrix(adapter.mlp(1).W_out, adapter.mlp(1).b_out, layer=1)
    vocab = decompose_mlp(adapter, 1, "out", sign="vocab")
    data = decompose_mlp(adapter, 1, "out", sign="data", ref_tokens=tokens)
    a = cache.acts[1]
    for deus in (vocab, data):
        assert torch.allclose(deus.contributions(a), raw.contributions(a), atol=1e-12)
    # data sign: mean α_k ≥ 0; vocab sign: the largest-|.| entry of v_k W_U is positive
    assert bool((data.coefficients(a).reshape(-1, data.rank).mean(0) >= 0).all())
    lens = vocab.effectors @ adapter.W_U
    peak = lens.gather(1, lens.abs().argmax(1, keepdim=True))
    assert bool((peak > 0).all())
    # deterministic: the same call gives the same signs
    again = decompose_mlp(adapter, 1, "out", sign="vocab")
    assert torch.equal(again.effectors, vocab.effectors)


def test_hidden_permutation_and_scaling(gpt2):
    base = from_hf_gpt2(gpt2)
    perm = torch.randperm(base.d_mlp, generator=torch.Generator().manual_seed(0))
    permuted = copy.deepcopy(gpt2)
    mlp = permuted.transformer.h[0].mlp
    with torch.no_grad():
        mlp.c_fc.weight.copy_(mlp.c_fc.weight[:, perm])
        mlp.c_fc.bias.copy_(mlp.c_fc.bias[perm])
        mlp.c_proj.weight.copy_(mlp.c_proj.weight[perm])
    p_ad = from_hf_gpt2(permuted)
    a, b = decompose_mlp(base, 0, "out"), decompose_mlp(p_ad, 0, "out")
    assert torch.allclose(a.sigmas, b.sigmas, rtol=1e-12)
    assert torch.allclose(a.effectors, b.effectors, atol=1e-10)
    assert torch.allclose(a.detectors[:, perm], b.detectors, atol=1e-10)
    scaled = copy.deepcopy(gpt2)
    with torch.no_grad():
        scaled.transformer.h[0].mlp.c_proj.weight.mul_(2.5)
    c = decompose_mlp(from_hf_gpt2(scaled), 0, "out")
    assert torch.allclose(c.sigmas, 2.5 * a.sigmas, rtol=1e-6)  # float32 weights scaled


def test_decompose_model_covers_every_layer_and_side():
    ad = from_hf_gpt2(make_gpt2(1, n_layer=3))
    units = decompose_model(ad)
    assert sorted(units) == [(i, s) for i in range(3) for s in ("in", "out")]
    assert all(u.layer == k[0] and u.side == k[1] for k, u in units.items())


def test_decompose_model_with_data_signs_matches_per_layer_calls(adapter, tokens):
    units = decompose_model(adapter, ("out",), sign="data", ref_tokens=tokens)
    for layer in range(adapter.n_layers):
        one = decompose_mlp(adapter, layer, "out", sign="data", ref_tokens=tokens)
        assert torch.equal(units[(layer, "out")].effectors, one.effectors)


def test_reconstruction_errors_cover_every_mlp_and_are_round_off(adapter, tokens):
    from icml26.nana import reconstruction_errors

    errors = reconstruction_errors(adapter, tokens)
    assert sorted(errors) == [(layer, side) for layer in range(2) for side in ("in", "out")]
    assert max(errors.values()) < 1e-12  # float64 SVD of 32 x 128 matrices
    errors32 = reconstruction_errors(adapter, tokens, dtype=torch.float32)
    assert 1e-12 < max(errors32.values()) < 1e-5  # float32 units: round-off of float32
