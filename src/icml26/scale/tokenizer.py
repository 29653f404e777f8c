"""OpenVLA's action tokenizer: 256 uniform bins on [-1, 1], the last 256 vocabulary ids (spec §2.4).

Encoding (OpenVLA ``ActionTokenizer``): clip to [low, high], ``d = digitize(x, edges)`` with 256
uniform edges, token id = vocab_size - d. Decoding: ``d = vocab_size - id``, bin index
``clip(d - 1, 0, 254)``, value = the centre of that bin among the 255 intervals between the edges.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.core.validation import check_array, check_in_interval, check_positive_int

__all__ = ["ActionTokenizer"]


class ActionTokenizer:
    """Continuous actions <-> the last ``n_bins`` token ids of a vocabulary (OpenVLA convention).

    Parameters
    ----------
    vocab_size
        Size of the model's vocabulary; action tokens are ids ``vocab_size - n_bins`` ..
        ``vocab_size - 1`` (at most 2**24).
    n_bins
        Number of uniform bin edges (OpenVLA: 256, giving 255 bin centres), >= 2.
    low, high
        The normalised action range.

    Examples
    --------
    >>> tok = ActionTokenizer(vocab_size=264)
    >>> ids = tok.encode(np.array([-1.0, 0.0, 1.0]))
    >>> ids.tolist(), tok.decode(ids).round(4).tolist()
    ([263, 136, 8], [-0.9961, 0.0, 0.9961])
    """

    def __init__(
        self, vocab_size: int, n_bins: int = 256, low: float = -1.0, high: float = 1.0
    ) -> None:
        owner = "ActionTokenizer"
        self.n_bins = check_positive_int("n_bins", n_bins, owner=owner, minimum=2, maximum=1 << 16)
        self.vocab_size = check_positive_int(
            "vocab_size", vocab_size, owner=owner, minimum=self.n_bins, maximum=1 << 24
        )
        self.low = check_in_interval("low", low, owner=owner)
        self.high = check_in_interval("high", high, owner=owner)
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"{owner}: low < high must be finite; got low={low!r}, high={high!r}.")
        self.edges = np.linspace(self.low, self.high, self.n_bins)  # (n_bins,)
        self.centers = (self.edges[:-1] + self.edges[1:]) / 2.0  # (n_bins - 1,)

    @property
    def token_range(self) -> tuple[int, int]:
        """``(start, stop)`` of the action token ids."""
        return self.vocab_size - self.n_bins, self.vocab_size

    def encode(self, actions: np.ndarray) -> np.ndarray:
        """Token ids of ``actions`` (any shape; values clipped to [low, high])."""
        x = check_array("actions", actions, owner="ActionTokenizer.encode")
        d = np.digitize(np.clip(x, self.low, self.high), self.edges)  # 1 .. n_bins
        return (self.vocab_size - d).astype(np.int64)

    def bins(self, token_ids: np.ndarray) -> np.ndarray:
        """Bin index in [0, n_bins - 2] of each token id (out-of-range ids clip)."""
        ids = check_array("token_ids", token_ids, owner="ActionTokenizer.bins")
        ids = np.clip(ids, -1, self.vocab_size + 1).round().astype(np.int64)  # far ids clip too
        return np.clip(self.vocab_size - ids - 1, 0, self.n_bins - 2)

    def decode(self, token_ids: np.ndarray) -> np.ndarray:
        """The bin centre of each token id, as float64 (out-of-range ids clip to the end bins)."""
        return self.centers[self.bins(token_ids)]
