"""TACO: end-to-end training-set compression for in-context tabular foundation models.

Zabërgja, Kamel, Kadra, Frey & Grabocka, "End-to-End Compression for Tabular Foundation Models",
ICML 2026 (arXiv:2602.05649). A compressor transformer turns the N labelled training rows into
K = ⌈N·p/100⌉ latent rows; a predictor transformer, trained jointly on a synthetic prior, answers
test rows attending only to those latents (spec §2). ``use_compressor=False`` gives the
uncompressed per-feature transformer (POT), the paper's reference.

Deviations (see docs/taco.md): small float32 CPU models meta-trained on our own MLP-SCM prior,
per-feature tokenization only, ensembles without TabPFN's preprocessing variants.
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
