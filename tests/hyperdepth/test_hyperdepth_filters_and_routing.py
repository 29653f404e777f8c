"""Spec §7 items 3–5: complementary filters, gradient routing, the orthogonality proposition."""

import numpy as np
import pytest
import torch

from icml26.hyperdepth import (
    HyperDepth,
    HyperDepthEncoder,
    Hypergraph,
    PrototypeTree,
    gradient_conflict,
    info_nce,
    make_hierarchical_hypergraph,
    projection_head,
    spectral_filters,
)

F64 = torch.float64


@pytest.fixture(scope="module")
def data():
    return make_hierarchical_hypergraph(n_per_fine=8, n_edges=50, dim=6, seed=1)


@pytest.fixture(scope="module")
def hg(data):
    return data.hypergraph.with_self_loops()


@pytest.mark.parametrize("mode", ["poly", "exact"])
def test_filters_sum_to_identity(hg, mode):
    low, high = spectral_filters(hg, mode, K=3, dtype=F64)
    total = low.matrix() + high.matrix()
    torch.testing.assert_close(total, torch.eye(hg.num_nodes, dtype=F64), atol=1e-12, rtol=0)


def test_exact_filters_are_complementary_orthogonal_projectors(hg):
    low, high = spectral_filters(hg, "exact", cutoff=0.5, dtype=F64)
    L, H = low.matrix(), high.matrix()
    torch.testing.assert_close(L @ L, L, atol=1e-10, rtol=0)
    torch.testing.assert_close(L @ H, torch.zeros_like(L), atol=1e-10, rtol=0)
    torch.testing.assert_close(L, L.T, atol=1e-12, rtol=0)
    lam, _ = hg.laplacian_eigh()
    assert int(torch.trace(L).round()) == max(2, int(np.sum(lam < 0.5)))


def test_exact_cutoff_keeps_at_least_two_vectors():
    path = Hypergraph(8, [[i, i + 1, i + 2] for i in range(6)]).with_self_loops()  # connected
    low, _ = spectral_filters(path, "exact", cutoff=1e-9, dtype=F64)
    assert low.U.shape[1] == 2


@pytest.mark.parametrize("K", [1, 2, 4])
def test_poly_responses_on_eigenvectors(hg, K):
    lam, U = hg.laplacian_eigh()
    low, high = spectral_filters(hg, "poly", K=K, dtype=F64)
    Ut = torch.from_numpy(U)
    # F u_i = h(λ_i) u_i for each eigenvector (float64 round-off after K sparse products).
    for f in (low, high):
        expected = Ut * torch.from_numpy(f.response(lam))[None]
        torch.testing.assert_close(f(Ut), expected, atol=1e-10, rtol=0)
    np.testing.assert_allclose(low.response(lam), (1 - lam) ** K)


def test_exact_shared_transform_gives_orthogonal_branches(data, hg):
    enc = HyperDepthEncoder(6, dim=5, mode="exact", shared_transform=True, seed=0).double()
    out = enc(torch.from_numpy(data.x).double(), hg)
    inner = out.z_low.T @ out.z_high  # Z_L^T Z_H = M^T Π_L Π_H M = 0
    assert float(inner.abs().max()) < 1e-10 * float(out.z_low.norm() * out.z_high.norm())
    a, _ = enc.transform(torch.from_numpy(data.x).double())
    torch.testing.assert_close(out.z_low + out.z_high, a, atol=1e-12, rtol=0)


def _parts(data, hg, **kwargs):
    torch.manual_seed(0)  # irrelevant draws only: every module below is seeded
    enc = HyperDepthEncoder(6, dim=8, seed=0, **kwargs).double()
    head = projection_head(8, 8, seed=1).double()
    A = torch.nn.Linear(8, 4, bias=False).double()
    tree = PrototypeTree(4, sizes=(4, 2)).double()
    x = torch.from_numpy(data.x).double()
    out = enc(x, hg)
    u = torch.nn.functional.normalize(A(out.z_low), dim=1)
    tree.init_from(u.detach(), seed=0)
    x2 = x * (torch.arange(6) % 2 == 0).double()
    out2 = enc(x2, hg)
    l_con = info_nce(head(out.z_contrast), head(out2.z_contrast))
    l_hier = tree.loss(u)
    return enc, head, A, tree, l_con, l_hier


