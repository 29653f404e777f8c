"""Registered reproductions of EcoVLA (spec §5), one module per experiment:

- :mod:`~icml26.ecovla.experiments.shift` — ``ecovla.shift``: EAP vs static Wanda, fixed
  interval, α = 0 and the oracle under mid-episode scene shifts (C1-C3);
- :mod:`~icml26.ecovla.experiments.flops` — ``ecovla.flops``: analytic backbone FLOPs of EAP,
  alone and with FastV (C4);
- :mod:`~icml26.ecovla.experiments.latency` — ``ecovla.latency``: sliced-weight speed-up and the
  I²O overhead on CPU (C5, wall clock);
- :mod:`~icml26.ecovla.experiments.common` — the policy config and presets, training,
  calibration sets and success rates the first two share.

The paper's 7B VLAs, LIBERO/SIMPLER and GPU timing cannot run here; a tiny VLA (HF Llama decoder
layers) is trained by behaviour cloning on ``Shift2DPickPlace-v0`` and every method prunes the
same weights. Importing this package stays light (``icml26 list``): torch, transformers and the
system's API are imported inside the functions.
"""

from icml26.ecovla.experiments import flops, latency, shift

__all__ = ["flops", "latency", "shift"]
