"""Token modality codes shared by every part of OmniFit: 0 text, 1 video, 2 audio.

A sequence's layout is one ``modality_ids`` tensor of shape ``(n,)`` shared by every sample of a
batch (samples of one batch have the same interleaving, as in AV-Sync or a padded Qwen-Omni
batch). Text tokens are never dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["AUDIO", "MODALITIES", "TEXT", "VIDEO", "check_modality_ids", "modality_counts"]

TEXT, VIDEO, AUDIO = 0, 1, 2
MODALITIES = {TEXT: "text", VIDEO: "video", AUDIO: "audio"}
VIDEO_NAME, AUDIO_NAME = MODALITIES[VIDEO], MODALITIES[AUDIO]
MAX_SEQUENCE = 10**7  # longest layout accepted (bounds every per-token allocation)


def check_modality_ids(
    modality_ids: torch.Tensor, n: int | None = None, *, owner: str | None = None
) -> torch.Tensor:
    """Return ``modality_ids`` as a 1-D long tensor of codes in {0, 1, 2} (of length ``n``)."""
    import torch

    prefix = f"{owner}: " if owner else ""
    if not isinstance(modality_ids, torch.Tensor):
        raise TypeError(
            f"{prefix}modality_ids must be a torch.Tensor of codes 0/1/2; "
            f"got {type(modality_ids).__name__}."
        )
    if modality_ids.is_floating_point() or modality_ids.is_complex() or modality_ids.ndim != 1:
        raise ValueError(
            f"{prefix}modality_ids must be a 1-D integer tensor; got dtype {modality_ids.dtype}, "
            f"shape {tuple(modality_ids.shape)}."
        )
    if modality_ids.numel() > MAX_SEQUENCE:
        raise ValueError(f"{prefix}modality_ids is longer than {MAX_SEQUENCE} tokens.")
    if n is not None and modality_ids.shape[0] != n:
        raise ValueError(
            f"{prefix}modality_ids must have length {n} (one code per token); "
            f"got {modality_ids.shape[0]}."
        )
    ids = modality_ids.long()
    unknown = ~((ids == TEXT) | (ids == VIDEO) | (ids == AUDIO))
    if bool(unknown.any()):
        bad = sorted({int(x) for x in ids[unknown].tolist()})[:5]
        raise ValueError(
            f"{prefix}modality_ids must hold codes 0 (text), 1 (video), 2 (audio); got {bad}."
        )
    return ids


def modality_counts(modality_ids: torch.Tensor) -> dict[str, int]:
    """``{"video": N_v, "audio": N_a}`` of a layout."""
    ids = check_modality_ids(modality_ids, owner="modality_counts")
    return {VIDEO_NAME: int((ids == VIDEO).sum()), AUDIO_NAME: int((ids == AUDIO).sum())}
