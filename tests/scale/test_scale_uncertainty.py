"""Self-uncertainty, temperatures, sampling law and the EMA state machine (spec §7)."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.scale import (
    UncertaintyState,
    adaptive_temperature,
    attention_temperature,
    sample_with_temperature,
    self_uncertainty,
)

G = torch.Generator().manual_seed(0)


def closed_form(p1: torch.Tensor, K: int, eps: float = 1e-12) -> torch.Tensor:
    """u = -log K - p1 log(1 - (K-1) eps) - (1 - p1) log eps (spec §2.1)."""
    return -math.log(K) - p1 * math.log1p(-(K - 1) * eps) - (1 - p1) * math.log(eps)


@pytest.mark.parametrize("K", [1, 2, 7, 256])
def test_matches_the_closed_form_in_float64(K):
    logits = 3 * torch.randn(50, 256, generator=G, dtype=torch.float64)
    top = torch.softmax(logits, -1).topk(K, -1).values
    p1 = top[:, 0] / top.sum(-1)  # top-1 probability after top-K renormalisation
    # float64 sums over 256 terms of size <= 28: round-off ~1e-13, so 1e-9 is generous
    torch.testing.assert_close(
        self_uncertainty(logits, num_logits=K), closed_form(p1, K), atol=1e-9, rtol=0
    )


def test_one_hot_and_uniform_values_for_256_bins():
    one_hot = torch.full((256,), -1e4, dtype=torch.float64)
    one_hot[3] = 0.0
    assert float(self_uncertainty(one_hot)) == pytest.approx(-5.5452, abs=5e-5)
    assert float(self_uncertainty(torch.zeros(256, dtype=torch.float64))) == pytest.approx(
        21.978, abs=5e-4
    )


def test_zero_crossing_is_near_pmax_0_799():
    # u is affine in p_max: u = 0 at p_max = (log(1/eps) - log K) / log(1/eps) for tiny eps
    K = 256
    p0 = 1 - math.log(K) / (-math.log(1e-12))
    assert p0 == pytest.approx(0.799, abs=1e-3)
    assert float(closed_form(torch.tensor(p0, dtype=torch.float64), K)) == pytest.approx(
        0, abs=1e-9
    )


def test_strictly_increasing_as_pmax_decreases():
    # logits [a, 0, ..., 0]: p_max falls as a falls
    a = torch.linspace(10, 0, 41, dtype=torch.float64)
    logits = torch.zeros(41, 256, dtype=torch.float64)
    logits[:, 0] = a
    u = self_uncertainty(logits)
    assert bool((u.diff() > 0).all())


def test_shift_invariance_and_top_k_dependence_only():
    logits = torch.randn(8, 256, generator=G, dtype=torch.float64)
    u = self_uncertainty(logits, num_logits=10)
    torch.testing.assert_close(self_uncertainty(logits + 7.5, num_logits=10), u, atol=1e-12, rtol=0)
    # moving the tail below the top-10 does not change u
    order = logits.argsort(-1, descending=True)
    changed = logits.clone()
    tail = order[:, 10:]
    changed.scatter_(
        -1,
        tail,
        changed.gather(-1, tail) - torch.rand(tail.shape, generator=G, dtype=torch.float64),
    )
    torch.testing.assert_close(self_uncertainty(changed, num_logits=10), u, atol=1e-12, rtol=0)


def test_non_action_logits_have_no_effect():
    logits = torch.randn(4, 300, generator=G, dtype=torch.float64)
    u = self_uncertainty(logits, action_slice=(44, 300))
    other = logits.clone()
    other[:, :44] = torch.randn(4, 44, generator=G, dtype=torch.float64) * 100
    torch.testing.assert_close(self_uncertainty(other, action_slice=slice(44, None)), u)
    torch.testing.assert_close(self_uncertainty(logits[:, 44:]), u)


def test_temperature_range_monotonicity_and_one_hot_value():
    u = torch.linspace(-30, 30, 101, dtype=torch.float64)
    tau = adaptive_temperature(u, T0=1.5)
    assert bool(((tau > 0) & (tau < 1.5)).all()) and bool((tau.diff() > 0).all())
    one_hot = torch.full((256,), -1e4, dtype=torch.float64)
    one_hot[0] = 0.0
    # tau(one-hot) = T0 sigmoid(-5.545) = 0.00389 T0
    assert float(adaptive_temperature(self_uncertainty(one_hot), T0=2.0)) == pytest.approx(
        2 * 0.00389, rel=1e-3
    )


def test_greedy_limit_and_fallback():
    logits = torch.randn(200, 16, generator=G, dtype=torch.float64)
    greedy = logits.argmax(-1)
    # T0 -> 0 makes tau tiny: the fallback returns exactly the argmax
    tau = adaptive_temperature(self_uncertainty(logits), T0=1e-6)
    assert torch.equal(sample_with_temperature(logits, tau, G), greedy)
    # the fallback is reachable at T0 = 1 once K >= 1000: near one-hot rows give tau < 1e-3
    big = torch.full((3, 2048), -50.0, dtype=torch.float64)
    big[torch.arange(3), torch.tensor([5, 900, 2047])] = 0.0
    tau_big = adaptive_temperature(self_uncertainty(big), T0=1.0)
    assert bool((tau_big < 1e-3).all())
    assert sample_with_temperature(big, tau_big, G).tolist() == [5, 900, 2047]
    # with K = 256 and T0 = 1 it is not: tau >= 1 / 257
    assert float(adaptive_temperature(self_uncertainty(big[:, :256]), 1.0).min()) > 1e-3


def test_sampling_law_matches_softmax_over_tau_chi_square():
    logits = torch.tensor([1.0, 0.2, -0.5, 0.8, 0.0], dtype=torch.float64)
    tau = 0.7
    n = 20_000
    draws = sample_with_temperature(logits.expand(n, 5), tau, torch.Generator().manual_seed(3))
    observed = np.bincount(draws.numpy(), minlength=5)
    expected = torch.softmax(logits / tau, -1).numpy() * n
    assert stats.chisquare(observed, expected).pvalue > 0.01


def test_attention_temperature_values_and_range():
    assert attention_temperature(1.0) == pytest.approx(1.2238, abs=1e-4)
    assert attention_temperature(-1.0) == pytest.approx(0.8172, abs=1e-4)
    assert attention_temperature(0.0) == 1.0
    d = torch.linspace(-100, 100, 201, dtype=torch.float64)
    g = attention_temperature(d, kappa=3.0, sensitivity=0.5)
    assert bool(((g >= 1 / 3) & (g <= 3)).all())
    assert torch.equal(g > 1, d > 0) and bool((g.diff() >= 0).all())


def test_state_replay_hand_computed_three_steps():
    state = UncertaintyState(2)
    assert state.first and state.delta() == 0.0
    seq = [torch.tensor([1.0, 3.0]), torch.tensor([4.0, 4.0]), torch.tensor([0.0, 2.0])]
    ema, last, deltas = [], [], []
    for u in seq:
        deltas.append(state.delta())
        state.update(u, alpha=0.8)
        ema.append(state.ema_u.tolist())
        last.append(state.last_u.tolist())
    deltas.append(state.delta())
    # step 1: ema = last = u1; step 2: ema = .8 u1 + .2 u1; step 3: ema = .8 [1,3] + .2 [4,4]
    np.testing.assert_allclose(ema, [[1, 3], [1, 3], [1.6, 3.2]], rtol=1e-12)
    assert last == [[1, 3], [4, 4], [0, 2]]
    # Δ before steps 1..4: 0 (first), mean([0,0]), mean([3,1]), mean([-1.6,-1.2])
    assert deltas == pytest.approx([0.0, 0.0, 2.0, -1.4])
    gammas = [attention_temperature(d) for d in deltas[1:]]
    assert gammas == pytest.approx([1.0, 2 ** math.tanh(0.6), 2 ** math.tanh(-0.42)])
    assert gammas[1] == pytest.approx(1.4510, abs=1e-4) and gammas[2] == pytest.approx(
        0.7595, abs=1e-4
    )
    state.reset()
    assert state.first and state.delta() == 0.0 and state.ema_u.tolist() == [0.0, 0.0]


def test_batched_state_matches_per_episode_states():
    batch = UncertaintyState(3, batch_size=4)
    singles = [UncertaintyState(3) for _ in range(4)]
    for _ in range(3):
        u = torch.randn(4, 3, generator=G, dtype=torch.float64)
        batch.update(u, 0.8)
        for i, s in enumerate(singles):
            s.update(u[i], 0.8)
    torch.testing.assert_close(
        batch.delta_batch(), torch.tensor([s.delta() for s in singles], dtype=torch.float64)
    )
    assert [batch.delta(i) for i in range(4)] == [s.delta(0) for s in singles]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: self_uncertainty(torch.tensor([0.0, float("nan")])), "logits"),
        (lambda: self_uncertainty(torch.tensor([0.0, float("inf")])), "logits"),
        (lambda: self_uncertainty(torch.zeros(8), num_logits=9), "num_logits"),
        (lambda: self_uncertainty(torch.zeros(8), num_logits=0), "num_logits"),
        (lambda: self_uncertainty(torch.zeros(8), eps=0.2), "eps"),
        (lambda: self_uncertainty(torch.zeros(8), eps=0.0), "eps"),
        (lambda: self_uncertainty(torch.zeros(8), action_slice=(4, 12)), "action_slice"),
        (lambda: self_uncertainty(torch.zeros(8), action_slice=(5, 5)), "action_slice"),
        (lambda: adaptive_temperature(torch.zeros(2), T0=0.0), "T0"),
        (lambda: adaptive_temperature(torch.zeros(2), T0=-1.0), "T0"),
        (lambda: sample_with_temperature(torch.zeros(2, 3), 0.0, None), "tau"),
        (
            lambda: sample_with_temperature(torch.zeros(2, 3), torch.tensor([1.0, -1.0]), None),
            "tau",
        ),
        (lambda: attention_temperature(1.0, kappa=0.5), "kappa"),
        (lambda: UncertaintyState(3).update(torch.zeros(4), 0.8), "u_vec"),
        (lambda: UncertaintyState(3).update(torch.zeros(3), 1.0), "alpha"),
        (lambda: UncertaintyState(3).update(torch.zeros(3), -0.1), "alpha"),
        (lambda: UncertaintyState(3, batch_size=2).delta(), "episode must be given"),
        (lambda: UncertaintyState(3, batch_size=2).delta(2), r"episode must be an integer in"),
        (lambda: UncertaintyState(3).delta(1), r"episode must be an integer in \[0, 0\]"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_select_and_assign_check_index_and_round_trip():
    batch = UncertaintyState(3, batch_size=4)
    batch.update(torch.randn(4, 3, generator=G, dtype=torch.float64), 0.8)
    rows = torch.tensor([2, 0])
    part = batch.select(rows)
    torch.testing.assert_close(part.ema_u, batch.ema_u[rows])
    part.last_u += 1.0
    batch.assign(rows, part)
    torch.testing.assert_close(batch.last_u[rows], part.last_u)
    for method in (batch.select, lambda index: batch.assign(index, part)):
        with pytest.raises(TypeError, match=r"index must be a torch\.Tensor"):
            method(-1)
        with pytest.raises(TypeError, match="index must hold integer rows"):
            method(torch.tensor([True, False]))
        with pytest.raises(ValueError, match=r"index must hold rows in \[0, 4\)"):
            method(torch.tensor([4, 0]))
    with pytest.raises(ValueError, match="index needs a batched state"):
        UncertaintyState(3).assign(rows, part)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError, match="logits"):
        self_uncertainty([0.0, 1.0])
    with pytest.raises(TypeError, match="action_slice"):
        self_uncertainty(torch.zeros(4), action_slice="0:2")
    with pytest.raises(TypeError, match="generator"):
        sample_with_temperature(torch.zeros(1, 3), 1.0, generator=0)
