"""What the TACO experiments share: the paper reference."""

PAPER = (
    "Zabërgja et al., End-to-End Compression for Tabular Foundation Models (TACO), "
    "ICML 2026 (arXiv:2602.05649)"
)
