"""``tetrajet.oscillation_toy``: OsciReset on an STE linear regression whose optima lie between
FP4 grid points (C3).

The problem and its training loop are the library's :func:`~icml26.tetrajet.oscillation_toy_problem`
and :func:`~icml26.tetrajet.train_oscillation_toy`; this experiment trains the same draw with and
without OsciReset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from icml26.core import Claim, RunContext, check_in_interval, check_positive_int, register
from icml26.tetrajet.experiments.common import PAPER, RESOURCES, check_config

if TYPE_CHECKING:
    from icml26.tetrajet import ToyResult


@dataclass(frozen=True)
class ToyConfig:
    """STE linear regression with a quantized weight vector (spec §5 C3)."""

    dim: int = 512
    n_samples: int = 2048
    steps: int = 2000
    lr: float = 1e-2
    final_lr_fraction: float = 0.1
    osc_start_fraction: float = 0.6
    period: int = 100
    track_steps: int = 25
    threshold: float = 8.0

    def __post_init__(self) -> None:
        # the bounds of oscillation_toy_problem and train_oscillation_toy
        check_config(
            self,
            {"dim": (16, 2**20), "n_samples": (1, 2**20), "steps": (10, 10**7),
             "period": (3, 10**7)},
        )  # fmt: skip
        owner = "ToyConfig"
        # OsciReset tracks track_steps + 1 < period steps of each period
        check_positive_int("track_steps", self.track_steps, maximum=self.period - 2, owner=owner)
        if self.dim % 16:
            raise ValueError(
                f"{owner}: dim must be a multiple of 16 (NVFP4 blocks); got {self.dim}."
            )
        if self.dim * self.n_samples > 2**27:
            raise ValueError(
                f"{owner}: dim * n_samples must be at most 2**27; got "
                f"{self.dim} * {self.n_samples}."
            )
        check_in_interval("lr", self.lr, low=0.0, closed="right", owner=owner)
        for name in ("final_lr_fraction", "osc_start_fraction"):
            check_in_interval(name, getattr(self, name), low=0.0, high=1.0, owner=owner)
        check_in_interval("threshold", self.threshold, low=0.0, owner=owner)


TOY = ToyConfig()
TOY_PRESETS = {
    "smoke": replace(TOY, dim=128, n_samples=256, steps=300, period=50, track_steps=10),
    # the shared 2-core machine: 256 weights and 1,200 steps keep three seeds near two minutes
    "quick": replace(TOY, dim=256, n_samples=1024, steps=1200),
    "full": replace(TOY, dim=2048, n_samples=8192, steps=5000),  # more weights, longer decay
}


TOY_CLAIMS = (
    Claim("C3a", "Premise: without reset the weights oscillate (fraction >= 0.2)",
          "osc_fraction_plain", ">=", 0.2, "oscillation is the late-training bottleneck",
          "spec C3", source="spec", kind="gate"),
    Claim("C3b", "OsciReset cuts the oscillation fraction by >= 50%", "osc_reduction", ">=", 0.5,
          "suppresses oscillation", "spec C3", source="spec",
          control="the same training without OsciReset", control_value=0.0),
    # The spec's bar was "<= +1 %", which training without OsciReset meets (0 %); the paper's
    # point is that suppressing oscillation helps, so the claim is a lower loss (issue 39).
    Claim("C3c", "OsciReset lowers the quantized loss (relative change < 0, paired per seed)",
          "loss_increase", "<", 0.0, "no loss penalty (spec: <= +1 %); lower loss (paper)",
          "spec C3 (bar: issue 39)", source="spec",
          control="the same training without OsciReset", control_value=0.0),
)  # fmt: skip


@register(
    name="tetrajet.oscillation_toy",
    title="OsciReset on an STE quantized linear regression with optima between grid points",
    paper=PAPER,
    claims=TOY_CLAIMS,
    presets=TOY_PRESETS,
    seeds=5,  # the final-loss comparison varies by seed; five give a usable 95% interval
    resources=RESOURCES,
)
def oscillation_toy(config: ToyConfig, ctx: RunContext) -> dict[str, float]:
    """C3: the same problem, data and initialisation trained with and without OsciReset."""
    from icml26.tetrajet import oscillation_toy_problem
    from icml26.tetrajet.toy import _train_toys

    # one torch seed for the draw, from the task's generator (as before the move to the library)
    seed = int(ctx.numpy_generator().integers(0, 2**62))
    problem = oscillation_toy_problem(config.dim, config.n_samples, seed=seed)
    # plain and OsciReset training, the steps before OsciReset's start trained once (the same
    # results as two train_oscillation_toy calls, bit for bit); one bar over all steps trained
    shared = min(round(config.osc_start_fraction * config.steps), config.steps)
    with ctx.progress(2 * config.steps - shared, "STE regression (plain, OsciReset)") as bar:
        plain, reset = _train_toys(
            problem,
            (False, True),
            steps=config.steps,
            lr=config.lr,
            final_lr_fraction=config.final_lr_fraction,
            osc_start_fraction=config.osc_start_fraction,
            osc_period=config.period,
            osc_track_steps=config.track_steps,
            osc_threshold=config.threshold,
            progress=bar,
        )
    return toy_claim_metrics(plain, reset)


def toy_claim_metrics(plain: ToyResult, reset: ToyResult) -> dict[str, float]:
    """The claims' metrics from a run without (``plain``) and with OsciReset (``reset``)."""
    return {
        "osc_fraction_plain": plain.oscillation_fraction,
        "osc_fraction_reset": reset.oscillation_fraction,
        "osc_reduction": (
            1 - reset.oscillation_fraction / plain.oscillation_fraction
            if plain.oscillation_fraction > 0
            else math.nan
        ),
        "loss_plain": plain.quantized_loss,
        "loss_reset": reset.quantized_loss,
        "loss_increase": reset.quantized_loss / plain.quantized_loss - 1,
    }
