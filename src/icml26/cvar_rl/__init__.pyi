from icml26.cvar_rl.baselines import (
    ChowPolicy,
    ChowSolution,
    bauerle_ott_vi,
    chow_cvar_vi,
    risk_neutral_vi,
)
from icml26.cvar_rl.budget import BudgetGrid, redistributed_reward
from icml26.cvar_rl.envs import TabularMDPEnv, register_envs, rollout
from icml26.cvar_rl.evaluation import (
    cvar_standard_error,
    empirical_cvar,
    exact_cvar,
    exact_return_distribution,
    optimal_cvar_rollouts,
    rollout_returns,
)
from icml26.cvar_rl.exact import (
    brute_force_cvar_then_mean,
    brute_force_static_cvar,
    brute_force_truncated_mean,
    exact_augmented_cvar,
    exact_augmented_value,
)
from icml26.cvar_rl.mdp import TabularMDP, random_layered_mdp, risky_chain
from icml26.cvar_rl.policies import (
    AbstractPolicy,
    AugmentedGreedyPolicy,
    EpisodeNotStartedError,
    MarkovPolicy,
)
from icml26.cvar_rl.q_learning import QLearningResult, cvar_q_learning, step_size
from icml26.cvar_rl.value_iteration import (
    AugmentedSolution,
    CVaREstimate,
    augmented_bellman,
    augmented_value_iteration,
    cvar_error_bound,
    cvar_from_values,
)

__all__ = [
    "AbstractPolicy",
    "AugmentedGreedyPolicy",
    "AugmentedSolution",
    "BudgetGrid",
    "CVaREstimate",
    "ChowPolicy",
    "ChowSolution",
    "EpisodeNotStartedError",
    "MarkovPolicy",
    "QLearningResult",
    "TabularMDP",
    "TabularMDPEnv",
    "augmented_bellman",
    "augmented_value_iteration",
    "bauerle_ott_vi",
    "brute_force_cvar_then_mean",
    "brute_force_static_cvar",
    "brute_force_truncated_mean",
    "chow_cvar_vi",
    "cvar_error_bound",
    "cvar_from_values",
    "cvar_q_learning",
    "cvar_standard_error",
    "empirical_cvar",
    "exact_augmented_cvar",
    "exact_augmented_value",
    "exact_cvar",
    "exact_return_distribution",
    "optimal_cvar_rollouts",
    "random_layered_mdp",
    "redistributed_reward",
    "register_envs",
    "risk_neutral_vi",
    "risky_chain",
    "rollout",
    "rollout_returns",
    "step_size",
]
