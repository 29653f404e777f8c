"""Spec §7: trigger edge cases against numpy.quantile, and the scoring equations (Eqs. 5-11)."""

import itertools

import numpy as np
import pytest
import torch

from icml26.ecovla import (
    QuantileTrigger,
    TemporalPrior,
    channel_energy,
    frame_similarity,
    select_keep,
    structured_scores,
)


def reference_similarity(a: np.ndarray, b: np.ndarray) -> float:
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(cos.mean())


def test_frame_similarity_matches_numpy_and_lies_in_unit_interval():
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        a = torch.randn(16, 8, generator=gen, dtype=torch.float64)
        b = torch.randn(16, 8, generator=gen, dtype=torch.float64)
        s = frame_similarity(a, b)
        assert -1.0 <= s <= 1.0
        # float64 throughout: agreement to round-off
        assert s == pytest.approx(reference_similarity(a.numpy(), b.numpy()), abs=1e-12)
    f = torch.randn(5, 3, generator=gen)
    assert frame_similarity(f, f) == pytest.approx(1.0, abs=1e-7)
    assert frame_similarity(f, -f) == pytest.approx(-1.0, abs=1e-7)
    assert frame_similarity(f, 3.0 * f) == pytest.approx(1.0, abs=1e-7)  # scale-invariant


def test_frame_similarity_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        frame_similarity(torch.zeros(4, 3), torch.zeros(5, 3))
    with pytest.raises(ValueError, match="f_t must be 2-D"):
        frame_similarity(torch.zeros(4), torch.zeros(4))
    with pytest.raises(ValueError, match="f_prev must be finite"):
        frame_similarity(torch.ones(2, 2), torch.full((2, 2), float("nan")))
    with pytest.raises(TypeError, match=r"f_t must be a torch\.Tensor"):
        frame_similarity(np.ones((2, 2)), torch.ones(2, 2))


def replay(trigger: QuantileTrigger, sequence) -> list[bool]:
    return [trigger.update(float(s)) for s in sequence]


def reference_triggers(sequence, p, window, warmup) -> list[bool]:
    out = []
    for t, s in enumerate(sequence):
        history = sequence[max(0, t - window) : t]
        out.append(len(history) >= warmup and s < np.quantile(history, p / 100, method="linear"))
    return out


@pytest.mark.parametrize("p", [0.0, 5.0, 20.0, 50.0, 80.0, 100.0])
def test_trigger_equals_numpy_quantile_rule(p):
    seq = np.random.default_rng(1).uniform(0.5, 1.0, 200)
    assert replay(QuantileTrigger(p, window=16, warmup=4), seq) == reference_triggers(seq, p, 16, 4)


def test_identical_frames_never_trigger_once_history_is_ones():
    trig = QuantileTrigger(100.0, window=8, warmup=1)
    assert not any(replay(trig, [1.0] * 50))


def test_p0_triggers_only_on_a_strict_new_window_minimum():
    seq = [0.9, 0.8, 0.85, 0.8, 0.7, 0.95, 0.7, 0.69]
    got = replay(QuantileTrigger(0.0, window=16, warmup=1), seq)
    assert got == [False, True, False, False, True, False, False, True]  # 0.8 = min: no (strict)


def test_p100_triggers_whenever_below_the_window_maximum():
    seq = [0.5, 0.9, 0.9, 0.3, 1.0, 0.99]
    got = replay(QuantileTrigger(100.0, window=16, warmup=1), seq)
    assert got == [False, False, False, True, False, True]


def test_trigger_rate_is_monotone_in_p_on_a_fixed_sequence():
    seq = np.random.default_rng(2).beta(8, 1, 500)
    rates = [np.mean(replay(QuantileTrigger(p), seq)) for p in range(0, 101, 5)]
    assert all(a <= b for a, b in itertools.pairwise(rates))


def test_warmup_and_window():
    trig = QuantileTrigger(100.0, window=3, warmup=3)
    assert replay(trig, [1.0, 0.9, 0.1]) == [False, False, False]  # window not yet full
    assert trig.update(0.05) is True
    assert len(trig.history) == 3  # sliding window of T values
    trig.reset()
    assert len(trig.history) == 0


def test_trigger_bad_input():
    with pytest.raises(ValueError, match=r"p must be in \[0, 100\]"):
        QuantileTrigger(101.0)
    with pytest.raises(ValueError, match="window must be an integer"):
        QuantileTrigger(5.0, window=0)
    with pytest.raises(ValueError, match="window must be >= warmup"):
        QuantileTrigger(5.0, window=3, warmup=4)
    with pytest.raises(ValueError, match=r"s_t must be in \[-1, 1\]"):
        QuantileTrigger(5.0).update(float("nan"))


