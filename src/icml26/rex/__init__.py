"""Rex: reversible exponential (stochastic) Runge-Kutta solvers for diffusion and flow models.

Blasingame & Liu, *Rex: A Family of Reversible Exponential (Stochastic) Runge-Kutta Solvers*,
ICML 2026 (arXiv:2502.08834). Method reconstructed from the spec in ``docs/rex.md``.
"""

from icml26.rex.brownian import SeededBrownian
from icml26.rex.parameterization import TimeVariable, convert_output
from icml26.rex.princeps import Increment, princeps_increment, princeps_step
from icml26.rex.schedules import CustomSchedule, FlowMatchingSchedule, Schedule, VPSchedule
from icml26.rex.solver import RexSolver, make_grid
from icml26.rex.tableaus import TABLEAUS, ButcherTableau, get_tableau

__all__ = [
    "TABLEAUS",
    "ButcherTableau",
    "CustomSchedule",
    "FlowMatchingSchedule",
    "Increment",
    "RexSolver",
    "Schedule",
    "SeededBrownian",
    "TimeVariable",
    "VPSchedule",
    "convert_output",
    "get_tableau",
    "make_grid",
    "princeps_increment",
    "princeps_step",
]
