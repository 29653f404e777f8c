"""Static-CVaR reinforcement learning with the redistributed augmented Bellman operator.

Muni, Taboga, Derman, Bacon & Delage, *Reward Redistribution for CVaR MDPs using a Bellman
Operator on L-infinity*, ICML 2026 (arXiv:2602.03778). The terminal shortfall E[(b - Z)^+] of the
Rockafellar–Uryasev form is redistributed into the dense reward rho(c, r) = c^+ - (c - r)^+ on the
budget-augmented state (s, c), c_{t+1} = (c_t - r_t) / gamma; the resulting operator is a
gamma-contraction on bounded functions. Value iteration and Q-learning run on a budget grid.

The paper's full text was not available: the design follows the project's spec (inferred from the
abstract and the classical literature); see docs/cvar_rl.md, "Deviations".
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
