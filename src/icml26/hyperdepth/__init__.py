"""HyperDepth: hypergraph contrastive learning with a frequency-decoupled encoder and an
energy-based prototype tree (ICML 2026; arXiv id, paper and code not found).

Only the abstract was available: every equation here is the inferred design of
``../shared/specs/hyperdepth.md``. Complementary spectral filters ``F_L + F_H = I`` split the
node signal; instance contrast (InfoNCE) acts on the high-frequency path, a prototype-tree
energy on the low-frequency path, and an adaptive gate fuses the two. In exact mode with a
shared transform the two objectives' gradients are orthogonal (the theory the abstract states).

Deviations (details in docs/hyperdepth.md): the filters, gate, energy functional and the
orthogonality proposition are inferred from the abstract; baselines are small re-implementations
(HyperGRACE, TriCL-lite); the SocioPatterns nodes get label-free spectral features.

Examples
--------
>>> from icml26.hyperdepth import HyperDepth, linear_probe, make_hierarchical_hypergraph
>>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=60, dim=8)
>>> z = HyperDepth(dim=16, proj_dim=16, d_h=8, epochs=5).fit(data, seed=0).embed(data)
>>> 0.0 <= linear_probe(z, data.y, n_splits=2)["mean"] <= 1.0
True
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
