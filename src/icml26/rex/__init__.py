"""Rex: reversible exponential (stochastic) Runge-Kutta solvers for diffusion and flow models.

Blasingame & Liu, *Rex: A Family of Reversible Exponential (Stochastic) Runge-Kutta Solvers*,
ICML 2026 (arXiv:2502.08834). Method reconstructed from the spec in ``docs/rex.md``.
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
