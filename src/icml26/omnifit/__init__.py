"""OmniFit: training-free layer-adaptive token compression for omni-modal LLMs (ICML 2026).

*OmniFit: Bridging Modalities via Layer-Adaptive Token Compression for Omnimodal Large Language
Models* (ICML 2026, OpenReview 8RY20mLzup; no arXiv id or official code found). Phase I (LAHP,
offline) profiles each decoder layer's token redundancy (effective rank of the hidden states)
and modality preference (attention share) into per-layer, per-modality budgets with the same
cost as keeping ``mu`` of the tokens everywhere; Phase II (ARTS, online) scores every video and
audio token once from the input embeddings by its norm plus its projection onto the other
modality's density-peak anchors, and keeps nested top-k sets layer by layer (merging the rest),
with no attention maps at run time.

The method is reconstructed from a reading of the paper (see docs/omnifit.md, "Deviations");
AV-Sync QA and TinyOmni are the small-scale stand-ins, ``load_omni_model`` the real path.

Examples
--------
>>> import torch
>>> from icml26.omnifit import LAHPProfile, OmniFitCompressor, TinyOmni, TinyOmniConfig
>>> from icml26.omnifit import make_dataset, run_compressed
>>> model = TinyOmni(TinyOmniConfig(n_layers=2, d=32, n_heads=2, d_ff=64), seed=0).eval()
>>> batch = make_dataset(2, windows=4, seed=0).batch(slice(None))
>>> compressor = OmniFitCompressor(LAHPProfile.uniform(2, 32), mu=0.25)
>>> with torch.no_grad():
...     out = run_compressed(model, batch, compressor)
>>> out.alive  # 6 text tokens + 25 % of 64 video and 32 audio tokens
[30, 30]
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
