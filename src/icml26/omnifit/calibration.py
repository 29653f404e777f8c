"""Phase I over a model: run LAHP's profiling (:mod:`icml26.omnifit.lahp`) on calibration data.

:func:`lahp_calibrate` runs full forwards of a :class:`~icml26.omnifit.ModelAdapter` over the
calibration batches, records each layer's input hidden states (their effective rank) and eager
attention maps (the modality preference) and returns the :class:`~icml26.omnifit.LAHPProfile`.
It sits above both the profile mathematics and the model protocol, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml26.core.validation import check_in_interval
from icml26.omnifit.accounting import cost_coefficients
from icml26.omnifit.lahp import LAHPProfile, effective_rank, modality_preference
from icml26.omnifit.protocols import check_adapter
from icml26.omnifit.tokens import AUDIO_NAME, MODALITIES, VIDEO_NAME

__all__ = ["lahp_calibrate"]


def lahp_calibrate(
    adapter: Any,
    calib_batches: Sequence[Any],
    mu: float,
    delta: float = 0.9,
    cost: tuple[float, float] | None = None,
    r_min: float = 0.02,
) -> LAHPProfile:
    """Run Phase I: full forwards over ``calib_batches`` recording hidden states and attention.

    For each layer ``l`` the input hidden states ``X^(l)`` of every sample give ``k_eff`` (mean
    over samples, rounded) and the eager attention maps of the layer give ``rho_m^(l)``.

    Parameters
    ----------
    adapter
        A :class:`~icml26.omnifit.ModelAdapter` (``embed``, ``layers``, ``run_layer``,
        ``attention_map``, ``head``, ``hidden_size``, ``ffn_size``).
    calib_batches
        Batches the adapter's ``embed`` accepts (at least one).
    mu
        Calibration retention, recorded in ``meta`` with the token count.
    delta
        Energy threshold of :func:`effective_rank`.
    cost
        ``(c1, c2)``; by default the FLOP coefficients of :func:`~icml26.omnifit.cost_coefficients`.
    r_min
        Lower retention clip stored with the profile.

    Returns
    -------
    LAHPProfile
    """
    import torch

    owner = "lahp_calibrate"
    check_adapter(adapter, owner=owner, need_attention=True)
    mu = check_in_interval("mu", mu, low=0.0, high=1.0, closed="right", owner=owner)
    delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=owner)
    if isinstance(calib_batches, str | bytes) or not isinstance(calib_batches, Sequence):
        raise TypeError(f"{owner}: calib_batches must be a sequence of batches.")
    if len(calib_batches) == 0:
        raise ValueError(f"{owner}: calib_batches must hold at least one batch.")
    d, d_ff = adapter.hidden_size, adapter.ffn_size
    c1, c2 = cost if cost is not None else cost_coefficients(d, d_ff)
    L = len(adapter.layers)
    ranks: list[list[int]] = [[] for _ in range(L)]
    attn_sum, n_batches, modality_ids = None, 0, None
    with torch.no_grad():
        for batch in calib_batches:
            h, ids, pos = adapter.embed(batch)
            if modality_ids is None:
                modality_ids = ids
            elif ids.shape != modality_ids.shape or not torch.equal(ids, modality_ids):
                raise ValueError(f"{owner}: every calibration batch must share one token layout.")
            maps = []
            for layer in range(L):
                for sample in h:
                    ranks[layer].append(effective_rank(sample, delta))
                maps.append(adapter.attention_map(layer, h, pos, None).double().mean(dim=(0, 1)))
                h = adapter.run_layer(layer, h, pos, None)
            stacked = torch.stack(maps)  # (L, n, n)
            attn_sum = stacked if attn_sum is None else attn_sum + stacked
            n_batches += 1
    rho = modality_preference(attn_sum / n_batches, modality_ids)
    k_eff = [max(1, min(d, round(float(np.mean(r))))) for r in ranks]
    counts = {name: int((modality_ids == code).sum()) for code, name in MODALITIES.items() if code}
    return LAHPProfile(
        k_eff,
        d,
        {name: rho[name].tolist() for name in rho},
        float(c1),
        float(c2),
        r_min,
        delta,
        meta={
            "mu": mu,
            "N": counts[VIDEO_NAME] + counts[AUDIO_NAME],
            "counts": counts,
            "calibration_samples": sum(len(r) for r in ranks[:1]),
            "kind": "lahp",
        },
    )
