"""AV-Scene QA: clips in which a digit's sound must be bound to the digit seen (issue 43).

A clip has ``W`` two-second chunks. Each chunk holds one video frame (32x32, as 16 tokens of
8x8-pixel patches, 64 values each) and 8 audio tokens (16-bin log-magnitude spectra of
256-sample frames). The scene is static: 2-3 scikit-learn digits of distinct classes sit in
distinct quadrants (each exactly on one patch cell of its quadrant), over a low clutter
background with 0-2 bright non-digit distractor bars; every frame repeats it with fresh noise.
Every digit class has a fixed synthesised *timbre* (three partials at class-specific
frequencies and amplitudes); a visible digit "sounds" for 2-4 consecutive audio tokens, at most
one digit at a time, between silences (faint noise) and 0-2 loud broadband noise bursts. The
pairing timbre <-> digit class is content, not time: a model must learn it from the answers.

Question families (fixed in advance; the question is ``[family token, argument token]``):

0. AV "where is the sounding digit?"           -> its quadrant (one visible digit sounds)
1. AV "which visible digit never sounds?"      -> its class (3 visible, 2 of them sound)
2. audio-only "which digit sounds?"            -> its class
3. visual-only "which digit is in quadrant q?" -> its class

Answers are 14 classes (10 digits, then 4 quadrants). ``relevant`` marks the media tokens a
question needs (the oracle's selection): the sounding audio tokens for families 0-2, the
sounding digit's patches (0), every visible digit's patches (1), the asked digit's patches (3).
Train and test use disjoint digit images (``load_digits`` split by index: the first 1200 train).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from icml26.core.validation import (
    Seed,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.omnifit.avsync import _digit_bank, _spectra

if TYPE_CHECKING:
    import torch

__all__ = [
    "AV_FAMILIES",
    "FAMILIES",
    "N_ANSWERS",
    "SceneBatch",
    "SceneData",
    "make_scene_dataset",
    "scene_batch",
    "scene_token_layout",
]

PATCHES, PATCH_DIM, AUDIO_TOKENS, AUDIO_BINS = 16, 64, 8, 16
CHUNK = PATCHES + AUDIO_TOKENS
N_DIGITS, N_QUADRANTS = 10, 4
N_ANSWERS = N_DIGITS + N_QUADRANTS
FAMILIES = ("where_sounding", "silent_visible", "audio_only", "visual_only")
AV_FAMILIES = (0, 1)
FAMILY_WEIGHTS = (0.35, 0.25, 0.2, 0.2)
FRAME_SAMPLES = 256
MAX_SAMPLES, MAX_WINDOWS = 200_000, 64
QUESTION_LEN = 2


def _timbres() -> tuple[np.ndarray, np.ndarray]:
    """Per digit class: three FFT bins (distinct pooled-bin triples) and their amplitudes."""
    rng = np.random.default_rng(20260)
    triples: set[tuple[int, ...]] = set()
    while len(triples) < N_DIGITS:
        triples.add(tuple(sorted(rng.choice(np.arange(1, AUDIO_BINS), 3, replace=False))))
    pooled = np.array(sorted(triples))[rng.permutation(N_DIGITS)]
    return 8 * pooled + 4 + 1, rng.uniform(0.5, 1.0, (N_DIGITS, 3))


TIMBRE_BINS, TIMBRE_AMPLITUDES = _timbres()


def scene_token_layout(windows: int) -> np.ndarray:
    """Modality codes of a clip: ``[text] (16 video, 8 audio) x W [text, text]``."""
    chunk = [1] * PATCHES + [2] * AUDIO_TOKENS
    return np.asarray([0] + chunk * windows + [0] * QUESTION_LEN, dtype=np.int64)


@dataclass(frozen=True)
class SceneData:
    """A generated AV-Scene QA set (numpy arrays; see :func:`make_scene_dataset`).

    Attributes
    ----------
    video, audio
        ``(n, W, 16, 64)`` and ``(n, W, 8, 16)`` float32.
    question
        ``(n, 2)`` int64: family, argument (the quadrant for family 3, else 0).
    labels
        ``(n,)`` int64 answer classes in ``[0, 14)`` (digits, then quadrants).
    family
        ``(n,)`` int64 question family (index into :data:`FAMILIES`).
    relevant
        ``(n, 24 W)`` bool over the clip's media tokens (chunk-major, video then audio).
    sounding_patch
        ``(n, 16 W)`` bool: the video tokens of a digit that sounds in the clip.
    """

    video: np.ndarray
    audio: np.ndarray
    question: np.ndarray
    labels: np.ndarray
    family: np.ndarray
    relevant: np.ndarray
    sounding_patch: np.ndarray

    def __post_init__(self) -> None:
        from icml26.core.validation import check_array

        owner = "SceneData"
        video = check_array("video", self.video, ndim=4, dtype=np.float32, owner=owner)
        n, W = video.shape[:2]
        if not 2 <= W <= MAX_WINDOWS:
            raise ValueError(f"{owner}: video must have 2..{MAX_WINDOWS} chunks; got {W}.")
        check_array("video", video, shape=(n, W, PATCHES, PATCH_DIM), dtype=np.float32, owner=owner)
        check_array("audio", self.audio, shape=(n, W, AUDIO_TOKENS, AUDIO_BINS),
                    dtype=np.float32, owner=owner)  # fmt: skip
        check_array("question", self.question, shape=(n, QUESTION_LEN), dtype=np.int64,
                    owner=owner)  # fmt: skip
        labels = check_array("labels", self.labels, shape=(n,), dtype=np.int64, owner=owner)
        family = check_array("family", self.family, shape=(n,), dtype=np.int64, owner=owner)
        check_array("relevant", self.relevant, shape=(n, W * CHUNK), dtype=bool, owner=owner)
        check_array("sounding_patch", self.sounding_patch, shape=(n, W * PATCHES), dtype=bool,
                    owner=owner)  # fmt: skip
        if n and (labels.min() < 0 or labels.max() >= N_ANSWERS):
            raise ValueError(f"{owner}: labels must be answers in [0, {N_ANSWERS}).")
        if n and (family.min() < 0 or family.max() >= len(FAMILIES)):
            raise ValueError(f"{owner}: family must index FAMILIES, in [0, {len(FAMILIES)}).")
        question = self.question
        if n and (question.min() < 0 or question[:, 0].max() >= 4 or question[:, 1].max() >= 4):
            raise ValueError(f"{owner}: question must hold (family, argument) in [0, 4).")

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def windows(self) -> int:
        """Chunks per clip."""
        return int(self.video.shape[1])


def _sample(rng: np.random.Generator, W: int, images: np.ndarray, by_class: list) -> tuple:
    family = int(rng.choice(4, p=FAMILY_WEIGHTS))
    n_visible = 3 if family == 1 else int(rng.integers(2, 4))
    classes = rng.choice(N_DIGITS, n_visible, replace=False)
    quadrants = rng.choice(N_QUADRANTS, n_visible, replace=False)
    # the frame: clutter, distractor bars, digits each on one 8x8 cell of its quadrant
    frame = np.repeat(np.repeat(rng.uniform(0, 0.25, (8, 8)), 4, 0), 4, 1)
    cells = []
    for q in quadrants:
        r, c = divmod(int(q), 2)
        cell = (2 * r + int(rng.integers(2)), 2 * c + int(rng.integers(2)))
        cells.append(cell)
    free = [(i, j) for i in range(4) for j in range(4) if (i, j) not in cells]
    for k in rng.choice(len(free), int(rng.integers(0, 3)), replace=False):
        i, j = free[int(k)]
        bar = np.zeros((8, 8))
        if rng.random() < 0.5:
            bar[int(rng.integers(1, 7)), 1:7] = 1.0
        else:
            bar[1:7, int(rng.integers(1, 7))] = 1.0
        frame[8 * i : 8 * i + 8, 8 * j : 8 * j + 8] = np.maximum(
            frame[8 * i : 8 * i + 8, 8 * j : 8 * j + 8], rng.uniform(0.7, 1.0) * bar
        )
    for d, (i, j) in zip(classes, cells, strict=True):
        frame[8 * i : 8 * i + 8, 8 * j : 8 * j + 8] = np.maximum(
            frame[8 * i : 8 * i + 8, 8 * j : 8 * j + 8], images[rng.choice(by_class[int(d)])]
        )
    frames = frame[None] + rng.normal(0, 0.05, (W, 32, 32))
    video = frames.reshape(W, 4, 8, 4, 8).transpose(0, 1, 3, 2, 4).reshape(W, PATCHES, PATCH_DIM)
    # the sound track: events of visible digits (never overlapping), noise bursts, silence
    T = W * AUDIO_TOKENS
    sounding = [0, 1] if family == 1 else [int(rng.integers(n_visible))]
    events = [
        (v, k) for v in sounding for k in range(1 if family == 1 else int(rng.integers(1, 3)))
    ]
    slots = rng.permutation(T // 4)[: len(events) + 2]  # 4-token slots, distinct
    waves = rng.normal(0, 0.05, (T, FRAME_SAMPLES))
    t = np.arange(FRAME_SAMPLES)
    sounding_token = np.zeros(T, dtype=bool)
    tokens, timbre = [], []
    for (v, _), slot in zip(events, slots, strict=False):
        length = int(rng.integers(2, 5))
        lo = 4 * int(slot) + int(rng.integers(0, 5 - length))
        tokens += range(lo, lo + length)
        timbre += [(int(classes[v]), rng.uniform(0.7, 1.2))] * length
    d, gain = (np.asarray(x) for x in zip(*timbre, strict=True))
    phase = rng.uniform(0, 2 * np.pi, (len(tokens), 3, 1))
    partials = np.sin(2 * np.pi * TIMBRE_BINS[d][..., None] * t / FRAME_SAMPLES + phase)
    waves[tokens] += ((gain[:, None] * TIMBRE_AMPLITUDES[d])[..., None] * partials).sum(1)
    sounding_token[tokens] = True
    for slot in slots[len(events) : len(events) + int(rng.integers(0, 3))]:
        length = int(rng.integers(1, 4))
        lo = 4 * int(slot)
        waves[lo : lo + length] += rng.normal(0, 0.6, (length, FRAME_SAMPLES))
    audio = _spectra(waves).reshape(W, AUDIO_TOKENS, AUDIO_BINS)
    # question, answer and the tokens it needs
    patch_of = [4 * i + j for i, j in cells]
    needed_patches: list[int] = []
    argument = 0
    if family == 0:
        label = N_DIGITS + int(quadrants[sounding[0]])
        needed_patches = [patch_of[sounding[0]]]
    elif family == 1:
        label = int(classes[2])
        needed_patches = patch_of
    elif family == 2:
        label = int(classes[sounding[0]])
    else:
        v = int(rng.integers(n_visible))
        argument, label = int(quadrants[v]), int(classes[v])
        needed_patches = [patch_of[v]]
    patch_mask = np.zeros(PATCHES, dtype=bool)
    patch_mask[needed_patches] = True
    audio_mask = sounding_token.reshape(W, AUDIO_TOKENS) & (family != 3)
    relevant = np.concatenate([np.tile(patch_mask, (W, 1)), audio_mask], 1).reshape(-1)
    sounding_patch = np.zeros(PATCHES, dtype=bool)
    sounding_patch[[patch_of[v] for v in sounding]] = True
    question = (family, argument)
    return (video, audio, question, label, family, relevant,
            np.tile(sounding_patch, W))  # fmt: skip


def make_scene_dataset(
    n: int, windows: int = 4, seed: Seed = None, split: Literal["train", "test"] = "train"
) -> SceneData:
    """Generate ``n`` AV-Scene QA clips of ``windows`` two-second chunks.

    Parameters
    ----------
    n
        Clips (``<= 200000``).
    windows
        Chunks ``W`` per clip (``2 <= W <= 64``); the sequence has ``24 W + 3`` tokens.
    seed
        Randomness (int, generator or ``None``).
    split
        ``"train"`` or ``"test"`` digit images (disjoint).

    Examples
    --------
    >>> data = make_scene_dataset(4, windows=4, seed=0)
    >>> data.video.shape, data.audio.shape, data.relevant.shape
    ((4, 4, 16, 64), (4, 4, 8, 16), (4, 96))
    """
    owner = "make_scene_dataset"
    n = check_positive_int("n", n, maximum=MAX_SAMPLES, owner=owner)
    W = check_positive_int("windows", windows, minimum=2, maximum=MAX_WINDOWS, owner=owner)
    check_one_of("split", split, ("train", "test"), owner=owner)
    rng = numpy_generator(seed)
    images, target = _digit_bank(split)
    by_class = [np.flatnonzero(target == d) for d in range(N_DIGITS)]
    parts = [_sample(rng, W, images, by_class) for _ in range(n)]
    column = list(zip(*parts, strict=True))
    return SceneData(
        np.stack(column[0]).astype(np.float32),
        np.stack(column[1]).astype(np.float32),
        np.asarray(column[2], dtype=np.int64),
        np.asarray(column[3], dtype=np.int64),
        np.asarray(column[4], dtype=np.int64),
        np.stack(column[5]),
        np.stack(column[6]),
    )


@dataclass(frozen=True)
class SceneBatch:
    """Clips as tensors: ``video (B, W, 16, 64)``, ``audio (B, W, 8, 16)``, ``question (B, 2)``,
    ``labels (B,)``."""

    video: torch.Tensor
    audio: torch.Tensor
    question: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def scene_batch(data: SceneData, index: np.ndarray | slice) -> SceneBatch:
    """The clips ``index`` of ``data`` (a slice or integer indices) as a float32 batch."""
    import torch

    if not isinstance(data, SceneData):
        raise TypeError(f"scene_batch: data must be a SceneData; got {type(data).__name__}.")
    if not isinstance(index, slice):
        index = np.asarray(index)
        if index.dtype.kind not in "iu" or index.ndim != 1:
            raise TypeError("scene_batch: index must be a slice or a 1-D array of integers.")
        if index.size and (index.min() < -len(data) or index.max() >= len(data)):
            raise ValueError(f"scene_batch: index must lie in [0, {len(data)}).")
    return SceneBatch(
        torch.as_tensor(data.video[index]),
        torch.as_tensor(data.audio[index]),
        torch.as_tensor(data.question[index]),
        torch.as_tensor(data.labels[index]),
    )
