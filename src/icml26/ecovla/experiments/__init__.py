"""Registered reproductions of EcoVLA (spec §5), one module per experiment:

- :mod:`~icml26.ecovla.experiments.indist` — ``ecovla.indist``: EAP at 25 % / 40 % vs dense,
  static Wanda, random channels and EAP + FastV in distribution (headline H, C1, C1c, C2a/b,
  C4c, HF) behind six gates (:mod:`~icml26.ecovla.experiments.indist_claims`);
- :mod:`~icml26.ecovla.experiments.shift` — ``ecovla.shift``: EAP vs static Wanda (two
  calibrations), fixed interval, α = 0 and the oracle under mid-episode scene shifts (C1a/b,
  C3a/b, Q1; sanity C3d-f) behind the shift competence gate
  (:mod:`~icml26.ecovla.experiments.shift_claims`);
- :mod:`~icml26.ecovla.experiments.flops` — ``ecovla.flops``: analytic backbone FLOPs of a
  sparse step, alone and with FastV (C4a/b, sanity);
- :mod:`~icml26.ecovla.experiments.latency` — ``ecovla.latency``: sliced-weight speed-up and the
  I²O overhead on CPU (C5, wall clock);
- :mod:`~icml26.ecovla.experiments.common` — the evaluation config and presets, calibration
  sets, lock-step paired episodes and open-loop frames.

The paper's 7B VLAs, LIBERO/SIMPLER and GPU timing cannot run here; three tiny VLAs (HF Llama
decoder layers) behaviour-cloned on ``Shift2DPickPlace-v0`` are shipped
(:mod:`icml26.ecovla.standins`) and every method prunes the same weights. Importing this
package stays light (``icml26 list``): torch, transformers and the
system's API are imported inside the functions.
"""

from icml26.ecovla.experiments import flops, indist, latency, shift

__all__ = ["flops", "indist", "latency", "shift"]
