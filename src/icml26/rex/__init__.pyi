from icml26.rex.baselines import BDIA, DDIM, EDICT, OBELM, sde_dpm_solver_pp1_step
from icml26.rex.brownian import SeededBrownian
from icml26.rex.diffusers_adapter import from_diffusers, guided_unet, load_diffusers_unet
from icml26.rex.diffusers_scheduler import RexInversion, RexScheduler, RexSchedulerOutput
from icml26.rex.learned import MLPDenoiser, make_moons_data, train_denoiser
from icml26.rex.metrics import (
    mmd_rbf,
    observed_order,
    roundtrip_error,
    roundtrip_errors,
    sliced_wasserstein,
)
from icml26.rex.parameterization import TimeVariable, convert_output
from icml26.rex.princeps import Increment, princeps_increment, princeps_solve, princeps_step
from icml26.rex.reference import pf_ode_reference
from icml26.rex.schedules import (
    CustomSchedule,
    DiscreteVPSchedule,
    FlowMatchingSchedule,
    VPSchedule,
)
from icml26.rex.solver import RexSolver, make_grid
from icml26.rex.stability import coupled_euler_matrix, spectral_radius, stable_interval
from icml26.rex.tableaus import LEGACY_EXP_RK4, TABLEAUS, ButcherTableau, get_tableau
from icml26.rex.toy import GaussianData, GaussianMixtureData

__all__ = [
    "BDIA",
    "DDIM",
    "EDICT",
    "LEGACY_EXP_RK4",
    "OBELM",
    "TABLEAUS",
    "ButcherTableau",
    "CustomSchedule",
    "DiscreteVPSchedule",
    "FlowMatchingSchedule",
    "GaussianData",
    "GaussianMixtureData",
    "Increment",
    "MLPDenoiser",
    "RexInversion",
    "RexScheduler",
    "RexSchedulerOutput",
    "RexSolver",
    "SeededBrownian",
    "TimeVariable",
    "VPSchedule",
    "convert_output",
    "coupled_euler_matrix",
    "from_diffusers",
    "get_tableau",
    "guided_unet",
    "load_diffusers_unet",
    "make_grid",
    "make_moons_data",
    "mmd_rbf",
    "observed_order",
    "pf_ode_reference",
    "princeps_increment",
    "princeps_solve",
    "princeps_step",
    "roundtrip_error",
    "roundtrip_errors",
    "sde_dpm_solver_pp1_step",
    "sliced_wasserstein",
    "spectral_radius",
    "stable_interval",
    "train_denoiser",
]
