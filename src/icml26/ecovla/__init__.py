"""EcoVLA: environment-aware adaptive channel pruning with interleaved inference orchestration.

Huang, Ding, Tang, Zhu, Deng, Lin, Liu, Ren, Ji & Zhang, *EcoVLA: Environment-Aware Adaptive
Pruning with Interleaved Inference Orchestration for Vision-Language-Action Models*, ICML 2026
(arXiv:2602.00780). A training-free, plug-and-play pruner for the LLM backbone of VLA policies:
a frame-similarity trigger with an adaptive quantile threshold (EAP step 1) decides when a dense
step should re-estimate the channel/head sparsity pattern from fresh activations blended with a
history prior (EAP step 2); the pattern is physically sliced into smaller layers and computed off
the acting path (I²O). Includes a tiny VLA on HF Llama layers, a non-stationary Gymnasium
pick-and-place task, the static Wanda / fixed-interval / oracle / FastV baselines, analytic FLOPs
and a transformers loader for real VLAs.

No reference code exists (the official repository holds a README only): the method follows the
project spec (`../shared/specs/ecovla.md`); inferred details are listed in docs/ecovla.md,
"Deviations".
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
