"""AGSR, threshold and VQA rewards (spec §7): closed forms, shapes, TRL mode, bad input."""

import math

import numpy as np
import pytest

from icml26.unipercept import agsr_reward, threshold_reward, vqa_reward


def agsr_closed_form(e, sigma0=8.0, alpha=0.25):
    sigma = sigma0 * (1 + alpha * e / 100)
    return math.exp(-(e**2) / (2 * sigma**2))


@pytest.mark.parametrize(("e", "expected"), [(5, 0.8265), (10, 0.4754), (20, 0.0588)])
def test_agsr_matches_the_papers_worked_examples(e, expected):
    # the paper's worked examples (rounded to 3 decimals there; the spec gives 4): tolerance 1e-3
    assert agsr_reward(50.0 + e, 50.0) == pytest.approx(expected, abs=1e-3)
    assert agsr_reward(50.0 + e, 50.0) == pytest.approx(agsr_closed_form(e), rel=1e-12)


def test_agsr_far_error_vanishes_and_zero_error_is_one():
    assert agsr_reward(100.0, 50.0) < 1e-6
    assert agsr_reward(37.0, 37.0) == 1.0


def test_agsr_is_symmetric_strictly_decreasing_and_in_unit_interval():
    e = np.linspace(0.0, 49.0, 200)
    up = agsr_reward(50.0 + e, np.full_like(e, 50.0))
    down = agsr_reward(50.0 - e, np.full_like(e, 50.0))
    np.testing.assert_allclose(up, down, rtol=0, atol=1e-12)  # 50 + e - 50 vs 50 - (50 - e)
    assert np.all(np.diff(up) < 0)
    assert np.all((up > 0) & (up <= 1))


def test_agsr_dynamic_width_grows_with_the_error():
    # r = exp(-e^2 / (2 sigma^2)) => sigma_dyn(e) = e / sqrt(-2 log r): increasing in e
    e = np.array([1.0, 5.0, 10.0, 20.0, 30.0])
    r = agsr_reward(e, np.zeros_like(e))
    sigma = e / np.sqrt(-2 * np.log(r))
    np.testing.assert_allclose(sigma, 8.0 * (1 + 0.25 * e / 100), rtol=1e-12)
    assert np.all(np.diff(sigma) > 0)


def test_alpha_zero_is_a_fixed_gaussian():
    e = np.linspace(0, 40, 9)
    np.testing.assert_allclose(
        agsr_reward(e, np.zeros_like(e), sigma0=8.0, alpha=0.0), np.exp(-(e**2) / 128.0), rtol=1e-12
    )


def test_vectorised_equals_scalar():
    rng = np.random.default_rng(0)
    p, g = rng.uniform(0, 100, 50), rng.uniform(0, 100, 50)
    vector = agsr_reward(p, g)
    assert [agsr_reward(float(a), float(b)) for a, b in zip(p, g, strict=True)] == list(vector)


def test_threshold_is_a_step_and_agsr_is_smooth():
    e = np.linspace(0.25, 29.75, 60)  # steps of 0.5 that never land on the step at 10
    thr = threshold_reward(e, np.zeros_like(e), eps=10.0)
    np.testing.assert_array_equal(thr, (e < 10).astype(float))
    h = 1e-4  # central differences of a smooth function: O(h^2) error, far below the values
    fd_thr = threshold_reward(e + h, np.zeros_like(e)) - threshold_reward(e - h, np.zeros_like(e))
    fd_agsr = (agsr_reward(e + h, np.zeros_like(e)) - agsr_reward(e - h, np.zeros_like(e))) / (
        2 * h
    )
    assert np.count_nonzero(fd_thr) == 0  # zero gradient almost everywhere
    assert np.all(fd_agsr < 0)  # non-zero (negative) gradient for every 0 < e < 30


def test_agsr_dominates_threshold_off_the_step():
    e = np.linspace(10.0, 40.0, 31)
    assert np.all(agsr_reward(e, np.zeros_like(e)) > threshold_reward(e, np.zeros_like(e)))


def test_vqa_reward_reads_the_first_letter():
    assert vqa_reward(" c) JPEG", "C") == 1.0
    assert vqa_reward("D", "C") == 0.0
    np.testing.assert_array_equal(vqa_reward(["A", "b", "C"], ["A", "A", "c"]), [1.0, 0.0, 1.0])


def test_trl_mode_parses_completions():
    completions = ["cy", "I rate it 60", [{"role": "assistant", "content": "da"}], "no score"]
    rewards = agsr_reward(completions=completions, mos=[50, 50, 50, 50], prompts=["p"] * 4)
    assert rewards == pytest.approx([1.0, agsr_closed_form(10), agsr_closed_form(1), 0.0])
    assert threshold_reward(completions=["55", "70"], mos=[50.0, 50.0]) == [1.0, 0.0]
    assert vqa_reward(completions=["B) blur", "A"], answer=["B", "C"]) == [1.0, 0.0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"pred": 50.0, "gt": 50.0, "sigma0": 0.0}, ValueError, "sigma0"),
        ({"pred": 50.0, "gt": 50.0, "alpha": -0.1}, ValueError, "alpha"),
        ({"pred": np.zeros(3), "gt": np.zeros(4)}, ValueError, "same shape"),
        ({"pred": 101.0, "gt": 50.0}, ValueError, "pred must lie in"),
        ({"pred": 50.0, "gt": -1.0}, ValueError, "gt must lie in"),
        ({"pred": float("nan"), "gt": 50.0}, ValueError, "pred must be finite"),
        ({"completions": ["aa"]}, ValueError, "mos"),
    ],
)
def test_agsr_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        agsr_reward(**kwargs)


def test_threshold_and_vqa_bad_input():
    with pytest.raises(ValueError, match="eps"):
        threshold_reward(1.0, 2.0, eps=0.0)
    with pytest.raises(ValueError, match="one length"):
        vqa_reward(["A"], ["A", "B"])
    with pytest.raises(TypeError, match="pred_letter"):
        vqa_reward("A", ["A"])


def test_trl_reward_functions_read_scaled_scores_and_named_options():
    # Issue 49, item 9: "7.3 out of 10" scored as 7 (AGSR 1e-11), "(B) blur" and "Answer: B" as 0.
    from icml26.unipercept import parse_choice, unipercept_reward_funcs

    rating, choice = unipercept_reward_funcs()
    replies = ["7.3 out of 10", "73/100", "about 7.3/10", "73"]
    assert rating(completions=replies, mos=[73.0] * 4) == [1.0] * 4
    named = ["(B) blur", "Answer: B", "The answer is B.", "B. blur", "b", "(C) noise", "A"]
    assert choice(completions=named, answer=["B"] * 7) == [1.0] * 5 + [0.0] * 2
    assert parse_choice("(B) blur") == "("  # the official evaluation keeps its first-character rule


def test_group_advantages_refuse_eps_zero():
    import torch

    from icml26.unipercept import group_advantages

    with pytest.raises(ValueError, match="eps"):
        group_advantages(torch.ones(1, 4), eps=0.0)  # equal rewards: 0 / 0 = NaN into GRPO
