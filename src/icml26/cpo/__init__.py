"""Conditional DPO ≡ RLHF equivalence and Constrained Preference Optimization (CPO).

Yang, Zhang, Xue, Fang, Han, Guo, *Conditional Equivalence of DPO and RLHF: Implicit Assumption,
Failure Modes, and Provable Alignment*, ICML 2026 (arXiv:2605.20834). DPO is a soft-margin ranking
loss on the policy log-ratio ``δ_θ`` with the reference log-ratio ``δ_ref`` as target; when
``δ_ref < 0`` its loss falls below ``log 2`` on the undesirable set ``U = {δ_ref < δ_θ < 0}``
where the policy still prefers the rejected response. CPO raises the target to at least ``γ``.

Deviations (details in docs/cpo.md): only the abstract and the official loss code were available;
the constrained-RLHF derivation is inferred, and the paper's 7–8B UltraFeedback results are not
reproduced (a tabular bandit and a tiny causal LM stand in). ``ConstrainedPOConfig`` and
``ConstrainedPOTrainer`` (TRL subclasses) load lazily and need ``pip install "icml26[cpo]"``.

Example
-------
>>> import torch
>>> from icml26.cpo import constrained_po_loss, dpo_loss
>>> pc, pr = torch.tensor([-1.5]), torch.tensor([-1.0])  # policy prefers y_l ...
>>> rc, rr = torch.tensor([-2.0]), torch.tensor([-1.0])  # ... less than the reference does
>>> float(dpo_loss(pc, pr, rc, rr, beta=1.0).losses) < 0.6931  # DPO is already content
True
>>> float(constrained_po_loss(pc, pr, rc, rr, beta=1.0).losses) > 0.6931  # CPO is not
True
"""

from typing import Any

from icml26.cpo.bandit import (
    TABULAR_METHODS,
    BanditProblem,
    make_bandit_problem,
    policy_metrics,
    train_tabular,
    true_pairs,
)
from icml26.cpo.diagnostics import (
    assumption_violated,
    frac_in_undesirable,
    loss_to_delta_lower_bound,
    policy_preference_accuracy,
    undesirable_mask,
)
from icml26.cpo.losses import (
    VARIANTS,
    PrefLossOutput,
    constrained_po_loss,
    constrained_po_target,
    dpo_loss,
    ipo_loss,
    sequence_logps,
    simpo_loss,
    soft_margin_ranking_loss,
)
from icml26.cpo.tiny_lm import (
    LM_METHODS,
    ArithPreferenceTask,
    TinyCausalLM,
    make_arith_preference_task,
    tiny_lm_metrics,
    train_sft,
    train_tiny_lm,
)

__all__ = [
    "LM_METHODS",
    "TABULAR_METHODS",
    "VARIANTS",
    "ArithPreferenceTask",
    "BanditProblem",
    "PrefLossOutput",
    "TinyCausalLM",
    "assumption_violated",
    "constrained_po_loss",
    "constrained_po_target",
    "dpo_loss",
    "frac_in_undesirable",
    "ipo_loss",
    "loss_to_delta_lower_bound",
    "make_arith_preference_task",
    "make_bandit_problem",
    "policy_metrics",
    "policy_preference_accuracy",
    "sequence_logps",
    "simpo_loss",
    "soft_margin_ranking_loss",
    "tiny_lm_metrics",
    "train_sft",
    "train_tabular",
    "train_tiny_lm",
    "true_pairs",
    "undesirable_mask",
]

_LAZY = {"ConstrainedPOConfig", "ConstrainedPOTrainer", "load_causal_lm"}


def __getattr__(name: str) -> Any:
    # The TRL trainer is optional and heavy: import it only when asked for.
    if name in _LAZY:
        from icml26.cpo import trainer

        return getattr(trainer, name)
    raise AttributeError(f"module 'icml26.cpo' has no attribute {name!r}")
