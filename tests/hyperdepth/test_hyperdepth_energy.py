"""Spec §7 items 6–8: free energy, Gibbs minimum, the M-step, InfoNCE."""

import itertools
import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F  # noqa: N812

from icml26.hyperdepth import PrototypeTree, free_energy, gibbs, info_nce

F64 = torch.float64


def sphere_points(n=60, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(n, d, generator=g, dtype=F64), dim=1)


def test_free_energy_bounds_and_zero_temperature_limit():
    e = torch.rand(50, 7, generator=torch.Generator().manual_seed(0), dtype=F64) * 3
    tau = 0.3
    f = free_energy(e, tau)
    e_min = e.min(1).values
    assert bool((f <= e_min + 1e-12).all())
    assert bool((f >= e_min - tau * math.log(7) - 1e-12).all())
    torch.testing.assert_close(free_energy(e, 1e-6), e_min, atol=1e-5, rtol=0)


def test_gibbs_posterior_attains_the_minimum_of_fit_plus_entropy():
    rng = np.random.default_rng(0)
    e = torch.from_numpy(rng.uniform(0, 2, 6))
    tau = 0.4

    def objective(q):
        return float((q * e).sum() + tau * torch.special.xlogy(q, q).sum())

    q_star = gibbs(e, tau)
    best = objective(q_star)
    assert abs(best - float(free_energy(e, tau))) < 1e-12  # its value is F
    for _ in range(100):
        q = torch.from_numpy(rng.dirichlet(np.ones(6)))
        assert objective(q) >= best - 1e-12


def test_energy_at_gibbs_equals_free_energy_and_terms_are_nonnegative():
    u = sphere_points()
    tree = PrototypeTree(3, sizes=(6, 3, 1), tau=0.2, rho=0.5, eta=0.3, kappa=0.7).double()
    tree.init_from(u, seed=0)
    terms = tree.energy(u)
    torch.testing.assert_close(terms["fit"] + terms["entropy"], terms["free_energy"])
    for key in ("tree", "balance", "consistency"):
        assert float(terms[key]) >= -1e-12  # a squared norm and two KL divergences
    torch.testing.assert_close(tree.loss(u), terms["total"])


def test_balance_term_is_zero_for_uniform_usage():
    tree = PrototypeTree(2, sizes=(2,), tau=1.0).double()
    with torch.no_grad():
        tree.prototypes[0].copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]))
    u = torch.tensor([[0.0, 1.0], [0.0, -1.0]], dtype=F64)  # equidistant: q = (½, ½)
    assert abs(float(tree.energy(u)["balance"])) < 1e-15


def test_init_builds_a_balanced_tree():
    u = sphere_points(80)
    tree = PrototypeTree(3, sizes=(8, 4, 2)).double()
    tree.init_from(u, seed=1)
    for level in range(2):
        counts = torch.bincount(tree.parents(level), minlength=tree.sizes[level + 1])
        assert bool((counts == tree.sizes[level] // tree.sizes[level + 1]).all())


def test_m_step_is_stationary_for_fit_plus_tree():
    u = sphere_points()
    tree = PrototypeTree(3, sizes=(6, 2), tau=0.2, rho=0.3).double()
    tree.init_from(u, seed=0)
    q = [qi.detach() for qi in tree.assignments(u)]
    tree.closed_form_update(u, q)
    terms = tree.energy(u, q)
    objective = terms["fit"] + tree.rho * terms["tree"]
    grads = torch.autograd.grad(objective, list(tree.parameters()))
    assert max(float(g.abs().max()) for g in grads) < 1e-10  # float64 linear solve


def test_m_step_without_elasticity_gives_weighted_means():
    u = sphere_points()
    tree = PrototypeTree(3, sizes=(4, 2), rho=0.0).double()
    tree.init_from(u, seed=0)
    q = [qi.detach() for qi in tree.assignments(u)]
    tree.closed_form_update(u, q)
    for level, qi in enumerate(q):
        expected = (qi.T @ u) / qi.sum(0)[:, None]
        torch.testing.assert_close(tree.prototypes[level].detach(), expected)


def test_alternating_gibbs_and_m_steps_never_increase_the_energy():
    u = sphere_points(100)
    tree = PrototypeTree(3, sizes=(8, 2), tau=0.1, rho=0.2, eta=0.0, kappa=0.0).double()
    tree.init_from(u, seed=3)
    with torch.no_grad():
        tree.prototypes[0].add_(0.3 * torch.randn(8, 3, generator=torch.Generator().manual_seed(1)))
    energies = []
    for _ in range(20):
        tree.closed_form_update(u)  # E-step (Gibbs) inside, then the M-step
        energies.append(float(tree.energy(u)["total"]))
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(energies))
    assert energies[-1] < energies[0]


def test_info_nce_equals_log_n_at_equal_similarities_and_is_positive():
    n = 9
    h = torch.ones(n, 4, dtype=F64)
    assert abs(float(info_nce(h, h, 0.5)) - math.log(n)) < 1e-12
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        a, b = torch.randn(n, 4, generator=g, dtype=F64), torch.randn(n, 4, generator=g, dtype=F64)
        assert float(info_nce(a, b, 0.5)) > 0
        torch.testing.assert_close(info_nce(a, b), info_nce(b, a))  # symmetric in the views


def test_info_nce_decreases_as_positives_align():
    g = torch.Generator().manual_seed(1)
    h1 = F.normalize(torch.randn(6, 3, generator=g, dtype=F64), dim=1)
    noise = F.normalize(torch.randn(6, 3, generator=g, dtype=F64), dim=1)
    losses = [float(info_nce(h1, (1 - t) * noise + t * h1)) for t in (0.0, 0.5, 0.9, 1.0)]
    assert losses == sorted(losses, reverse=True)


@pytest.mark.parametrize("tau", [0.1, 1.0])
def test_info_nce_matches_a_loop_reference(tau):
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(5, 3, generator=g, dtype=F64), torch.randn(5, 3, generator=g, dtype=F64)
    an, bn = F.normalize(a, dim=1), F.normalize(b, dim=1)
    total = 0.0
    for i in range(5):
        s12 = [float(an[i] @ bn[j]) / tau for j in range(5)]
        s21 = [float(bn[i] @ an[j]) / tau for j in range(5)]
        total += -s12[i] + math.log(sum(math.exp(s) for s in s12))
        total += -s21[i] + math.log(sum(math.exp(s) for s in s21))
    assert abs(float(info_nce(a, b, tau)) - total / 10) < 1e-12
