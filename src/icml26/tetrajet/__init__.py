"""tetrajet: NVFP4 fully-quantized training with OsciReset and OutControl.

Chen et al., *TetraJet-v2: Accurate NVFP4 Training for Large Language Models with Oscillation
Suppression and Outlier Control* (ICML 2026, arXiv:2510.27527). Simulated (fake-quantized) NVFP4 /
MXFP8 formats with the double-block 1x16/1x128 scales, a linear layer whose forward and both
backward GEMMs are quantized (unbiased SR + random Hadamard backward), the recipes R0-R5 (and
R2+, FP4-all-the-way), model
conversion, OutControl's MXFP8 outlier channels, OsciReset, and a tiny-GPT / OLMo2 training loop.

Deviations (details in ``docs/tetrajet.md``): everything is emulated in FP32 (no FP4 tensor cores,
so no speed-up); SR uses an equivalent threshold draw; saved tensors are X̂, Ŵ; the
memory-efficient OsciReset is gated by S0; R2 keeps all layers in NVFP4 (R2+, NVIDIA's recipe as
published, does not).
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
