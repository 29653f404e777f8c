"""floatnet: minimum depth and width of floating-point ReLU networks.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026, poster 65974; no arXiv id found). Parametrised float formats
F(p, emax) with our own correct rounding, ReLU networks with parameters in F whose every product
and sum is rounded, constructions that represent any f: F^d -> F exactly with depth 3 (C3) or
width 2d + 4 / d + 4 (Cw), and exhaustive/sampled verification.

Deviations: the paper's proofs were not available; the constructions are the spec author's own,
designed to meet the paper's bounds and verified exhaustively on toy formats (see
``docs/floatnet.md``).
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
