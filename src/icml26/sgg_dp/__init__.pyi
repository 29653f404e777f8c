from icml26.sgg_dp.accountant import SGGDpEvent, SGGPLDAccountant, SGGRdpAccountant
from icml26.sgg_dp.composition import compose_delta, compose_epsilon, composed_pld
from icml26.sgg_dp.dpsgd import sgg_noise_like
from icml26.sgg_dp.gaussian import analytic_gaussian_delta, analytic_gaussian_sigma
from icml26.sgg_dp.mechanism import SGGMechanism, gaussian_member, l2_member, laplace_member
from icml26.sgg_dp.pld import make_pld
from icml26.sgg_dp.search import (
    InfeasibleMemberWarning,
    MemberResult,
    best_member,
    check_shift_monotone,
)

__all__ = [
    "InfeasibleMemberWarning",
    "MemberResult",
    "SGGDpEvent",
    "SGGMechanism",
    "SGGPLDAccountant",
    "SGGRdpAccountant",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "best_member",
    "check_shift_monotone",
    "compose_delta",
    "compose_epsilon",
    "composed_pld",
    "gaussian_member",
    "l2_member",
    "laplace_member",
    "make_pld",
    "sgg_noise_like",
]
