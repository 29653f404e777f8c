"""AV-Sync QA: a synthetic audio-visual stream whose answers link an audio event to a frame.

A stream has ``W`` time windows. Window ``w`` holds 16 video tokens (the 8x8 patches, 64 pixel
values each, of a 32x32 frame: a static clutter background of amplitude 0.3 by default, one
scikit-learn digit upsampled x2 in one of four quadrants, mild per-frame noise; the digit and
quadrant change only every 2-4 windows) and 8 audio tokens (16-bin log-magnitude spectra of
256-sample frames: noise, plus a tone burst in one or two windows whose pitch class ``c`` is one
of 8 frequencies). The question (4-6 tokens, left-padded to 6) asks one of

0. "which digit is on screen during pitch c?"      -> digit (classes 0-9)
1. "which pitch plays while digit d is shown?"     -> pitch (classes 10-17)
2. "in which quadrant is the digit when c plays?"  -> quadrant (classes 18-21)

and the answer is read from the last position. Train and test use disjoint digit images
(``load_digits`` split by index: the first 1200 images train, the rest test).

Deviations (see docs/omnifit.md): the question names the pitch in type 2 (two tones would
otherwise make it ambiguous); the digit shown in a tone's segment is unique within the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from icml26.core.validation import (
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)

if TYPE_CHECKING:
    import torch

    from icml26.core.validation import Seed

__all__ = ["AVSyncBatch", "AVSyncData", "make_dataset"]

PATCHES, PATCH_DIM, AUDIO_TOKENS, AUDIO_BINS, QUESTION_LEN = 16, 64, 8, 16, 6
N_DIGITS, N_PITCHES, N_QUADRANTS = 10, 8, 4
N_CLASSES = N_DIGITS + N_PITCHES + N_QUADRANTS
PAD, WHICH, WHERE, DIGIT, PITCH, DURING, WHILE, WHEN, PLEASE, NOW = range(10)
DIGIT_TOKEN, PITCH_TOKEN = 10, 20  # DIGIT_TOKEN + d, PITCH_TOKEN + c
VOCAB = PITCH_TOKEN + N_PITCHES
TRAIN_IMAGES = 1200
FRAME_SAMPLES = 256
MAX_SAMPLES, MAX_WINDOWS = 200_000, 256


@dataclass(frozen=True)
class AVSyncBatch:
    """A batch as tensors: ``video (B, W, 16, 64)``, ``audio (B, W, 8, 16)``, ``text (B, 6)``."""

    video: torch.Tensor
    audio: torch.Tensor
    text: torch.Tensor
    labels: torch.Tensor

    def __post_init__(self) -> None:
        from icml26.core.validation import check_tensor

        owner = "AVSyncBatch"
        video = check_tensor("video", self.video, ndim=4, owner=owner, finite=True)
        B, W = video.shape[:2]
        check_tensor("video", video, shape=(B, W, PATCHES, PATCH_DIM), owner=owner)
        check_tensor("audio", self.audio, shape=(B, W, AUDIO_TOKENS, AUDIO_BINS), owner=owner,
                     finite=True)  # fmt: skip
        check_tensor("text", self.text, shape=(B, None), floating=False, owner=owner)
        check_tensor("labels", self.labels, shape=(B,), floating=False, owner=owner)
        if W > MAX_WINDOWS or W < 1:
            raise ValueError(f"{owner}: video must have 1..{MAX_WINDOWS} windows; got {W}.")
        if self.text.numel() and (int(self.text.min()) < 0 or int(self.text.max()) >= VOCAB):
            raise ValueError(f"{owner}: text must hold token ids in [0, {VOCAB}).")

    def __len__(self) -> int:
        return int(self.labels.shape[0])


@dataclass(frozen=True)
class AVSyncData:
    """A generated data set (numpy arrays; see :func:`make_dataset`).

    Attributes
    ----------
    video, audio, text, labels
        ``(n, W, 16, 64)`` float32, ``(n, W, 8, 16)`` float32, ``(n, 6)`` int64, ``(n,)`` int64.
    qtype
        Question type per sample (0 digit, 1 pitch, 2 quadrant).
    tone
        ``(n, W)`` bool: the windows with a tone burst.
    """

    video: np.ndarray
    audio: np.ndarray
    text: np.ndarray
    labels: np.ndarray
    qtype: np.ndarray
    tone: np.ndarray

    def __post_init__(self) -> None:
        from icml26.core.validation import check_array

        owner = "AVSyncData"
        video = check_array("video", self.video, ndim=4, dtype=np.float32, owner=owner)
        n, W = video.shape[:2]
        check_array("video", video, shape=(n, W, PATCHES, PATCH_DIM), dtype=np.float32, owner=owner)
        check_array("audio", self.audio, shape=(n, W, AUDIO_TOKENS, AUDIO_BINS), dtype=np.float32,
                    owner=owner)  # fmt: skip
        text = check_array("text", self.text, shape=(n, None), dtype=np.int64, owner=owner)
        labels = check_array("labels", self.labels, shape=(n,), dtype=np.int64, owner=owner)
        check_array("qtype", self.qtype, shape=(n,), dtype=np.int64, owner=owner)
        check_array("tone", self.tone, shape=(n, W), dtype=bool, owner=owner)
        if W > MAX_WINDOWS or W < 1:
            raise ValueError(f"{owner}: video must have 1..{MAX_WINDOWS} windows; got {W}.")
        if text.size and (text.min() < 0 or text.max() >= VOCAB):
            raise ValueError(f"{owner}: text must hold token ids in [0, {VOCAB}).")
        if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
            raise ValueError(f"{owner}: labels must be classes in [0, {N_CLASSES}).")

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def windows(self) -> int:
        """Time windows per stream."""
        return int(self.video.shape[1])

    def batch(self, index: np.ndarray | slice, dtype: torch.dtype | None = None) -> AVSyncBatch:
        """The samples ``index`` (a slice or integer indices) as tensors (float32 by default)."""
        import torch

        dtype = torch.float32 if dtype is None else dtype
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"AVSyncData: dtype must be a floating torch.dtype; got {dtype!r}.")
        if not isinstance(index, slice):
            index = np.asarray(index)
            if index.dtype.kind not in "iu" or index.ndim != 1:
                raise TypeError("AVSyncData: index must be a slice or a 1-D array of integers.")
            if index.size and (index.min() < -len(self) or index.max() >= len(self)):
                raise ValueError(f"AVSyncData: index must lie in [0, {len(self)}).")
        return AVSyncBatch(
            torch.as_tensor(self.video[index], dtype=dtype),
            torch.as_tensor(self.audio[index], dtype=dtype),
            torch.as_tensor(self.text[index]),
            torch.as_tensor(self.labels[index]),
        )


def _digit_bank(split: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images, target = digits.images / 16.0, digits.target
    if split == "train":
        return images[:TRAIN_IMAGES], target[:TRAIN_IMAGES]
    return images[TRAIN_IMAGES:], target[TRAIN_IMAGES:]


def _spectra(frames: np.ndarray) -> np.ndarray:
    """16-bin log-magnitude spectra of ``(..., 256)`` frames (bins 1-128 pooled by 8)."""
    magnitude = np.abs(np.fft.rfft(frames, axis=-1))[..., 1:129]
    return np.log1p(magnitude.reshape(*frames.shape[:-1], AUDIO_BINS, 8).mean(-1))


def _sample(
    rng: np.random.Generator,
    W: int,
    images: np.ndarray,
    by_class: list,
    clutter: float,
    qtypes: tuple,
) -> tuple:
    # segments of 2-4 windows, each showing one digit image in one quadrant
    bounds, start = [], 0
    while start < W:
        length = int(rng.integers(2, 5))
        bounds.append((start, min(W, start + length)))
        start += length
    digits = []
    for _ in bounds:
        choices = [d for d in range(N_DIGITS) if not digits or d != digits[-1]]
        digits.append(int(rng.choice(choices)))
    unique = [s for s, d in enumerate(digits) if digits.count(d) == 1] or [0]
    n_tones = min(len(unique), int(rng.integers(1, 3)))
    tone_segments = rng.choice(unique, size=n_tones, replace=False)
    pitches = rng.choice(N_PITCHES, size=n_tones, replace=False)
    background = np.repeat(np.repeat(rng.uniform(0, clutter, (8, 8)), 4, 0), 4, 1)
    background = background + rng.uniform(0, clutter / 3, (32, 32))
    quadrants = rng.integers(0, N_QUADRANTS, size=len(bounds))
    frames_by_segment = np.empty((len(bounds), 32, 32))
    segment_of = np.empty(W, dtype=np.int64)
    for s, (lo, hi) in enumerate(bounds):
        big = np.repeat(np.repeat(images[rng.choice(by_class[digits[s]])], 2, 0), 2, 1)  # (16, 16)
        frame = background.copy()
        r, c = divmod(int(quadrants[s]), 2)
        block = frame[16 * r : 16 * r + 16, 16 * c : 16 * c + 16]
        np.maximum(block, big, out=block)
        frames_by_segment[s] = frame
        segment_of[lo:hi] = s
    frames_w = frames_by_segment[segment_of] + rng.normal(0, 0.05, (W, 32, 32))
    # (W, 32, 32) -> (W, 16 patches, 64): patch (i, j) is rows 8i..8i+7, columns 8j..8j+7
    video = frames_w.reshape(W, 4, 8, 4, 8).transpose(0, 1, 3, 2, 4).reshape(W, PATCHES, PATCH_DIM)
    # audio: noise everywhere, a tone burst in one window of each tone segment
    frames = rng.normal(0, 0.3, (W, AUDIO_TOKENS, FRAME_SAMPLES))
    tone = np.zeros(W, dtype=bool)
    t = np.arange(FRAME_SAMPLES)
    tone_window = {}
    for seg, pitch in zip(tone_segments, pitches, strict=True):
        lo, hi = bounds[int(seg)]
        w = int(rng.integers(lo, hi))
        bin_ = 8 * (2 * int(pitch)) + 4 + 1  # the centre of pooled bin 2c
        phase = rng.uniform(0, 2 * np.pi, (AUDIO_TOKENS, 1))
        frames[w] += np.sin(2 * np.pi * bin_ * t / FRAME_SAMPLES + phase)
        tone[w] = True
        tone_window[int(pitch)] = int(seg)
    audio = _spectra(frames)
    # question
    qtype = int(rng.choice(qtypes))
    pitch = int(rng.choice(pitches))
    seg = tone_window[pitch]
    if qtype == 0:
        words, label = [WHICH, DIGIT, DURING, PITCH_TOKEN + pitch], digits[seg]
    elif qtype == 1:
        words, label = [WHICH, PITCH, WHILE, DIGIT_TOKEN + digits[seg]], N_DIGITS + pitch
    else:
        words, label = (
            [WHERE, DIGIT, WHEN, PITCH_TOKEN + pitch],
            N_DIGITS + N_PITCHES + int(quadrants[seg]),
        )
    fillers = [int(x) for x in rng.choice([PLEASE, NOW], size=int(rng.integers(0, 3)))]
    words = fillers + words
    text = [PAD] * (QUESTION_LEN - len(words)) + words
    return video, audio, text, label, qtype, tone


def make_dataset(
    n: int,
    windows: int = 8,
    seed: Seed = None,
    split: Literal["train", "test"] = "train",
    clutter: float = 0.3,
    question_types: Sequence[int] = (0, 1, 2),
) -> AVSyncData:
    """Generate ``n`` AV-Sync QA streams of ``windows`` windows.

    Parameters
    ----------
    n
        Samples (``<= 200000``).
    windows
        Time windows ``W`` per stream (``2 <= W <= 256``); the sequence has ``24 W + 6`` tokens.
    seed
        Randomness (int, generator or ``None``).
    split
        ``"train"`` or ``"test"`` digit images (disjoint).
    clutter
        Amplitude of the static background clutter in ``[0, 1]`` (digits are in ``[0, 1]``).
    question_types
        The question types to draw from (a non-empty subset of ``(0, 1, 2)``).

    Examples
    --------
    >>> data = make_dataset(4, windows=8, seed=0)
    >>> data.video.shape, data.audio.shape, data.text.shape
    ((4, 8, 16, 64), (4, 8, 8, 16), (4, 6))
    """
    owner = "make_dataset"
    n = check_positive_int("n", n, maximum=MAX_SAMPLES, owner=owner)
    W = check_positive_int("windows", windows, minimum=2, maximum=MAX_WINDOWS, owner=owner)
    check_one_of("split", split, ("train", "test"), owner=owner)
    clutter = check_in_interval("clutter", clutter, low=0.0, high=1.0, owner=owner)
    if isinstance(question_types, str | bytes) or not isinstance(question_types, Sequence):
        raise TypeError(f"{owner}: question_types must be a sequence of 0, 1, 2.")
    qtypes = tuple(question_types)
    if not qtypes or any(q not in (0, 1, 2) or isinstance(q, bool) for q in qtypes):
        raise ValueError(f"{owner}: question_types must be a non-empty subset of (0, 1, 2).")
    rng = numpy_generator(seed)
    images, target = _digit_bank(split)
    by_class = [np.flatnonzero(target == d) for d in range(N_DIGITS)]
    parts = [_sample(rng, W, images, by_class, clutter, qtypes) for _ in range(n)]
    return AVSyncData(
        np.stack([p[0] for p in parts]).astype(np.float32),
        np.stack([p[1] for p in parts]).astype(np.float32),
        np.asarray([p[2] for p in parts], dtype=np.int64),
        np.asarray([p[3] for p in parts], dtype=np.int64),
        np.asarray([p[4] for p in parts], dtype=np.int64),
        np.stack([p[5] for p in parts]),
    )
