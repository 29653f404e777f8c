"""What the powerlaw_cd reproductions share: the paper and where their figures come from."""

PAPER = (
    "Tusoni et al., Robust Causal Discovery in Real-World Time Series with Power-Laws, "
    "ICML 2026 (arXiv:2507.12257)"
)
WHERE = "spec §5 (paper tables not seen; figures from the spec's calibration run)"
WHERE_ABSTRACT = (
    "abstract: 'consistently outperforms state-of-the-art alternatives on synthetic "
    "benchmarks' (no number; the tables were not seen)"
)
