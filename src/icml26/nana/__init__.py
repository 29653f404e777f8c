"""NaNA — Native Network Anatomy: SVD Detector-Effector Units and Subspace Contribution Analysis.

*SVD as a Fast Interpretability Method for Transformers*, ICML 2026 poster 66016 (no arXiv id or
code found; only the abstract). Each MLP projection matrix is split by SVD into orthogonal rank-1
Detector-Effector Units, ``W_out = Σ_k σ_k u_k v_kᵀ``, so that ``out(x) = Σ_k α_k(x) v_k + b_out``
exactly with ``α_k = σ_k ⟨a(x), u_k⟩``; Subspace Contribution Analysis attributes a prediction to
single units, ``SCA_k = α_k ⟨v_k, W_U[:, y]⟩ / σ_f``, and ablations check it causally.

Deviations (details in docs/nana.md): the weight processing, the sign convention, SCA, the
ablations and the dominant-pathway rule are the spec's inferred design, not the paper's text.

Examples
--------
>>> import torch
>>> from icml26.nana import decompose_mlp, from_hf_gpt2, planted_mlp
>>> planted = planted_mlp(seed=0)
>>> deus = decompose_mlp(from_hf_gpt2(planted.model), layer=0, side="out")
>>> bool(torch.abs((deus.effectors[:8] * planted.v).sum(1)).min() > 0.999)
True
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
