"""EAP step 1: the sparsity-variation predictor (EcoVLA, arXiv:2602.00780, §3.2, Eqs. 5-7).

The cosine similarity of consecutive frames' visual-encoder tokens, averaged over tokens (Eq. 5),
is compared with a quantile of its own recent history (Eqs. 6-7); a frame that is less similar to
its predecessor than the p-th percentile of the window triggers a new sparsity pattern.

Deviations: the window length T (16) and the warm-up (no trigger until 4 similarities are in the
window) are not reported by the paper and are inferred (spec §2.2). The quantile is
``numpy.quantile``'s linear interpolation, computed with its arithmetic on plain floats.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Any, final

from icml26.core.validation import check_in_interval, check_positive_int, check_tensor

if TYPE_CHECKING:
    import torch

__all__ = ["QuantileTrigger", "frame_similarity"]

MAX_WINDOW = 100_000  # a history longer than this is certainly a unit mistake


def frame_similarity(f_t: torch.Tensor, f_prev: torch.Tensor) -> float:
    """Token-wise cosine similarity of two frames' visual features, averaged over tokens (Eq. 5).

    s_t = (1/N) Σ_n cos(f_t[n], f_prev[n]); a token whose two vectors are both zero counts as
    identical (cosine 1), one zero against a non-zero vector as orthogonal (0).

    Parameters
    ----------
    f_t, f_prev
        Visual-encoder features of the current and previous frame, shape ``(N, D)``.

    Returns
    -------
    float
        s_t in [-1, 1].

    Raises
    ------
    ValueError
        If the shapes differ, are not 2-D, are empty, or hold NaN/inf.

    Examples
    --------
    >>> import torch
    >>> f = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> frame_similarity(f, f)
    1.0
    >>> frame_similarity(f, torch.tensor([[0.0, 1.0], [0.0, 1.0]]))
    0.5
    """
    import torch

    f_t = check_tensor("f_t", f_t, ndim=2, finite=True, owner="frame_similarity")
    f_prev = check_tensor("f_prev", f_prev, ndim=2, finite=True, owner="frame_similarity")
    if f_t.shape != f_prev.shape:
        raise ValueError(
            "frame_similarity: f_t and f_prev must have the same shape (N, D); "
            f"got {tuple(f_t.shape)} and {tuple(f_prev.shape)}."
        )
    if f_t.numel() == 0:
        raise ValueError(f"frame_similarity: f_t must be non-empty; got shape {tuple(f_t.shape)}.")
    a, b = f_t.double(), f_prev.double()
    # scale each token by its largest entry first so that huge finite values cannot overflow
    scale_a = a.abs().amax(dim=1, keepdim=True).clamp_min(1e-300)
    scale_b = b.abs().amax(dim=1, keepdim=True).clamp_min(1e-300)
    a, b = a / scale_a, b / scale_b
    norm_a, norm_b = a.norm(dim=1), b.norm(dim=1)  # (N,)
    cos = (a * b).sum(dim=1) / (norm_a * norm_b).clamp_min(1e-300)
    both_zero = (norm_a == 0) & (norm_b == 0)
    cos = torch.where(both_zero, torch.ones_like(cos), cos)
    return float(cos.clamp(-1.0, 1.0).mean())


def _linear_quantile(values: Any, q: float) -> float:
    """``np.quantile(values, q)`` (method "linear") in plain floats: the same arithmetic,
    without numpy's overhead on a window of a few values (a zero's sign may differ)."""
    ordered = sorted(values)
    n = len(ordered)
    virtual = (n - 1) * q
    # numpy's neighbours: both the last value at or beyond the top, else floor and floor + 1
    below, above = (-1, -1) if virtual >= n - 1 else (math.floor(virtual), math.floor(virtual) + 1)
    gamma = virtual - below
    a, b = ordered[below], ordered[above]
    diff = b - a
    return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)


@final
class QuantileTrigger:
    """Adaptive trigger u_t = [s_t < Quantile(H_t, p)] over a sliding window H_t (Eqs. 6-7).

    Parameters
    ----------
    p
        Percentile in [0, 100]; higher p triggers more often (p = 0: only a new window minimum,
        p = 100: anything below the window maximum).
    window
        T, the number of past similarities kept (default 16, inferred).
    warmup
        No trigger until the window holds at least this many values (default 4, inferred);
        must be in [1, window].

    Examples
    --------
    >>> trig = QuantileTrigger(p=50, window=4, warmup=2)
    >>> [trig.update(s) for s in (1.0, 0.9, 0.95, 0.5, 0.99)]
    [False, False, False, True, False]
    """

    def __init__(self, p: float, window: int = 16, warmup: int = 4) -> None:
        owner = "QuantileTrigger"
        self.p = check_in_interval("p", p, low=0.0, high=100.0, owner=owner)
        self.window = check_positive_int("window", window, maximum=MAX_WINDOW, owner=owner)
        self.warmup = check_positive_int("warmup", warmup, maximum=MAX_WINDOW, owner=owner)
        if self.warmup > self.window:
            raise ValueError(
                f"{owner}: window must be >= warmup (the window cannot fill otherwise); "
                f"got window={self.window}, warmup={self.warmup}."
            )
        self.history: deque[float] = deque(maxlen=self.window)

    def threshold(self) -> float:
        """Quantile(H_t, p) of the current window (linear interpolation).

        While the window holds fewer than ``warmup`` values the threshold is ``-inf``: no
        similarity lies below it, so nothing triggers (a NaN here would read as missing data).
        """
        if len(self.history) < self.warmup:
            return -math.inf
        return _linear_quantile(self.history, self.p / 100.0)

    def update(self, s_t: float) -> bool:
        """Decide u_t from the window H_t (which excludes s_t), then append s_t to the window.

        Parameters
        ----------
        s_t
            The current frame similarity, in [-1, 1].

        Returns
        -------
        bool
            True when a new sparsity pattern should be computed (Eq. 7).
        """
        s_t = check_in_interval("s_t", s_t, low=-1.0, high=1.0, owner="QuantileTrigger.update")
        threshold = self.threshold()
        triggered = bool(s_t < threshold)  # -inf during warm-up: never
        self.history.append(s_t)
        return triggered

    def reset(self) -> None:
        """Empty the window (episode start)."""
        self.history.clear()