def test_gradient_routing_gives_exact_zeros(data, hg):
    enc, head, A, tree, l_con, l_hier = _parts(data, hg)
    low_params = list(enc.mlp_low.parameters()) + list(A.parameters()) + list(tree.parameters())
    grads = torch.autograd.grad(l_con, low_params, retain_graph=True, allow_unused=True)
    assert all(g is None or bool((g == 0).all()) for g in grads)  # ∂L_con/∂θ_L = 0
    high_params = list(enc.mlp_high.parameters()) + list(enc.gate.parameters())
    high_params += list(head.parameters())
    grads = torch.autograd.grad(l_hier, high_params, allow_unused=True)
    assert all(g is None or bool((g == 0).all()) for g in grads)  # ∂L_hier/∂θ_H,gate = 0


def test_orthogonality_proposition_in_exact_mode(data, hg):
    enc = HyperDepthEncoder(6, dim=8, mode="exact", shared_transform=True, seed=0).double()
    low, high = enc.filters(hg)
    x = torch.from_numpy(data.x).double()
    M = enc.transform(x)[0].detach().requires_grad_(True)
    out = enc.propagate(M, M, (low, high))
    head = projection_head(8, 8, seed=1).double()
    A = torch.nn.Linear(8, 4, bias=False).double()
    u = torch.nn.functional.normalize(A(out.z_low), dim=1)
    tree = PrototypeTree(4, sizes=(4, 2)).double()
    tree.init_from(u.detach(), seed=0)
    M2 = enc.transform(x * 0.5)[0].detach()
    out2 = enc.propagate(M2, M2, (low, high))
    g_con = torch.autograd.grad(info_nce(head(out.z_contrast), head(out2.z_contrast)), M)[0]
    g_hier = torch.autograd.grad(tree.loss(u), M)[0]
    cos = (g_con * g_hier).sum() / (g_con.norm() * g_hier.norm())
    assert abs(float(cos)) < 1e-10  # float64: orthogonal to round-off
    # ∂L_hier/∂M lies in range(Π_L) and ∂L_con/∂M in range(Π_H).
    assert float(high(g_hier).norm() / g_hier.norm()) < 1e-10
    assert float(low(g_con).norm() / g_con.norm()) < 1e-10


def test_gradient_conflict_zero_in_exact_shared_and_not_in_coupled(data):
    common = {"dim": 8, "proj_dim": 8, "d_h": 4, "tree": (4, 2), "mode": "exact"}
    assert abs(gradient_conflict(HyperDepth(**common, shared_transform=True), data)) < 1e-10
    coupled = gradient_conflict(HyperDepth(**common, decouple=False), data)
    assert abs(coupled) > 1e-3  # both losses read the same Π_L M: generically not orthogonal


def test_poly_branches_propagated_together_equal_each_filter_alone(data, hg):
    # The encoder propagates [MLP_L(X) | MLP_H(X)] through P^K once (issue 51): the branches and
    # their gradients must be exactly those of applying F_L and F_H one at a time.
    enc = HyperDepthEncoder(6, dim=5, mode="poly", K=2, seed=0)
    x = torch.from_numpy(data.x).float()
    out = enc(x, hg)
    low, high = enc.filters(hg)
    a, b = enc.transform(x)
    assert torch.equal(out.z_low, low(a)) and torch.equal(out.z_high, high(b))
    weights = torch.randn(out.z_low.shape, generator=torch.Generator().manual_seed(0))
    grads = []
    for z_low, z_high in ((out.z_low, out.z_high), (low(a), high(b))):
        loss = (weights * z_low).sum() - (weights * z_high).sum()
        params = [*enc.mlp_low.parameters(), *enc.mlp_high.parameters()]
        grads.append(torch.autograd.grad(loss, params))
    assert all(torch.equal(g1, g2) for g1, g2 in zip(*grads, strict=True))
