"""PLaCy: robust time-series causal discovery from power-law spectral features.

Tusoni, Masi, Coletta, Glielmo, Arrigoni & Bartolini, "Robust Causal Discovery in Real-World Time
Series with Power-Laws", ICML 2026 (arXiv:2507.12257). Each series is cut into sliding windows,
each window's periodogram is fitted by a log-log line (exponent λ, log-amplitude A), and pairwise
VAR Granger tests run on the λ and A series instead of the raw data. Baselines (time-domain
Granger, PCMCI+, RCV-VarLiNGAM), the paper's synthetic generator and loaders for its real
layouts are included. Deviations are listed in docs/powerlaw_cd.md.

Example
-------
>>> from icml26.powerlaw_cd import f1_tnr, placy, simulate_ou
>>> sim = simulate_ou(4, 3000, stock_like=True, stationary=False, sigma_b=1.0, seed=1)
>>> res = placy(sim.X, max_lags=10)
>>> f1, tnr = f1_tnr(sim.adjacency, res.adjacency)
>>> 0.0 <= f1 <= 1.0
True
"""

from icml26.powerlaw_cd.baselines import pcmci_plus, var_lingam
from icml26.powerlaw_cd.datasets import (
    RIVERS_COLUMNS,
    Dataset,
    load_airquality,
    load_csv_with_truth,
    load_rivers,
    load_sardine_anchovy_sst,
    windowed_scores,
)
from icml26.powerlaw_cd.features import (
    n_windows,
    powerlaw_features,
    powerlaw_features_reference,
    window_frequencies,
)
from icml26.powerlaw_cd.graph import benjamini_hochberg, find_cycle, is_dag, make_acyclic
from icml26.powerlaw_cd.metrics import f1_tnr
from icml26.powerlaw_cd.placy import CDResult, granger_on_features, granger_pairwise, placy
from icml26.powerlaw_cd.simulate import SimResult, powerlaw_noise, simulate_ou
from icml26.powerlaw_cd.sweep import dataset_seed, run_benchmark
from icml26.powerlaw_cd.wald import WaldResult, lagged_design, var_wald_test

__all__ = [
    "RIVERS_COLUMNS",
    "CDResult",
    "Dataset",
    "SimResult",
    "WaldResult",
    "benjamini_hochberg",
    "dataset_seed",
    "f1_tnr",
    "find_cycle",
    "granger_on_features",
    "granger_pairwise",
    "is_dag",
    "lagged_design",
    "load_airquality",
    "load_csv_with_truth",
    "load_rivers",
    "load_sardine_anchovy_sst",
    "make_acyclic",
    "n_windows",
    "pcmci_plus",
    "placy",
    "powerlaw_features",
    "powerlaw_features_reference",
    "powerlaw_noise",
    "run_benchmark",
    "simulate_ou",
    "var_lingam",
    "var_wald_test",
    "window_frequencies",
    "windowed_scores",
]
