"""Token As Score: 101 dedicated two-letter tokens encode the integer scores 0–100 (spec §2.3).

Cao et al., UniPercept (arXiv:2512.21675), following ArtiMuse: the score is read from one forward
pass, not from generated text,

    score = sum_{s=0}^{100} s * softmax(logits restricted to the 101 score tokens)[s],

with tokens 0–25 -> "a" + {a..z}, 26–50 -> "c" + {a..y}, 51–75 -> "d" + {a..y},
76–100 -> "e" + {a..y} ("b" is never a first letter).

Deviations: none.
"""

from __future__ import annotations

import numbers
import string
import sys
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from icml26.core.validation import check_array

if TYPE_CHECKING:
    import torch

__all__ = ["N_SCORES", "SCORE_TOKENS", "expected_score", "score_token", "token_to_score"]

N_SCORES: Final = 101


def _build_tokens() -> tuple[str, ...]:
    letters = string.ascii_lowercase
    tokens = ["a" + c for c in letters]  # 0..25
    for first in "cde":  # 26..50, 51..75, 76..100
        tokens += [first + c for c in letters[:25]]
    return tuple(tokens)


SCORE_TOKENS: Final[tuple[str, ...]] = _build_tokens()
_INDEX: Final = {tok: i for i, tok in enumerate(SCORE_TOKENS)}


def score_token(n: int) -> str:
    """The score token of the integer score ``n`` in 0..100.

    Examples
    --------
    >>> score_token(0), score_token(25), score_token(26), score_token(100)
    ('aa', 'az', 'ca', 'ey')
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"score_token: n must be an integer; got {n!r} ({type(n).__name__}).")
    if not 0 <= n <= 100:
        raise ValueError(f"score_token: n must be an integer in [0, 100]; got {n!r}.")
    return SCORE_TOKENS[int(n)]


def token_to_score(tok: str) -> int:
    """The integer score of a score token (surrounding whitespace is ignored).

    Examples
    --------
    >>> token_to_score("cy"), token_to_score(" da")
    (50, 51)
    """
    if not isinstance(tok, str):
        raise TypeError(f"token_to_score: tok must be a str; got {type(tok).__name__}.")
    key = tok.strip()
    if key not in _INDEX:
        raise ValueError(f"token_to_score: tok must be one of the 101 score tokens; got {tok!r}.")
    return _INDEX[key]


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def expected_score(logits_101: np.ndarray | torch.Tensor) -> float | np.ndarray | torch.Tensor:
    """Token-As-Score read-out: the expected score under softmax of the 101 score-token logits.

    Parameters
    ----------
    logits_101
        Logits over the score tokens, shape ``(..., 101)``; a ``torch.Tensor`` stays a tensor
        (differentiable), anything else is read as a float64 array.

    Returns
    -------
    float, np.ndarray or torch.Tensor
        ``sum_s s * softmax(logits)[s]`` over the last axis: a float for one row of logits.

    Examples
    --------
    >>> expected_score(np.zeros(101))
    50.0
    >>> expected_score(np.where(np.arange(101) == 73, 0.0, -np.inf))
    73.0
    """
    if _is_tensor(logits_101):
        import torch

        if logits_101.ndim == 0 or logits_101.shape[-1] != N_SCORES:
            raise ValueError(
                "expected_score: logits_101 must have last dimension 101; "
                f"got shape {tuple(logits_101.shape)}."
            )
        if not logits_101.is_floating_point():
            logits_101 = logits_101.float()
        if bool(torch.isnan(logits_101).any()) or bool((logits_101 == torch.inf).any()):
            raise ValueError("expected_score: logits_101 must not hold NaN or +inf.")
        if bool(torch.isinf(logits_101).all(dim=-1).any()):
            raise ValueError("expected_score: logits_101 has a row with every logit -inf.")
        probs = torch.softmax(logits_101, dim=-1)  # (..., 101)
        scores = torch.arange(N_SCORES, dtype=probs.dtype, device=probs.device)
        return probs @ scores
    logits = check_array("logits_101", logits_101, owner="expected_score", finite=False)
    if logits.ndim == 0 or logits.shape[-1] != N_SCORES:
        raise ValueError(
            f"expected_score: logits_101 must have last dimension 101; got shape {logits.shape}."
        )
    if np.isnan(logits).any() or (logits == np.inf).any():
        raise ValueError("expected_score: logits_101 must not hold NaN or +inf.")
    top = logits.max(axis=-1, keepdims=True)
    if np.isinf(top).any():
        raise ValueError("expected_score: logits_101 has a row with every logit -inf.")
    weights = np.exp(logits - top)  # stable softmax: shift invariance
    probs = weights / weights.sum(axis=-1, keepdims=True)
    result = probs @ np.arange(N_SCORES, dtype=float)
    return float(result) if result.ndim == 0 else result
