"""N2: recovery of planted Detector-Effector Units by the SVD, SCA and the effector readout.

The planted units are orthonormal with singular values 10 % or more apart and the unembedding's
designated columns are built along them, so the SVD, SCA and the readout recover them by
construction (up to the small noise): every check is a ``sanity`` check, never a reproduction.
Three planted models (seeds) give three values of each.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, Table, check_fields, check_in_interval, register
from icml26.nana.experiments.common import PAPER, RESOURCES, WHERE, check_sizes, seed_mean


@dataclass(frozen=True)
class PlantedConfig:
    n_units: int = 8
    noise: float = 1e-3
    ratio: float = 0.8  # σ_{k+1} = 0.8 σ_k: ≥ 10 % apart as the spec asks
    n_sequences: int = 32
    seq_len: int = 16

    def __post_init__(self) -> None:
        check_fields(self)
        owner = type(self).__name__
        # 2 n_units < d_model = 32; seq_len within the planted model's 64 positions
        check_sizes(self, {"n_units": (1, 15), "n_sequences": (1, 10**4), "seq_len": (1, 64)})
        check_in_interval("noise", self.noise, low=0.0, high=1.0, closed="left", owner=owner)
        # the spec's singular values >= 10 % apart: ratio <= 0.9
        check_in_interval("ratio", self.ratio, low=0.0, high=0.9, closed="right", owner=owner)


DEFAULT = PlantedConfig()
PRESETS = {
    "smoke": replace(DEFAULT, n_sequences=4, seq_len=8),  # seconds
    "quick": DEFAULT,
    "full": replace(DEFAULT, n_sequences=128, seq_len=32),
}
CLAIMS = (
    Claim(
        "N2a",
        "Every planted effector is recovered: min_k |cos(v̂_k, v_k)|",
        "min_abs_cos_v",
        ">=",
        0.999,
        "spec: ≥ 0.999",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N2b",
        "Every planted detector is recovered: min_k |cos(û_k, u_k)|",
        "min_abs_cos_u",
        ">=",
        0.999,
        "spec: ≥ 0.999",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N2c",
        "SCA's top-1 unit is the planted one (fraction of crafted positions)",
        "sca_top1_rate",
        ">=",
        1.0,
        "spec: 100 %",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N2d",
        "Each planted effector's top-5 tokens are its designated ones (fraction of units)",
        "effector_top5_rate",
        ">=",
        1.0,
        "spec: all units",
        WHERE,
        source="spec",
        kind="sanity",
    ),
)


def planted_tables(metrics: list[dict[str, Any]], config: PlantedConfig) -> list[Table]:
    recovered = np.asarray([m["sigma_recovered"] for m in metrics], dtype=float)  # (seeds, K)
    planted = seed_mean(metrics, "sigma_planted")
    rows = [
        [k, f"{a:.4f}", f"{recovered[:, k].mean():.4f}",
         f"{recovered[:, k].min():.4f}–{recovered[:, k].max():.4f}"]
        for k, a in enumerate(planted)
    ]  # fmt: skip
    n = len(metrics)
    return [
        Table(
            f"Planted vs recovered singular values (mean over {n} seeds)",
            ["unit", "planted σ", "SVD σ (mean)", "SVD σ (min–max)"],
            rows,
        )
    ]


@register(
    name="nana.planted",
    title="N2: recovery of planted Detector-Effector Units",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    tables=planted_tables,
    seeds=3,  # three planted models (u, v, noise drawn from the seed)
    resources=RESOURCES,
)
def planted(config: PlantedConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.nana import (
        decompose_mlp,
        effector_tokens,
        from_hf_gpt2,
        planted_mlp,
        subspace_contributions,
    )

    p = planted_mlp(
        n_units=config.n_units,
        noise=config.noise,
        ratio=config.ratio,
        seed=ctx.torch_generator("planted"),
    )
    adapter = from_hf_gpt2(p.model)
    deus = decompose_mlp(adapter, 0, "out")
    K = config.n_units
    # Planted unit k should be DEU k (σ sorted): compare the first K units in order.
    cos_v = (deus.effectors[:K] * p.v).sum(1).abs()
    cos_u = (deus.detectors[:K] * p.u).sum(1).abs()
    tokens, units = p.crafted_inputs(config.n_sequences, config.seq_len, seed=ctx.torch_generator())
    targets = p.designated[units, 0]
    sca = subspace_contributions(adapter, tokens, 0, targets, deus)  # (B, T, r)
    top1 = (sca.argmax(-1) == units).double().mean()
    readout = effector_tokens(deus, adapter, None, range(K), top=5, both_signs=False)
    top5 = [set(r.top_ids) == set(p.designated[k].tolist()) for k, r in enumerate(readout)]
    return {
        "min_abs_cos_v": float(cos_v.min()),
        "min_abs_cos_u": float(cos_u.min()),
        "sca_top1_rate": float(top1),
        "effector_top5_rate": float(np.mean(top5)),
        "sigma_recovered": [float(s) for s in deus.sigmas[:K]],
        "sigma_planted": [float(s) for s in p.sigmas],
    }
