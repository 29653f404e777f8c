"""What the omnifit experiments share: the stand-in config, its presets, and how it is obtained.

Every experiment's config extends :class:`StandInConfig`, so every field is a flat ``--set``
key. A quick preset evaluates the shipped ``tinyomni_quick`` (:mod:`icml26.omnifit.standins`);
``--set standin=`` trains the same recipe inside the run instead. torch and the library are
imported inside the functions, so importing this module stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icml26.core import Resources, RunContext
from icml26.omnifit.experiments.checks import check_standin_config

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import torch

    from icml26.omnifit import AVSyncData, LAHPProfile, TinyOmni

__all__ = [
    "LABELS",
    "METHODS",
    "MODEL_FIELDS",
    "PAPER",
    "QUICK_STANDIN",
    "RECIPE_FIELDS",
    "RESOURCES",
    "SMOKE_STANDIN",
    "WHERE_SPEC",
    "StandInConfig",
    "auc",
    "bonus_auc",
    "calibrate",
    "load_preset_standin",
    "make_compressor",
    "paired_points",
    "prepare_standin",
    "relative_items",
    "stream_correct",
    "tone_scores",
]

PAPER = (
    "OmniFit: Bridging Modalities via Layer-Adaptive Token Compression for Omnimodal Large "
    "Language Models, ICML 2026 (OpenReview 8RY20mLzup)"
)
WHERE_SPEC = "spec §5 (the spec author's small-scale target on AV-Sync QA)"
# one thread: d <= 96 models on two OpenMP threads are slower when the cores are shared
RESOURCES = Resources(cpus=1)


@dataclass(frozen=True)
class StandInConfig:
    """The trained stand-in shared by the experiments (spec §5 full sizes)."""

    n_layers: int = 8
    d: int = 96
    n_heads: int = 4
    d_ff: int = 256
    windows: int = 8
    clutter: float = 0.3  # background clutter below the digits' intensity
    train_samples: int = 30_000
    epochs: int = 3
    batch_size: int = 32  # small batches: the cross-window retrieval needs many steps
    lr: float = 2e-3
    infonce_weight: float = 0.1
    test_samples: int = 1000
    calib_samples: int = 256
    # OmniFit hyper-parameters (paper defaults)
    lam: float = 1.5
    M: int = 32
    k: int = 5
    delta: float = 0.9
    r_min: float = 0.02
    # a shipped or saved stand-in (icml26.omnifit.standins) to evaluate instead of training one;
    # its sizes and recipe must equal the fields above
    standin: str = ""

    # train_samples = 0 means random-init weights only where a subclass allows it
    _min_train_samples = 1

    def __post_init__(self) -> None:
        check_standin_config(self, self._min_train_samples)


# The quick stand-in of spec §5 (L = 4, d = 64) is the shipped tinyomni_quick: d_ff = 128,
# 12K training streams x 8 epochs (3000 steps, about 17 CPU-minutes to retrain with
# `icml26 tool omnifit train-standin tinyomni_quick`), so that a quick run only calibrates and
# evaluates. `--set standin=` trains the same recipe in the run.
QUICK_STANDIN = {
    "n_layers": 4,
    "d": 64,
    "d_ff": 128,
    "train_samples": 12_000,
    "epochs": 8,
    "test_samples": 500,
    "standin": "tinyomni_quick",
}
SMOKE_STANDIN = {
    "n_layers": 2,
    "d": 32,
    "n_heads": 2,
    "d_ff": 64,
    "windows": 4,
    "train_samples": 64,
    "epochs": 1,
    "test_samples": 48,
    "calib_samples": 16,
    "M": 8,
}
MODEL_FIELDS = ("n_layers", "d", "n_heads", "d_ff")
RECIPE_FIELDS = (
    "train_samples", "windows", "clutter", "epochs", "batch_size", "lr", "infonce_weight"
)  # fmt: skip


def load_preset_standin(config: StandInConfig) -> tuple[TinyOmni, float]:
    """The saved stand-in ``config.standin`` and its training accuracy.

    Refuses (``ValueError``) a stand-in whose sizes or recipe differ from ``config``'s: set
    those fields to the stand-in's, or ``standin=""`` to train the config's recipe in the run.
    """
    from icml26.omnifit import load_standin

    expect = {key: getattr(config, key) for key in MODEL_FIELDS + RECIPE_FIELDS}
    model, meta = load_standin(config.standin, expect=expect)
    return model, float(meta["metrics"]["train_accuracy"])


def prepare_standin(
    config: StandInConfig, ctx: RunContext
) -> tuple[TinyOmni, AVSyncData, AVSyncData, float]:
    """The stand-in (trained here, or loaded), test and calibration sets, training accuracy."""
    from icml26.omnifit import TinyOmniConfig, make_dataset, train_standin

    def data(n: int, stream: str, split: str) -> AVSyncData:
        return make_dataset(n, config.windows, ctx.seed_for(stream), split, config.clutter)

    test, calib = (
        data(config.test_samples, "test", "test"),
        data(config.calib_samples, "calib", "train"),
    )
    if config.standin:
        model, train_accuracy = load_preset_standin(config)
        return model, test, calib, train_accuracy
    steps = config.epochs * max(1, config.train_samples // config.batch_size)
    with ctx.progress(steps, "train TinyOmni") as bar:
        model, history = train_standin(
            TinyOmniConfig(config.n_layers, config.d, config.n_heads, config.d_ff),
            **{key: getattr(config, key) for key in RECIPE_FIELDS},
            seed=ctx.seed_for("standin"),
            progress=bar,
        )
    return model, test, calib, history.train_accuracy


def calibrate(model: TinyOmni, calib: AVSyncData, config: StandInConfig) -> LAHPProfile:
    """Phase I on the held-out calibration streams (batches of 64)."""
    from icml26.omnifit import lahp_calibrate

    batches = [calib.batch(slice(s, s + 64)) for s in range(0, len(calib), 64)]
    return lahp_calibrate(model, batches, mu=0.2, delta=config.delta, r_min=config.r_min)


METHODS = (
    "full",
    "random",
    "uniform_norm",
    "fastv",
    "omnizip",
    "arts",
    "arts_trp",
    "random_lahp",
    "omnifit",
    "omnifit_prune",
)
LABELS = {
    "random": "RandomDrop",
    "uniform_norm": "Uniform-Norm",
    "fastv": "FastV-like (K=2)",
    "omnizip": "OmniZip-lite",
    "arts": "ARTS",
    "arts_trp": "ARTS+TRP",
    "random_lahp": "RandomDrop+LAHP",
    "omnifit": "OmniFit (merge)",
    "omnifit_prune": "OmniFit-prune",
}


def make_compressor(name: str, mu: float, profile: LAHPProfile, config: StandInConfig, seed: int):
    """A fresh compressor for one of :data:`METHODS` (``None`` for the full model)."""
    from icml26.omnifit import (
        FastVLike,
        LAHPProfile,
        OmniFitCompressor,
        OmniZipLite,
        RandomDrop,
        UniformNorm,
    )

    arts = {"lam": config.lam, "M": config.M, "k": config.k}
    uniform = LAHPProfile.uniform(profile.n_layers, profile.d, profile.c1, profile.c2)
    match name:
        case "full":
            return None
        case "random":
            return RandomDrop(mu, seed=seed)
        case "uniform_norm":
            return UniformNorm(mu)
        case "fastv":
            return FastVLike(mu, K=2)
        case "omnizip":
            return OmniZipLite(mu)
        case "arts":
            return OmniFitCompressor(uniform, mu, **arts)
        case "arts_trp":
            return OmniFitCompressor(profile.with_uniform_preference(), mu, **arts)
        case "random_lahp":
            return RandomDrop(mu, profile=profile, seed=seed)
        case "omnifit":
            return OmniFitCompressor(profile, mu, **arts)
        case "omnifit_prune":
            return OmniFitCompressor(profile, mu, mode="prune", **arts)
    raise ValueError(f"unknown method {name!r}")


def tone_scores(tone: np.ndarray, generator: torch.Generator) -> torch.Tensor:
    """Oracle scores of AV-Sync streams: the tone windows' video and audio tokens first.

    ``tone`` is ``(B, W)`` (:attr:`AVSyncData.tone`); every answer is about a tone window, so
    these tokens hold what the question needs. Ties are broken at random (``generator``);
    the question's text tokens score 0 (they are always kept).
    """
    import torch

    from icml26.omnifit.avsync import AUDIO_TOKENS, PATCHES, QUESTION_LEN

    t = torch.as_tensor(tone)
    B, W = t.shape
    per_token = t[:, :, None].expand(B, W, PATCHES + AUDIO_TOKENS).reshape(B, -1).double()
    noise = 0.5 * torch.rand(per_token.shape, generator=generator, dtype=torch.float64)
    return torch.cat([per_token + noise, torch.zeros(B, QUESTION_LEN, dtype=torch.float64)], 1)


def stream_correct(
    model: TinyOmni, data: AVSyncData, factory: Callable[[slice], object], batch_size: int = 250
) -> tuple[np.ndarray, list[int]]:
    """Per-stream correctness under ``factory(batch_slice)`` (a fresh compressor or ``None``).

    Returns the ``(n,)`` bool array and the alive counts per layer of the first batch.
    """
    import numpy as np
    import torch

    from icml26.omnifit import run_compressed

    parts, alive = [], None
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            index = slice(start, min(len(data), start + batch_size))
            batch = data.batch(index)
            out = run_compressed(model, batch, factory(index))
            parts.append((out.logits.argmax(-1) == batch.labels).numpy())
            alive = out.alive if alive is None else alive
    return np.concatenate(parts), alive


def paired_points(method: np.ndarray, control: np.ndarray) -> list[float]:
    """Per-stream paired differences in accuracy points, ``100 (method - control)``."""
    import numpy as np

    return (100.0 * (np.asarray(method, float) - np.asarray(control, float))).tolist()


def relative_items(method: np.ndarray, full: np.ndarray) -> list[float]:
    """Per-stream values whose mean is the relative performance ``100 acc_method / acc_full``.

    The ratio's linearisation (delta method) on paired streams:
    ``v_i = 100 R + 100 (m_i - R f_i) / mean(f)`` with ``R = mean(m) / mean(f)``; the
    values average to ``100 R`` exactly, and their bootstrap interval (``over="items"``) is the
    ratio's, using the pairing of the method's and the full model's correctness.
    """
    import numpy as np

    m, f = np.asarray(method, float), np.asarray(full, float)
    mean_full = max(float(f.mean()), 1e-12)
    ratio = float(m.mean()) / mean_full
    return (100.0 * ratio + 100.0 * (m - ratio * f) / mean_full).tolist()


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for boolean ``labels`` (ties count half)."""
    from scipy.stats import rankdata

    positive = int(labels.sum())
    negative = labels.size - positive
    if positive == 0 or negative == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - positive * (positive + 1) / 2) / (positive * negative))


def bonus_auc(model: Any, data: Any, M: int, k: int, batch_size: int) -> dict[str, float]:
    """How well the ARTS cross-modal bonus (and the norm) single out the sounding digit's
    patches among the video tokens (AUC over all video tokens of the clips)."""
    import numpy as np
    import torch

    from icml26.omnifit import arts_scores, modality_anchors, scene_batch

    bonus, norm = [], []
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            h, ids, _ = model.embed(scene_batch(data, slice(start, start + batch_size)))
            anchors = modality_anchors(h, ids, M=M, k=k)
            with_bonus = arts_scores(h, ids, anchors, lam=1.0)
            plain = h.norm(dim=-1)
            video = ids == 1
            bonus.append((with_bonus - plain)[:, video].numpy())
            norm.append(plain[:, video].numpy())
    labels = data.sounding_patch.reshape(-1)
    return {
        "bonus_auc": auc(np.concatenate(bonus).reshape(-1), labels),
        "norm_auc": auc(np.concatenate(norm).reshape(-1), labels),
    }
