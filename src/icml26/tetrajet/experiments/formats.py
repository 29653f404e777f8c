"""``tetrajet.formats``: NVFP4/E4M3/RHT format checks (C1) and unbiasedness of the backward (C2).

C1 compares the E2M1/E4M3 casts with ml_dtypes and checks the NVFP4 scales and the random
Hadamard transform exactly (spec §7.1-7.6); C2 averages dW over Monte-Carlo draws of the
stochastic-rounding backward and measures how fast the mean approaches dYᵀX̂.

Every check here holds by construction (exact formats; an unbiased estimator's Monte-Carlo error;
the bias of deterministic rounding), so all are ``kind="sanity"``: they test the implementation,
not the paper's claims. C2 is repeated on ``replicates`` independent layers (inputs, weights and
gradients drawn afresh), which give its checks three values each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.core import Claim, ProgressBar, RunContext, register
from icml26.tetrajet.experiments.common import PAPER, RESOURCES, check_config

if TYPE_CHECKING:
    import torch

    from icml26.tetrajet import QuantSpec


@dataclass(frozen=True)
class FormatsConfig:
    """Sizes of the format checks (C1) and of the Monte-Carlo unbiasedness test (C2)."""

    n_samples: int = 100_000
    size: int = 256
    draws: tuple[int, ...] = (50, 200, 500, 2000)
    replicates: int = 3  # independent random layers for C2

    def __post_init__(self) -> None:
        check_config(self, {"n_samples": (1, 2**24), "size": (1, 4096), "replicates": (1, 1000)})
        # the C2 slopes fit log-error over the draws: at least two distinct positive counts
        if len(self.draws) < 2 or list(self.draws) != sorted(set(self.draws)) or self.draws[0] < 1:
            raise ValueError(
                f"FormatsConfig: draws must be >= 2 increasing positive counts; got {self.draws}."
            )


FORMATS = FormatsConfig()
FORMATS_PRESETS = {
    "smoke": replace(FORMATS, n_samples=10_000, size=128, draws=(4, 16)),  # seconds
    # three 128x128 layers: three values per C2 check for about the cost of one 256x256 layer
    "quick": replace(FORMATS, size=128),
    "full": FORMATS,  # the spec's 256x256 layer, three times
}


def _format_checks(n: int, g: torch.Generator) -> dict[str, bool]:
    """The exact checks of spec §7.1-7.6 (each True when it passes)."""
    import ml_dtypes
    import torch
    from scipy.linalg import hadamard

    from icml26.tetrajet import (
        E2M1_VALUES,
        cast_e4m3,
        hadamard16,
        nvfp4_quantize,
        random_signs,
        rht16,
        round_e2m1,
    )

    grid = torch.tensor(E2M1_VALUES)
    y = torch.rand(n, generator=g) * 12 - 6
    oracle_fp4 = torch.from_numpy(y.numpy().astype(ml_dtypes.float4_e2m1fn).astype(np.float32))
    z = torch.randn(n, generator=g) * 200
    clamped = np.clip(z.numpy(), -448, 448)
    oracle_e4m3 = torch.from_numpy(clamped.astype(ml_dtypes.float8_e4m3fn).astype(np.float32))
    x = torch.randn(64, 512, generator=g) * torch.rand(64, 1, generator=g) * 10
    qt = nvfp4_quantize(x)
    x_hat = qt.dequantize()
    chunk_max = qt.inner_scales.reshape(64, -1, 8).amax(-1)
    amax = x.abs().reshape(64, -1, 128).amax(-1)
    amax_hat = x_hat.abs().reshape(64, -1, 128).amax(-1)
    again = nvfp4_quantize(x_hat)
    signs = random_signs(g)
    rotation = signs[:, None] * hadamard16() / 4
    a, b = torch.randn(32, 64, generator=g), torch.randn(48, 64, generator=g)
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0])
    return {
        "e2m1_grid_fixed": torch.equal(round_e2m1(grid), grid),
        "e2m1_ties_even": round_e2m1(ties).tolist() == [0, 1, 1, 2, 2, 4, 4, 6],
        "e2m1_matches_ml_dtypes": torch.equal(round_e2m1(y), oracle_fp4),
        "e4m3_matches_ml_dtypes": torch.equal(cast_e4m3(z), oracle_e4m3),
        "chunk_scale_448": bool((chunk_max == 448).all()),
        "chunk_amax_exact": bool(torch.allclose(amax_hat, amax, rtol=1e-6)),
        "codes_bounded": bool((qt.grid_values().abs() <= 6).all()),
        "idempotent_codes": torch.equal(again.codes, qt.codes),
        "rht_orthogonal": bool(torch.allclose(rotation.T @ rotation, torch.eye(16), atol=1e-6)),
        "rht_product": bool(
            torch.allclose(rht16(a, signs) @ rht16(b, signs).T, a @ b.T, atol=1e-4)
        ),
        "h16_is_sylvester": bool((hadamard16().numpy() == hadamard(16)).all()),
    }


def _mc_errors(
    spec: QuantSpec, size: int, draws: Sequence[int], g: torch.Generator, bar: ProgressBar
) -> tuple[list[float], float]:
    """Relative error of the running mean of dW to dYᵀX̂ after each count in ``draws``, and the
    largest element-wise change of dW between the first draw and any later one."""
    import torch

    from icml26.tetrajet import nvfp4_fake_quant, quantized_linear

    x = torch.randn(size, size, generator=g)
    w = torch.randn(size, size, generator=g).requires_grad_()
    dy = torch.randn(size, size, generator=g)
    x_hat = nvfp4_fake_quant(x, outer=spec.outer, scale_round=spec.scale_round)  # Q1 (forward)
    target = dy.T @ x_hat  # the exact gradient of the function the forward computed
    y = quantized_linear(x, w, spec=spec, generator=g)
    total, errors, first, spread = torch.zeros_like(target), [], None, 0.0
    for n in range(1, max(draws) + 1):
        (grad_w,) = torch.autograd.grad(y, w, dy, retain_graph=True)
        total += grad_w
        if first is None:
            first = grad_w
        else:
            spread = max(spread, float((grad_w - first).abs().max()))
        bar.advance()
        if n in draws:
            errors.append(float((total / n - target).norm() / target.norm()))
    return errors, spread


def _slope(draws: Sequence[int], errors: Sequence[float]) -> float:
    return float(np.polyfit(np.log(draws), np.log(errors), 1)[0])


FORMATS_CLAIMS = (
    Claim("C1", "All format/unit checks pass (incl. ml_dtypes agreement)", "format_checks_failed",
          "<=", 0.0, "exact formats", "spec §7.1-7.6", source="spec", kind="sanity"),
    # The estimator is unbiased by construction (SR and an orthogonal RHT): these check the
    # implementation, not a claim of the paper that could fail on its mechanism.
    Claim("C2a", "TetraJet-v2 backward is unbiased: MC mean of dW within 3% of dYᵀX̂",
          "unbiased_rel_error", "<=", 0.03, "unbiased (E[dW] = dYᵀX̂)", "§2.2 / spec C2",
          source="paper", kind="sanity"),
    # Measured where the theory holds: with s_b rounded up no element clips at 6, so the
    # estimator is exactly unbiased and its MC error is sigma / sqrt(n) at every n. With the
    # official nearest rounding the error meets a clipping-bias floor (~0.5 % of |dW|), so its
    # slope flattens with n and depends on where the draws stop (reported, not gated).
    Claim("C2b", "The MC error of the exactly unbiased estimator (s_b rounded up) shrinks "
          "~1/sqrt(n) (log-log slope -0.5 ± 0.15)", "scale_up_slope", "within", -0.5,
          "1/sqrt(n)", "spec C2", tolerance=0.15, source="spec", kind="sanity"),
    Claim("C2c", "The naive RTN backward is biased: its dW misses dYᵀX̂ by more than the 3% "
          "that C2a allows", "naive_rel_error", ">", 0.03, "biased", "spec C2",
          source="spec", kind="sanity"),
    Claim("C2d", "The naive RTN backward is deterministic: every draw gives the same dW "
          "(largest change from the first draw)", "naive_draw_spread", "<=", 0.0,
          "deterministic", "spec C2", source="spec", kind="sanity"),
)  # fmt: skip


def _formats_plot(metrics: list[dict[str, Any]], config: FormatsConfig) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside, mean_band, seeds_note, stack

    fig, ax = plt.subplots(figsize=(7, 3.5))
    draws = np.asarray(config.draws, dtype=float)
    curves = (("unbiased_errors", "TetraJet-v2 (SR + RHT)", "o"),
              ("scale_up_errors", "TetraJet-v2, s_b rounded up", "^"),
              ("naive_errors", "naive NVFP4 (RTN)", "s"))  # fmt: skip
    for key, label, marker in curves:
        mean_band(ax, draws, stack(metrics, key), label=label, marker=marker)
    first = stack(metrics, "scale_up_errors")[:, 0].mean()
    ax.plot(draws, first * (draws / draws[0]) ** -0.5, "k--", label="1/sqrt(n)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(xlabel="Monte-Carlo draws n", ylabel="rel. error of mean dW",
           title=f"C2 unbiasedness ({seeds_note(len(metrics))})")  # fmt: skip
    legend_outside(ax)
    fig.tight_layout()
    return {"c2_unbiasedness": fig}


@register(
    name="tetrajet.formats",
    title="NVFP4/E4M3/RHT format checks and Monte-Carlo unbiasedness of the backward",
    paper=PAPER,
    claims=FORMATS_CLAIMS,
    presets=FORMATS_PRESETS,
    plot=_formats_plot,
    seeds=1,  # three independent layers inside the task give C2 its values
    deterministic_metrics=("format_checks_failed", "naive_draw_spread"),
    resources=RESOURCES,
)
def formats(config: FormatsConfig, ctx: RunContext) -> dict[str, Any]:
    """C1 format checks and C2 unbiasedness (TetraJet-v2 base vs naive RTN backward)."""
    from icml26.tetrajet import get_recipe

    g = ctx.torch_generator()
    checks = _format_checks(config.n_samples, g)
    names = ("unbiased", "naive", "scale_up")
    runs: dict[str, list[list[float]]] = {k: [] for k in names}
    spreads: list[float] = []
    total = config.replicates * 3 * max(config.draws)
    with ctx.progress(total, "Monte-Carlo backward draws") as bar:
        base = get_recipe("tetrajet_v2_base")
        # E4M3 rounding of s_b to nearest lets elements clip at 6 (a small bias the official code
        # accepts); rounding the scale up removes it, which the third run shows.
        specs = (base, get_recipe("naive_nvfp4"), replace(base, scale_round="up"))
        for _ in range(config.replicates):
            for name, spec in zip(names, specs, strict=True):
                errors, spread = _mc_errors(spec, config.size, config.draws, g, bar)
                runs[name].append(errors)
                if name == "naive":
                    spreads.append(spread)
    return {
        "format_checks_failed": float(sum(not ok for ok in checks.values())),
        "failed_checks": [name for name, ok in checks.items() if not ok],
        "naive_draw_spread": max(spreads),
        **{f"{k}_rel_error": [e[-1] for e in runs[k]] for k in names},
        **{f"{k}_slope": [_slope(config.draws, e) for e in runs[k]] for k in names},
        # per draw count, mean over the replicates (plots)
        **{f"{k}_errors": np.mean(runs[k], axis=0).tolist() for k in names},
    }
