"""Public API: bad inputs, shapes, member search, the DP-SGD hook, and the smoke experiments."""

import numpy as np
import pytest
import torch

from icml26.sgg_dp import (
    SGGMechanism,
    analytic_gaussian_sigma,
    best_member,
    compose_epsilon,
    gaussian_member,
    sgg_noise_like,
)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"T": 0, "k": 1.0, "p": 1.0}, r"T must be an integer >= 1"),
        ({"T": 3, "k": 0.0, "p": 1.0}, r"k must be in \(0, inf\)"),
        ({"T": 3, "k": -1.0, "p": 1.0}, r"k must be in \(0, inf\)"),
        ({"T": 3, "k": 3.0, "p": 0.0}, r"p must be in \(0, inf\)"),
        ({"T": 3, "k": 3.0, "p": 1.0, "sigma": 0.0}, r"sigma must be in \(0, inf\)"),
        ({"T": 3, "k": 3.0, "p": 1.0, "sigma": -2.0}, r"sigma must be in \(0, inf\)"),
        ({"T": 3, "k": 3.0, "p": 1.0, "sensitivity": 0.0}, r"sensitivity must be in"),
        ({"T": 3, "k": 3.0, "p": 1.0, "worst_case": "max"}, r"worst_case must be one of"),
    ],
)
def test_constructor_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SGGMechanism(**kwargs)


def test_non_integer_dimension_is_a_type_error():
    with pytest.raises(TypeError, match="T must be an integer"):
        SGGMechanism(T=2.5, k=1.0, p=1.0)


def test_privacy_queries_reject_bad_eps_and_delta():
    m = SGGMechanism(3, 3.0, 1.35, 2.0)
    with pytest.raises(ValueError, match=r"eps must be in \[0, inf\]"):
        m.delta(-0.1)
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
            m.epsilon(bad)
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
            m.calibrate(1.0, bad)
    with pytest.raises(ValueError, match=r"eps must be in \[0, inf\]"):
        m.calibrate(-1.0, 1e-5)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        analytic_gaussian_sigma(1.0, 0.0)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        compose_epsilon([(m, 2)], 2.0)


@pytest.mark.parametrize("call", ["release", "sample", "delta", "mse", "to_pld"])
def test_uncalibrated_mechanism_refuses_to_work(call):
    m = SGGMechanism(3, 3.0, 1.35)
    args = {"release": (np.zeros(3),), "sample": (2,), "delta": (1.0,), "mse": (), "to_pld": ()}
    with pytest.raises(ValueError, match=r"sigma must be a number > 0 .*calibrate"):
        getattr(m, call)(*args[call])


def test_release_adds_noise_of_the_right_shape():
    m = SGGMechanism(3, 3.0, 1.35, 1.0)
    value = np.array([1.0, 2.0, 3.0])
    out = m.release(value, seed=0)
    assert out.shape == (3,)
    np.testing.assert_allclose(out - value, m.sample(1, seed=0)[0])  # same draw under one seed
    assert m.release(np.zeros((4, 3)), seed=0).shape == (4, 3)
    with pytest.raises(ValueError, match=r"value must have shape \(T,\)"):
        m.release(np.zeros(4))


def test_best_member_is_the_minimum_of_its_table():
    best, table = best_member(0.5, 1e-2, 3, k_grid=[2.5, 3.0], p_grid=[1.35, 2.0])
    assert len(table) == 4
    assert best.mse() == pytest.approx(min(r.mse for r in table))
    gauss = next(r for r in table if (r.k, r.p) == (3.0, 2.0))
    assert gauss.mse == pytest.approx(3 * analytic_gaussian_sigma(0.5, 1e-2) ** 2, rel=1e-6)
    with pytest.raises(ValueError, match=r"p_grid must be in \(0, inf\)"):
        best_member(0.5, 1e-2, 3, p_grid=[0.0])


def test_dpsgd_hook_shapes_dtype_and_seed():
    m = SGGMechanism(6, 6.0, 1.5, 2.0)
    grad = torch.zeros(2, 3, dtype=torch.float32)
    a = sgg_noise_like(grad, m, seed=torch.Generator().manual_seed(0))
    b = sgg_noise_like(grad, m, seed=torch.Generator().manual_seed(0))
    assert a.shape == grad.shape and a.dtype == torch.float32
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="grad must have T=6 elements"):
        sgg_noise_like(torch.zeros(5), m)


def test_dpsgd_accounting_example_composes_steps():
    m = gaussian_member(4).calibrate(2.0, 1e-5)
    eps_10 = compose_epsilon([(m, 10)], 1e-5, M=200, n_panels=50)
    assert 2.0 < eps_10 < 10 * 2.0  # tight composition beats the basic bound
