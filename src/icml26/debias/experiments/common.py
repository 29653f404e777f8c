"""What the debias experiments share: the paper, the resources and the bias-profile table rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import Resources

PAPER = (
    "Zhou, Aleshina, Lovyagin, Somov, Seleznyov, Panchenko, Oseledets, Tutubalina, Tyukin, "
    "Harnessing non-adversarial robustness in large language models, ICML 2026 (arXiv:2605.29816)"
)
# small tensors, a tiny MLP, MiniLM: one thread is faster; on the shared 2-core box a second one
# made MiniLM steps 5-15x slower (measured)
RESOURCES = Resources(cpus=1)


def profile_rows(metrics: list[dict[str, Any]], prefix: str) -> list[list[Any]]:
    """Per module: the record mean of bias norm, fluctuation, ρ and bias share."""
    cols = [
        np.mean([m[f"{prefix}{c}"] for m in metrics], axis=0)
        for c in ("bias_norm", "fluct", "rho", "bias_share")
    ]
    return [
        [mod, *(float(c[i]) for c in cols)] for i, mod in enumerate(metrics[0][f"{prefix}module"])
    ]