def test_channel_energy_is_the_sum_of_squares_over_batch_and_sequence():
    x = torch.randn(2, 7, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    ref = (x.numpy() ** 2).sum(axis=(0, 1))
    np.testing.assert_allclose(channel_energy(x).numpy(), ref, rtol=1e-13)  # float64 round-off
    assert channel_energy(x[0]).shape == (5,)
    with pytest.raises(ValueError, match=r"x_int must have shape \(S, C\)"):
        channel_energy(torch.zeros(3))


def test_prior_fuse_update_and_geometric_convergence():
    calib = torch.tensor([4.0, 1.0, 0.0], dtype=torch.float64)
    e = torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64)
    prior = TemporalPrior(calib, alpha=0.7, lam=0.9)
    torch.testing.assert_close(prior.fuse(e), 0.7 * calib + 0.3 * e)
    for n in range(1, 30):
        prior.update(e)
        # E_n - e = λ^n (E_0 - e): geometric at rate λ (exact up to round-off)
        torch.testing.assert_close(prior.energy - e, 0.9**n * (calib - e), rtol=1e-12, atol=1e-14)
    prior.reset()
    torch.testing.assert_close(prior.energy, calib)
    frozen = TemporalPrior(calib, alpha=1.0, lam=1.0)
    frozen.update(e)
    torch.testing.assert_close(frozen.fuse(e), calib)  # α = λ = 1: calibration energy forever


def test_prior_bad_input():
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        TemporalPrior(torch.ones(3), alpha=1.5)
    with pytest.raises(ValueError, match=r"lam must be in \[0, 1\]"):
        TemporalPrior(torch.ones(3), lam=-0.1)
    with pytest.raises(ValueError, match="eps must have the prior's shape"):
        TemporalPrior(torch.ones(3)).fuse(torch.ones(4))
    with pytest.raises(ValueError, match="calib_energy must be >= 0"):
        TemporalPrior(torch.tensor([1.0, -1.0]))


def test_structured_scores_match_an_independent_numpy_wanda():
    rng = np.random.default_rng(4)
    w = rng.normal(size=(6, 12))
    x = rng.normal(size=(9, 12))
    energy = torch.from_numpy((x**2).sum(0))
    ref = np.linalg.norm(w, axis=0) * np.linalg.norm(x, axis=0)  # ||W[:, k]|| · ||X[:, k]||
    got = structured_scores(torch.from_numpy(w), energy)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)  # float64 round-off
    heads = structured_scores(torch.from_numpy(w), energy, "head", head_dim=4)
    np.testing.assert_allclose(heads.numpy(), ref.reshape(3, 4).sum(1), rtol=1e-12)


def test_structured_scores_bad_input():
    w = torch.ones(3, 6)
    with pytest.raises(ValueError, match="energy must have shape"):
        structured_scores(w, torch.ones(5))
    with pytest.raises(ValueError, match="head_dim must be a positive divisor"):
        structured_scores(w, torch.ones(6), "head", head_dim=4)
    with pytest.raises(ValueError, match="group must be one of 'channel', 'head'"):
        structured_scores(w, torch.ones(6), "row")
    with pytest.raises(TypeError, match="head_dim must be an int"):
        structured_scores(w, torch.ones(6), "head")


@pytest.mark.parametrize("ratio", [0.0, 0.25, 0.375, 0.4, 0.6, 0.99])
def test_select_keep_counts_and_ranks(ratio):
    n = 40
    scores = torch.from_numpy(np.random.default_rng(5).permutation(n).astype(float))
    keep = select_keep(scores, ratio)
    assert len(keep) == max(1, int(np.floor((1 - ratio) * n + 0.5)))
    assert keep.tolist() == sorted(keep.tolist())
    assert scores[keep].min() >= scores.max() - len(keep) + 1  # exactly the top ones
    assert select_keep(torch.ones(4), 0.5).tolist() == [0, 1]  # ties: lower index


def test_select_keep_bad_input():
    with pytest.raises(ValueError, match=r"ratio must be in \[0, 1\)"):
        select_keep(torch.ones(4), 1.0)
    with pytest.raises(ValueError, match="scores must be finite"):
        select_keep(torch.tensor([1.0, float("inf")]), 0.5)
