"""SCALE: self-uncertainty conditioned single-pass test-time scaling for VLAs.

Choi, Ahn, Lee, Kang, Cho & Choi, *SCALE: Self-uncertainty Conditioned Adaptive Looking and
Execution for Vision-Language-Action Models*, ICML 2026 (arXiv:2602.04208). From the VLA's own
action-token logits, a scalar self-uncertainty u (KL to a smoothed one-hot minus KL to uniform)
sets each token's sampling temperature tau = T0 sigmoid(u), and its change over the episode sets
the temperature gamma of the vision encoder's self-attention at the next step, all inside the
ordinary single forward pass: no verifier, no training, no extra passes.

The package gives the method for any discrete-action VLA behind :class:`VLAAdapter`, the decoding
baselines, procedural gymnasium tasks with look-alike distractors
(``icml26/AmbiguousReach2D-v0`` and ``-v1``), tiny VLAs trained by behaviour cloning, and the
OpenVLA / LIBERO path. Deviations: docs/scale.md.

Examples
--------
>>> import torch
>>> from icml26.scale import self_uncertainty
>>> round(float(self_uncertainty(torch.tensor([50.0] + [0.0] * 255))), 4)  # near one-hot
-5.5452
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
