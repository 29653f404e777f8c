"""Token As Score (spec §7): the 101-token bijection, its boundaries and the expected score."""

import numpy as np
import pytest
import torch

from icml26.unipercept import SCORE_TOKENS, expected_score, score_token, token_to_score


def test_score_tokens_are_a_bijection_onto_0_100():
    assert len(SCORE_TOKENS) == 101 == len(set(SCORE_TOKENS))
    assert [token_to_score(score_token(n)) for n in range(101)] == list(range(101))
    assert all(len(t) == 2 and t[0] in "acde" for t in SCORE_TOKENS)


@pytest.mark.parametrize(
    ("n", "tok"), [(0, "aa"), (25, "az"), (26, "ca"), (50, "cy"), (51, "da"), (75, "dy"),
                   (76, "ea"), (100, "ey")],
)  # fmt: skip
def test_boundary_tokens(n, tok):
    assert score_token(n) == tok
    assert token_to_score(tok) == n


def test_one_hot_gives_the_exact_integer_and_uniform_gives_50():
    for s in (0, 17, 50, 99, 100):
        logits = np.full(101, -np.inf)
        logits[s] = 0.0
        assert expected_score(logits) == s
    assert expected_score(np.zeros(101)) == pytest.approx(50.0, abs=1e-12)


def test_expected_score_is_invariant_to_a_constant_shift():
    logits = np.random.default_rng(0).normal(size=(5, 101))
    # the softmax is computed after subtracting the row max: identical up to float64 round-off
    np.testing.assert_allclose(expected_score(logits + 1234.5), expected_score(logits), atol=1e-9)


def test_torch_path_equals_numpy_and_keeps_gradients():
    logits = torch.randn(3, 101, dtype=torch.float64, requires_grad=True)
    out = expected_score(logits)
    np.testing.assert_allclose(out.detach().numpy(), expected_score(logits.detach().numpy()))
    out.sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: score_token(101), ValueError, "n must be an integer in"),
        (lambda: score_token(-1), ValueError, "n must be an integer in"),
        (lambda: score_token(3.0), TypeError, "n must be an integer"),
        (lambda: token_to_score("ba"), ValueError, "tok must be one of"),
        (lambda: token_to_score(5), TypeError, "tok must be a str"),
        (lambda: expected_score(np.zeros(100)), ValueError, "last dimension 101"),
        (lambda: expected_score(torch.zeros(2, 7)), ValueError, "last dimension 101"),
        (lambda: expected_score(np.full(101, np.nan)), ValueError, "NaN"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
