"""Issue 45's band reading of the high branch: the filter, its spectrum and the orthogonality."""

import numpy as np
import pytest
import torch

from icml26.hyperdepth import (
    BandFilter,
    HyperDepth,
    HyperDepthEncoder,
    gradient_conflict,
    make_hierarchical_hypergraph,
    spectral_filters,
)

F64 = torch.float64


@pytest.fixture(scope="module")
def data():
    return make_hierarchical_hypergraph(n_per_fine=8, n_edges=50, dim=6, seed=2)


@pytest.fixture(scope="module")
def hg(data):
    return data.hypergraph.with_self_loops()


def test_poly_band_is_p_minus_p8_with_a_nonnegative_midband_response(hg):
    low, band = spectral_filters(hg, "poly", K=2, high="band", dtype=F64)
    assert isinstance(band, BandFilter)
    P = hg.propagation(F64).to_dense()
    expected = P - torch.linalg.matrix_power(P, 8)  # a wrong sign (P⁸ − P) fails here
    torch.testing.assert_close(band.matrix(), expected, atol=1e-12, rtol=0)
    torch.testing.assert_close(low.matrix(), P @ P, atol=1e-12, rtol=0)
    lam, U = hg.laplacian_eigh()
    Ut = torch.from_numpy(U)
    diag = torch.diagonal(Ut.T @ band.matrix() @ Ut).numpy()
    np.testing.assert_allclose(diag, (1 - lam) - (1 - lam) ** 8, atol=1e-10)
    np.testing.assert_allclose(band.response(lam), diag, atol=1e-10)
    # a band-pass: no DC (constant-on-D_v^{1/2}1) component, nonnegative, peak inside (0, 1)
    grid = np.linspace(0.0, 1.0, 101)
    response = band.response(grid)
    assert response[0] == 0.0 and response.min() >= 0.0
    assert 0.0 < grid[np.argmax(response)] < 1.0


def test_exact_band_is_a_projector_orthogonal_to_the_low_one(hg):
    low, band = spectral_filters(hg, "exact", cutoff=0.3, high="band", dtype=F64)
    L, B = low.matrix(), band.matrix()
    torch.testing.assert_close(B @ B, B, atol=1e-10, rtol=0)
    torch.testing.assert_close(L @ B, torch.zeros_like(B), atol=1e-10, rtol=0)
    lam, _ = hg.laplacian_eigh()
    kept = band.response(lam)
    assert kept.sum() == torch.linalg.matrix_rank(B).item() > 0
    assert lam[kept == 1].min() >= 0.3 - 1e-12 and lam[kept == 1].max() < 0.75
    # the band drops the top of the spectrum: the pair no longer sums to the identity
    assert not torch.allclose(L + B, torch.eye(hg.num_nodes, dtype=F64))


def test_orthogonality_theorem_holds_for_the_band_reading(data):
    shared = {"dim": 8, "proj_dim": 8, "d_h": 4, "tree": (4, 2), "shared_transform": True}
    band = HyperDepth(**shared, mode="exact", high="band")
    assert abs(gradient_conflict(band, data, seed=0)) < 1e-8
    coupled = HyperDepth(**shared, mode="exact", high="band", decouple=False)
    assert abs(gradient_conflict(coupled, data, seed=0)) > 1e-3


def test_band_reading_trains_and_routes_through_the_band_filter(data):
    model = HyperDepth(dim=8, proj_dim=8, d_h=4, tree=(4, 2), epochs=3, high="band")
    z = model.fit(data, seed=0).embed(data, part="high")
    hg = data.hypergraph.with_self_loops()
    m = model.encoder_.transform(torch.from_numpy(data.x).float())[1].detach()
    expected = model.clean_filters_[1](m)
    np.testing.assert_allclose(z, expected.numpy(), atol=1e-5)
    assert isinstance(model.encoder_.filters(hg)[1], BandFilter)


def test_band_arguments_are_refused():
    with pytest.raises(ValueError, match="high"):
        HyperDepth(high="bandpass")
    with pytest.raises(ValueError, match="high"):
        HyperDepthEncoder(3, dim=4, high="low")
    P = torch.eye(3)
    with pytest.raises(ValueError, match="k1 < k2"):
        BandFilter(P, (8, 1))
    with pytest.raises(TypeError, match="tuple"):
        BandFilter(P, [1, 8])
