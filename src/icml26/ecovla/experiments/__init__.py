"""Registered reproductions of EcoVLA (spec §5), one module per experiment:

- :mod:`~icml26.ecovla.experiments.shift` — ``ecovla.shift``: EAP vs dense, static Wanda,
  random channels, fixed interval, α = 0, the oracle and EAP + FastV under mid-episode scene
  shifts (headline, C1-C3, C4c), on per-episode paired differences behind four gates;
- :mod:`~icml26.ecovla.experiments.shift_claims` — its gates, claims and sanity checks;
- :mod:`~icml26.ecovla.experiments.flops` — ``ecovla.flops``: analytic backbone FLOPs of a
  sparse step, alone and with FastV (C4a/b, sanity);
- :mod:`~icml26.ecovla.experiments.latency` — ``ecovla.latency``: sliced-weight speed-up and the
  I²O overhead on CPU (C5, wall clock);
- :mod:`~icml26.ecovla.experiments.common` — the policy config and presets, training,
  calibration sets, paired episodes and open-loop frames.

The paper's 7B VLAs, LIBERO/SIMPLER and GPU timing cannot run here; a tiny VLA (HF Llama decoder
layers) is trained by behaviour cloning on ``Shift2DPickPlace-v0`` and every method prunes the
same weights. Importing this package stays light (``icml26 list``): torch, transformers and the
system's API are imported inside the functions.
"""

from icml26.ecovla.experiments import flops, latency, shift

__all__ = ["flops", "latency", "shift"]
