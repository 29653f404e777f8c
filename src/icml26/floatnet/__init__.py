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

from icml26.floatnet.constructions import (
    Table,
    build_binary_code_net,
    build_depth2_integer,
    build_depth3,
    build_narrow,
    table_values,
)
from icml26.floatnet.formats import FORMATS, FloatFormat
from icml26.floatnet.network import ENGINES, ORDERS, FloatReLUNet, NetOutput
from icml26.floatnet.verification import (
    VerifyReport,
    collisions,
    is_monotone,
    special_values,
    stratified_sample,
    verify,
)

__all__ = [
    "ENGINES",
    "FORMATS",
    "ORDERS",
    "FloatFormat",
    "FloatReLUNet",
    "NetOutput",
    "Table",
    "VerifyReport",
    "build_binary_code_net",
    "build_depth2_integer",
    "build_depth3",
    "build_narrow",
    "collisions",
    "is_monotone",
    "special_values",
    "stratified_sample",
    "table_values",
    "verify",
]
