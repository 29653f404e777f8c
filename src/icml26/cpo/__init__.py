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

Examples
--------
>>> import torch
>>> from icml26.cpo import constrained_po_loss, dpo_loss
>>> pc, pr = torch.tensor([-1.5]), torch.tensor([-1.0])  # policy prefers y_l ...
>>> rc, rr = torch.tensor([-2.0]), torch.tensor([-1.0])  # ... less than the reference does
>>> float(dpo_loss(pc, pr, rc, rr, beta=1.0).losses) < 0.6931  # DPO is already content
True
>>> float(constrained_po_loss(pc, pr, rc, rr, beta=1.0).losses) > 0.6931  # CPO is not
True
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
