"""PLaCy: robust time-series causal discovery from power-law spectral features.

Tusoni, Masi, Coletta, Glielmo, Arrigoni & Bartolini, "Robust Causal Discovery in Real-World Time
Series with Power-Laws", ICML 2026 (arXiv:2507.12257). Each series is cut into sliding windows,
each window's periodogram is fitted by a log-log line (exponent λ, log-amplitude A), and pairwise
VAR Granger tests run on the λ and A series instead of the raw data. Baselines (time-domain
Granger, PCMCI+, RCV-VarLiNGAM), the paper's synthetic generator and loaders for its real
layouts are included. Deviations are listed in docs/powerlaw_cd.md.

Examples
--------
>>> from icml26.powerlaw_cd import f1_tnr, placy, simulate_ou
>>> sim = simulate_ou(4, 3000, stock_like=True, stationary=False, sigma_b=1.0, seed=1)
>>> res = placy(sim.X, max_lags=10)
>>> f1, tnr = f1_tnr(sim.adjacency, res.adjacency)
>>> 0.0 <= f1 <= 1.0
True
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
